//! Property test: any interleaving of adjustments, counts, transfers,
//! ingestions (with duplicates), status changes, putaway, replenishment,
//! cycle counts and returns keeps the books right,
//! per warehouse and per location. A simple model runs beside the engine;
//! after every sequence the engine's levels and where it says the stock is
//! must equal the model's, and agree with the ledger.

use depot_protocol::order::{Address, OrderStatus};
use depot_protocol::order_request::{OrderCreate, OrderLineCreate};
use depot_protocol::stock::{AdjustRequest, MovementReason};
use depot_protocol::tenant::Caller;
use depot_protocol::{ItemId, OrderId, WarehouseId};
use depot_wms::Wms;
use proptest::prelude::*;
use std::collections::HashMap;

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

#[derive(Debug, Clone)]
enum Op {
    Adjust {
        item: usize,
        wh: usize,
        at: usize,
        delta: i64,
    },
    Count {
        item: usize,
        wh: usize,
        at: usize,
        counted: i64,
    },
    Transfer {
        item: usize,
        quantity: i64,
        from: usize,
        to: usize,
        within: bool,
    },
    Ingest {
        reference: u8,
        item: usize,
        quantity: i64,
    },
    Status {
        reference: u8,
        to: usize,
    },
    /// A reception into the first warehouse: to its dock, with a putaway
    /// task.
    Receive {
        item: usize,
        quantity: i64,
    },
    /// A putaway scan of one of the tasks still open, to a location.
    Putaway {
        task: usize,
        at: usize,
        quantity: i64,
    },
    /// A level of item X at the pick face (a refill is made at once when
    /// it is below the min and a rack holds some).
    Level {
        min: i64,
        span: i64,
    },
    /// Units of item X taken out of the pick face (a refill follows when
    /// that takes it below its min).
    TakeFromFace {
        quantity: i64,
    },
    /// The open refill task, if any, scanned whole.
    Refill,
    /// A cycle count of one location of the first warehouse: both items
    /// counted, stock moved there after the scans, then approved or
    /// cancelled.
    CountTask {
        at: usize,
        counted: [i64; 2],
        moved: i64,
        approve: bool,
    },
    /// A return of an order's units (refused unless it went out, and with
    /// units left to return), each unit graded: restock (to the returns
    /// bay, with a putaway task), damaged (quarantine) or scrap.
    Return {
        reference: u8,
        grades: Vec<usize>,
    },
    /// A wave of the first warehouse's confirmed orders, each line picked
    /// whole by scan: the orders then ship from where they were picked.
    Wave,
    /// An order one step further along its path (confirmed, picking,
    /// packed, dispatched, delivered): a `Status` the order can take, so
    /// sequences reach dispatch and returns often.
    Advance {
        reference: u8,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::Wave),
        4 => (0..6u8).prop_map(|reference| Op::Advance { reference }),
        2 => (0..6u8, proptest::collection::vec(0..3usize, 1..4))
            .prop_map(|(reference, grades)| Op::Return { reference, grades }),
        3 => (0..2usize, 0..2usize, 0..=PICK, -5i64..10)
            // The dock and the pick face are the first warehouse's.
            .prop_filter("non-zero, somewhere", |(_, wh, at, d)| {
                *d != 0 && (*at <= NONE || *wh == 0)
            })
            .prop_map(|(item, wh, at, delta)| Op::Adjust {
                item,
                wh,
                at,
                delta
            }),
        1 => (0..2usize, 0..2usize, 0..=NONE, 0i64..15).prop_map(|(item, wh, at, counted)| {
            Op::Count {
                item,
                wh,
                at,
                counted,
            }
        }),
        1 => (0..2usize, 1i64..5, 0..=NONE, 0..=NONE, any::<bool>())
            .prop_filter("somewhere else", |(_, _, from, to, within)| {
                !*within || (*to != NONE && from != to)
            })
            .prop_map(|(item, quantity, from, to, within)| Op::Transfer {
                item,
                quantity,
                from,
                to,
                within
            }),
        3 => (0..6u8, 0..2usize, 1i64..4).prop_map(|(reference, item, quantity)| Op::Ingest {
            reference,
            item,
            quantity
        }),
        1 => (0..6u8, 0..7usize).prop_map(|(reference, to)| Op::Status { reference, to }),
        1 => (0..2usize, 1i64..6).prop_map(|(item, quantity)| Op::Receive { item, quantity }),
        1 => (0..8usize, 0..NONE, 1i64..6).prop_map(|(task, at, quantity)| Op::Putaway {
            task,
            at,
            quantity
        }),
        1 => (0i64..6, 1i64..10).prop_map(|(min, span)| Op::Level { min, span }),
        1 => (1i64..4).prop_map(|quantity| Op::TakeFromFace { quantity }),
        1 => Just(Op::Refill),
        1 => (0..NONE, [0i64..12, 0i64..12], -3i64..4, any::<bool>()).prop_map(
            |(at, counted, moved, approve)| Op::CountTask {
                at,
                counted,
                moved,
                approve
            }
        ),
    ]
}

fn code(at: usize) -> Option<String> {
    match at {
        DOCK => Some("DOCK".to_owned()),
        PICK => Some("P-0".to_owned()),
        RET => Some("RET".to_owned()),
        QUAR => Some("Q".to_owned()),
        at => LOCATIONS.get(at).map(|c| (*c).to_owned()),
    }
}

struct World {
    wms: Wms,
    caller: Caller,
    items: Vec<ItemId>,
    whs: Vec<WarehouseId>,
    inbound: i64,
    _dir: tempfile::TempDir,
}

async fn world() -> World {
    let dir = tempfile::tempdir().expect("tempdir");
    let wms = Wms::open(&dir.path().join("p.db"), "cloud").expect("open");
    let b = wms
        .create_business("P", "EUR", "UTC")
        .await
        .expect("business");
    let mut whs = Vec::new();
    for code in ["A", "B"] {
        whs.push(
            wms.create_warehouse(b.id, code, code, Address::default(), false)
                .await
                .expect("wh")
                .id,
        );
    }
    for wh in &whs {
        for code in LOCATIONS {
            let fields = serde_json::from_value(
                serde_json::json!({"warehouse_id": wh.0, "code": code, "type": "bulk"}),
            )
            .expect("fields");
            wms.create_location(b.id, fields).await.expect("location");
        }
    }
    for (code, kind) in [
        ("DOCK", "dock"),
        ("P-0", "pick"),
        ("RET", "returns"),
        ("Q", "quarantine"),
    ] {
        let fields = serde_json::from_value(
            serde_json::json!({"warehouse_id": whs[0].0, "code": code, "type": kind}),
        )
        .expect("fields");
        wms.create_location(b.id, fields).await.expect("location");
    }
    // Sales channels over either warehouse, both, with each kind of rule:
    // their figures must follow every op below.
    for (code, whs_of, rules) in CHANNELS {
        let ids: Vec<i64> = whs_of.iter().map(|i| whs[*i].0).collect();
        let mut body = serde_json::json!({"code": code, "name": code, "kind": "marketplace",
            "warehouse_ids": ids});
        for (k, v) in rules {
            body[k] = serde_json::json!(v);
        }
        let fields = serde_json::from_value(body).expect("channel");
        wms.create_channel(b.id, fields).await.expect("channel");
    }
    let k = wms.create_key(b.id, None).await.expect("key");
    let caller = Caller {
        key_id: k.key.id,
        business_id: b.id,
    };
    let mut items = Vec::new();
    for sku in ["X", "Y"] {
        let req =
            serde_json::from_value(serde_json::json!({"sku": sku, "name": sku})).expect("item");
        items.push(wms.create_item(b.id, req).await.expect("create").id);
    }
    let inbound = wms
        .create_inbound(
            b.id,
            serde_json::from_value(serde_json::json!({"warehouse_id": whs[0].0,
                "reference": "PO-1", "supplier": "S",
                "lines": [{"sku": "X", "quantity": 1000}, {"sku": "Y", "quantity": 1000}]}))
            .expect("inbound"),
        )
        .await
        .expect("inbound")
        .id;
    World {
        wms,
        caller,
        items,
        whs,
        inbound,
        _dir: dir,
    }
}

fn adjust(wh: WarehouseId, item: ItemId, reason: MovementReason) -> AdjustRequest {
    AdjustRequest {
        warehouse_id: wh,
        item_id: Some(item),
        sku: None,
        reason,
        quantity: None,
        delta: None,
        counted: None,
        to_warehouse_id: None,
        location: None,
        to_location: None,
        reference: None,
        note: None,
    }
}

/// The model: on-hand per (item, warehouse, location), orders by
/// reference.
#[derive(Default)]
struct Model {
    on_hand: HashMap<(usize, usize, usize), i64>,
    orders: HashMap<u8, (OrderId, usize, i64, OrderStatus)>,
    /// Putaway tasks still open: id, item, units left where they wait
    /// (the dock, or the returns bay).
    tasks: Vec<(depot_protocol::PutawayTaskId, usize, i64, usize)>,
    /// Units of each order on returns.
    returned: HashMap<u8, i64>,
    /// Units of each order picked, by where they were picked.
    picked: HashMap<u8, Vec<(usize, i64)>>,
}

impl Model {
    fn total(&self, item: usize, wh: usize) -> i64 {
        (0..=QUAR)
            .map(|at| self.on_hand.get(&(item, wh, at)).copied().unwrap_or(0))
            .sum()
    }

    fn add(&mut self, item: usize, wh: usize, at: usize, delta: i64) {
        *self.on_hand.entry((item, wh, at)).or_default() += delta;
    }

    fn reserved(&self, item: usize) -> i64 {
        self.orders
            .values()
            .filter(|(_, i, _, s)| *i == item && s.holds_reservation())
            .map(|(_, _, q, _)| q)
            .sum()
    }
}

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
                w.wms.adjust(w.caller, r).await.expect("adjust");
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
                w.wms.adjust(w.caller, r).await.expect("count");
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
                w.wms.adjust(w.caller, r).await.expect("transfer");
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
                let (open, _, _) = w
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
    for (i, item) in w.items.iter().enumerate() {
        for (j, wh) in w.whs.iter().enumerate() {
            let (on_hand, reserved) = w.wms.stock_level(*item, *wh).await.expect("level");
            assert_eq!(
                on_hand,
                m.total(i, j),
                "on-hand of item {i} in warehouse {j}"
            );
            let filter = depot_wms::ledger::StockFilter {
                warehouse_id: Some(*wh),
                item_id: Some(*item),
                ..Default::default()
            };
            let page = depot_protocol::Page::parse(None, None).expect("page");
            let (rows, _, _) = w
                .wms
                .list_stock(w.caller.business_id, filter, page)
                .await
                .expect("list");
            for r in &rows {
                assert_eq!(
                    r.negative,
                    r.on_hand < 0,
                    "below zero is flagged, and only then: {r:?}"
                );
            }
            let mut bins: Vec<(Option<String>, i64)> = rows
                .iter()
                .flat_map(|r| &r.bins)
                .map(|b| (b.location.clone(), b.on_hand))
                .collect();
            bins.sort();
            let mut expected: Vec<(Option<String>, i64)> = (0..=QUAR)
                .map(|at| (code(at), m.on_hand.get(&(i, j, at)).copied().unwrap_or(0)))
                .filter(|(_, n)| *n != 0)
                .collect();
            expected.sort();
            assert_eq!(bins, expected, "where item {i} is in warehouse {j}");
            let expected_reserved = if j == 0 { m.reserved(i) } else { 0 };
            assert_eq!(
                reserved, expected_reserved,
                "reserved of item {i} in warehouse {j}"
            );
        }
    }
    // Each channel's figure, kept write by write, is what its rules make
    // of the model's free stock.
    for (code, whs_of, rules) in CHANNELS {
        let mut a = depot_protocol::channel::Allocation::default();
        for (k, v) in rules {
            match *k {
                "buffer_units" => a.buffer_units = *v,
                "buffer_percent" => a.buffer_percent = Some(*v),
                "cap_units" => a.cap_units = Some(*v),
                _ => a.cap_percent = Some(*v),
            }
        }
        let page = depot_protocol::Page::parse(None, None).expect("page");
        let (rows, _, _) = w
            .wms
            .channel_availability(w.caller.business_id, code.into(), None, page)
            .await
            .expect("availability");
        for (i, item) in w.items.iter().enumerate() {
            let pool: i64 = whs_of
                .iter()
                .map(|j| {
                    let reserved = if *j == 0 { m.reserved(i) } else { 0 };
                    (m.total(i, *j) - reserved).max(0)
                })
                .sum();
            let got = rows
                .iter()
                .find(|r| r.item_id == *item)
                .map(|r| r.available);
            assert_eq!(
                got,
                Some(depot_protocol::channel::available(pool, &a)),
                "what channel {code} may sell of item {i}"
            );
        }
    }
    assert!(w.wms.check_ledger().await.expect("check").is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn books_stay_consistent(ops in proptest::collection::vec(op(), 1..50)) {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
        rt.block_on(run(ops));
    }
}
