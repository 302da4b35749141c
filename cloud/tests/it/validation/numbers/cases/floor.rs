//! The floor's routes: inbounds and receptions, waves, scans, packing, labels.

use super::super::{Fixture, Takes};
use super::{Case, case};
use depot_protocol::stock::MAX_QUANTITY;
use depot_testkit::cloud::TestCloud;
use serde_json::json;

pub(super) fn cases(app: &TestCloud, f: &Fixture) -> Vec<Case> {
    use Takes::*;
    let b = app.a.business;
    let q = MAX_QUANTITY;
    let inbound_create = format!("/v1/inbounds/{b}/orders/create");
    let reception = format!("/v1/inbounds/{b}/reception");
    let waves = format!("/v1/picking/{b}/waves/create");
    let scan = format!("/v1/picking/{b}/item/scan");
    let pack = format!("/v1/packing/{b}/pack-order");
    let label = format!("/v1/shipments/{b}/generate-label");
    let w0 = f.w0;
    vec![
        case(
            "POST",
            inbound_create.clone(),
            json!({"warehouse_id": w0, "reference": "N-PO2", "supplier": "S", "lines": [{"sku": "N-1", "quantity": 1}]}),
            "lines[0].quantity",
            Int(1, q),
        ),
        case(
            "POST",
            inbound_create.clone(),
            json!({"warehouse_id": w0, "reference": "N-PO2", "supplier": "S", "lines": [{"sku": "N-1", "quantity": 1}]}),
            "warehouse_id",
            Id,
        ),
        case(
            "POST",
            reception.clone(),
            json!({"inbound_id": f.inbound, "lines": [{"code": "N-1", "quantity": 1}]}),
            "lines[0].quantity",
            Int(1, q),
        ),
        case(
            "POST",
            reception.clone(),
            json!({"inbound_id": f.inbound, "lines": [{"code": "N-1", "accepted": 1}]}),
            "lines[0].accepted",
            Int(1, q),
        ),
        case(
            "POST",
            reception.clone(),
            json!({"inbound_id": f.inbound, "lines": [{"code": "N-1", "rejected": 1, "reason": "torn"}]}),
            "lines[0].rejected",
            Int(0, q),
        ),
        Case {
            or_names: "lines[0].quantity",
            ..case(
                "POST",
                reception.clone(),
                json!({"inbound_id": f.inbound, "lines": [{"code": "N-1", "quantity": 2, "accepted": 1, "rejected": 1, "reason": "torn"}]}),
                "lines[0].rejected",
                Int(1, 1),
            )
        },
        case(
            "POST",
            reception.clone(),
            json!({"inbound_id": f.inbound, "lines": [{"code": "N-1"}]}),
            "inbound_id",
            Id,
        ),
        case(
            "POST",
            waves.clone(),
            json!({"warehouse_id": w0, "max_orders": 1}),
            "max_orders",
            Int(1, 200),
        ),
        case(
            "POST",
            waves.clone(),
            json!({"warehouse_id": w0, "max_orders": 1}),
            "warehouse_id",
            Id,
        ),
        case(
            "POST",
            scan.clone(),
            json!({"wave_id": f.wave, "order_id": f.order, "code": "N-1", "quantity": 1}),
            "quantity",
            Int(1, 10_000),
        ),
        case(
            "POST",
            scan.clone(),
            json!({"wave_id": f.wave, "order_id": f.order, "code": "N-1"}),
            "wave_id",
            Id,
        ),
        case(
            "POST",
            scan.clone(),
            json!({"wave_id": f.wave, "order_id": f.order, "code": "N-1"}),
            "order_id",
            Id,
        ),
        Case {
            // More or fewer than ordered: named by the item's SKU.
            or_names: "N-1",
            ..case(
                "POST",
                pack.clone(),
                json!({"order_id": f.packable, "items": [{"code": "N-1", "quantity": 1}], "packages": [{"weight_g": 500}]}),
                "items[0].quantity",
                Int(1, 1),
            )
        },
        case(
            "POST",
            pack.clone(),
            json!({"order_id": f.packable, "items": [{"code": "N-1"}], "packages": [{"weight_g": 500}]}),
            "packages[0].weight_g",
            Int(1, 1_000_000),
        ),
        case(
            "POST",
            pack.clone(),
            json!({"order_id": f.packable, "items": [{"code": "N-1"}], "packages": [{"weight_g": 500, "length_mm": 1, "width_mm": 1, "height_mm": 1}]}),
            "packages[0].length_mm",
            Int(1, 10_000),
        ),
        case(
            "POST",
            pack.clone(),
            json!({"order_id": f.packable, "items": [{"code": "N-1"}], "packages": [{"weight_g": 500, "length_mm": 1, "width_mm": 1, "height_mm": 1}]}),
            "packages[0].width_mm",
            Int(1, 10_000),
        ),
        case(
            "POST",
            pack.clone(),
            json!({"order_id": f.packable, "items": [{"code": "N-1"}], "packages": [{"weight_g": 500, "length_mm": 1, "width_mm": 1, "height_mm": 1}]}),
            "packages[0].height_mm",
            Int(1, 10_000),
        ),
        case(
            "POST",
            pack.clone(),
            json!({"order_id": f.packable, "items": [{"code": "N-1"}], "packages": [{"weight_g": 500}]}),
            "order_id",
            Id,
        ),
        // A label changes nothing but is a write route all the same: the
        // package it names must be one of the shipment's.
        case(
            "POST",
            label.clone(),
            json!({"shipment_id": f.shipment, "format": "zpl", "package": 1}),
            "package",
            Int(1, 1),
        ),
        case(
            "POST",
            label.clone(),
            json!({"shipment_id": f.shipment, "format": "zpl"}),
            "shipment_id",
            Id,
        ),
    ]
}
