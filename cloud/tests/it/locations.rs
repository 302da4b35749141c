//! Locations as records, and stock held per location: made, listed and
//! edited through the API, refused where they are another tenant's or
//! malformed, and followed by every movement.

use depot_testkit::cloud::{TestCloud, assert_error, spawn_cloud};
use serde_json::{Value, json};

async fn made(app: &TestCloud, body: Value) -> Value {
    let r = app
        .post(&format!("/v1/locations/{}/create", app.a.business), body)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body["data"].clone()
}

fn codes(list: &Value) -> Vec<&str> {
    list["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l["code"].as_str())
        .collect()
}

#[tokio::test]
async fn locations_are_records_of_one_warehouse_and_one_tenant() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    let (w1, w2) = (app.a.warehouses[0].0, app.a.warehouses[1].0);
    let pick = made(
        &app,
        json!({"warehouse_id": w1, "code": "A-01-02-03", "type": "pick",
                                 "zone": "Ζώνη Α", "sequence": 20, "max_units": 40}),
    )
    .await;
    assert_eq!(pick["type"], "pick");
    assert_eq!(pick["zone"], "Ζώνη Α");
    assert_eq!(
        (pick["on_hand"].as_i64(), pick["items"].as_i64()),
        (Some(0), Some(0))
    );
    made(
        &app,
        json!({"warehouse_id": w1, "code": "棚-1", "type": "bulk", "sequence": 10}),
    )
    .await;
    made(
        &app,
        json!({"warehouse_id": w1, "code": "DOCK", "type": "dock"}),
    )
    .await;
    // The same code in another warehouse is another location.
    made(
        &app,
        json!({"warehouse_id": w2, "code": "A-01-02-03", "type": "pick"}),
    )
    .await;

    let events = app.event_count().await;
    let create = format!("/v1/locations/{b}/create");
    let again = app
        .post(
            &create,
            json!({"warehouse_id": w1, "code": "A-01-02-03", "type": "bulk"}),
        )
        .await;
    assert_error(&again, 409);
    assert_eq!(again.body["errors"][0]["name"], "code");
    for (body, field) in [
        (
            json!({"warehouse_id": w1, "code": "A 1", "type": "bulk"}),
            "code",
        ),
        (
            json!({"warehouse_id": w1, "code": "X".repeat(33), "type": "bulk"}),
            "code",
        ),
        (json!({"warehouse_id": w1, "code": "Z-1"}), "type"),
        (
            json!({"warehouse_id": w1, "code": "Z-1", "type": "bulk", "max_units": 0}),
            "max_units",
        ),
        (
            json!({"warehouse_id": app.b.warehouses[0].0, "code": "Z-1", "type": "bulk"}),
            "warehouse_id",
        ),
    ] {
        let r = app.post(&create, body.clone()).await;
        assert_error(&r, 422);
        assert_eq!(r.body["errors"][0]["name"], field, "{body}: {:?}", r.body);
    }
    let r = app
        .post(
            &create,
            json!({"warehouse_id": w1, "code": "Z-1", "type": "attic"}),
        )
        .await;
    assert_error(&r, 422);
    assert_eq!(app.event_count().await, events, "refusals write nothing");

    // Walking order within a warehouse: by sequence, then the others by code.
    let list = app
        .get(&format!("/v1/locations/{b}/list?warehouse_id={w1}"))
        .await;
    assert_eq!(list.status, 200, "{:?}", list.body);
    assert_eq!(codes(&list.body), ["棚-1", "A-01-02-03", "DOCK"]);
    assert_eq!(list.body["recordsTotal"], "4");
    let picks = app.get(&format!("/v1/locations/{b}/list?type=pick")).await;
    assert_eq!(codes(&picks.body), ["A-01-02-03", "A-01-02-03"]);
    let zone = app
        .get(&format!("/v1/locations/{b}/list?zone=Ζώνη%20Α"))
        .await;
    assert_eq!(codes(&zone.body), ["A-01-02-03"]);
    // A blank filter is no filter (what the fuzzer sent: a narrow no-break
    // space); a type that is none is named.
    let blank = app
        .get(&format!("/v1/locations/{b}/list?type=%E2%80%AF"))
        .await;
    assert_eq!(blank.body["recordsFiltered"], "4", "{:?}", blank.body);
    let r = app.get(&format!("/v1/locations/{b}/list?type=attic")).await;
    assert_error(&r, 422);
    assert_eq!(r.body["errors"][0]["name"], "type");

    // An edit keeps what it does not name; the code and warehouse stay.
    let id = pick["id"].as_i64().expect("id");
    let edit = format!("/v1/locations/{b}/{id}/edit");
    let r = app.put(&edit, json!({"zone": null, "sequence": 5})).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["data"]["zone"], Value::Null);
    assert_eq!(r.body["data"]["max_units"], 40);
    let r = app.put(&edit, json!({"code": "A-9"})).await;
    assert_error(&r, 422);
    assert_eq!(r.body["errors"][0]["name"], "code");
    let one = app.get(&format!("/v1/locations/{b}/{id}")).await;
    assert_eq!(one.body["data"]["sequence"], 5);

    // Another tenant's key reaches none of it.
    let key_b = app.b.key.as_str();
    let r = app
        .call(
            "GET",
            &format!("/v1/locations/{}/{id}", app.b.business),
            Some(key_b),
            None,
        )
        .await;
    assert_error(&r, 404);
    let r = app
        .call(
            "PUT",
            &format!("/v1/locations/{}/{id}/edit", app.b.business),
            Some(key_b),
            Some(json!({"sequence": 1})),
        )
        .await;
    assert_error(&r, 404);
    let r = app
        .call("GET", &format!("/v1/locations/{b}/list"), Some(key_b), None)
        .await;
    assert_error(&r, 401);
    let theirs = app
        .call(
            "GET",
            &format!("/v1/locations/{}/list", app.b.business),
            Some(key_b),
            None,
        )
        .await;
    assert_eq!(theirs.body["recordsTotal"], "0");
}

#[tokio::test]
async fn stock_is_held_per_location_and_every_movement_names_one() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    let w = app.a.warehouses[0].0;
    // An item's own bin becomes a pick location of its warehouse.
    let r = app
        .post(
            &format!("/v1/items/{b}/create"),
            json!({"sku": "ΦΕΤΑ-1", "name": "Φέτα 400 g",
            "locations": [{"warehouse_id": w, "location": "P-01"}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let item = r.body["data"]["id"].as_i64().expect("id");
    let own = app.get(&format!("/v1/locations/{b}/list?type=pick")).await;
    assert_eq!(codes(&own.body), ["P-01"]);
    made(
        &app,
        json!({"warehouse_id": w, "code": "DOCK-1", "type": "dock"}),
    )
    .await;
    made(
        &app,
        json!({"warehouse_id": w, "code": "B-01", "type": "bulk"}),
    )
    .await;

    let adjust = format!("/v1/inventory/{b}/adjust");
    let ok = |body: Value| {
        let (app, adjust) = (&app, adjust.clone());
        async move {
            let r = app.post(&adjust, body).await;
            assert_eq!(r.status, 200, "{:?}", r.body);
            r.body["data"].clone()
        }
    };
    let r = ok(json!({"warehouse_id": w, "item_id": item, "reason": "received", "quantity": 10, "location": "DOCK-1"})).await;
    assert_eq!(r["movements"][0]["location"], "DOCK-1");
    // No location named: the item's own.
    let r =
        ok(json!({"warehouse_id": w, "item_id": item, "reason": "received", "quantity": 5})).await;
    assert_eq!(r["movements"][0]["location"], "P-01");
    // Within the warehouse, from the dock to bulk.
    let r = ok(
        json!({"warehouse_id": w, "item_id": item, "reason": "transfer", "quantity": 4,
                      "location": "DOCK-1", "to_location": "B-01"}),
    )
    .await;
    let moved: Vec<(&str, i64)> = r["movements"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            (
                m["location"].as_str().unwrap_or(""),
                m["delta"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(moved, [("DOCK-1", -4), ("B-01", 4)]);
    assert_eq!(r["levels"].as_array().map(Vec::len), Some(1));
    // A count of one location counts that location alone.
    let r = ok(json!({"warehouse_id": w, "item_id": item, "reason": "cycle_count", "counted": 3, "location": "B-01"})).await;
    assert_eq!(
        (
            r["movements"][0]["location"].as_str(),
            r["movements"][0]["delta"].as_i64()
        ),
        (Some("B-01"), Some(-1))
    );
    assert_eq!(r["levels"][0]["on_hand"], 14);

    // A location that is not on record, or is another warehouse's, books
    // nothing.
    let events = app.event_count().await;
    for (body, field) in [
        (
            json!({"warehouse_id": w, "item_id": item, "reason": "received", "quantity": 1, "location": "NOWHERE"}),
            "location",
        ),
        (
            json!({"warehouse_id": w, "item_id": item, "reason": "transfer", "quantity": 1, "to_location": "NOWHERE"}),
            "to_location",
        ),
        (
            json!({"warehouse_id": w, "item_id": item, "reason": "transfer", "quantity": 1, "to_location": "P-01"}),
            "to_location",
        ),
        (
            json!({"warehouse_id": w, "item_id": item, "reason": "transfer", "quantity": 1}),
            "to_warehouse_id",
        ),
        (
            json!({"warehouse_id": w, "item_id": item, "reason": "received", "quantity": 1, "location": "shelf 3"}),
            "location",
        ),
    ] {
        let r = app.post(&adjust, body.clone()).await;
        assert_error(&r, 422);
        assert_eq!(r.body["errors"][0]["name"], field, "{body}: {:?}", r.body);
    }
    assert_eq!(app.event_count().await, events);

    // The inventory says where the stock is, and lists one location's.
    let list = app
        .get(&format!(
            "/v1/inventory/{b}/items/list?item_id={item}&warehouse_id={w}"
        ))
        .await;
    let row = &list.body["data"][0];
    assert_eq!(row["on_hand"], 14);
    assert_eq!(row["location"], "P-01");
    let bins: Vec<(&str, i64)> = row["bins"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|b| {
            (
                b["location"].as_str().unwrap_or("?"),
                b["on_hand"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(bins, [("B-01", 3), ("DOCK-1", 6), ("P-01", 5)]);
    let at = app
        .get(&format!("/v1/inventory/{b}/items/list?location=B-01"))
        .await;
    assert_eq!(at.body["recordsFiltered"], "1");
    assert_eq!(
        at.body["data"][0]["bins"],
        json!([{"location": "B-01", "lot": null, "on_hand": 3}])
    );
    let none = app
        .get(&format!("/v1/inventory/{b}/items/list?location=NOWHERE"))
        .await;
    assert_eq!(none.body["recordsFiltered"], "0");
    // Longer than any code: refused as described, not searched for.
    let long = app
        .get(&format!(
            "/v1/inventory/{b}/items/list?location={}",
            "0".repeat(33)
        ))
        .await;
    assert_error(&long, 422);
    assert_eq!(long.body["errors"][0]["name"], "location");

    // Locations say what they hold; empty ones are found as such.
    let full = app
        .get(&format!("/v1/locations/{b}/list?occupied=true"))
        .await;
    assert_eq!(codes(&full.body), ["B-01", "DOCK-1", "P-01"]);
    assert_eq!(full.body["data"][1]["on_hand"], 6);
    made(
        &app,
        json!({"warehouse_id": w, "code": "B-02", "type": "bulk"}),
    )
    .await;
    let empty = app
        .get(&format!("/v1/locations/{b}/list?occupied=false"))
        .await;
    assert_eq!(codes(&empty.body), ["B-02"]);
    assert!(app.wms.check_ledger().await.expect("check").is_empty());
}

#[tokio::test]
async fn a_wave_walks_the_pick_locations_in_sequence_and_ships_from_them() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    let w = app.a.warehouses[0].0;
    // Codes sort one way, the walk goes the other.
    made(
        &app,
        json!({"warehouse_id": w, "code": "A-01", "type": "pick", "sequence": 200}),
    )
    .await;
    made(
        &app,
        json!({"warehouse_id": w, "code": "Z-99", "type": "pick", "sequence": 100}),
    )
    .await;
    for (sku, at) in [("FIRST-IN-CODE", "A-01"), ("FIRST-IN-WALK", "Z-99")] {
        let r = app
            .post(
                &format!("/v1/items/{b}/create"),
                json!({"sku": sku, "name": sku,
                "locations": [{"warehouse_id": w, "location": at}]}),
            )
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
        app.receive(sku, 5).await;
    }
    let order = app
        .order("WALK-1", &[("FIRST-IN-CODE", 2), ("FIRST-IN-WALK", 1)])
        .await;
    assert_eq!(app.set_status(order, "confirmed").await.status, 200);
    let r = app
        .post(
            &format!("/v1/picking/{b}/waves/create"),
            json!({"warehouse_id": w}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let walk: Vec<&str> = r.body["data"]["pick_lists"][0]["lines"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l["location"].as_str())
        .collect();
    assert_eq!(walk, ["Z-99", "A-01"]);
    let wave = r.body["data"]["id"].as_i64().expect("wave");
    for (sku, n) in [("FIRST-IN-WALK", 1), ("FIRST-IN-CODE", 2)] {
        let r = app
            .post(
                &format!("/v1/picking/{b}/item/scan"),
                json!({"wave_id": wave, "code": sku, "quantity": n}),
            )
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
    }
    for status in ["packed", "dispatched"] {
        let r = app.set_status(order, status).await;
        assert_eq!(r.status, 200, "{status}: {:?}", r.body);
    }
    let left = app
        .get(&format!("/v1/locations/{b}/list?warehouse_id={w}"))
        .await;
    let held: Vec<(&str, i64)> = left.body["data"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            (
                l["code"].as_str().unwrap_or(""),
                l["on_hand"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(held, [("Z-99", 4), ("A-01", 3)]);
    assert!(app.wms.check_ledger().await.expect("check").is_empty());
}
