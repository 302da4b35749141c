//! Sales channels through the API: two channels sharing a warehouse's last
//! units see what the buffer leaves them, a sale on one lowers the
//! other's, the change feed gives each change once by cursor, the
//! debounced events follow, and every wrong request is refused with
//! nothing written.

use depot_testkit::cloud::{TestCloud, assert_error, field_names, spawn_cloud};
use depot_testkit::eventually_some;
use serde_json::{Value, json};

async fn ok(app: &TestCloud, path: &str, body: Value) -> Value {
    let r = app.post(path, body).await;
    assert_eq!(r.status, 200, "{path}: {:?}", r.body);
    r.body["data"].clone()
}

/// What `channel` may sell of `sku`.
async fn sells(app: &TestCloud, channel: &str, sku: &str) -> i64 {
    let r = app
        .get(&format!(
            "/v1/channels/{}/{channel}/availability?sku={sku}",
            app.a.business
        ))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        r.body["data"].as_array().map(Vec::len),
        Some(1),
        "{:?}",
        r.body
    );
    r.body["data"][0]["available"].as_i64().expect("available")
}

/// The feed of `channel` after `cursor`: (sku, available) and the next
/// cursor.
async fn feed(app: &TestCloud, channel: &str, cursor: &str) -> (Vec<(String, i64)>, String) {
    let r = app
        .get(&format!(
            "/v1/channels/{}/{channel}/availability/changes?after={cursor}",
            app.a.business
        ))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let rows = r.body["data"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            (
                a["sku"].as_str().unwrap_or("").to_owned(),
                a["available"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    (rows, r.body["next"].as_str().expect("next").to_owned())
}

fn channel(code: &str, kind: &str, w: i64) -> Value {
    json!({"code": code, "name": format!("Κανάλι {code}"), "kind": kind,
           "warehouse_ids": [w], "buffer_units": 1})
}

#[tokio::test]
async fn two_channels_share_the_last_units_and_a_sale_on_one_lowers_the_other() {
    let app = spawn_cloud().await;
    let (b, w) = (app.a.business, app.a.warehouses[0].0);
    app.item("ΤΣΑΪ").await;
    app.receive("ΤΣΑΪ", 3).await;
    let web = ok(
        &app,
        &format!("/v1/channels/{b}/create"),
        channel("webshop", "storefront", w),
    )
    .await;
    assert_eq!(web["warehouse_ids"], json!([w]));
    ok(
        &app,
        &format!("/v1/channels/{b}/create"),
        channel("marketplace", "marketplace", w),
    )
    .await;
    assert_eq!(sells(&app, "webshop", "ΤΣΑΪ").await, 2);
    assert_eq!(sells(&app, "marketplace", "ΤΣΑΪ").await, 2);
    let (rows, cursor) = feed(&app, "marketplace", "").await;
    assert_eq!(rows, [("ΤΣΑΪ".to_owned(), 2)]);

    // A sale on the webshop: both see one.
    let order = app.order("WS-1", &[("ΤΣΑΪ", 1)]).await;
    assert_eq!(app.set_status(order, "confirmed").await.status, 200);
    assert_eq!(sells(&app, "webshop", "ΤΣΑΪ").await, 1);
    assert_eq!(sells(&app, "marketplace", "ΤΣΑΪ").await, 1);
    let (rows, next) = feed(&app, "marketplace", &cursor).await;
    assert_eq!(rows, [("ΤΣΑΪ".to_owned(), 1)]);
    // Read again from there: nothing new, the same cursor.
    assert_eq!(
        feed(&app, "marketplace", &next).await,
        (vec![], next.clone())
    );

    // Three movements in a burst: the feed has the item once, as it
    // stands; so do the debounced events.
    for _ in 0..3 {
        app.receive("ΤΣΑΪ", 1).await;
    }
    let (rows, _) = feed(&app, "marketplace", &next).await;
    assert_eq!(rows, [("ΤΣΑΪ".to_owned(), 4)]);
    let events = eventually_some("the last figure announced", || async {
        let r = app
            .get(&format!(
                "/v1/events/{b}/list?kind=channel.availability_changed&length=1000"
            ))
            .await;
        let rows = r.body["data"]["events"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        rows.iter()
            .any(|e| e["payload"]["channel"] == "marketplace" && e["payload"]["available"] == 4)
            .then_some(rows)
    })
    .await;
    let figures: Vec<i64> = events
        .iter()
        .filter(|e| e["payload"]["channel"] == "marketplace")
        .filter_map(|e| e["payload"]["available"].as_i64())
        .collect();
    assert!(
        figures.len() < 5,
        "the burst came as fewer events than changes: {figures:?}"
    );

    // An edit that holds nothing back: every figure moves, in the feed.
    let mut edited = channel("marketplace", "marketplace", w);
    edited["buffer_units"] = json!(0);
    edited["cap_units"] = json!(3);
    let r = app
        .put(&format!("/v1/channels/{b}/marketplace/edit"), edited)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(sells(&app, "marketplace", "ΤΣΑΪ").await, 3);
    let listed = app.get(&format!("/v1/channels/{b}/list")).await;
    let codes: Vec<&str> = listed.body["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["code"].as_str())
        .collect();
    assert_eq!(codes, ["marketplace", "webshop"]);
}

#[tokio::test]
async fn an_order_beyond_its_channel_waits_and_the_cloud_confirms_it_when_stock_comes() {
    let app = spawn_cloud().await;
    let (b, w) = (app.a.business, app.a.warehouses[0].0);
    app.item("ΤΣΑΪ").await;
    let mut shop = channel("κατάστημα", "storefront", w);
    shop["oversell"] = json!(true);
    shop["buffer_units"] = json!(0);
    ok(&app, &format!("/v1/channels/{b}/create"), shop).await;

    // Sold while none is in stock: taken, flagged, waiting.
    let order = ok(
        &app,
        &format!("/v1/orders/{b}/create"),
        json!({"channel": "κατάστημα", "external_ref": "Ж-1", "lines": [{"sku": "ΤΣΑΪ", "quantity": 2}],
               "shipping_address": {"name": "Marta Quiroga", "line1": "Calle de Atocha 27, 3º izq.",
                                    "postal_code": "28012", "city": "Madrid", "region": "Madrid", "country": "ES"}}),
    )
    .await;
    let id = order["id"].as_i64().expect("id");
    assert_eq!(order["status"], "pending");
    assert_eq!(order["oversold"], true);
    assert_eq!(order["backorder"]["lines"][0]["sku"], "ΤΣΑΪ");
    assert_eq!(order["backorder"]["lines"][0]["quantity"], 2);
    assert_eq!(order["backorder"]["lines"][0]["available"], 0);
    let r = app
        .get(&format!("/v1/events/{b}/list?kind=order.oversold"))
        .await;
    assert_eq!(r.body["data"]["events"][0]["payload"]["order_id"], id);
    assert_eq!(r.body["data"]["events"][0]["payload"]["backordered"], true);

    // A purchase order is received at the dock: the cloud confirms the
    // backorder on its own, and says who did.
    let po = ok(
        &app,
        &format!("/v1/inbounds/{b}/orders/create"),
        json!({"warehouse_id": w, "reference": "PO-Ж", "supplier": "Τσάι ΑΕ",
               "lines": [{"sku": "ΤΣΑΪ", "quantity": 2}]}),
    )
    .await;
    ok(
        &app,
        &format!("/v1/inbounds/{b}/reception"),
        json!({"inbound_id": po["id"], "lines": [{"code": "ΤΣΑΪ", "quantity": 2}]}),
    )
    .await;
    let confirmed = eventually_some("the backorder confirmed", || async {
        let r = app.get(&format!("/v1/orders/{b}/{id}")).await;
        (r.body["data"]["status"] == "confirmed").then_some(r.body["data"].clone())
    })
    .await;
    assert_eq!(confirmed["oversold"], true);
    assert!(confirmed.get("backorder").is_none(), "{confirmed}");
    let last = confirmed["history"]
        .as_array()
        .and_then(|h| h.last())
        .cloned();
    assert_eq!(last.expect("history")["actor"], "backorders");
    assert_eq!(sells(&app, "κατάστημα", "ΤΣΑΪ").await, 0);
}

#[tokio::test]
async fn wrong_channels_are_refused_with_nothing_written() {
    let app = spawn_cloud().await;
    let (b, w) = (app.a.business, app.a.warehouses[0].0);
    let create = format!("/v1/channels/{b}/create");
    let theirs = app.b.warehouses[0].0;
    for (body, status, field) in [
        (
            channel("web", "storefront", theirs),
            422,
            "warehouse_ids[0]",
        ),
        (channel("list", "storefront", w), 422, "code"),
        (channel("web shop", "storefront", w), 422, "code"),
        (
            json!({"code": "web", "name": "W", "kind": "storefront", "warehouse_ids": []}),
            422,
            "warehouse_ids",
        ),
        (
            json!({"code": "web", "name": "W", "kind": "storefront", "warehouse_ids": [w],
                   "buffer_units": 1, "buffer_percent": 10}),
            422,
            "buffer_percent",
        ),
        (
            json!({"code": "web", "name": "W", "kind": "storefront", "warehouse_ids": [w],
                   "cap_percent": 101}),
            422,
            "cap_percent",
        ),
    ] {
        let r = app.post(&create, body.clone()).await;
        assert_error(&r, status);
        assert!(
            field_names(&r.body).iter().any(|n| n == field),
            "{body}: {:?}",
            r.body
        );
    }
    let r = app
        .post(
            &create,
            json!({"code": "web", "name": "W", "kind": "kiosk", "warehouse_ids": [w]}),
        )
        .await;
    assert_error(&r, 422);
    let listed = app.get(&format!("/v1/channels/{b}/list")).await;
    assert_eq!(listed.body["data"], json!([]), "nothing was written");

    ok(&app, &create, channel("web", "storefront", w)).await;
    assert_error(&app.post(&create, channel("web", "pos", w)).await, 409);
    let r = app
        .put(
            &format!("/v1/channels/{b}/web/edit"),
            channel("web2", "storefront", w),
        )
        .await;
    assert_error(&r, 422);
    let r = app
        .put(
            &format!("/v1/channels/{b}/nope/edit"),
            channel("nope", "storefront", w),
        )
        .await;
    assert_error(&r, 404);
    for path in [
        format!("/v1/channels/{b}/web/availability/changes?after=x"),
        format!("/v1/channels/{b}/web/availability/changes?limit=0"),
    ] {
        assert_error(&app.get(&path).await, 422);
    }
    // A code in another script, in the path as in the body.
    ok(&app, &create, channel("κατάστημα", "pos", w)).await;
    let r = app
        .get(&format!("/v1/channels/{b}/κατάστημα/availability"))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    // Another business's key sees none of it.
    let other = app.http.with_key(app.b.key.as_str());
    let r = other
        .get(&format!("/v1/channels/{}/web", app.b.business))
        .await;
    assert_error(&r, 404);
}
