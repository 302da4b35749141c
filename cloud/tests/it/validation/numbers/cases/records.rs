//! The stock, catalog and order routes.

use super::super::{Fixture, Takes};
use super::{Case, case};
use depot_protocol::stock::MAX_QUANTITY;
use depot_testkit::cloud::TestCloud;
use serde_json::json;

pub(super) fn cases(app: &TestCloud, f: &Fixture) -> Vec<Case> {
    use Takes::*;
    let b = app.a.business;
    let q = MAX_QUANTITY;
    let amount = Money(0, depot_protocol::Money::MAX.cents());
    let adjust = format!("/v1/inventory/{b}/adjust");
    let item_create = format!("/v1/items/{b}/create");
    let item_edit = format!("/v1/items/{b}/{}/edit", f.item);
    let order_create = format!("/v1/orders/{b}/create");
    let (w0, w1, item) = (f.w0, f.w1, f.item);
    let dims = json!({"length_mm": 10, "width_mm": 10, "height_mm": 10});
    let price = json!([{"price_list_id": 1, "amount": "1.00", "currency": "EUR"}]);
    vec![
        case(
            "POST",
            adjust.clone(),
            json!({"warehouse_id": w0, "item_id": item, "reason": "received", "quantity": 1}),
            "quantity",
            Int(1, q),
        ),
        case(
            "POST",
            adjust.clone(),
            json!({"warehouse_id": w0, "item_id": item, "reason": "damaged", "quantity": 1}),
            "quantity",
            Int(1, q),
        ),
        case(
            "POST",
            adjust.clone(),
            json!({"warehouse_id": w0, "sku": "N-1", "reason": "adjusted", "delta": 1}),
            "delta",
            IntBut(-q, q, 0),
        ),
        case(
            "POST",
            adjust.clone(),
            json!({"warehouse_id": w0, "sku": "N-1", "reason": "cycle_count", "counted": 1}),
            "counted",
            Int(0, q),
        ),
        case(
            "POST",
            adjust.clone(),
            json!({"warehouse_id": w0, "item_id": item, "reason": "transfer", "quantity": 1, "to_warehouse_id": w1}),
            "quantity",
            Int(1, q),
        ),
        case(
            "POST",
            adjust.clone(),
            json!({"warehouse_id": w0, "item_id": item, "reason": "transfer", "quantity": 1, "to_warehouse_id": w1}),
            "to_warehouse_id",
            Id,
        ),
        case(
            "POST",
            adjust.clone(),
            json!({"warehouse_id": w0, "item_id": item, "reason": "received", "quantity": 1}),
            "warehouse_id",
            Id,
        ),
        case(
            "POST",
            adjust.clone(),
            json!({"warehouse_id": w0, "item_id": item, "reason": "received", "quantity": 1}),
            "item_id",
            Id,
        ),
        case(
            "POST",
            item_create.clone(),
            json!({"sku": "NEW-1", "name": "N", "weight_g": 1}),
            "weight_g",
            Int(1, 1_000_000),
        ),
        case(
            "POST",
            item_create.clone(),
            json!({"sku": "NEW-1", "name": "N", "dimensions": dims}),
            "dimensions.length_mm",
            Int(1, 10_000),
        ),
        case(
            "POST",
            item_create.clone(),
            json!({"sku": "NEW-1", "name": "N", "dimensions": dims}),
            "dimensions.width_mm",
            Int(1, 10_000),
        ),
        case(
            "POST",
            item_create.clone(),
            json!({"sku": "NEW-1", "name": "N", "dimensions": dims}),
            "dimensions.height_mm",
            Int(1, 10_000),
        ),
        case(
            "POST",
            item_create.clone(),
            json!({"sku": "NEW-1", "name": "N", "prices": price}),
            "prices[0].amount",
            amount,
        ),
        case(
            "POST",
            item_create.clone(),
            json!({"sku": "NEW-1", "name": "N", "prices": price}),
            "prices[0].price_list_id",
            Int(1, i64::MAX),
        ),
        case(
            "POST",
            item_create.clone(),
            json!({"sku": "NEW-1", "name": "N", "locations": [{"warehouse_id": w0, "location": "A-1"}]}),
            "locations[0].warehouse_id",
            Id,
        ),
        case(
            "PUT",
            item_edit.clone(),
            json!({"weight_g": 1}),
            "weight_g",
            Int(1, 1_000_000),
        ),
        case(
            "PUT",
            item_edit.clone(),
            json!({"dimensions": dims}),
            "dimensions.length_mm",
            Int(1, 10_000),
        ),
        case(
            "PUT",
            item_edit.clone(),
            json!({"dimensions": dims}),
            "dimensions.height_mm",
            Int(1, 10_000),
        ),
        case(
            "PUT",
            item_edit.clone(),
            json!({"prices": price}),
            "prices[0].amount",
            amount,
        ),
        case(
            "PUT",
            item_edit.clone(),
            json!({"prices": price}),
            "prices[0].price_list_id",
            Int(1, i64::MAX),
        ),
        case(
            "POST",
            order_create.clone(),
            json!({"channel": "web", "external_ref": "N-NEW", "lines": [{"sku": "N-1", "quantity": 1}]}),
            "lines[0].quantity",
            Int(1, 1_000_000),
        ),
        case(
            "POST",
            order_create.clone(),
            json!({"channel": "web", "external_ref": "N-NEW", "lines": [{"sku": "N-1", "quantity": 1, "unit_price": 1}]}),
            "lines[0].unit_price",
            amount,
        ),
        case(
            "POST",
            order_create.clone(),
            json!({"channel": "web", "external_ref": "N-NEW", "payments": [{"method": "card", "amount": 1}], "lines": [{"sku": "N-1", "quantity": 1}]}),
            "payments[0].amount",
            amount,
        ),
        case(
            "POST",
            order_create.clone(),
            json!({"channel": "web", "external_ref": "N-NEW", "warehouse_id": w0, "lines": [{"sku": "N-1", "quantity": 1}]}),
            "warehouse_id",
            Id,
        ),
    ]
}
