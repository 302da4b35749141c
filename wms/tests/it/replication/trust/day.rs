//! A day of the floor's work, done at an edge or the cloud: the events
//! whose references the trust tests then turn against another business.

use super::{EDGE, Records, from, pull};
use depot_protocol::WarehouseId;
use depot_protocol::catalogue::refs::Entity;
use depot_protocol::event::EventKind;
use depot_protocol::order::OrderStatus;
use depot_protocol::printing::JobStatus;
use depot_protocol::shipping::{CarrierEvent, Milestone};
use depot_protocol::tenant::Caller;
use depot_wms::Wms;
use serde_json::json;

/// A day of the floor's work in `w`, done by `wms` for `c`: a reception, a
/// wave picked whole, an order packed and its run closed, returned, a
/// print job.
/// Answers the records it made or used.
pub(super) async fn floor_day(
    wms: &Wms,
    cloud: &Wms,
    c: Caller,
    w: WarehouseId,
    sku: &str,
    tag: &str,
) -> Records {
    let b = c.business_id;
    let mut r = Records::default();
    r.0.insert(Entity::Warehouse, w.0);
    let item = cloud
        .list_items(b, Default::default(), Default::default())
        .await
        .expect("items")
        .rows
        .into_iter()
        .find(|i| i.sku == sku)
        .expect("item");
    r.0.insert(Entity::Item, item.id.0);
    let inbound = cloud
        .create_inbound(
            b,
            from(
                json!({"warehouse_id": w.0, "reference": format!("PO-{tag}"), "supplier": "Acme",
                        "lines": [{"sku": sku, "quantity": 5}]}),
            ),
        )
        .await
        .expect("inbound");
    r.0.insert(Entity::Inbound, inbound.id);
    let (order, _) = cloud
        .create_order(
            c,
            from(
                json!({"channel": "web", "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"}, "external_ref": format!("R-{tag}"), "warehouse_id": w.0,
                        "lines": [{"sku": sku, "quantity": 2}]}),
            ),
        )
        .await
        .expect("order");
    r.0.insert(Entity::Order, order.id.0);
    let printer = cloud
        .create_printer(
            b,
            from(json!({"name": format!("Pack {tag}"), "kind": "zpl",
                        "connection": format!("edge://{EDGE}")})),
        )
        .await
        .expect("printer");
    r.0.insert(Entity::Printer, printer.id.0);
    if !std::ptr::eq(wms, cloud) {
        pull(cloud, b, wms).await;
    }
    // A dock made on the floor, and the goods received into it.
    let dock = wms
        .create_location(
            b,
            from(json!({"warehouse_id": w.0, "code": format!("DOCK-{tag}"), "type": "dock"})),
        )
        .await
        .expect("location");
    r.0.insert(Entity::Location, dock.record.id.0);
    let received = wms
        .receive(
            c,
            from(
                json!({"inbound_id": inbound.id, "location": format!("DOCK-{tag}"),
                        "lines": [{"code": sku, "quantity": 5}]}),
            ),
        )
        .await
        .expect("receive");
    // Put away from the dock to a rack.
    let task = received.received[0]
        .putaway_task_id
        .expect("a putaway task");
    r.0.insert(Entity::PutawayTask, task.0);
    wms.create_location(
        b,
        from(json!({"warehouse_id": w.0, "code": format!("B-{tag}"), "type": "bulk"})),
    )
    .await
    .expect("rack");
    wms.putaway_scan(
        c,
        from(json!({"task_id": task.0, "code": sku, "location": format!("B-{tag}")})),
    )
    .await
    .expect("putaway");
    // The rack counted (by item: its first count names the item), and a
    // count of the dock called off.
    let count = wms
        .create_count(
            c,
            from(json!({"warehouse_id": w.0, "item_ids": [item.id.0]})),
        )
        .await
        .expect("count");
    r.0.insert(Entity::Count, count.summary.id.0);
    for scan in [
        json!({"location": format!("B-{tag}"), "code": sku, "quantity": 5}),
        json!({"location": format!("B-{tag}")}),
    ] {
        wms.count_scan(c, count.summary.id, from(scan))
            .await
            .expect("count scan");
    }
    wms.approve_count(c, count.summary.id)
        .await
        .expect("approved");
    let dock_count = wms
        .create_count(
            c,
            from(json!({"warehouse_id": w.0, "locations": [format!("DOCK-{tag}")]})),
        )
        .await
        .expect("dock count");
    wms.cancel_count(c, dock_count.summary.id)
        .await
        .expect("cancelled");
    // A pick face made on the floor, with a level: below its min at once,
    // so refilled from the rack.
    wms.create_location(
        b,
        from(json!({"warehouse_id": w.0, "code": format!("P-{tag}"), "type": "pick"})),
    )
    .await
    .expect("pick face");
    wms.set_replenish_level(
        b,
        from(
            json!({"warehouse_id": w.0, "location": format!("P-{tag}"), "item_id": item.id.0,
                    "min": 1, "max": 3}),
        ),
    )
    .await
    .expect("level");
    let refill = wms
        .replenish_tasks(b, Default::default(), Default::default())
        .await
        .expect("tasks")
        .rows
        .into_iter()
        .find(|t| t.to_location == format!("P-{tag}"))
        .expect("a replenishment task");
    r.0.insert(Entity::ReplenishTask, refill.id.0);
    wms.replenish_scan(
        c,
        from(json!({"task_id": refill.id.0, "code": sku, "location": format!("P-{tag}")})),
    )
    .await
    .expect("replenished");
    // A packer corrects the address before the order is confirmed.
    wms.change_order_address(
        c,
        order.id,
        from(
            json!({"shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 125",
                    "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"},
                    "note": "the buyer called"}),
        ),
    )
    .await
    .expect("address");
    wms.set_order_status(c, order.id, OrderStatus::Confirmed, None)
        .await
        .expect("confirm");
    let wave = wms
        .create_wave(b, from(json!({"warehouse_id": w.0})))
        .await
        .expect("wave");
    r.0.insert(Entity::Wave, wave.id.0);
    r.0.insert(Entity::PickLine, wave.pick_lists[0].lines[0].id.0);
    wms.pick_scan(
        c,
        from(json!({"wave_id": wave.id, "order_id": order.id, "code": sku, "quantity": 2})),
    )
    .await
    .expect("pick");
    let packed = wms
        .pack_order(
            c,
            from(
                json!({"order_id": order.id, "items": [{"code": sku, "quantity": 2}],
                        "packages": [{"weight_g": 800}]}),
            ),
        )
        .await
        .expect("pack");
    r.0.insert(Entity::Shipment, packed.shipment.id.0);
    let run = packed.shipment.dispatch_run_id.expect("a run");
    r.0.insert(Entity::DispatchRun, run.0);
    wms.load_package(
        c,
        run,
        depot_protocol::shipping::LoadRequest {
            code: packed.shipment.tracking_number.clone(),
        },
    )
    .await
    .expect("load");
    wms.close_dispatch_run(c, run, false).await.expect("close");
    wms.carrier_event(
        &packed.shipment.carrier,
        CarrierEvent {
            event_id: format!("ev-{tag}"),
            tracking_number: packed.shipment.tracking_number.clone(),
            milestone: Milestone::InTransit,
            at: depot_protocol::now(),
            city: Some("Zaragoza".into()),
            description: None,
            estimated_delivery: None,
        },
    )
    .await
    .expect("milestone");
    // The order comes back: a return made on the floor and graded there.
    for (code, kind) in [
        (format!("RET-{tag}"), "returns"),
        (format!("Q-{tag}"), "quarantine"),
    ] {
        wms.create_location(
            b,
            from(json!({"warehouse_id": w.0, "code": code, "type": kind})),
        )
        .await
        .expect("returns bay");
    }
    // One that never came, called off; then the one that did.
    let never = wms
        .create_return(
            c,
            from(json!({"order_id": order.id,
                        "lines": [{"line_no": 1, "quantity": 2, "reason": "other"}]})),
        )
        .await
        .expect("return");
    wms.cancel_return(c, never.id).await.expect("cancelled");
    let ret = wms
        .create_return(
            c,
            from(json!({"order_id": order.id,
                        "lines": [{"line_no": 1, "quantity": 2, "reason": "defective"}]})),
        )
        .await
        .expect("return");
    r.0.insert(Entity::Return, ret.id.0);
    for grade in ["restock", "damaged"] {
        wms.receive_return(c, ret.id, from(json!({"code": sku, "grade": grade})))
            .await
            .expect("graded");
    }
    let job = wms
        .submit_job(c, printer.id, b"^XA^FDhello^FS^XZ".to_vec())
        .await
        .expect("job");
    r.0.insert(Entity::PrintJob, job.id.0);
    wms.print_job_update(job.id, JobStatus::Printed, None)
        .await
        .expect("printed");
    wms.device_event(
        b,
        EventKind::PrinterStateChanged,
        json!({"business_id": b, "printer_id": printer.id, "device": "pack", "station": "pack-1",
               "state": "ready", "problems": [], "previous": "unknown", "at": depot_protocol::now()}),
    )
    .await
    .expect("printer state");
    wms.device_event(
        b,
        EventKind::PrinterSeen,
        json!({"business_id": b, "printer_id": printer.id, "device": "pack", "station": "pack-1",
               "state": "ready", "problems": [], "at": depot_protocol::now()}),
    )
    .await
    .expect("printer seen");
    // What a station logs is free-form where it says what it did: every
    // kind of id a station names, somewhere in it.
    wms.station_event(
        b,
        json!({"business_id": b, "station": "pack-1", "input": {"scan": sku, "scanner": "s1"},
               "task": {"task": "picking", "wave_id": wave.id, "order_id": order.id},
               "ok": true, "status": 200, "message": "ok", "errors": [],
               "result": {"warehouse_id": w.0, "item_id": item.id, "inbound_id": inbound.id,
                          "line_id": wave.pick_lists[0].lines[0].id,
                          "pack": {"shipment": {"id": packed.shipment.id, "order_id": order.id,
                                                "dispatch_run_id": run, "shipment_id": packed.shipment.id}},
                          "label_job": {"id": job.id, "printer_id": printer.id}}}),
    )
    .await
    .expect("station");
    r
}

/// A backorder of `c`'s in `w` at the cloud, split when part of its stock
/// came, then both parts called off (the floor's day picks its own order
/// alone): the cloud's pages then carry an `order.split`.
pub(super) async fn split_backorder(cloud: &Wms, c: Caller, w: WarehouseId, sku: &str) {
    let b = c.business_id;
    cloud
        .create_channel(
            b,
            from(json!({"code": "shop", "name": "Shop", "kind": "storefront",
                        "warehouse_ids": [w.0], "oversell": true, "backorders": "split"})),
        )
        .await
        .expect("channel");
    let (order, _) = cloud
        .create_order(
            c,
            from(
                json!({"channel": "shop", "external_ref": "B-1", "warehouse_id": w.0,
                        "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"},
                        "lines": [{"sku": sku, "quantity": 1_000}]}),
            ),
        )
        .await
        .expect("backorder");
    cloud
        .adjust(
            c,
            from(json!({"warehouse_id": w.0, "sku": sku, "reason": "received", "quantity": 1})),
        )
        .await
        .expect("received");
    assert_eq!(cloud.fill_backorders().await.expect("filled"), 1);
    let filter = depot_wms::orders::OrderFilter {
        channel: Some("shop".into()),
        ..Default::default()
    };
    let depot_protocol::Listed { rows: parts, .. } = cloud
        .list_orders(b, filter, Default::default())
        .await
        .expect("orders");
    assert_eq!(parts.len(), 2, "{parts:?}");
    assert!(parts.iter().any(|p| p.split_from == Some(order.id)));
    for p in parts {
        cloud
            .set_order_status(c, p.id, OrderStatus::Cancelled, None)
            .await
            .expect("called off");
    }
}
