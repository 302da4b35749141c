//! Cycle counts through the API: made for a zone, counted blind, a
//! variance over the tolerance recounted by another key, approved to book
//! exactly the variance, with stock moved out while the count was open;
//! every wrong request refused with nothing written.

use depot_testkit::cloud::{TestCloud, assert_error, spawn_cloud};
use serde_json::{Value, json};

async fn ok(app: &TestCloud, key: &str, path: &str, body: Value) -> Value {
    let r = app.call("POST", path, Some(key), Some(body)).await;
    assert_eq!(r.status, 200, "{path}: {:?}", r.body);
    r.body["data"].clone()
}

/// On-hand of `sku` at `location` in tenant A's first warehouse.
async fn at(app: &TestCloud, sku: &str, location: &str) -> i64 {
    let r = app
        .get(&format!(
            "/v1/inventory/{}/items/list?location={location}&warehouse_id={}",
            app.a.business, app.a.warehouses[0].0
        ))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|row| row["sku"] == sku)
        .flat_map(|row| row["bins"].as_array().cloned().unwrap_or_default())
        .filter(|bin| bin["location"] == location)
        .map(|bin| bin["on_hand"].as_i64().unwrap_or(0))
        .sum()
}

struct Floor {
    app: TestCloud,
    /// A second key of tenant A: another person.
    other: String,
}

async fn floor() -> Floor {
    let app = spawn_cloud().await;
    let (b, w) = (app.a.business, app.a.warehouses[0].0);
    let key = app.a.key.clone();
    for (code, kind, zone, sequence) in [
        ("A-01", "pick", "Α", 1),
        ("A-02", "bulk", "Α", 2),
        ("B-01", "bulk", "B", 3),
    ] {
        ok(&app, &key, &format!("/v1/locations/{b}/create"),
            json!({"warehouse_id": w, "code": code, "type": kind, "zone": zone, "sequence": sequence})).await;
    }
    for sku in ["ΚΑΦΕΣ-250", "TÉ-VERDE"] {
        app.item(sku).await;
    }
    for (sku, n, location) in [("ΚΑΦΕΣ-250", 10, "A-01"), ("TÉ-VERDE", 5, "A-02")] {
        ok(&app, &key, &format!("/v1/inventory/{b}/adjust"),
            json!({"warehouse_id": w, "sku": sku, "reason": "received", "quantity": n, "location": location})).await;
    }
    let other = app
        .wms
        .create_key(app.a.business, Some("second counter".into()))
        .await
        .expect("a second key")
        .secret;
    Floor { app, other }
}

#[tokio::test]
async fn a_variance_is_recounted_by_another_key_and_approval_books_exactly_it() {
    let Floor { app, other } = floor().await;
    let (b, w) = (app.a.business, app.a.warehouses[0].0);
    let key = app.a.key.clone();
    let count = ok(
        &app,
        &key,
        &format!("/v1/counts/{b}/create"),
        json!({"warehouse_id": w, "zone": "Α", "ref": "weekly Α"}),
    )
    .await;
    let id = count["id"].as_i64().expect("id");
    assert_eq!(
        (count["status"].as_str(), count["blind"].as_bool()),
        (Some("open"), Some(true))
    );
    assert_eq!(count["scope"], "zone Α");
    assert_eq!(count["locations"].as_array().map(Vec::len), Some(2));
    let lines = count["lines"].as_array().cloned().unwrap_or_default();
    assert_eq!(lines.len(), 2, "{count}");
    assert!(
        lines
            .iter()
            .all(|l| l["expected"].is_null() && l["status"] == "pending"),
        "{count}"
    );
    let scan = format!("/v1/counts/{b}/{id}/scan");

    // The first counter finds 9 of 10 at A-01 (blind: not told the books'
    // figure), all 5 at A-02, and closes both.
    let r = ok(
        &app,
        &key,
        &scan,
        json!({"location": "A-01", "code": "ΚΑΦΕΣ-250", "quantity": 9}),
    )
    .await;
    assert!(r["line"]["expected"].is_null(), "{r}");
    assert!(
        !r["message"].as_str().unwrap_or("").contains("books"),
        "{r}"
    );
    ok(
        &app,
        &key,
        &scan,
        json!({"location": "A-02", "code": "TÉ-VERDE", "quantity": 5}),
    )
    .await;
    let r = ok(&app, &key, &scan, json!({"location": "A-02"})).await;
    assert_eq!(r["location_status"], "done");
    let r = ok(&app, &key, &scan, json!({"location": "A-01"})).await;
    assert_eq!(
        (r["location_status"].as_str(), r["recount"].clone()),
        (Some("recount"), json!(["ΚΑΦΕΣ-250"]))
    );

    // Not approvable yet; the recount is not the first counter's to make.
    let approve = format!("/v1/counts/{b}/{id}/approve");
    let events = app.event_count().await;
    let r = app.call("POST", &approve, Some(&key), None).await;
    assert_error(&r, 409);
    assert!(
        r.body["message"]
            .as_str()
            .unwrap_or("")
            .contains("A-01 (recount)"),
        "{:?}",
        r.body
    );
    let r = app
        .call(
            "POST",
            &scan,
            Some(&key),
            Some(json!({"location": "A-01", "code": "ΚΑΦΕΣ-250", "quantity": 9})),
        )
        .await;
    assert_error(&r, 409);
    assert_eq!(app.event_count().await, events);

    // Three units leave A-01 while the count is open (nothing freezes it);
    // the second counter then finds the 6 that are there.
    ok(
        &app,
        &key,
        &format!("/v1/inventory/{b}/adjust"),
        json!({"warehouse_id": w, "sku": "ΚΑΦΕΣ-250",
        "reason": "transfer", "quantity": 3, "location": "A-01", "to_location": "B-01"}),
    )
    .await;
    ok(
        &app,
        &other,
        &scan,
        json!({"location": "A-01", "code": "ΚΑΦΕΣ-250", "quantity": 6}),
    )
    .await;
    let r = ok(&app, &other, &scan, json!({"location": "A-01"})).await;
    assert_eq!(r["location_status"], "done");

    // Approval books the one unit missing at the recount, and only that.
    let approved = ok(&app, &key, &approve, json!(null)).await;
    assert_eq!(approved["status"], "approved");
    let line = approved["lines"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|l| l["sku"] == "ΚΑΦΕΣ-250")
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (
            line["first_counted"].as_i64(),
            line["expected"].as_i64(),
            line["counted"].as_i64(),
            line["variance"].as_i64()
        ),
        (Some(9), Some(7), Some(6), Some(-1)),
        "{line}"
    );
    assert_eq!(at(&app, "ΚΑΦΕΣ-250", "A-01").await, 6);
    assert_eq!(at(&app, "ΚΑΦΕΣ-250", "B-01").await, 3);
    assert_eq!(at(&app, "TÉ-VERDE", "A-02").await, 5);
    let moves: Vec<Value> = app
        .wms
        .events_since(0, 1_000_000)
        .await
        .expect("events")
        .into_iter()
        .filter(|e| e.kind == "stock.moved" && e.payload["reason"] == "cycle_count")
        .map(|e| e.payload)
        .collect();
    assert_eq!(moves.len(), 1, "{moves:?}");
    assert_eq!(
        (moves[0]["delta"].as_i64(), moves[0]["ref"].as_str()),
        (Some(-1), Some(format!("count:{id}").as_str()))
    );

    // Done is done; and the locations counted today leave only B-01 for a
    // count of what was not counted lately.
    assert_error(&app.call("POST", &approve, Some(&key), None).await, 409);
    assert_error(
        &app.call("POST", &scan, Some(&key), Some(json!({"location": "A-01"})))
            .await,
        409,
    );
    let next = ok(
        &app,
        &key,
        &format!("/v1/counts/{b}/create"),
        json!({"warehouse_id": w, "not_counted_days": 1}),
    )
    .await;
    assert_eq!(
        next["locations"],
        json!([{"location": "B-01", "status": "open", "closed_by": null}])
    );
    let list = app
        .get(&format!("/v1/counts/{b}/list?status=approved"))
        .await;
    assert_eq!(
        list.body["data"].as_array().map(Vec::len),
        Some(1),
        "{:?}",
        list.body
    );
}

#[tokio::test]
async fn found_goods_a_tolerance_and_an_open_count_view() {
    let Floor { app, .. } = floor().await;
    let (b, w) = (app.a.business, app.a.warehouses[0].0);
    let key = app.a.key.clone();
    let count = ok(
        &app,
        &key,
        &format!("/v1/counts/{b}/create"),
        json!({"warehouse_id": w,
        "locations": ["A-01"], "blind": false, "tolerance_units": 2}),
    )
    .await;
    let id = count["id"].as_i64().expect("id");
    let scan = format!("/v1/counts/{b}/{id}/scan");
    // Not blind: the counter is told the books' figure.
    let r = ok(
        &app,
        &key,
        &scan,
        json!({"location": "A-01", "code": "ΚΑΦΕΣ-250", "quantity": 9}),
    )
    .await;
    assert!(
        r["message"]
            .as_str()
            .unwrap_or("")
            .contains("the books say 10"),
        "{r}"
    );
    assert_eq!(r["line"]["variance"], -1);
    // Goods the books do not have here are a line of their own.
    let r = ok(
        &app,
        &key,
        &scan,
        json!({"location": "A-01", "code": "TÉ-VERDE", "quantity": 2}),
    )
    .await;
    assert_eq!(
        (
            r["line"]["expected"].as_i64(),
            r["line"]["variance"].as_i64()
        ),
        (Some(0), Some(2))
    );
    // A later scan replaces the figure; one that adds (a scanner counting
    // unit by unit) adds to it.
    ok(
        &app,
        &key,
        &scan,
        json!({"location": "A-01", "code": "TÉ-VERDE", "quantity": 1}),
    )
    .await;
    let r = ok(
        &app,
        &key,
        &scan,
        json!({"location": "A-01", "code": "TÉ-VERDE", "add": true}),
    )
    .await;
    assert_eq!(r["line"]["counted"], 2);
    // Within two units each: no recount.
    let r = ok(&app, &key, &scan, json!({"location": "A-01"})).await;
    assert_eq!(
        (r["location_status"].as_str(), r["recount"].clone()),
        (Some("done"), json!([]))
    );
    let approved = ok(
        &app,
        &key,
        &format!("/v1/counts/{b}/{id}/approve"),
        json!(null),
    )
    .await;
    assert_eq!(approved["lines_total"], 2);
    assert_eq!(at(&app, "ΚΑΦΕΣ-250", "A-01").await, 9);
    assert_eq!(at(&app, "TÉ-VERDE", "A-01").await, 2);
    assert_eq!(at(&app, "TÉ-VERDE", "A-02").await, 5);
}

#[tokio::test]
async fn wrong_requests_are_refused_and_write_nothing() {
    let Floor { app, .. } = floor().await;
    let (b, w) = (app.a.business, app.a.warehouses[0].0);
    let key = app.a.key.clone();
    let create = format!("/v1/counts/{b}/create");
    let events = app.event_count().await;
    for (body, status, field) in [
        (json!({"warehouse_id": w}), 422, "locations"),
        (
            json!({"warehouse_id": w, "zone": "Α", "locations": ["A-01"]}),
            422,
            "locations",
        ),
        (
            json!({"warehouse_id": w, "locations": ["NOWHERE"]}),
            422,
            "locations[0]",
        ),
        (
            json!({"warehouse_id": w, "locations": []}),
            422,
            "locations",
        ),
        (json!({"warehouse_id": w, "zone": "Ω"}), 422, "zone"),
        (
            json!({"warehouse_id": w, "zone": "Α", "limit": 1}),
            422,
            "zone",
        ),
        (
            json!({"warehouse_id": w, "item_ids": [999999]}),
            422,
            "item_ids[0]",
        ),
        (
            json!({"warehouse_id": w, "not_counted_days": 0}),
            422,
            "not_counted_days",
        ),
        (
            json!({"warehouse_id": w, "zone": "Α", "tolerance_percent": 101}),
            422,
            "tolerance_percent",
        ),
        (
            json!({"warehouse_id": app.b.warehouses[0].0, "zone": "Α"}),
            422,
            "warehouse_id",
        ),
    ] {
        let r = app
            .call("POST", &create, Some(&key), Some(body.clone()))
            .await;
        assert_error(&r, status);
        assert!(
            r.body["errors"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|e| e["name"] == field),
            "{body}: {:?}",
            r.body
        );
    }
    assert_eq!(app.event_count().await, events);

    let count = ok(
        &app,
        &key,
        &create,
        json!({"warehouse_id": w, "locations": ["A-01"]}),
    )
    .await;
    let id = count["id"].as_i64().expect("id");
    let events = app.event_count().await;
    // A location in an open count is not counted twice at once.
    let r = app
        .call(
            "POST",
            &create,
            Some(&key),
            Some(json!({"warehouse_id": w, "zone": "Α"})),
        )
        .await;
    assert_error(&r, 409);
    let scan = format!("/v1/counts/{b}/{id}/scan");
    for (body, status) in [
        (json!({"location": "A-02", "code": "TÉ-VERDE"}), 422),
        (json!({"location": "A-01", "code": "NO-SUCH-SKU"}), 404),
        (
            json!({"location": "A-01", "code": "ΚΑΦΕΣ-250", "quantity": -1}),
            422,
        ),
        (
            json!({"location": "A-01", "code": "ΚΑΦΕΣ-250", "quantity": 1_000_000_001i64}),
            422,
        ),
        (json!({"location": "A-01 A-02"}), 422),
    ] {
        assert_error(
            &app.call("POST", &scan, Some(&key), Some(body)).await,
            status,
        );
    }
    // Another tenant sees no count 404 and cannot scan it.
    let r = app
        .call(
            "GET",
            &format!("/v1/counts/{}/{id}", app.b.business),
            Some(&app.b.key),
            None,
        )
        .await;
    assert_error(&r, 404);
    let r = app
        .call(
            "POST",
            &format!("/v1/counts/{}/{id}/scan", app.b.business),
            Some(&app.b.key),
            Some(json!({"location": "A-01"})),
        )
        .await;
    assert_error(&r, 404);
    assert_eq!(app.event_count().await, events);

    // Cancelled: nothing booked, and A-01 may be counted again.
    let r = ok(
        &app,
        &key,
        &format!("/v1/counts/{b}/{id}/cancel"),
        json!(null),
    )
    .await;
    assert_eq!(r["status"], "cancelled");
    assert_error(
        &app.call("POST", &scan, Some(&key), Some(json!({"location": "A-01"})))
            .await,
        409,
    );
    ok(&app, &key, &create, json!({"warehouse_id": w, "zone": "Α"})).await;
    assert_eq!(at(&app, "ΚΑΦΕΣ-250", "A-01").await, 10);
}

#[tokio::test]
async fn lots_are_counted_apart_and_a_scan_without_one_is_asked_for_it() {
    let Floor { app, .. } = floor().await;
    let (b, w) = (app.a.business, app.a.warehouses[0].0);
    let key = app.a.key.clone();
    const GTIN: &str = "09506000134352";
    let lot = |lot: &str| format!("]d201{GTIN}17271231\u{1d}10{lot}");
    ok(
        &app,
        &key,
        &format!("/v1/items/{b}/create"),
        json!({"sku": "ΟΡΟΣ", "name": "Ορός 30 ml", "gtin": GTIN, "lot_tracked": true}),
    )
    .await;
    let po = ok(
        &app,
        &key,
        &format!("/v1/inbounds/{b}/orders/create"),
        json!({"warehouse_id": w,
        "reference": "PO-Λ", "supplier": "Φάρμακα ΑΕ", "lines": [{"sku": "ΟΡΟΣ", "quantity": 10}]}),
    )
    .await;
    for (l, n) in [("L1", 4), ("L2", 6)] {
        ok(&app, &key, &format!("/v1/inbounds/{b}/reception"),
            json!({"inbound_id": po["id"], "location": "B-01", "lines": [{"code": lot(l), "quantity": n}]})).await;
    }
    let count = ok(
        &app,
        &key,
        &format!("/v1/counts/{b}/create"),
        json!({"warehouse_id": w, "locations": ["B-01"], "tolerance_units": 5}),
    )
    .await;
    let lots: Vec<&str> = count["lines"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l["lot"].as_str())
        .collect();
    assert_eq!(lots, ["L1", "L2"], "{count}");
    let id = count["id"].as_i64().expect("id");
    let scan = format!("/v1/counts/{b}/{id}/scan");
    // The SKU alone cannot say which lot: refused, naming the lots.
    let r = app
        .call(
            "POST",
            &scan,
            Some(&key),
            Some(json!({"location": "B-01", "code": "ΟΡΟΣ", "quantity": 4})),
        )
        .await;
    assert_error(&r, 422);
    assert!(
        r.body["errors"][0]["status"]
            .as_str()
            .is_some_and(|m| m.contains("L1, L2")),
        "{:?}",
        r.body
    );
    // Each lot as scanned; L2 is not scanned, so closing counts it as 0
    // (over the tolerance of 5: a recount).
    ok(
        &app,
        &key,
        &scan,
        json!({"location": "B-01", "code": lot("L1"), "quantity": 3}),
    )
    .await;
    let r = ok(&app, &key, &scan, json!({"location": "B-01"})).await;
    assert_eq!(r["recount"], json!(["ΟΡΟΣ"]), "{r}");
    let c = app.get(&format!("/v1/counts/{b}/{id}")).await.body["data"].clone();
    let status: Vec<(&str, &str)> = c["lines"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| Some((l["lot"].as_str()?, l["status"].as_str()?)))
        .collect();
    assert_eq!(status, [("L1", "final"), ("L2", "recount")], "{c}");
}
