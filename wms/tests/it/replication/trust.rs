//! Trust at the boundary, as a hostile tenant would test it: a box of
//! business A sends, on its own sync, events naming business B's records,
//! records that do not exist, and records of A's warehouses it does not
//! serve. Every reference of every kind an edge may send is tried, from the
//! event catalogue: nothing is applied, each is a conflict of A, and B's
//! log, stock and conflicts do not move. The same for the cloud's pages at
//! the edge.

use depot_protocol::catalogue::refs::{self, Entity, Role};
use depot_protocol::catalogue::{self, CATALOGUE};
use depot_protocol::order::Address;
use depot_protocol::sync::message::Change;
use depot_protocol::sync::{EdgeId, SyncEvent};
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, EventId, WarehouseId};
use depot_wms::Wms;
use depot_wms::replica::Outcome;
use depot_wms::sync::{Page, PageOutcome};
use serde_json::{Value, json};
use std::collections::BTreeMap;

mod day;

use day::floor_day;

const EDGE: &str = "a-1";

/// One business's records of every kind events name, as the cloud has them.
#[derive(Debug, Default, Clone)]
struct Records(BTreeMap<Entity, i64>);

impl Records {
    fn get(&self, e: Entity) -> Option<i64> {
        self.0.get(&e).copied()
    }
}

struct World {
    cloud: Wms,
    edge: Wms,
    edge_id: EdgeId,
    a: Caller,
    b: Caller,
    /// The warehouse the edge serves, and another of A's.
    served: WarehouseId,
    /// B's records, and A's in the warehouse the edge does not serve.
    foreign: Records,
    unserved: Records,
    _dir: tempfile::TempDir,
    /// The cloud's database when it is on PostgreSQL.
    _database: Option<depot_testkit::pg::PgDatabase>,
}

fn from<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("request")
}

async fn tenant(cloud: &Wms, name: &str) -> Caller {
    let b = cloud
        .create_business(name, "EUR", "UTC")
        .await
        .expect("business");
    let k = cloud.create_key(b.id, None).await.expect("key");
    Caller {
        key_id: k.key.id,
        business_id: b.id,
    }
}

async fn warehouse(cloud: &Wms, b: BusinessId, code: &str) -> WarehouseId {
    cloud
        .create_warehouse(b, code, code, Address::default(), false)
        .await
        .expect("warehouse")
        .id
}

/// Applies every page the cloud has for the edge (checked at the edge).
async fn pull(cloud: &Wms, b: BusinessId, edge: &Wms) {
    loop {
        let (_, cursor) = edge.sync_state().await.expect("state");
        let page = cloud
            .changes_for(b, EdgeId::parse(EDGE).expect("id"), cursor, 200)
            .await
            .expect("page");
        let more = page.more;
        match edge.apply_page(b, page).await.expect("apply") {
            PageOutcome::Applied { outcomes, .. } => assert!(
                outcomes
                    .iter()
                    .all(|o| matches!(o, Outcome::Applied | Outcome::Duplicate)),
                "{outcomes:?}"
            ),
            other => panic!("{other:?}"),
        }
        if !more {
            return;
        }
    }
}

async fn world() -> World {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cloud, database) = depot_testkit::pg::cloud_engine(dir.path());
    let a = tenant(&cloud, "A").await;
    let b = tenant(&cloud, "B").await;
    let served = warehouse(&cloud, a.business_id, "A1").await;
    let other = warehouse(&cloud, a.business_id, "A2").await;
    let wb = warehouse(&cloud, b.business_id, "B1").await;
    for (c, sku) in [(a, "SKU-A"), (b, "SKU-B")] {
        cloud
            .create_item(c.business_id, from(json!({"sku": sku, "name": sku})))
            .await
            .expect("item");
    }
    let edge_id = EdgeId::parse(EDGE).expect("edge id");
    cloud
        .register_edge(a.business_id, edge_id.clone(), None)
        .await
        .expect("register");
    let record = cloud
        .set_edge_warehouses(a.business_id, edge_id.clone(), vec![served])
        .await
        .expect("serve");
    assert_eq!(record.warehouses, [served]);
    let edge = Wms::open_node(
        &dir.path().join("edge.db"),
        &format!("edge:{EDGE}"),
        record.node,
    )
    .expect("edge");
    // B's records and A's in the warehouse the edge does not serve, made in
    // the cloud.
    let foreign = floor_day(&cloud, &cloud, b, wb, "SKU-B", "b").await;
    let unserved = floor_day(&cloud, &cloud, a, other, "SKU-A", "a2").await;
    day::split_backorder(&cloud, a, served, "SKU-A").await;
    pull(&cloud, a.business_id, &edge).await;
    World {
        cloud,
        edge,
        edge_id,
        a,
        b,
        served,
        foreign,
        unserved,
        _dir: dir,
        _database: database,
    }
}

/// The edge's own log from `after`, as sync sends it.
async fn edge_log(w: &World, after: i64) -> Vec<SyncEvent> {
    let head = w.edge.outgoing_head().await.expect("head");
    w.edge
        .outgoing_sync(after, head, 100_000)
        .await
        .expect("outgoing")
}

/// Replaces every id `path` reaches with `id`; answers how many.
fn replace(v: &mut Value, segments: &[&str], id: i64) -> usize {
    let Some((first, rest)) = segments.split_first() else {
        if v.is_i64() {
            *v = json!(id);
            return 1;
        }
        return 0;
    };
    match *first {
        "*" => v
            .as_array_mut()
            .map_or(0, |a| a.iter_mut().map(|i| replace(i, rest, id)).sum()),
        "**" => {
            let here = replace(v, rest, id);
            here + match v {
                Value::Array(a) => a.iter_mut().map(|i| replace(i, segments, id)).sum(),
                Value::Object(o) => o.values_mut().map(|i| replace(i, segments, id)).sum(),
                _ => 0,
            }
        }
        key => v.get_mut(key).map_or(0, |next| replace(next, rest, id)),
    }
}

/// The business's view that must not move: its log, its stock, its
/// conflicts.
async fn books(wms: &Wms, b: BusinessId) -> (Vec<(i64, String)>, String, usize) {
    let log = wms
        .business_events(b, 0, None, 100_000)
        .await
        .expect("log")
        .into_iter()
        .map(|e| (e.seq, e.kind))
        .collect();
    let stock = wms
        .list_stock(b, Default::default(), Default::default())
        .await
        .expect("stock")
        .rows;
    let conflicts = wms.conflicts(Some(b), 10_000).await.expect("conflicts");
    (log, format!("{stock:?}"), conflicts.len())
}

/// A mutation the matrix tries: which records stand in for the real one.
#[derive(Debug, Clone, Copy)]
enum Variant {
    Foreign,
    Unknown,
    Unserved,
}

#[tokio::test]
async fn an_edge_touches_only_its_own_business_and_warehouses() {
    let w = world().await;
    let a = w.a.business_id;
    // A day at the edge, in the warehouse it serves: the templates.
    floor_day(&w.edge, &w.cloud, w.a, w.served, "SKU-A", "a1").await;
    let log = edge_log(&w, 0).await;
    // All of it is A's own, in its own warehouse: none of it is refused.
    let ack = w
        .cloud
        .receive_batch(a, w.edge_id.clone(), log.clone())
        .await
        .expect("batch");
    assert!(ack.rejected.is_empty(), "{:?}", ack.rejected);
    assert_eq!(ack.through, log.len() as i64);

    let before_b = books(&w.cloud, w.b.business_id).await;
    let (_, _, conflicts_a) = books(&w.cloud, a).await;
    assert_eq!(conflicts_a, 0);
    let mut seq = ack.through;
    let mut tried = 0;
    let mut kinds = std::collections::BTreeSet::new();
    for template in &log {
        let entry = catalogue::lookup(&template.kind).expect("catalogued");
        if !kinds.insert(template.kind.clone()) {
            continue;
        }
        let payload: Value = serde_json::from_str(template.payload.get()).expect("json");
        // Every id the engine wrote into it is a reference the catalogue
        // declares, so the checks see it.
        assert_eq!(refs::unreferenced(entry, &payload), Vec::<String>::new());
        for r in entry.refs {
            if r.entity == Entity::Business {
                continue;
            }
            let segments: Vec<&str> = r.path.split('/').filter(|s| !s.is_empty()).collect();
            assert!(
                !refs::ids(&payload, r.path).expect("ids").is_empty(),
                "{} carries no {} at {}: {payload}",
                template.kind,
                r.entity.as_str(),
                r.path
            );
            for variant in [Variant::Foreign, Variant::Unknown, Variant::Unserved] {
                let id = match variant {
                    Variant::Foreign => w.foreign.get(r.entity).expect("B has one"),
                    // Not a record anywhere, and in no box's range but the
                    // cloud's.
                    Variant::Unknown => 777_777_777,
                    Variant::Unserved => match w.unserved.get(r.entity) {
                        Some(id)
                            if !matches!(
                                r.entity,
                                Entity::Item | Entity::Printer | Entity::PrintJob
                            ) =>
                        {
                            id
                        }
                        _ => continue,
                    },
                };
                let mut mutated = payload.clone();
                assert!(replace(&mut mutated, &segments, id) > 0);
                // A movement of its own, not a copy of the one applied.
                if mutated.get("id").is_some_and(Value::is_string) {
                    mutated["id"] = json!(uuid::Uuid::now_v7().to_string());
                }
                seq += 1;
                let event = SyncEvent {
                    seq,
                    id: EventId::new(),
                    kind: template.kind.clone(),
                    payload: serde_json::value::to_raw_value(&mutated).expect("raw"),
                    at: depot_protocol::now(),
                };
                let ack = w
                    .cloud
                    .receive_batch(a, w.edge_id.clone(), vec![event])
                    .await
                    .expect("batch");
                let what = format!("{} {} = {id} ({variant:?})", template.kind, r.path);
                assert_eq!(ack.through, seq, "{what}");
                assert_eq!(ack.rejected.len(), 1, "{what} was applied");
                let reason = &ack.rejected[0].reason;
                let expected = match (variant, r.role) {
                    (Variant::Unserved, _) => "serve".to_owned(),
                    (Variant::Unknown, Role::Makes) if r.entity.numbered_per_node() => {
                        format!("is not numbered in the range of edge {EDGE}")
                    }
                    _ => format!("{} {id} is not a record of business {a}", r.entity.as_str()),
                };
                assert!(reason.contains(&expected), "{what}: {reason}");
                tried += 1;
            }
        }
    }
    // Every kind an edge may send and that names a record was tried.
    for t in CATALOGUE {
        if catalogue::edges_may_send(t.name())
            && t.refs.iter().any(|r| r.entity != Entity::Business)
        {
            assert!(
                kinds.contains(t.name()),
                "no {} in the edge's day",
                t.name()
            );
        }
    }
    assert!(tried > 100, "{tried}");

    // Nothing of B's moved; each try is a conflict of A's, in its log.
    assert_eq!(books(&w.cloud, w.b.business_id).await, before_b);
    let (log_a, _, conflicts_a) = books(&w.cloud, a).await;
    assert_eq!(conflicts_a, tried);
    let noted = log_a.iter().filter(|(_, k)| k == "sync.conflict").count();
    assert_eq!(noted, tried);
    let record = w
        .cloud
        .edge(a, w.edge_id.clone())
        .await
        .expect("edge")
        .expect("registered");
    assert_eq!(record.refused, tried as i64);
    assert!(record.last_refused.is_some());

    // The queue moved on: the box's next event is applied.
    let head = w.edge.outgoing_head().await.expect("head");
    w.edge
        .adjust(
            w.a,
            from(json!({"warehouse_id": w.served.0, "sku": "SKU-A", "reason": "adjusted", "delta": 1})),
        )
        .await
        .expect("adjust");
    let mut next = edge_log(&w, head).await;
    next[0].seq = seq + 1;
    let ack = w
        .cloud
        .receive_batch(a, w.edge_id.clone(), next)
        .await
        .expect("batch");
    assert!(ack.rejected.is_empty(), "{:?}", ack.rejected);
    assert_eq!(ack.through, seq + 1);
}

#[tokio::test]
async fn the_edge_takes_only_its_own_business_from_the_cloud() {
    let w = world().await;
    let (a, b) = (w.a.business_id, w.b.business_id);
    // A record of another business at the edge, as a database that was
    // tampered with (or a bug) would hold one: what a page makes must not
    // take it over.
    let foreign: Vec<_> = depot_testkit::events::own_since(&w.cloud, 0)
        .await
        .1
        .into_iter()
        .filter(|e| {
            e.business_id == Some(b)
                && ["business.created", "warehouse.created", "item.created"]
                    .contains(&e.kind.as_str())
        })
        .collect();
    w.edge.apply_remote(foreign).await.expect("seed");
    // The cloud's pages for the edge, once more from the start: templates.
    let page = w
        .cloud
        .changes_for(a, w.edge_id.clone(), 0, 10_000)
        .await
        .expect("page");
    let (_, mut cursor) = w.edge.sync_state().await.expect("state");
    let mut tried = 0;
    let mut kinds = std::collections::BTreeSet::new();
    let one = |c: Change, cursor: &mut i64| {
        *cursor += 1;
        Page {
            from: *cursor - 1,
            to: *cursor,
            changes: vec![Change {
                rev: *cursor,
                id: EventId::new(),
                ..c
            }],
            more: false,
        }
    };
    for c in page.changes {
        let entry = catalogue::lookup(&c.kind).expect("catalogued");
        assert_eq!(refs::unreferenced(entry, &c.payload), Vec::<String>::new());
        if !kinds.insert(c.kind.clone()) {
            continue;
        }
        let mut cases: Vec<(String, Change)> = vec![(
            format!("{} of business {b}", c.kind),
            Change {
                business_id: Some(b),
                ..c.clone()
            },
        )];
        if c.payload.get("business_id").is_some() {
            let mut p = c.payload.clone();
            p["business_id"] = json!(b);
            cases.push((
                format!("{} naming business {b}", c.kind),
                Change {
                    payload: p,
                    ..c.clone()
                },
            ));
        }
        for r in entry.refs {
            let segments: Vec<&str> = r.path.split('/').filter(|s| !s.is_empty()).collect();
            let id = match (r.entity, r.role) {
                (Entity::Business, _) => b.0,
                // Made by the page: B's record of that kind, seeded above.
                (Entity::Warehouse, Role::Makes) => w.foreign.get(Entity::Warehouse).expect("wb"),
                (Entity::Item, Role::Makes) => w.foreign.get(Entity::Item).expect("ib"),
                (_, Role::Makes) => continue,
                (_, Role::Names) => 777_777_777,
            };
            let mut p = c.payload.clone();
            if replace(&mut p, &segments, id) == 0 {
                continue;
            }
            cases.push((
                format!("{} {} = {id}", c.kind, r.path),
                Change {
                    payload: p,
                    ..c.clone()
                },
            ));
        }
        for (what, case) in cases {
            let page = one(case, &mut cursor);
            match w.edge.apply_page(a, page).await.expect("apply") {
                PageOutcome::Applied {
                    outcomes,
                    cursor: now,
                } => {
                    assert_eq!(now, cursor, "{what}");
                    assert!(
                        matches!(outcomes.as_slice(), [Outcome::Rejected { .. }]),
                        "{what}: {outcomes:?}"
                    );
                }
                other => panic!("{what}: {other:?}"),
            }
            tried += 1;
        }
    }
    for kind in [
        "warehouse.created",
        "item.created",
        "order.created",
        "stock.moved",
        "inbound.created",
        "printer.saved",
        "order.split",
    ] {
        assert!(kinds.contains(kind), "no {kind} in the pages");
    }
    let snapshot = w.edge.sync_snapshot().await.expect("snapshot");
    assert_eq!(snapshot.refused.from_cloud, tried);
    assert_eq!(
        snapshot
            .refused
            .last
            .as_ref()
            .and_then(|l| l.direction.as_deref()),
        Some("from_cloud")
    );
    // B's seeded warehouse is still B's.
    let wb = WarehouseId(w.foreign.get(Entity::Warehouse).expect("wb"));
    assert!(
        w.edge
            .warehouses(b, None)
            .await
            .expect("list")
            .iter()
            .any(|x| x.id == wb)
    );
    assert!(
        !w.edge
            .warehouses(a, None)
            .await
            .expect("list")
            .iter()
            .any(|x| x.id == wb)
    );
}
