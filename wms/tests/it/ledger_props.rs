//! Property test: any interleaving of adjustments, counts, transfers,
//! ingestions (with duplicates) and status changes keeps the books right.
//! A simple model runs beside the engine; after every sequence the engine's
//! levels must equal the model's and agree with the ledger.

use depot_protocol::order::{Address, OrderStatus};
use depot_protocol::order_request::{OrderCreate, OrderLineCreate};
use depot_protocol::stock::{AdjustRequest, MovementReason};
use depot_protocol::tenant::Caller;
use depot_protocol::{ItemId, OrderId, WarehouseId};
use depot_wms::Wms;
use proptest::prelude::*;
use std::collections::HashMap;

#[derive(Debug, Clone)]
enum Op {
    Adjust {
        item: usize,
        wh: usize,
        delta: i64,
    },
    Count {
        item: usize,
        wh: usize,
        counted: i64,
    },
    Transfer {
        item: usize,
        quantity: i64,
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
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..2usize, 0..2usize, -5i64..10)
            .prop_filter("non-zero", |(_, _, d)| *d != 0)
            .prop_map(|(item, wh, delta)| Op::Adjust { item, wh, delta }),
        (0..2usize, 0..2usize, 0i64..15).prop_map(|(item, wh, counted)| Op::Count {
            item,
            wh,
            counted
        }),
        (0..2usize, 1i64..5).prop_map(|(item, quantity)| Op::Transfer { item, quantity }),
        (0..6u8, 0..2usize, 1i64..4).prop_map(|(reference, item, quantity)| Op::Ingest {
            reference,
            item,
            quantity
        }),
        (0..6u8, 0..7usize).prop_map(|(reference, to)| Op::Status { reference, to }),
    ]
}

struct World {
    wms: Wms,
    caller: Caller,
    items: Vec<ItemId>,
    whs: Vec<WarehouseId>,
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
    World {
        wms,
        caller,
        items,
        whs,
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
        reference: None,
        note: None,
    }
}

/// The model: on-hand per (item, warehouse), orders by reference.
#[derive(Default)]
struct Model {
    on_hand: HashMap<(usize, usize), i64>,
    orders: HashMap<u8, (OrderId, usize, i64, OrderStatus)>,
}

impl Model {
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
        match op {
            Op::Adjust { item, wh, delta } => {
                let mut r = adjust(w.whs[wh], w.items[item], MovementReason::Adjusted);
                r.delta = Some(delta);
                w.wms.adjust(w.caller, r).await.expect("adjust");
                *m.on_hand.entry((item, wh)).or_default() += delta;
            }
            Op::Count { item, wh, counted } => {
                let mut r = adjust(w.whs[wh], w.items[item], MovementReason::CycleCount);
                r.counted = Some(counted);
                w.wms.adjust(w.caller, r).await.expect("count");
                m.on_hand.insert((item, wh), counted);
            }
            Op::Transfer { item, quantity } => {
                let mut r = adjust(w.whs[0], w.items[item], MovementReason::Transfer);
                r.quantity = Some(quantity);
                r.to_warehouse_id = Some(w.whs[1]);
                w.wms.adjust(w.caller, r).await.expect("transfer");
                *m.on_hand.entry((item, 0)).or_default() -= quantity;
                *m.on_hand.entry((item, 1)).or_default() += quantity;
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
                let available = m.on_hand.get(&(item, 0)).copied().unwrap_or(0) - m.reserved(item);
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
                            *m.on_hand.entry((item, 0)).or_default() -= quantity;
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
                m.on_hand.get(&(i, j)).copied().unwrap_or(0),
                "on-hand of item {i} in warehouse {j}"
            );
            let expected_reserved = if j == 0 { m.reserved(i) } else { 0 };
            assert_eq!(
                reserved, expected_reserved,
                "reserved of item {i} in warehouse {j}"
            );
        }
    }
    assert!(w.wms.check_ledger().await.expect("check").is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn books_stay_consistent(ops in proptest::collection::vec(op(), 1..40)) {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
        rt.block_on(run(ops));
    }
}
