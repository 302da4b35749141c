//! Deliveries: signed, in log order, retried while a receiver is down and
//! across a restart, each taken exactly once; given up after the retry
//! period and sent again by hand; estimated-delivery notifications.

use super::receiver::Receiver;
use super::{attempts, base, deliveries, fast, logged, subscribe, wait_for};
use depot_cloud::settings::Settings;
use depot_testkit::cloud::{TestCloud, WEBHOOK_SECRET, assert_error, spawn_cloud_configured};
use depot_testkit::http::Client;
use depot_testkit::seed;
use depot_wms::Wms;
use serde_json::{Value, json};
use std::collections::HashSet;

/// Every delivery taken was a different one.
fn distinct(rx: &Receiver) -> usize {
    let got = rx.got();
    let ids: HashSet<String> = got.iter().map(|g| g.delivery_id.clone()).collect();
    assert_eq!(ids.len(), got.len(), "a delivery was taken twice: {got:?}");
    got.len()
}

fn event_ids(rx: &Receiver) -> Vec<String> {
    rx.got()
        .iter()
        .filter_map(|g| g.body["id"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn a_receiver_that_was_down_gets_every_delivery_once_and_signed() {
    let app = spawn_cloud_configured(fast).await;
    let down = Receiver::start().await;
    let up = Receiver::start().await;
    let hook = subscribe(&app, &down, &["order.*"]).await;
    subscribe(&app, &up, &["order.*"]).await;
    app.item("WH-1").await;
    app.receive("WH-1", 50).await;

    down.set_down(true);
    for i in 0..5 {
        app.order(&format!("WH-O{i}"), &[("WH-1", 1)]).await;
    }
    let orders = logged(&app, "order.").await;
    assert_eq!(orders.len(), 5);

    // The other subscription is not held up.
    wait_for("the receiver that is up", || async {
        (up.got().len() == 5).then_some(())
    })
    .await;
    assert_eq!(event_ids(&up), orders, "in log order");

    // The down one: the oldest delivery is retried, the rest wait behind
    // it, and every failed attempt says why.
    let list = wait_for("attempts on the oldest delivery", || async {
        let list = deliveries(&app, hook).await;
        (list.len() == 5 && list[4]["attempts"].as_u64() >= Some(3)).then_some(list)
    })
    .await;
    assert!(list.iter().all(|d| d["status"] == "pending"), "{list:?}");
    assert!(list[..4].iter().all(|d| d["attempts"] == 0), "{list:?}");
    let oldest = &list[4];
    assert_eq!(oldest["event_id"].as_str(), Some(orders[0].as_str()));
    assert!(oldest["next_attempt_at"].is_string(), "{oldest}");
    assert!(
        oldest["last_status_code"] == 503 || oldest["last_error"].is_string(),
        "{oldest}"
    );
    let id = oldest["id"].as_str().expect("id");
    let tries = attempts(&app, hook, id).await;
    assert!(tries.len() >= 3);
    for (n, a) in tries.iter().enumerate() {
        assert_eq!(a["number"].as_u64(), Some(n as u64 + 1));
        assert!(a["duration_ms"].is_u64());
        let refused = a["status_code"] == 503 && a["response_body"] == "down for maintenance";
        assert!(refused || a["error"].is_string(), "{a}");
    }

    down.set_down(false);
    wait_for("every delivery", || async {
        let list = deliveries(&app, hook).await;
        list.iter()
            .all(|d| d["status"] == "delivered")
            .then_some(())
    })
    .await;
    assert_eq!(distinct(&down), 5);
    assert_eq!(event_ids(&down), orders, "in log order");
    assert_eq!(down.forged(), 0, "every request verified");
    let first = &down.got()[0];
    assert_eq!(first.delivery_id, id);
    assert!(first.attempt as usize > tries.len(), "{first:?}");
    assert_eq!(first.body["type"], "order.created");
    assert_eq!(first.body["version"], 1);
    assert_eq!(first.body["business_id"], app.a.business.0);
    assert!(first.body["created_at"].is_string());
    assert!(first.body["data"].is_object());
    let delivered = app
        .get(&format!(
            "{}/{hook}/deliveries?status=delivered&length=2",
            base(&app)
        ))
        .await;
    assert_eq!(
        (
            &delivered.body["recordsTotal"],
            &delivered.body["recordsFiltered"]
        ),
        (&json!("5"), &json!("5"))
    );
    assert_eq!(delivered.body["data"].as_array().map(Vec::len), Some(2));
    assert!(delivered.body["data"][0]["finished_at"].is_string());
}

#[tokio::test]
async fn deliveries_only_carry_what_was_subscribed_and_never_keys() {
    let app = spawn_cloud_configured(fast).await;
    let rx = Receiver::start().await;
    let head = app
        .wms
        .events_since(0, 1_000_000)
        .await
        .expect("events")
        .len();
    let hook = subscribe(&app, &rx, &["*"]).await;
    app.item("K-1").await;
    app.wms
        .create_key(app.a.business, Some("more".into()))
        .await
        .expect("key");
    app.wms
        .create_key(app.b.business, Some("other".into()))
        .await
        .expect("key");
    app.order("K-O1", &[("K-1", 1)]).await;
    // Everything of the business after the subscription, but no key event.
    let expected: Vec<String> = app
        .wms
        .events_since(0, 1_000_000)
        .await
        .expect("events")
        .into_iter()
        .skip(head)
        .filter(|e| e.business_id == Some(app.a.business) && !e.kind.starts_with("key."))
        .map(|e| e.id.0.to_string())
        .collect();
    assert!(expected.len() >= 2);
    wait_for("everything subscribed", || async {
        (rx.got().len() >= expected.len()).then_some(())
    })
    .await;
    assert_eq!(event_ids(&rx), expected);
    let kinds: Vec<String> = rx
        .got()
        .iter()
        .filter_map(|g| g.body["type"].as_str().map(str::to_owned))
        .collect();
    assert!(kinds.contains(&"item.created".to_owned()), "{kinds:?}");
    assert!(kinds.contains(&"order.created".to_owned()), "{kinds:?}");
    assert!(!kinds.iter().any(|k| k.starts_with("key.")), "{kinds:?}");

    // Deactivated: nothing new is made for it.
    let r = app
        .put(
            &format!("{}/{hook}/edit", base(&app)),
            json!({"active": false}),
        )
        .await;
    assert_eq!(r.status, 200);
    let before = deliveries(&app, hook).await.len();
    app.item("K-2").await;
    let other = Receiver::start().await;
    subscribe(&app, &other, &["item.*"]).await;
    app.item("K-3").await;
    wait_for("the active subscription", || async {
        (other.got().len() == 1).then_some(())
    })
    .await;
    assert_eq!(deliveries(&app, hook).await.len(), before);
}

#[tokio::test]
async fn a_delivery_is_given_up_after_the_period_and_retried_by_hand() {
    let app = spawn_cloud_configured(|s| {
        fast(s);
        s.webhooks.retry_for_secs = 0.5;
        s.webhooks.first_retry_secs = 0.1;
    })
    .await;
    let rx = Receiver::start().await;
    rx.set_failing(true);
    let hook = subscribe(&app, &rx, &["item.created"]).await;
    app.item("GU-1").await;
    let failed = wait_for("the delivery to fail", || async {
        let list = deliveries(&app, hook).await;
        list.first().filter(|d| d["status"] == "failed").cloned()
    })
    .await;
    let n = failed["attempts"].as_u64().expect("attempts");
    assert!(n >= 2, "{failed}");
    assert_eq!(failed["last_status_code"], 500);
    assert!(failed["finished_at"].is_string() && failed["next_attempt_at"].is_null());
    let id = failed["id"].as_str().expect("id").to_owned();
    let tries = attempts(&app, hook, &id).await;
    assert_eq!(tries.len() as u64, n);
    assert!(
        tries
            .iter()
            .all(|a| a["status_code"] == 500 && a["response_body"] == "cannot take it now")
    );
    assert!(rx.got().is_empty());
    assert_eq!(rx.refused() as u64, n, "every attempt reached the receiver");

    // By hand: the same delivery, sent again now.
    rx.set_failing(false);
    let retry = format!("{}/{hook}/deliveries/{id}/retry", base(&app));
    let r = app.post(&retry, json!({})).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["data"]["status"], "pending");
    wait_for("the retried delivery", || async {
        (rx.got().len() == 1).then_some(())
    })
    .await;
    let got = &rx.got()[0];
    assert_eq!(got.delivery_id, id);
    assert_eq!(u64::from(got.attempt), n + 1);
    let done = wait_for("delivered", || async {
        deliveries(&app, hook)
            .await
            .first()
            .filter(|d| d["status"] == "delivered")
            .cloned()
    })
    .await;
    assert_eq!(done["attempts"].as_u64(), Some(n + 1));
    assert_eq!(done["last_status_code"], 200);
    let r = app
        .post(
            &format!("{}/{hook}/deliveries/0190-nope/retry", base(&app)),
            json!({}),
        )
        .await;
    assert_error(&r, 404);
}

/// Packs an order of tenant A: answers its shipment.
async fn shipment(app: &TestCloud) -> Value {
    let b = app.a.business;
    app.item("ED-1").await;
    app.receive("ED-1", 5).await;
    let order = app.order("ED-O1", &[("ED-1", 1)]).await;
    assert_eq!(app.set_status(order, "confirmed").await.status, 200);
    let w = app.a.warehouses[0].0;
    let wave = app
        .post(
            &format!("/v1/picking/{b}/waves/create"),
            json!({"warehouse_id": w}),
        )
        .await;
    let wave_id = wave.body["data"]["id"].as_i64().expect("wave");
    let r = app
        .post(
            &format!("/v1/picking/{b}/item/scan"),
            json!({"wave_id": wave_id, "order_id": order, "code": "ED-1"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let r = app
        .post(
            &format!("/v1/packing/{b}/pack-order"),
            json!({"order_id": order, "items": [{"code": "ED-1"}], "packages": [{"weight_g": 100}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    app.get(&format!("/v1/shipments/{b}/list")).await.body["data"][0].clone()
}

async fn carrier_event(app: &TestCloud, event: Value) {
    let body = serde_json::to_vec(&event).expect("json");
    let sig =
        depot_wms::http::tracking::sign(WEBHOOK_SECRET, chrono::Utc::now().timestamp(), &body);
    let r = app
        .http
        .raw("POST", "/v1/webhooks/carriers/own")
        .header("content-type", "application/json")
        .header("X-Depot-Signature", sig)
        .body(body)
        .send()
        .await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn milestones_that_move_the_estimate_are_notified() {
    let app = spawn_cloud_configured(fast).await;
    let rx = Receiver::start().await;
    subscribe(&app, &rx, &["shipment.estimated_delivery_changed"]).await;
    let s = shipment(&app).await;
    let tracking = s["tracking_number"].as_str().expect("tracking");
    let packed_estimate = s["estimated_delivery"].as_str().expect("estimate");

    // Handed over three days later: counted again from then.
    let day = chrono::Utc::now().date_naive() + chrono::Days::new(3);
    let at = day.and_hms_opt(9, 0, 0).expect("time").and_utc();
    let expected = depot_wms::carriers::get("own")
        .expect("own fleet")
        .estimate(s["service"].as_str().expect("service"), day)
        .to_string();
    let dispatched = json!({"event_id": "ed-1", "tracking_number": tracking, "milestone": "dispatched",
                            "at": at.to_rfc3339(), "city": "Madrid"});
    carrier_event(&app, dispatched.clone()).await;
    // A repeat changes nothing; a carrier's own estimate replaces ours.
    carrier_event(&app, dispatched).await;
    carrier_event(
        &app,
        json!({"event_id": "ed-2", "tracking_number": tracking, "milestone": "in_transit",
               "at": at.to_rfc3339(), "estimated_delivery": "2031-01-02"}),
    )
    .await;
    carrier_event(
        &app,
        json!({"event_id": "ed-3", "tracking_number": tracking, "milestone": "in_transit",
               "at": at.to_rfc3339()}),
    )
    .await;
    wait_for("two notifications", || async {
        (rx.got().len() >= 2).then_some(())
    })
    .await;
    assert_eq!(
        logged(&app, "shipment.estimated_delivery_changed")
            .await
            .len(),
        2,
        "the repeat and the unchanged estimate logged nothing"
    );
    assert_eq!(distinct(&rx), 2, "{:?}", rx.got());
    let first = &rx.got()[0].body;
    assert_eq!(first["type"], "shipment.estimated_delivery_changed");
    let data = &first["data"];
    assert_eq!(data["tracking_number"], tracking);
    assert_eq!(data["shipment_id"], s["id"]);
    assert_eq!(data["order_id"], s["order_id"]);
    assert_eq!(data["previous_estimate"], packed_estimate);
    assert_eq!(data["estimated_delivery"], expected.as_str());
    assert_eq!(data["milestone"]["milestone"], "dispatched");
    let second = &rx.got()[1].body["data"];
    assert_eq!(second["previous_estimate"], expected.as_str());
    assert_eq!(second["estimated_delivery"], "2031-01-02");
    assert_eq!(second["milestone"]["milestone"], "in_transit");
    let public = app
        .call("GET", &format!("/v1/tracking/{tracking}"), None, None)
        .await;
    assert_eq!(public.body["data"]["estimated_delivery"], "2031-01-02");
}

/// A cloud served in-process on a data directory, stopped and started
/// again on the same database.
struct Cloud {
    base: String,
    stop: tokio::sync::oneshot::Sender<()>,
    served: tokio::task::JoinHandle<()>,
}

async fn serve(wms: &Wms, dir: &std::path::Path) -> Cloud {
    let mut settings = Settings {
        data_dir: dir.to_owned(),
        ..Settings::default()
    };
    fast(&mut settings);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let wms = wms.clone();
    let served = tokio::spawn(async move {
        let _ = depot_cloud::Daemon::new(wms, settings.clone())
            .serve(listener, async {
                let _ = stopped.await;
            })
            .await;
    });
    Cloud { base, stop, served }
}

#[tokio::test]
async fn a_restart_loses_and_repeats_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cloud.db");
    let wms = Wms::open(&path, "cloud").expect("open");
    let tenant = seed::business("Restart")
        .warehouses(&[("W1", "Main", true)])
        .seed(&wms)
        .await;
    let b = tenant.business;
    let client = Client::new("").with_key(tenant.key.as_str());
    let call = |base: String, path: String, body: Value| {
        let client = client.with_base(base);
        async move {
            let r = client.post(&path, body).await;
            assert_eq!(r.status, 200);
            r.body
        }
    };
    let get = |base: String, path: String| {
        let client = client.with_base(base);
        async move { client.get(&path).await.body }
    };

    let first = serve(&wms, dir.path()).await;
    let rx = Receiver::start().await;
    rx.set_down(true);
    let made = call(
        first.base.clone(),
        format!("/v1/webhooks/{b}/create"),
        json!({"url": rx.url, "event_types": ["item.created"]}),
    )
    .await;
    rx.set_secret(made["data"]["secret"].as_str().expect("secret"));
    let hook = made["data"]["id"].as_i64().expect("id");
    for i in 0..3 {
        call(
            first.base.clone(),
            format!("/v1/items/{b}/create"),
            json!({"sku": format!("R-{i}"), "name": "Restart"}),
        )
        .await;
    }
    let deliveries = format!("/v1/webhooks/{b}/{hook}/deliveries");
    wait_for("attempts before the restart", || {
        let r = get(first.base.clone(), deliveries.clone());
        async move {
            let r = r.await;
            (r["data"][2]["attempts"].as_u64() >= Some(2)).then_some(())
        }
    })
    .await;
    let _ = first.stop.send(());
    first.served.await.expect("stopped");
    drop(wms);

    let wms = Wms::open(&path, "cloud").expect("reopen");
    let second = serve(&wms, dir.path()).await;
    rx.set_down(false);
    for i in 3..5 {
        call(
            second.base.clone(),
            format!("/v1/items/{b}/create"),
            json!({"sku": format!("R-{i}"), "name": "Restart"}),
        )
        .await;
    }
    wait_for("every delivery after the restart", || {
        let r = get(second.base.clone(), deliveries.clone());
        async move {
            let r = r.await;
            let list = r["data"].as_array().cloned().unwrap_or_default();
            (list.len() == 5 && list.iter().all(|d| d["status"] == "delivered")).then_some(())
        }
    })
    .await;
    assert_eq!(distinct(&rx), 5);
    let created: Vec<String> = wms
        .events_since(0, 10_000)
        .await
        .expect("events")
        .into_iter()
        .filter(|e| e.kind == "item.created")
        .map(|e| e.id.0.to_string())
        .collect();
    assert_eq!(event_ids(&rx), created, "each once, in log order");
    assert_eq!(rx.forged(), 0);
    let _ = second.stop.send(());
}

/// Waits until `rx` has taken `n` deliveries, and answers them.
async fn taken(rx: &Receiver, n: usize) -> Vec<super::receiver::Got> {
    wait_for(&format!("{n} deliveries taken"), || async {
        let got = rx.got();
        (got.len() >= n).then_some(got)
    })
    .await
}

#[tokio::test]
async fn a_rotated_secret_signs_beside_the_new_one_until_its_overlap_ends() {
    let app = spawn_cloud_configured(fast).await;
    let rx = Receiver::start().await;
    let hook = subscribe(&app, &rx, &["order.created"]).await;
    let first = rx.secret();
    app.item("ROT-1").await;
    app.order("ROT-O1", &[("ROT-1", 1)]).await;
    taken(&rx, 1).await;

    // The default overlap: a day, shown on the subscription.
    let r = app
        .post(&format!("{}/{hook}/rotate-secret", base(&app)), json!({}))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let second = r.body["data"]["secret"]
        .as_str()
        .expect("secret")
        .to_owned();
    assert_ne!(second, first);
    let until = |body: &Value| {
        body["previous_secret_expires_at"]
            .as_str()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map(|t| (t.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_minutes())
    };
    assert!(
        until(&r.body["data"]).is_some_and(|m| (23 * 60..=24 * 60).contains(&m)),
        "{:?}",
        r.body
    );
    let shown = app.get(&format!("{}/{hook}", base(&app))).await;
    assert_eq!(until(&shown.body["data"]), until(&r.body["data"]));
    assert!(shown.body["data"].get("secret").is_none());

    // A receiver still on the first secret takes what follows, and so does
    // one given the second.
    app.order("ROT-O2", &[("ROT-1", 1)]).await;
    taken(&rx, 2).await;
    rx.set_secret(&second);
    app.order("ROT-O3", &[("ROT-1", 1)]).await;
    taken(&rx, 3).await;
    assert_eq!(rx.forged(), 0);

    // No overlap: only the third secret signs, so a receiver on the second
    // refuses the next delivery until it is given the third.
    let r = app
        .post(
            &format!("{}/{hook}/rotate-secret?keep_previous_hours=0", base(&app)),
            json!({}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert!(r.body["data"].get("previous_secret_expires_at").is_none());
    let third = r.body["data"]["secret"]
        .as_str()
        .expect("secret")
        .to_owned();
    app.order("ROT-O4", &[("ROT-1", 1)]).await;
    wait_for("a delivery refused as forged", || async {
        (rx.forged() > 0).then_some(())
    })
    .await;
    assert_eq!(rx.got().len(), 3);
    rx.set_secret(&third);
    taken(&rx, 4).await;
    assert_eq!(distinct(&rx), 4);
    assert_eq!(event_ids(&rx), logged(&app, "order.created").await);

    for bad in ["169", "-1", "1.5", "day", ""] {
        let r = app
            .post(
                &format!(
                    "{}/{hook}/rotate-secret?keep_previous_hours={bad}",
                    base(&app)
                ),
                json!({}),
            )
            .await;
        assert_error(&r, 422);
        assert!(
            r.body.to_string().contains("keep_previous_hours"),
            "{:?}",
            r.body
        );
    }
}

#[tokio::test]
async fn finished_deliveries_are_deleted_after_retention_and_pending_ones_kept() {
    use depot_cloud::webhooks::retention::prune_before;
    let app = spawn_cloud_configured(fast).await;
    let (up, down) = (Receiver::start().await, Receiver::start().await);
    let done = subscribe(&app, &up, &["order.created"]).await;
    let waiting = subscribe(&app, &down, &["order.created"]).await;
    down.set_down(true);
    app.item("RET-1").await;
    for i in 0..3 {
        app.order(&format!("RET-O{i}"), &[("RET-1", 1)]).await;
    }
    let delivered = wait_for("3 delivered, and attempts on the other", || async {
        let list = deliveries(&app, done).await;
        let other = deliveries(&app, waiting).await;
        (list.len() == 3
            && list.iter().all(|d| d["status"] == "delivered")
            && other.len() == 3
            && other[2]["attempts"].as_u64() >= Some(1))
        .then_some(list)
    })
    .await;
    let oldest = delivered[2]["id"].as_str().expect("id").to_owned();
    assert_eq!(attempts(&app, done, &oldest).await.len(), 1);

    // Nothing finished before an hour ago: nothing goes.
    let hour_ago = depot_protocol::now() - chrono::Duration::hours(1);
    assert_eq!(
        prune_before(&app.office(), hour_ago, 2)
            .await
            .expect("prune"),
        0
    );
    assert_eq!(deliveries(&app, done).await.len(), 3);

    // Everything finished before a minute from now goes, two per write,
    // attempts and all; the pending ones stay however old.
    let soon = depot_protocol::now() + chrono::Duration::minutes(1);
    assert_eq!(
        prune_before(&app.office(), soon, 2).await.expect("prune"),
        3
    );
    assert!(deliveries(&app, done).await.is_empty());
    let r = app
        .get(&format!(
            "{}/{done}/deliveries/{oldest}/attempts",
            base(&app)
        ))
        .await;
    assert_error(&r, 404);
    let other = deliveries(&app, waiting).await;
    assert_eq!(other.len(), 3);
    assert!(other.iter().all(|d| d["status"] == "pending"), "{other:?}");

    // And the pending ones still go out once their receiver is back.
    down.set_down(false);
    wait_for("the kept deliveries", || async {
        (down.got().len() == 3).then_some(())
    })
    .await;
}
