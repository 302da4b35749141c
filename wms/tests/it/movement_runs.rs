//! A run of an edge's movements is applied together in the cloud (its
//! reads read together, each level written once): whatever the run, what
//! it leaves is what applying its events one at a time leaves. Two clouds
//! alike take the same events, one in a single batch and the other a batch
//! an event (which applies each alone); every table the movements touch
//! must then be equal, and so must what each was answered: refusals
//! (another business's item, a level beyond its limit, a kind an edge may
//! not send), duplicates (an event sent twice, a movement named by two
//! events), items with a location of their own, lots, channels over one
//! warehouse or both.
//!
//! On SQLite, and on PostgreSQL where `DEPOT_TEST_DATABASE=postgres`.

use depot_protocol::order::Address;
use depot_protocol::stock::{MAX_ON_HAND, Movement, MovementReason};
use depot_protocol::sync::{EdgeId, SyncEvent};
use depot_protocol::{BusinessId, EventId, ItemId, MovementId, WarehouseId, now};
use depot_sql::params;
use depot_wms::Wms;
use proptest::prelude::*;
use std::collections::BTreeSet;

const LOCATIONS: [&str; 2] = ["L-0", "Λ-1"];
const LOTS: [&str; 2] = ["L1", "批-2"];
/// Items: the first has a location of its own in the first warehouse.
const SKUS: [&str; 3] = ["X", "Ψ-1", "货-2"];

struct Cloud {
    wms: Wms,
    business: BusinessId,
    whs: Vec<WarehouseId>,
    items: Vec<ItemId>,
    /// Another business's item.
    foreign: ItemId,
    edge: EdgeId,
    _database: Option<depot_testkit::pg::PgDatabase>,
}

async fn cloud(dir: &std::path::Path) -> Cloud {
    let (wms, database) = depot_testkit::pg::cloud_engine(dir);
    let b = wms
        .create_business("Βήτα", "EUR", "UTC")
        .await
        .expect("business");
    let mut whs = Vec::new();
    for code in ["A", "Б"] {
        let wh = wms
            .create_warehouse(b.id, code, code, Address::default(), false)
            .await
            .expect("warehouse");
        whs.push(wh.id);
        for code in LOCATIONS {
            let fields = serde_json::from_value(
                serde_json::json!({"warehouse_id": wh.id.0, "code": code, "type": "bulk"}),
            )
            .expect("fields");
            wms.create_location(b.id, fields).await.expect("location");
        }
    }
    for (code, of, rules) in [
        (
            "both",
            vec![whs[0], whs[1]],
            serde_json::json!({"buffer_units": 1}),
        ),
        (
            "first",
            vec![whs[0]],
            serde_json::json!({"cap_percent": 50}),
        ),
        ("second", vec![whs[1]], serde_json::json!({"cap_units": 4})),
    ] {
        let mut body = serde_json::json!({"code": code, "name": code, "kind": "marketplace",
            "warehouse_ids": of.iter().map(|w| w.0).collect::<Vec<_>>()});
        for (k, v) in rules.as_object().expect("rules") {
            body[k] = v.clone();
        }
        let fields = serde_json::from_value(body).expect("channel");
        wms.create_channel(b.id, fields).await.expect("channel");
    }
    let mut items = Vec::new();
    for (i, sku) in SKUS.iter().enumerate() {
        let mut body = serde_json::json!({"sku": sku, "name": sku});
        if i == 0 {
            body["locations"] = serde_json::json!([{"warehouse_id": whs[0].0, "location": "L-0"}]);
        }
        let req = serde_json::from_value(body).expect("item");
        items.push(wms.create_item(b.id, req).await.expect("item").id);
    }
    let other = wms
        .create_business("Other", "EUR", "UTC")
        .await
        .expect("business");
    let req =
        serde_json::from_value(serde_json::json!({"sku": "X", "name": "theirs"})).expect("item");
    let foreign = wms.create_item(other.id, req).await.expect("item").id;
    let edge = EdgeId::parse("site-1").expect("edge");
    wms.register_edge(b.id, edge.clone(), None)
        .await
        .expect("edge");
    Cloud {
        wms,
        business: b.id,
        whs,
        items,
        foreign,
        edge,
        _database: database,
    }
}

/// One event of the edge's log.
#[derive(Debug, Clone)]
enum Step {
    Move {
        item: usize,
        wh: usize,
        at: Option<usize>,
        lot: Option<usize>,
        delta: i64,
        /// With an expiry (a lot's).
        expires: bool,
    },
    /// A movement naming the other business's item.
    Foreign,
    /// The movement of an earlier step again, under an event of its own.
    SameMovement(usize),
    /// An earlier step's event again.
    SameEvent(usize),
    /// A kind an edge may not send.
    NotAllowed,
}

fn step() -> impl Strategy<Value = Step> {
    let delta = prop_oneof![8 => -6i64..=9, 1 => Just(MAX_ON_HAND), 1 => Just(-MAX_ON_HAND)];
    prop_oneof![
        12 => (0..SKUS.len(), 0..2usize, proptest::option::of(0..LOCATIONS.len()),
               proptest::option::weighted(0.3, 0..LOTS.len()), delta, any::<bool>())
            .prop_map(|(item, wh, at, lot, delta, expires)| Step::Move { item, wh, at, lot, delta, expires }),
        1 => Just(Step::Foreign),
        1 => (0..64usize).prop_map(Step::SameMovement),
        1 => (0..64usize).prop_map(Step::SameEvent),
        1 => Just(Step::NotAllowed),
    ]
}

/// The steps as the edge's log, the same for both clouds (whose records
/// are numbered alike).
fn log(c: &Cloud, steps: &[Step]) -> Vec<SyncEvent> {
    let mut events: Vec<SyncEvent> = Vec::with_capacity(steps.len());
    let mut movements: Vec<Movement> = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let seq = i as i64 + 1;
        let movement = |item: ItemId, wh: WarehouseId| Movement {
            id: MovementId::new(),
            business_id: c.business,
            item_id: item,
            warehouse_id: wh,
            location: None,
            delta: 1,
            reason: MovementReason::Adjusted,
            reference: None,
            note: None,
            lot: None,
            expiry: None,
            actor: "Ωmega".into(),
            origin: "edge:site-1".into(),
            at: now(),
        };
        let (kind, payload) = match s {
            Step::Move {
                item,
                wh,
                at,
                lot,
                delta,
                expires,
            } => {
                let mut m = movement(c.items[*item], c.whs[*wh]);
                m.location = at.map(|a| LOCATIONS[a].to_owned());
                m.lot = lot.map(|l| LOTS[l].to_owned());
                m.expiry = (lot.is_some() && *expires)
                    .then(|| chrono::NaiveDate::from_ymd_opt(2027, 1, 1 + i as u32 % 28))
                    .flatten();
                m.delta = *delta;
                movements.push(m.clone());
                ("stock.moved", serde_json::to_value(&m).expect("json"))
            }
            Step::Foreign => {
                let m = movement(c.foreign, c.whs[0]);
                ("stock.moved", serde_json::to_value(&m).expect("json"))
            }
            Step::SameMovement(k) if !movements.is_empty() => {
                let m = &movements[k % movements.len()];
                ("stock.moved", serde_json::to_value(m).expect("json"))
            }
            Step::SameEvent(k) if i > 0 => {
                let mut again = events[k % i].clone();
                again.seq = seq;
                events.push(again);
                continue;
            }
            _ => ("business.updated", serde_json::json!({"id": c.business.0})),
        };
        events.push(SyncEvent {
            seq,
            id: EventId::new(),
            kind: kind.into(),
            payload: serde_json::value::to_raw_value(&payload).expect("raw"),
            at: now(),
        });
    }
    events
}

/// Every row the movements touch, in an order both clouds share; the
/// channels' figures without their feed numbers and without rows of 0 (a
/// run writes a figure once, at its last value, where one by one each
/// movement wrote its own: a figure that went from nothing to 4 and back
/// to 0 in one run is no row, as nothing, where it is a row of 0 one by
/// one).
async fn tables(wms: &Wms) -> Vec<Vec<String>> {
    const DUMPS: [&str; 8] = [
        "SELECT item_id, warehouse_id, on_hand, reserved, pending FROM stock_levels ORDER BY item_id, warehouse_id",
        "SELECT item_id, warehouse_id, location, lot, on_hand FROM stock_bins ORDER BY item_id, warehouse_id, location, lot",
        "SELECT item_id, warehouse_id, lot, on_hand, COALESCE(expiry, '') FROM stock_lots ORDER BY item_id, warehouse_id, lot",
        "SELECT id, item_id, warehouse_id, COALESCE(location, ''), delta, COALESCE(lot, ''), COALESCE(expiry, '') FROM stock_movements ORDER BY seq",
        "SELECT movement_id, on_hand FROM stock_discrepancies ORDER BY id",
        "SELECT item_id, channel_id, available FROM channel_availability WHERE available <> 0 ORDER BY item_id, channel_id",
        "SELECT id, kind, refused FROM events WHERE origin = 'edge:site-1' ORDER BY seq",
        "SELECT event_id, reason, resolution FROM sync_conflicts ORDER BY id",
    ];
    let mut out = Vec::new();
    for sql in DUMPS {
        let rows = wms
            .read(move |conn| {
                Ok(conn.query_map(sql, params![], |r| {
                    let mut row = Vec::new();
                    for i in 0..r.column_count() {
                        row.push(format!("{:?}", r.get_ref(i)?.to_owned()));
                    }
                    Ok(row.join(" | "))
                })?)
            })
            .await
            .expect(sql);
        out.push(rows);
    }
    out
}

async fn same_either_way(steps: Vec<Step>) {
    let dirs = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    let together = cloud(dirs.0.path()).await;
    let alone = cloud(dirs.1.path()).await;
    assert_eq!(
        (&together.whs, &together.items, together.foreign),
        (&alone.whs, &alone.items, alone.foreign),
        "the clouds number their records alike"
    );
    let events = log(&together, &steps);
    let ack = together
        .wms
        .receive_batch(together.business, together.edge.clone(), events.clone())
        .await
        .expect("the batch");
    let mut refused = BTreeSet::new();
    for e in events {
        let one = alone
            .wms
            .receive_batch(alone.business, alone.edge.clone(), vec![e])
            .await
            .expect("an event");
        refused.extend(one.rejected.into_iter().map(|r| (r.seq, r.reason)));
    }
    let got: BTreeSet<(i64, String)> = ack
        .rejected
        .into_iter()
        .map(|r| (r.seq, r.reason))
        .collect();
    assert_eq!(
        got, refused,
        "the same events refused, for the same reasons"
    );
    assert_eq!(ack.through, steps.len() as i64);
    assert_eq!(tables(&together.wms).await, tables(&alone.wms).await);
    assert!(together.wms.check_ledger().await.expect("check").is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if depot_testkit::pg::engine_on_postgres() { 6 } else { 24 },
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_run_leaves_what_its_events_one_by_one_leave(steps in proptest::collection::vec(step(), 1..160)) {
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        rt.block_on(same_either_way(steps));
    }
}

/// The runs' own cases, drawn on purpose: one item moved in both
/// warehouses in one run (its channel over both counts both), the same
/// movement twice in one run, a level taken beyond its limit mid-run.
#[tokio::test]
async fn runs_that_cross_warehouses_repeat_a_movement_or_overflow() {
    let mv = |item, wh, delta| Step::Move {
        item,
        wh,
        at: None,
        lot: Some(0),
        delta,
        expires: true,
    };
    same_either_way(vec![mv(1, 0, 5), mv(1, 1, 3), mv(1, 0, -2), mv(1, 1, 4)]).await;
    same_either_way(vec![
        mv(0, 0, 5),
        Step::SameMovement(0),
        mv(0, 0, 1),
        Step::SameEvent(0),
    ])
    .await;
    same_either_way(vec![
        mv(2, 0, 5),
        mv(2, 0, MAX_ON_HAND),
        mv(2, 1, 1),
        mv(2, 0, -1),
    ])
    .await;
}
