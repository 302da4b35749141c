//! Replenishment through the API: a pick location below its min gets a
//! task from the reserve lot that expires first; what leaves it at dispatch
//! takes it below its min and makes one; a scan moves the stock; every
//! wrong request is refused with nothing written.

use depot_testkit::cloud::{TestCloud, assert_error, spawn_cloud};
use serde_json::{Value, json};

const GTIN: &str = "09506000134352";

fn lot(lot: &str, expiry: &str) -> String {
    format!("]d201{GTIN}17{expiry}\u{1d}10{lot}")
}

async fn ok(app: &TestCloud, path: &str, body: Value) -> Value {
    let r = app.post(path, body).await;
    assert_eq!(r.status, 200, "{path}: {:?}", r.body);
    r.body["data"].clone()
}

async fn put(app: &TestCloud, path: &str, body: Value) -> Value {
    let r = app.put(path, body).await;
    assert_eq!(r.status, 200, "{path}: {:?}", r.body);
    r.body["data"].clone()
}

async fn open_tasks(app: &TestCloud) -> Vec<Value> {
    let r = app
        .get(&format!("/v1/replenishment/{}/tasks/list", app.a.business))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body["data"].as_array().cloned().unwrap_or_default()
}

async fn floor(app: &TestCloud) {
    let (b, w) = (app.a.business, app.a.warehouses[0].0);
    for (code, kind, sequence) in [
        ("P-01", "pick", 1),
        ("P-02", "pick", 2),
        ("B-01", "bulk", 10),
        ("B-02", "bulk", 20),
    ] {
        ok(
            app,
            &format!("/v1/locations/{b}/create"),
            json!({"warehouse_id": w, "code": code, "type": kind, "sequence": sequence}),
        )
        .await;
    }
}

#[tokio::test]
async fn a_face_below_its_min_is_refilled_from_the_lot_that_expires_first() {
    let app = spawn_cloud().await;
    let (b, w) = (app.a.business, app.a.warehouses[0].0);
    floor(&app).await;
    let serum = ok(
        &app,
        &format!("/v1/items/{b}/create"),
        json!({"sku": "ΟΡΟΣ", "name": "Ορός 30 ml",
        "gtin": GTIN, "lot_tracked": true}),
    )
    .await;
    let po = ok(
        &app,
        &format!("/v1/inbounds/{b}/orders/create"),
        json!({"warehouse_id": w,
        "reference": "PO-R", "supplier": "Φάρμακα ΑΕ", "lines": [{"sku": "ΟΡΟΣ", "quantity": 40}]}),
    )
    .await;
    // L2 expires last, L1 first: L1 is the one to take.
    for (code, location, n) in [
        (lot("L2", "271231"), "B-01", 30),
        (lot("L1", "270630"), "B-02", 10),
    ] {
        ok(&app, &format!("/v1/inbounds/{b}/reception"),
            json!({"inbound_id": po["id"], "location": location, "lines": [{"code": code, "quantity": n}]})).await;
    }
    // A level set on an empty face refills it at once.
    let level = put(
        &app,
        &format!("/v1/replenishment/{b}/levels"),
        json!({"warehouse_id": w, "location": "P-01", "item_id": serum["id"], "min": 5, "max": 20}),
    )
    .await;
    assert_eq!(
        (level["min"].as_i64(), level["max"].as_i64()),
        (Some(5), Some(20))
    );
    let tasks = open_tasks(&app).await;
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    let t = &tasks[0];
    assert_eq!(
        (
            t["from_location"].as_str(),
            t["to_location"].as_str(),
            t["lot"].as_str(),
            t["quantity"].as_i64()
        ),
        (Some("B-02"), Some("P-01"), Some("L1"), Some(10)),
        "{t}"
    );

    // Wrong scans are refused, and nothing moves.
    let scan = format!("/v1/replenishment/{b}/scan");
    let events = app.event_count().await;
    for (body, status, field) in [
        (
            json!({"task_id": t["id"], "code": lot("L2", "271231"), "location": "P-01"}),
            422,
            "code",
        ),
        (
            json!({"task_id": t["id"], "code": lot("L1", "270630"), "location": "P-02"}),
            422,
            "location",
        ),
        (
            json!({"task_id": t["id"], "code": "ΟΡΟΣ", "location": "P-01", "quantity": 11}),
            409,
            "",
        ),
        (
            json!({"task_id": 999_999, "code": "ΟΡΟΣ", "location": "P-01"}),
            404,
            "",
        ),
    ] {
        let r = app.post(&scan, body.clone()).await;
        assert_error(&r, status);
        if !field.is_empty() {
            assert_eq!(r.body["errors"][0]["name"], field, "{body}: {:?}", r.body);
        }
    }
    assert_eq!(app.event_count().await, events);

    let r = ok(
        &app,
        &scan,
        json!({"task_id": t["id"], "code": lot("L1", "270630"), "location": "P-01"}),
    )
    .await;
    assert_eq!(
        (r["moved"].as_i64(), r["task"]["status"].as_str()),
        (Some(10), Some("done"))
    );
    assert_eq!(r["message"], "10 × ΟΡΟΣ from B-02 to P-01; task done");
    // 10 is above the min: no new task.
    assert!(open_tasks(&app).await.is_empty());
    let stock = app
        .get(&format!("/v1/inventory/{b}/items/list?location=P-01"))
        .await;
    assert_eq!(
        stock.body["data"][0]["bins"],
        json!([{"location": "P-01", "lot": "L1", "on_hand": 10}])
    );
}

#[tokio::test]
async fn what_leaves_at_dispatch_takes_a_face_below_its_min_and_makes_one_task() {
    let app = spawn_cloud().await;
    let (b, w) = (app.a.business, app.a.warehouses[0].0);
    floor(&app).await;
    let tea = ok(
        &app,
        &format!("/v1/items/{b}/create"),
        json!({"sku": "TÉ", "name": "Té verde",
        "locations": [{"warehouse_id": w, "location": "P-02"}]}),
    )
    .await;
    for (n, location) in [(4, "P-02"), (20, "B-01")] {
        ok(&app, &format!("/v1/inventory/{b}/adjust"),
            json!({"warehouse_id": w, "sku": "TÉ", "reason": "received", "quantity": n, "location": location})).await;
    }
    put(
        &app,
        &format!("/v1/replenishment/{b}/levels"),
        json!({"warehouse_id": w, "location": "P-02", "item_id": tea["id"], "min": 3, "max": 10}),
    )
    .await;
    assert!(open_tasks(&app).await.is_empty(), "4 is not below 3");
    let order = app.order("R-Ñ", &[("TÉ", 2)]).await;
    for status in ["confirmed", "picking", "packed", "dispatched"] {
        let r = app.set_status(order, status).await;
        assert_eq!(r.status, 200, "{status}: {:?}", r.body);
    }
    let tasks = open_tasks(&app).await;
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    assert_eq!(
        (
            tasks[0]["from_location"].as_str(),
            tasks[0]["quantity"].as_i64(),
            tasks[0]["ref"].as_str()
        ),
        (
            Some("B-01"),
            Some(8),
            Some(format!("order:{order}").as_str())
        )
    );
    // More leaving while the task is open makes no second one.
    ok(&app, &format!("/v1/inventory/{b}/adjust"),
        json!({"warehouse_id": w, "sku": "TÉ", "reason": "damaged", "quantity": 1, "location": "P-02"})).await;
    assert_eq!(open_tasks(&app).await.len(), 1);
}

#[tokio::test]
async fn levels_are_kept_at_pick_locations_of_the_business_only() {
    let app = spawn_cloud().await;
    let (b, w) = (app.a.business, app.a.warehouses[0].0);
    floor(&app).await;
    let item = app.item("TÉ").await;
    let levels = format!("/v1/replenishment/{b}/levels");
    let events = app.event_count().await;
    for (body, field) in [
        (
            json!({"warehouse_id": w, "location": "B-01", "item_id": item, "min": 1, "max": 5}),
            "location",
        ),
        (
            json!({"warehouse_id": w, "location": "NOWHERE", "item_id": item, "min": 1, "max": 5}),
            "location",
        ),
        (
            json!({"warehouse_id": w, "location": "P-01", "item_id": 999_999, "min": 1, "max": 5}),
            "item_id",
        ),
        (
            json!({"warehouse_id": w, "location": "P-01", "item_id": item, "min": 5, "max": 5}),
            "min",
        ),
        (
            json!({"warehouse_id": app.b.warehouses[0].0, "location": "P-01", "item_id": item, "min": 1, "max": 5}),
            "warehouse_id",
        ),
    ] {
        let r = app.put(&levels, body.clone()).await;
        assert_error(&r, 422);
        assert_eq!(r.body["errors"][0]["name"], field, "{body}: {:?}", r.body);
    }
    assert_eq!(app.event_count().await, events);
    put(
        &app,
        &levels,
        json!({"warehouse_id": w, "location": "P-01", "item_id": item, "min": 1, "max": 5}),
    )
    .await;
    let listed = app.get(&format!("{levels}?warehouse_id={w}")).await;
    assert_eq!(
        listed.body["data"][0]["location"], "P-01",
        "{:?}",
        listed.body
    );
}

#[tokio::test]
async fn a_wave_needing_more_than_a_face_holds_waits_for_its_refill_then_completes() {
    let app = spawn_cloud().await;
    let (b, w) = (app.a.business, app.a.warehouses[0].0);
    floor(&app).await;
    let tea = ok(
        &app,
        &format!("/v1/items/{b}/create"),
        json!({"sku": "TÉ", "name": "Té verde",
        "locations": [{"warehouse_id": w, "location": "P-02"}]}),
    )
    .await;
    for (n, location) in [(4, "P-02"), (20, "B-01")] {
        ok(&app, &format!("/v1/inventory/{b}/adjust"),
            json!({"warehouse_id": w, "sku": "TÉ", "reason": "received", "quantity": n, "location": location})).await;
    }
    put(
        &app,
        &format!("/v1/replenishment/{b}/levels"),
        json!({"warehouse_id": w, "location": "P-02", "item_id": tea["id"], "min": 2, "max": 8}),
    )
    .await;
    let order = app.order("R-Ω", &[("TÉ", 10)]).await;
    assert_eq!(app.set_status(order, "confirmed").await.status, 200);

    // The wave takes 10 from a face holding 4: a refill to 10 (more than
    // its max of 8), and the line says it waits for it.
    let wave = ok(
        &app,
        &format!("/v1/picking/{b}/waves/create"),
        json!({"warehouse_id": w}),
    )
    .await;
    let line = &wave["pick_lists"][0]["lines"][0];
    assert_eq!(
        (
            line["location"].as_str(),
            line["awaiting_replenishment"].as_bool()
        ),
        (Some("P-02"), Some(true)),
        "{wave}"
    );
    let tasks = open_tasks(&app).await;
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    assert_eq!(
        (tasks[0]["quantity"].as_i64(), tasks[0]["ref"].as_str()),
        (Some(6), Some(format!("wave:{}", wave["id"]).as_str()))
    );

    // Refilled: the line no longer waits, and the wave is picked whole.
    ok(
        &app,
        &format!("/v1/replenishment/{b}/scan"),
        json!({"task_id": tasks[0]["id"], "code": "TÉ", "location": "P-02"}),
    )
    .await;
    let wave_id = wave["id"].as_i64().expect("wave id");
    let again = app.get(&format!("/v1/picking/{b}/waves/{wave_id}")).await;
    assert_eq!(
        again.body["data"]["pick_lists"][0]["lines"][0]["awaiting_replenishment"], false,
        "{:?}",
        again.body
    );
    ok(
        &app,
        &format!("/v1/picking/{b}/item/scan"),
        json!({"wave_id": wave_id, "code": "TÉ", "quantity": 10}),
    )
    .await;
    let done = app.get(&format!("/v1/picking/{b}/waves/{wave_id}")).await;
    assert_eq!(
        (
            done.body["data"]["status"].as_str(),
            done.body["data"]["units_picked"].as_i64()
        ),
        (Some("completed"), Some(10))
    );
}
