//! Order ingestion, the status lifecycle and its stock effects, search.

use depot_testkit::cloud::{assert_error, spawn_cloud};
use serde_json::json;

#[tokio::test]
async fn the_same_order_posted_twice_is_one_order() {
    let app = spawn_cloud().await;
    app.item("I-1").await;
    let p = format!("/v1/orders/{}/create", app.a.business);
    let body = json!({"channel": "marketplace", "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"}, "external_ref": "MK-1", "lines": [{"sku": "I-1", "quantity": 2}]});
    // Concurrent duplicates, as a channel retrying on a timeout sends them.
    let mut tasks = Vec::new();
    for _ in 0..10 {
        let (client, p, body) = (app.as_a(), p.clone(), body.clone());
        tasks.push(tokio::spawn(async move {
            let r = client.post(&p, body).await;
            assert_eq!(r.status, 200);
            r.body
        }));
    }
    let mut ids = Vec::new();
    let mut created = 0;
    for t in tasks {
        let b = t.await.expect("task");
        ids.push(b["data"]["id"].as_i64());
        created += usize::from(b["created"] == true);
    }
    ids.dedup();
    assert_eq!(ids.len(), 1, "one order: {ids:?}");
    assert_eq!(created, 1, "exactly one request created it");
    let list = app
        .get(&format!(
            "/v1/orders/{}/list?channel=marketplace",
            app.a.business
        ))
        .await;
    assert_eq!(list.body["recordsFiltered"], "1");
    // The same external reference on another channel is another order.
    let r = app.post(&p, json!({"channel": "web", "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"}, "external_ref": "MK-1", "lines": [{"sku": "I-1", "quantity": 1}]})).await;
    assert_eq!(r.body["created"], true);
}

/// An order ships from the warehouse it names, or from the business's
/// first; another business's warehouse is refused on its field, as one
/// that does not exist, and nothing is stored.
#[tokio::test]
async fn an_order_ships_from_a_warehouse_of_its_own_business() {
    let app = spawn_cloud().await;
    app.item("I-1").await;
    let p = format!("/v1/orders/{}/create", app.a.business);
    let body = |reference: &str, warehouse: Option<i64>| {
        let mut b = json!({"channel": "web", "shipping_address": {"name": "Γιώργος Παπαδόπουλος", "line1": "Οδός Ερμού 12", "postal_code": "105 63", "city": "Αθήνα", "country": "GR"}, "external_ref": reference, "lines": [{"sku": "I-1", "quantity": 1}]});
        if let Some(w) = warehouse {
            b["warehouse_id"] = json!(w);
        }
        b
    };
    let first = app.post(&p, body("W-1", None)).await;
    assert_eq!(first.status, 200, "{:?}", first.body);
    assert_eq!(first.body["data"]["warehouse_id"], app.a.warehouse.0);
    let last = *app.a.warehouses.last().expect("a warehouse");
    let named = app.post(&p, body("W-2", Some(last.0))).await;
    assert_eq!(named.status, 200, "{:?}", named.body);
    assert_eq!(named.body["data"]["warehouse_id"], last.0);
    for foreign in [app.b.warehouse.0, i64::from(i32::MAX)] {
        let r = app.post(&p, body("W-3", Some(foreign))).await;
        assert_error(&r, 422);
        assert_eq!(r.body["errors"][0]["name"], "warehouse_id", "{:?}", r.body);
    }
    let list = app
        .get(&format!("/v1/orders/{}/list?channel=web", app.a.business))
        .await;
    assert_eq!(list.body["recordsFiltered"], "2", "{:?}", list.body);
}

#[tokio::test]
async fn lifecycle_reserves_releases_and_ships() {
    let app = spawn_cloud().await;
    let item = app.item("L-1").await;
    app.receive("L-1", 10).await;
    let o1 = app.order("L-O1", &[("L-1", 3)]).await;
    let o2 = app.order("L-O2", &[("L-1", 4), ("L-1", 2)]).await;
    assert_eq!(
        app.stock(item).await,
        (10, 0, 10),
        "pending orders reserve nothing"
    );

    assert_eq!(app.set_status(o1, "confirmed").await.status, 200);
    assert_eq!(app.stock(item).await, (10, 3, 7));
    assert_eq!(app.set_status(o2, "confirmed").await.status, 200);
    assert_eq!(app.stock(item).await, (10, 9, 1));

    // Not enough left to promise: refused, nothing reserved.
    let o3 = app.order("L-O3", &[("L-1", 2)]).await;
    let r = app.set_status(o3, "confirmed").await;
    assert_error(&r, 409);
    assert!(
        r.body["message"]
            .as_str()
            .unwrap_or("")
            .contains("L-1 needs 2, 1 available"),
        "{:?}",
        r.body
    );
    assert_eq!(app.stock(item).await, (10, 9, 1));

    // Cancelling gives the reservation back.
    assert_eq!(app.set_status(o2, "picking").await.status, 200);
    assert_eq!(app.set_status(o2, "cancelled").await.status, 200);
    assert_eq!(app.stock(item).await, (10, 3, 7));
    assert_error(&app.set_status(o2, "confirmed").await, 409);

    // Dispatch books the goods out and ends the reservation.
    for s in ["picking", "packed", "dispatched"] {
        assert_eq!(app.set_status(o1, s).await.status, 200, "{s}");
    }
    assert_eq!(app.stock(item).await, (7, 0, 7));
    let r = app.set_status(o1, "cancelled").await;
    assert_error(&r, 409);
    assert_eq!(
        r.body["message"],
        "illegal status transition from dispatched to cancelled"
    );
    assert_eq!(app.set_status(o1, "delivered").await.status, 200);
    // Setting the current status again is harmless.
    assert_eq!(app.set_status(o1, "delivered").await.status, 200);

    let detail = app
        .get(&format!("/v1/orders/{}/{o1}", app.a.business))
        .await;
    let steps: Vec<&str> = detail.body["data"]["history"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|h| h["to"].as_str())
        .collect();
    assert_eq!(
        steps,
        [
            "pending",
            "confirmed",
            "picking",
            "packed",
            "dispatched",
            "delivered"
        ]
    );
    assert_eq!(detail.body["data"]["total"], "30.00");
    assert!(app.wms.check_ledger().await.expect("check").is_empty());
}

#[tokio::test]
async fn search_by_status_date_channel_customer_with_paging() {
    let app = spawn_cloud().await;
    app.item("F-1").await;
    app.receive("F-1", 100).await;
    let p = format!("/v1/orders/{}/create", app.a.business);
    for i in 0..30 {
        let r = app.post(&p, json!({
            "channel": if i % 3 == 0 { "pos" } else { "web" },
            "external_ref": format!("F-{i}"),
            "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"},
            "buyer": {"name": if i % 5 == 0 { "Ana López" } else { "Bo" }, "email": format!("buyer{}@example.com", i % 2)},
            "ordered_at": format!("2026-10-{:02}T12:00:00Z", i + 1),
            "lines": [{"sku": "F-1", "quantity": 1}]
        })).await;
        assert_eq!(r.status, 200, "{:?}", r.body);
        if i % 4 == 0 {
            let id = r.body["data"]["id"].as_i64().unwrap_or(0);
            assert_eq!(app.set_status(id, "confirmed").await.status, 200);
        }
    }
    let b = app.a.business;
    let count = |path: String| {
        let app = &app;
        async move {
            let r = app.get(&path).await;
            assert_eq!(r.status, 200, "{path}: {:?}", r.body);
            (
                r.body["recordsTotal"].as_str().unwrap_or("").to_owned(),
                r.body["recordsFiltered"].as_str().unwrap_or("").to_owned(),
                r.body["data"].as_array().map_or(0, Vec::len),
            )
        }
    };
    assert_eq!(
        count(format!("/v1/orders/{b}/list?length=10")).await,
        ("30".into(), "30".into(), 10)
    );
    assert_eq!(
        count(format!("/v1/orders/{b}/list?status=confirmed"))
            .await
            .1,
        "8"
    );
    assert_eq!(
        count(format!("/v1/orders/{b}/list?channel=pos")).await.1,
        "10"
    );
    assert_eq!(
        count(format!("/v1/orders/{b}/list?customer=ana%20l%C3%B3pez"))
            .await
            .1,
        "6"
    );
    assert_eq!(
        count(format!("/v1/orders/{b}/list?customer=BUYER1@example.com"))
            .await
            .1,
        "15"
    );
    assert_eq!(
        count(format!(
            "/v1/orders/{b}/list?date_from=2026-10-05&date_to=2026-10-14"
        ))
        .await
        .1,
        "10"
    );
    assert_eq!(
        count(format!(
            "/v1/orders/{b}/list?date_from=2026-10-05T12:00:00Z&date_to=2026-10-06T12:00:00Z"
        ))
        .await
        .1,
        "1"
    );
    assert_eq!(
        count(format!(
            "/v1/orders/{b}/list?status=confirmed&channel=pos&start=0&length=1"
        ))
        .await,
        ("30".into(), "3".into(), 1)
    );

    // Pages are newest first, disjoint and complete.
    let refs = |body: &serde_json::Value| -> Vec<String> {
        body["data"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|o| o["external_ref"].as_str().map(str::to_owned))
            .collect()
    };
    let mut seen = Vec::new();
    for start in (0..30).step_by(7) {
        let r = app
            .get(&format!("/v1/orders/{b}/list?start={start}&length=7"))
            .await;
        seen.extend(refs(&r.body));
    }
    let expected: Vec<String> = (0..30).rev().map(|i| format!("F-{i}")).collect();
    assert_eq!(seen, expected);

    // The same by cursor: each answer's `cursor` reads the next page, and
    // the last answer has none.
    let mut seen = Vec::new();
    let mut path = format!("/v1/orders/{b}/list?length=7");
    loop {
        let r = app.get(&path).await;
        assert_eq!(r.status, 200, "{path}: {:?}", r.body);
        assert_eq!(r.body["recordsFiltered"], "30");
        seen.extend(refs(&r.body));
        match r.body["cursor"].as_str() {
            Some(c) => path = format!("/v1/orders/{b}/list?length=7&cursor={c}"),
            None => break,
        }
    }
    assert_eq!(seen, expected);
    let first = app.get(&format!("/v1/orders/{b}/list?length=7")).await;
    let cursor = first.body["cursor"].as_str().unwrap_or_default().to_owned();
    for (query, field) in [
        (format!("cursor={cursor}&start=7"), "start"),
        ("cursor=bm90LWEtY3Vyc29y".to_owned(), "cursor"),
        ("cursor=%F0%9F%93%A6".to_owned(), "cursor"),
        (format!("cursor={}", "A".repeat(600)), "cursor"),
    ] {
        let r = app.get(&format!("/v1/orders/{b}/list?{query}")).await;
        assert_eq!(r.status, 422, "{query}: {:?}", r.body);
        assert_eq!(r.body["errors"][0]["name"], field, "{query}: {:?}", r.body);
    }
    // An items list's cursor is not the orders list's.
    let r = app.get(&format!("/v1/items/{b}/list?length=1")).await;
    let c = r.body["cursor"].as_str().expect("a full page has a cursor");
    let r = app.get(&format!("/v1/orders/{b}/list?cursor={c}")).await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    // Tenant B sees none of it.
    let r = app
        .call(
            "GET",
            &format!("/v1/orders/{}/list", app.b.business),
            Some(&app.b.key),
            None,
        )
        .await;
    assert_eq!(r.body["recordsTotal"], "0");
}

/// An order keeps the address its channel sent, lists what keeps it from
/// being shipped, cannot be confirmed until it is corrected, and the
/// correction is an event; another tenant cannot touch it.
#[tokio::test]
async fn addresses_are_checked_shown_and_corrected() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    let item = app.item("AD-1").await;
    app.receive("AD-1", 5).await;
    let sent = json!({"name": "Γιώργος Παπαδόπουλος", "line1": "Οδός Ερμού 25", "postal_code": "1056",
                      "city": "Αθήνα", "country": "GR"});
    let r = app
        .post(
            &format!("/v1/orders/{b}/create"),
            json!({"channel": "web", "external_ref": "ΠΑΡ-1", "shipping_address": sent,
                   "lines": [{"sku": "AD-1", "quantity": 1}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let id = r.body["data"]["id"].as_i64().expect("id");
    // Kept as sent, flagged beside it.
    assert_eq!(r.body["data"]["shipping_address"]["postal_code"], "1056");
    let issues = &r.body["data"]["address_issues"];
    assert_eq!(
        issues[0]["name"], "shipping_address.postal_code",
        "{issues}"
    );
    assert!(
        issues[0]["status"]
            .as_str()
            .is_some_and(|s| s.contains("151 24")),
        "{issues}"
    );
    let detail = app.get(&format!("/v1/orders/{b}/{id}")).await;
    assert_eq!(detail.body["data"]["address_issues"], *issues);

    // Not confirmable, and nothing reserved or logged by trying.
    let events = app.event_count().await;
    let r = app.set_status(id, "confirmed").await;
    assert_error(&r, 422);
    assert_eq!(r.body["errors"][0]["name"], "shipping_address.postal_code");
    assert_eq!(app.event_count().await, events);
    assert_eq!(app.stock(item).await, (5, 0, 5));

    // Another tenant's key cannot correct it; a bad body is a 4xx.
    let path = format!("/v1/orders/{b}/{id}/address");
    let fixed = json!({"shipping_address": {"name": "Γιώργος Παπαδόπουλος", "line1": "Οδός Ερμού 25",
                       "postal_code": "105 63", "city": "Αθήνα", "country": "GR"}, "note": "called"});
    let foreign = app
        .call("PUT", &path, Some(&app.b.key), Some(fixed.clone()))
        .await;
    assert!(
        matches!(foreign.status, 401 | 403 | 404),
        "{}",
        foreign.status
    );
    assert_error(
        &app.put(&path, json!({"shipping_address": {"country": "Greece"}}))
            .await,
        422,
    );
    assert_error(&app.put(&path, json!({"note": "x"})).await, 422);
    assert_eq!(app.event_count().await, events);

    // Corrected: an event, no issues, and now it confirms.
    let r = app.put(&path, fixed).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["data"]["address_issues"], json!([]));
    assert_eq!(r.body["data"]["shipping_address"]["postal_code"], "105 63");
    assert_eq!(app.event_count().await, events + 1);
    assert_eq!(app.set_status(id, "confirmed").await.status, 200);
    assert_eq!(app.stock(item).await, (5, 1, 4));

    // After packing the label has the address: no more changes.
    let pack = app
        .post(
            &format!("/v1/packing/{b}/pack-order"),
            json!({"order_id": id, "items": [{"code": "AD-1"}], "packages": [{"weight_g": 700}]}),
        )
        .await;
    assert_eq!(pack.status, 200, "{:?}", pack.body);
    let late = json!({"shipping_address": {"name": "X", "line1": "Y 1", "postal_code": "105 63",
                      "city": "Αθήνα", "country": "GR"}});
    assert_error(&app.put(&path, late).await, 409);
}
