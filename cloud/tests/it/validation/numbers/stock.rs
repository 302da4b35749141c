//! Stock at its ceiling, and the ranges in the OpenAPI description.

use super::field_names;
use depot_protocol::stock::{MAX_ON_HAND, MAX_QUANTITY};
use depot_testkit::cloud::{assert_error, spawn_cloud};
use serde_json::{Value, json};

/// The reported bug: `delta: i64::MIN` was taken (its absolute value is
/// itself in release builds) and every decrement of the item answered 500
/// after it. And the ceiling: stock driven to `MAX_ON_HAND` refuses the
/// next unit with 422 naming the field, writes nothing, and still goes
/// down.
#[tokio::test]
async fn stock_driven_to_its_ceiling_refuses_more_and_still_goes_down() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    let (w0, w1) = (app.a.warehouses[0].0, app.a.warehouses[1].0);
    let p = format!("/v1/inventory/{b}/adjust");
    let item = app.item("BIG").await;
    let adjust = |body: Value| {
        let (app, p) = (&app, p.clone());
        async move { app.post(&p, body).await }
    };
    let level = |body: &Value| body["data"]["levels"][0]["on_hand"].as_i64();

    // The bug of the issue, first: refused, and the item still moves.
    let before = app.event_count().await;
    for delta in [
        json!(i64::MIN),
        json!(i64::MIN + 1),
        json!(i64::MAX),
        json!(-MAX_QUANTITY - 1),
    ] {
        let r = adjust(
            json!({"warehouse_id": w0, "item_id": item, "reason": "adjusted", "delta": delta}),
        )
        .await;
        assert_error(&r, 422);
        assert_eq!(field_names(&r.body), ["delta"], "{}", r.body);
    }
    assert_eq!(app.event_count().await, before);
    let r = adjust(json!({"warehouse_id": w0, "item_id": item, "reason": "picked", "quantity": 1}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(level(&r.body), Some(-1));

    // Up to the ceiling, a billion at a time.
    let mut on_hand = -1;
    while on_hand + MAX_QUANTITY <= MAX_ON_HAND {
        let r = adjust(json!({"warehouse_id": w0, "item_id": item, "reason": "received", "quantity": MAX_QUANTITY})).await;
        assert_eq!(r.status, 200, "{}", r.body);
        on_hand += MAX_QUANTITY;
        assert_eq!(level(&r.body), Some(on_hand));
    }
    let room = MAX_ON_HAND - on_hand;
    let r =
        adjust(json!({"warehouse_id": w0, "item_id": item, "reason": "adjusted", "delta": room}))
            .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(level(&r.body), Some(MAX_ON_HAND));
    assert_eq!(app.stock(item).await, (MAX_ON_HAND, 0, MAX_ON_HAND));

    // One more unit, by any route that books stock, is refused naming its
    // field, and nothing is written.
    let inbound = app
        .post(
            &format!("/v1/inbounds/{b}/orders/create"),
            json!({"warehouse_id": w0, "reference": "BIG-PO", "supplier": "S", "lines": [{"sku": "BIG", "quantity": 5}]}),
        )
        .await;
    assert_eq!(inbound.status, 200, "{}", inbound.body);
    let inbound = inbound.body["data"]["id"].as_i64().expect("inbound");
    // Stock elsewhere, to transfer in.
    let r =
        adjust(json!({"warehouse_id": w1, "item_id": item, "reason": "received", "quantity": 5}))
            .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let before = app.event_count().await;
    let inbounds_before = app.get(&format!("/v1/inbounds/{b}/orders/list")).await.body;
    for (path, body, field) in [
        (
            p.clone(),
            json!({"warehouse_id": w0, "item_id": item, "reason": "received", "quantity": 1}),
            "quantity",
        ),
        (
            p.clone(),
            json!({"warehouse_id": w0, "item_id": item, "reason": "returned", "quantity": MAX_QUANTITY}),
            "quantity",
        ),
        (
            p.clone(),
            json!({"warehouse_id": w0, "item_id": item, "reason": "adjusted", "delta": 1}),
            "delta",
        ),
        (
            p.clone(),
            json!({"warehouse_id": w1, "item_id": item, "reason": "transfer", "quantity": 1, "to_warehouse_id": w0}),
            "quantity",
        ),
        (
            format!("/v1/inbounds/{b}/reception"),
            json!({"inbound_id": inbound, "lines": [{"code": "BIG", "quantity": 1}]}),
            "lines[0].quantity",
        ),
        (
            format!("/v1/inbounds/{b}/reception"),
            json!({"inbound_id": inbound, "lines": [{"code": "BIG", "accepted": 1, "rejected": 1, "reason": "torn"}]}),
            "lines[0].accepted",
        ),
    ] {
        let r = app.post(&path, body.clone()).await;
        assert_error(&r, 422);
        assert_eq!(field_names(&r.body), [field], "{body}: {}", r.body);
        assert!(
            r.body["message"]
                .as_str()
                .is_some_and(|m| m.contains(&MAX_ON_HAND.to_string())),
            "{}",
            r.body
        );
    }
    assert_eq!(app.event_count().await, before);
    assert_eq!(app.stock(item).await, (MAX_ON_HAND, 0, MAX_ON_HAND));
    assert_eq!(
        app.get(&format!("/v1/inbounds/{b}/orders/list")).await.body,
        inbounds_before
    );

    // And it still goes down, by every route that takes stock out.
    let r = adjust(json!({"warehouse_id": w0, "item_id": item, "reason": "picked", "quantity": 1}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(level(&r.body), Some(MAX_ON_HAND - 1));
    let r = adjust(
        json!({"warehouse_id": w0, "item_id": item, "reason": "adjusted", "delta": -MAX_QUANTITY}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r =
        adjust(json!({"warehouse_id": w0, "sku": "BIG", "reason": "cycle_count", "counted": 7}))
            .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(level(&r.body), Some(7));
    assert_eq!(
        r.body["data"]["movements"][0]["delta"],
        7 - (MAX_ON_HAND - 1 - MAX_QUANTITY)
    );
    let order = app.order("BIG-1", &[("BIG", 7)]).await;
    assert_eq!(app.set_status(order, "confirmed").await.status, 200);
    assert_eq!(app.stock(item).await, (7, 7, 0));

    // Below zero there is a floor as well: a discrepancy, not a wrap.
    let other = app.item("DEEP").await;
    let mut on_hand = 0;
    while on_hand - MAX_QUANTITY >= -MAX_ON_HAND {
        let r = adjust(json!({"warehouse_id": w0, "item_id": other, "reason": "damaged", "quantity": MAX_QUANTITY})).await;
        assert_eq!(r.status, 200, "{}", r.body);
        on_hand -= MAX_QUANTITY;
    }
    assert_eq!(on_hand, -MAX_ON_HAND);
    let r =
        adjust(json!({"warehouse_id": w0, "item_id": other, "reason": "damaged", "quantity": 1}))
            .await;
    assert_error(&r, 422);
    assert_eq!(field_names(&r.body), ["quantity"]);
    let r =
        adjust(json!({"warehouse_id": w0, "item_id": other, "reason": "received", "quantity": 1}))
            .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(level(&r.body), Some(1 - MAX_ON_HAND));
    let r = app
        .get(&format!("/v1/inventory/{b}/items/list?negative=true"))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["data"][0]["on_hand"], 1 - MAX_ON_HAND);
}

/// The ranges are in the OpenAPI description, where the types are.
#[tokio::test]
async fn the_ranges_are_documented() {
    let app = spawn_cloud().await;
    let r = app.call("GET", "/v1/openapi.json", None, None).await;
    assert_eq!(r.status, 200);
    let schemas = &r.body["components"]["schemas"];
    for (schema, field, min, max) in [
        ("AdjustRequest", "quantity", 1, MAX_QUANTITY),
        ("AdjustRequest", "delta", -MAX_QUANTITY, MAX_QUANTITY),
        ("AdjustRequest", "counted", 0, MAX_QUANTITY),
        ("ItemCreate", "weight_g", 1, 1_000_000),
        ("ItemEdit", "weight_g", 1, 1_000_000),
        ("Dimensions", "length_mm", 1, 10_000),
        ("OrderLineCreate", "quantity", 1, 1_000_000),
        ("InboundLineCreate", "quantity", 1, MAX_QUANTITY),
        ("ReceptionLine", "quantity", 1, MAX_QUANTITY),
        ("ReceptionLine", "accepted", 0, MAX_QUANTITY),
        ("ReceptionLine", "rejected", 0, MAX_QUANTITY),
        ("WaveCreate", "max_orders", 1, 200),
        ("ScanRequest", "quantity", 1, 10_000),
        ("PackItem", "quantity", 1, 1_000_000),
        ("PackageIn", "weight_g", 1, 1_000_000),
        ("PackageIn", "height_mm", 1, 10_000),
        ("LabelRequest", "package", 1, 50),
        ("RuleInput", "status", 0, 1),
        ("FormCreate", "max_links", 0, 20),
        ("FormField", "max_length", 1, 2000),
    ] {
        let p = &schemas[schema]["properties"][field];
        assert_eq!(
            (p["minimum"].as_i64(), p["maximum"].as_i64()),
            (Some(min), Some(max)),
            "{schema}.{field}: {p}"
        );
    }
    assert!(
        schemas["Money"]["pattern"].is_string(),
        "{}",
        schemas["Money"]
    );
    let params = r.body["paths"]["/v1/orders/{business_id}/list"]["get"]["parameters"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let length = params
        .iter()
        .find(|p| p["name"] == "length")
        .map(|p| p["schema"].clone())
        .unwrap_or_default();
    assert_eq!(
        (length["minimum"].as_i64(), length["maximum"].as_i64()),
        (Some(1), Some(1000)),
        "{length}"
    );
}
