//! Property test: any interleaving of adjustments, counts, transfers,
//! ingestions (with duplicates), status changes, putaway, replenishment,
//! cycle counts and returns keeps the books right,
//! per warehouse and per location. A simple model runs beside the engine;
//! after every sequence the engine's levels and where it says the stock is
//! must equal the model's, and agree with the ledger, and every sales
//! channel's figure what its rules make of the model's free stock.
//!
//! `ops.rs` holds the operations and how they are drawn, `world.rs` the
//! engine's setup and the model, `check.rs` what must hold after a
//! sequence; here each operation runs on both.

mod check;
mod ops;
mod world;

use ops::{Op, op};
use world::{Model, adjust, code, world};

use depot_protocol::order::{Address, OrderStatus};
use depot_protocol::order_request::{OrderCreate, OrderLineCreate};
use depot_protocol::stock::{AdjustRequest, MovementReason};
use depot_protocol::tenant::Caller;
use depot_protocol::{ItemId, OrderId, WarehouseId};
use depot_wms::Wms;
use proptest::prelude::*;
use std::collections::HashMap;

/// The levels an adjustment answers are those it left stored (they are
/// worked out from what it read and booked, not read again).
async fn answered_as_stored(w: &world::World, done: &depot_wms::ledger::AdjustResult) {
    assert!(!done.levels.is_empty());
    for l in &done.levels {
        let stored = w
            .wms
            .stock_level(l.item_id, l.warehouse_id)
            .await
            .expect("level");
        assert_eq!(
            (l.on_hand, l.reserved),
            stored,
            "warehouse {}",
            l.warehouse_id
        );
        assert_eq!(l.available, l.on_hand - l.reserved);
    }
}

/// Locations of each warehouse the ops name; `NONE` is no location (the
/// items have no location of their own, so such stock has none).
const LOCATIONS: [&str; 3] = ["L-0", "Λ-1", "棚-2"];
const NONE: usize = LOCATIONS.len();
const SKUS: [&str; 2] = ["X", "Y"];
/// The first warehouse's dock, where receptions put goods for putaway.
const DOCK: usize = NONE + 1;
/// The first warehouse's pick face, refilled from its racks.
const PICK: usize = DOCK + 1;
/// The first warehouse's returns bay and quarantine cage.
const RET: usize = PICK + 1;
const QUAR: usize = RET + 1;

/// A channel: its code, the warehouses (by index) it sells from, its
/// rules.
type ChannelRules = (
    &'static str,
    &'static [usize],
    &'static [(&'static str, i64)],
);

const CHANNELS: [ChannelRules; 3] = [
    ("both", &[0, 1], &[("buffer_units", 1)]),
    ("first", &[0], &[("cap_percent", 50)]),
    ("second", &[1], &[("buffer_percent", 10), ("cap_units", 4)]),
];

async fn run(ops: Vec<Op>) {
    let w = world().await;
    let mut m = Model::default();
    for op in ops {
        let op = match op {
            Op::Advance { reference } => {
                // One of the orders there are, so a few go the whole way.
                let mut known: Vec<u8> = m.orders.keys().copied().collect();
                known.sort();
                let Some(&reference) = known.get(usize::from(reference) % known.len().max(1))
                else {
                    continue;
                };
                let Some(next) = m.orders.get(&reference).and_then(|o| match o.3 {
                    OrderStatus::Pending => Some(OrderStatus::Confirmed),
                    OrderStatus::Confirmed => Some(OrderStatus::Picking),
                    OrderStatus::Picking => Some(OrderStatus::Packed),
                    OrderStatus::Packed => Some(OrderStatus::Dispatched),
                    OrderStatus::Dispatched => Some(OrderStatus::Delivered),
                    OrderStatus::Delivered | OrderStatus::Cancelled => None,
                }) else {
                    continue;
                };
                let to = OrderStatus::ALL.iter().position(|s| *s == next);
                Op::Status {
                    reference,
                    to: to.expect("a status"),
                }
            }
            op => op,
        };
        match op {
            Op::Adjust {
                item,
                wh,
                at,
                delta,
            } => {
                let mut r = adjust(w.whs[wh], w.items[item], MovementReason::Adjusted);
                r.delta = Some(delta);
                r.location = code(at);
                let done = w.wms.adjust(w.caller, r).await.expect("adjust");
                answered_as_stored(&w, &done).await;
                m.add(item, wh, at, delta);
            }
            Op::Count {
                item,
                wh,
                at,
                counted,
            } => {
                let mut r = adjust(w.whs[wh], w.items[item], MovementReason::CycleCount);
                r.counted = Some(counted);
                r.location = code(at);
                let done = w.wms.adjust(w.caller, r).await.expect("count");
                answered_as_stored(&w, &done).await;
                // Of one location, that location; of none, the whole
                // warehouse, the difference booked without a location.
                let before = if at == NONE {
                    m.total(item, wh)
                } else {
                    m.on_hand.get(&(item, wh, at)).copied().unwrap_or(0)
                };
                m.add(item, wh, at, counted - before);
            }
            Op::Transfer {
                item,
                quantity,
                from,
                to,
                within,
            } => {
                let mut r = adjust(w.whs[0], w.items[item], MovementReason::Transfer);
                r.quantity = Some(quantity);
                r.location = code(from);
                r.to_location = code(to);
                let dest = if within { 0 } else { 1 };
                if !within {
                    r.to_warehouse_id = Some(w.whs[1]);
                }
                let done = w.wms.adjust(w.caller, r).await.expect("transfer");
                answered_as_stored(&w, &done).await;
                m.add(item, 0, from, -quantity);
                m.add(item, dest, to, quantity);
            }
            Op::Receive { item, quantity } => {
                let req = serde_json::from_value(serde_json::json!({"inbound_id": w.inbound,
                    "lines": [{"code": SKUS[item], "quantity": quantity}]}))
                .expect("reception");
                let r = w.wms.receive(w.caller, req).await.expect("receive");
                let task = r.received[0].putaway_task_id.expect("received at the dock");
                m.add(item, 0, DOCK, quantity);
                m.tasks.push((task, item, quantity, DOCK));
            }
            Op::Putaway { task, at, quantity } => {
                if m.tasks.is_empty() {
                    continue;
                }
                let i = task % m.tasks.len();
                let (id, item, left, from) = m.tasks[i];
                let n = quantity.min(left);
                let req = serde_json::from_value(serde_json::json!({"task_id": id.0,
                    "code": SKUS[item], "location": LOCATIONS[at], "quantity": n}))
                .expect("scan");
                let r = w.wms.putaway_scan(w.caller, req).await.expect("put away");
                assert_eq!(r.task.remaining, left - n, "what the task has left");
                m.add(item, 0, from, -n);
                m.add(item, 0, at, n);
                if left == n {
                    m.tasks.remove(i);
                } else {
                    m.tasks[i].2 = left - n;
                }
            }
            Op::Level { min, span } => {
                let req = serde_json::from_value(serde_json::json!({"warehouse_id": w.whs[0].0,
                    "location": "P-0", "item_id": w.items[0].0, "min": min, "max": min + span}))
                .expect("level");
                w.wms
                    .set_replenish_level(w.caller.business_id, req)
                    .await
                    .expect("level");
            }
            Op::TakeFromFace { quantity } => {
                let mut r = adjust(w.whs[0], w.items[0], MovementReason::Adjusted);
                r.delta = Some(-quantity);
                r.location = code(PICK);
                w.wms.adjust(w.caller, r).await.expect("taken");
                m.add(0, 0, PICK, -quantity);
            }
            Op::Refill => {
                let depot_protocol::Listed { rows: open, .. } = w
                    .wms
                    .replenish_tasks(
                        w.caller.business_id,
                        depot_wms::replenish::ReplenishFilter {
                            status: Some(depot_protocol::replenish::ReplenishStatus::Open),
                            ..Default::default()
                        },
                        Default::default(),
                    )
                    .await
                    .expect("tasks");
                assert!(open.len() <= 1, "one open task per face and item: {open:?}");
                let Some(t) = open.first() else { continue };
                let from = (0..NONE)
                    .find(|at| code(*at).as_deref() == Some(t.from_location.as_str()))
                    .expect("from a rack");
                let held = m.on_hand.get(&(0, 0, from)).copied().unwrap_or(0);
                let req = serde_json::from_value(serde_json::json!({"task_id": t.id.0,
                    "code": SKUS[0], "location": "P-0"}))
                .expect("scan");
                let result = w.wms.replenish_scan(w.caller, req).await;
                if held < t.remaining {
                    // Moved out of the rack since the task was made.
                    assert!(result.is_err(), "more taken than the rack holds");
                    continue;
                }
                result.expect("refilled");
                m.add(0, 0, from, -t.remaining);
                m.add(0, 0, PICK, t.remaining);
            }
            Op::CountTask {
                at,
                counted,
                moved,
                approve,
            } => {
                let req = serde_json::from_value(serde_json::json!({"warehouse_id": w.whs[0].0,
                    "locations": [LOCATIONS[at]], "tolerance_units": 1_000_000}))
                .expect("count");
                let id = w
                    .wms
                    .create_count(w.caller, req)
                    .await
                    .expect("count")
                    .summary
                    .id;
                let mut variance = [0; 2];
                for (item, n) in counted.into_iter().enumerate() {
                    let req = serde_json::from_value(serde_json::json!({"location": LOCATIONS[at],
                        "code": SKUS[item], "quantity": n}))
                    .expect("scan");
                    w.wms.count_scan(w.caller, id, req).await.expect("counted");
                    variance[item] = n - m.on_hand.get(&(item, 0, at)).copied().unwrap_or(0);
                }
                // Moved after the scans, before the approval: a move of its
                // own, kept by the approval.
                let mut r = adjust(w.whs[0], w.items[0], MovementReason::Adjusted);
                r.delta = Some(moved).filter(|d| *d != 0);
                r.location = code(at);
                if r.delta.is_some() {
                    w.wms.adjust(w.caller, r).await.expect("moved");
                    m.add(0, 0, at, moved);
                }
                let req = serde_json::from_value(serde_json::json!({"location": LOCATIONS[at]}))
                    .expect("close");
                w.wms.count_scan(w.caller, id, req).await.expect("closed");
                if approve {
                    w.wms.approve_count(w.caller, id).await.expect("approved");
                    for (item, v) in variance.into_iter().enumerate() {
                        m.add(item, 0, at, v);
                    }
                } else {
                    w.wms.cancel_count(w.caller, id).await.expect("cancelled");
                }
            }
            Op::Return { reference, grades } => {
                // An order that went out, if any did; else any, refused.
                let shipped = |o: &(OrderId, usize, i64, OrderStatus)| {
                    matches!(o.3, OrderStatus::Dispatched | OrderStatus::Delivered)
                };
                let mut known: Vec<u8> = m
                    .orders
                    .iter()
                    .filter(|(_, o)| shipped(o))
                    .map(|(r, _)| *r)
                    .collect();
                if known.is_empty() {
                    known = m.orders.keys().copied().collect();
                }
                known.sort();
                let Some(&reference) = known.get(usize::from(reference) % known.len().max(1))
                else {
                    continue;
                };
                let Some((id, item, quantity, status)) = m.orders.get(&reference).copied() else {
                    continue;
                };
                let done = m.returned.get(&reference).copied().unwrap_or(0);
                let units = (grades.len() as i64).min(quantity - done);
                let req = serde_json::from_value(serde_json::json!({"order_id": id.0,
                    "lines": [{"line_no": 1, "quantity": units.max(1), "reason": "other"}]}))
                .expect("return");
                let made = w.wms.create_return(w.caller, req).await;
                let shipped = matches!(status, OrderStatus::Dispatched | OrderStatus::Delivered);
                if !shipped || units < 1 {
                    assert!(
                        made.is_err(),
                        "a return of {units} units of a {status} order"
                    );
                    continue;
                }
                let r = made.expect("return");
                *m.returned.entry(reference).or_default() += units;
                for grade in grades.into_iter().take(units as usize) {
                    let name = ["restock", "damaged", "scrap"][grade];
                    let req = serde_json::from_value(
                        serde_json::json!({"code": SKUS[item], "grade": name}),
                    )
                    .expect("scan");
                    let got = w
                        .wms
                        .receive_return(w.caller, r.id, req)
                        .await
                        .expect("graded");
                    match grade {
                        0 => {
                            m.add(item, 0, RET, 1);
                            let task = got.putaway_task_id.expect("a putaway task");
                            m.tasks.push((task, item, 1, RET));
                        }
                        1 => m.add(item, 0, QUAR, 1),
                        _ => {}
                    }
                }
            }
            Op::Advance { .. } => unreachable!("an advance is a status change by now"),
            Op::Wave => {
                let waiting = m.orders.values().any(|o| o.3 == OrderStatus::Confirmed);
                let req = serde_json::from_value(serde_json::json!({"warehouse_id": w.whs[0].0}))
                    .expect("wave");
                let made = w.wms.create_wave(w.caller.business_id, req).await;
                if !waiting {
                    assert!(made.is_err(), "a wave of no orders");
                    continue;
                }
                let wave = made.expect("wave");
                for list in &wave.pick_lists {
                    let (&reference, &(_, item, _, _)) = m
                        .orders
                        .iter()
                        .find(|(_, o)| o.0 == list.order_id)
                        .expect("an order of the model");
                    for line in &list.lines {
                        let req = depot_protocol::picking::ScanRequest {
                            wave_id: wave.id,
                            order_id: Some(list.order_id),
                            code: SKUS[item].into(),
                            quantity: Some(line.quantity),
                        };
                        let r = w.wms.pick_scan(w.caller, req).await.expect("picked");
                        // What a scan answers is left (worked out from
                        // what it read before its pick) is what is left.
                        let now = w
                            .wms
                            .wave(w.caller.business_id, wave.id)
                            .await
                            .expect("the wave");
                        let lines = || now.pick_lists.iter().flat_map(|p| &p.lines);
                        let left: i64 = lines().map(|l| l.quantity - l.picked).sum();
                        let of_order: i64 = lines()
                            .filter(|l| l.order_id == r.order_id)
                            .map(|l| l.quantity - l.picked)
                            .sum();
                        assert_eq!((r.wave_remaining, r.order_remaining), (left, of_order));
                        let at = (0..=QUAR)
                            .find(|at| code(*at) == r.location)
                            .expect("a location of the model");
                        m.picked
                            .entry(reference)
                            .or_default()
                            .push((at, line.quantity));
                        if let Some(o) = m.orders.get_mut(&reference) {
                            o.3 = r.order_status;
                        }
                    }
                }
            }
            Op::Ingest {
                reference,
                item,
                quantity,
            } => {
                let req = OrderCreate {
                    channel: "web".into(),
                    external_ref: format!("R{reference}"),
                    warehouse_id: Some(w.whs[0]),
                    buyer: None,
                    shipping_address: Some(depot_protocol::order::Address {
                        name: Some("Ana García".into()),
                        line1: Some("Calle de Alcalá 123".into()),
                        line2: None,
                        city: Some("Madrid".into()),
                        region: Some("Madrid".into()),
                        postal_code: Some("28009".into()),
                        country: Some("ES".into()),
                    }),
                    payments: None,
                    lines: vec![OrderLineCreate {
                        sku: ["X", "Y"][item].into(),
                        quantity,
                        unit_price: None,
                    }],
                    currency: None,
                    carrier: None,
                    service: None,
                    ordered_at: None,
                };
                let (order, created) = w.wms.create_order(w.caller, req).await.expect("ingest");
                assert_eq!(created, !m.orders.contains_key(&reference), "idempotency");
                m.orders.entry(reference).or_insert((
                    order.id,
                    item,
                    quantity,
                    OrderStatus::Pending,
                ));
            }
            Op::Status { reference, to } => {
                let Some((id, item, quantity, from)) = m.orders.get(&reference).copied() else {
                    continue;
                };
                let to = OrderStatus::ALL[to];
                let result = w.wms.set_order_status(w.caller, id, to, None).await;
                let legal = depot_protocol::order::transition(from, to);
                let available = m.total(item, 0) - m.reserved(item);
                match legal {
                    Err(_) => assert!(result.is_err(), "{from} -> {to} accepted"),
                    Ok(t)
                        if t.effect == depot_protocol::StockEffect::Reserve
                            && available < quantity =>
                    {
                        assert!(result.is_err(), "confirmed without stock")
                    }
                    Ok(t) => {
                        result.expect("legal transition refused");
                        if t.effect == depot_protocol::StockEffect::Ship {
                            // From where it was picked; what was not
                            // picked, out of no location.
                            let mut left = quantity;
                            for (at, n) in m.picked.get(&reference).cloned().unwrap_or_default() {
                                m.add(item, 0, at, -n);
                                left -= n;
                            }
                            m.add(item, 0, NONE, -left);
                        }
                        if let Some(o) = m.orders.get_mut(&reference) {
                            o.3 = to;
                        }
                    }
                }
            }
        }
    }
    check::books_agree(&w, &m).await;
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn books_stay_consistent(ops in proptest::collection::vec(op(), 1..50)) {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
        rt.block_on(run(ops));
    }
}
