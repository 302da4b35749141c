//! Locations both ways over sync: the cloud's reach the edge with their
//! ids, an edge's (made offline, numbered in its range) reach the cloud
//! with the stock booked at them, and one that names another tenant's
//! warehouse, takes an id outside the edge's range or clashes with a code
//! already on record is refused without stopping sync.

use depot_protocol::location::{Location, LocationFields};
use depot_protocol::sync::{EdgeId, SyncEvent};
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, Page, WarehouseId};
use depot_testkit::seed;
use depot_wms::Wms;
use depot_wms::locations::LocationFilter;
use serde_json::json;

pub(crate) struct Setup {
    pub cloud: Wms,
    pub edge: Wms,
    pub edge_id: EdgeId,
    pub business: BusinessId,
    pub caller: Caller,
    pub warehouse: WarehouseId,
    other_warehouse: WarehouseId,
    /// The cloud's log as the edge took it.
    cloud_head: i64,
    _dir: tempfile::TempDir,
    _database: Option<depot_testkit::pg::PgDatabase>,
}

pub(crate) async fn setup() -> Setup {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cloud, database) = depot_testkit::pg::cloud_engine(dir.path());
    let seeded = seed::business("Λ").item("ΦΕΤΑ").seed(&cloud).await;
    let edge_id = EdgeId::parse("ath-1").expect("edge id");
    let record = cloud
        .register_edge(seeded.business, edge_id.clone(), None)
        .await
        .expect("register");
    let edge =
        Wms::open_node(&dir.path().join("edge.db"), "edge:ath-1", record.node).expect("edge");
    let (head, events) = depot_testkit::events::own_since(&cloud, 0).await;
    edge.apply_remote(events).await.expect("bootstrap");
    // Another tenant, which the box never hears of.
    let other = seed::business("Other").seed(&cloud).await;
    Setup {
        cloud_head: head,
        cloud,
        edge,
        edge_id,
        business: seeded.business,
        caller: seeded.caller,
        warehouse: seeded.warehouse,
        other_warehouse: other.warehouse,
        _dir: dir,
        _database: database,
    }
}

/// A location of the setup's warehouse, made on `wms` (the cloud or the
/// edge).
pub(crate) async fn located(wms: &Wms, s: &Setup, code: &str, kind: &str) -> Location {
    let fields: LocationFields =
        serde_json::from_value(json!({"warehouse_id": s.warehouse.0, "code": code, "type": kind}))
            .expect("fields");
    wms.create_location(s.business, fields)
        .await
        .expect("location")
}

async fn codes(wms: &Wms, business: BusinessId) -> Vec<(i64, String, i64)> {
    let page = Page::parse(None, None).expect("page");
    let depot_protocol::Listed { rows, .. } = wms
        .list_locations(business, LocationFilter::default(), page)
        .await
        .expect("list");
    rows.into_iter()
        .map(|l| (l.record.id.0, l.record.code, l.on_hand))
        .collect()
}

/// The edge takes what the cloud wrote of its business since it first
/// took the catalog.
pub(crate) async fn down(s: &Setup) {
    let (_, events) = depot_testkit::events::own_since(&s.cloud, s.cloud_head).await;
    let events: Vec<_> = events
        .into_iter()
        .filter(|e| e.business_id == Some(s.business))
        .collect();
    s.edge.apply_remote(events).await.expect("down");
}

pub(crate) async fn edge_log(s: &Setup) -> Vec<SyncEvent> {
    let head = s.edge.outgoing_head().await.expect("head");
    s.edge
        .outgoing_sync(0, head, 100_000)
        .await
        .expect("outgoing")
}

#[tokio::test]
async fn locations_made_on_either_side_reach_the_other_with_their_ids() {
    let s = setup().await;
    let cloud_made = located(&s.cloud, &s, "Α-01", "pick").await;
    down(&s).await;
    assert_eq!(
        codes(&s.edge, s.business).await,
        [(cloud_made.record.id.0, "Α-01".to_owned(), 0)]
    );

    // Offline at the edge: a dock of its own, goods received into it.
    let dock = located(&s.edge, &s, "DOCK-E", "dock").await;
    assert_eq!(dock.record.id.0 >> 40, 1, "numbered in the edge's range");
    let req = serde_json::from_value(json!({"warehouse_id": s.warehouse.0, "sku": "ΦΕΤΑ",
        "reason": "received", "quantity": 7, "location": "DOCK-E"}))
    .expect("adjust");
    s.edge.adjust(s.caller, req).await.expect("received");
    let ack = s
        .cloud
        .receive_batch(s.business, s.edge_id.clone(), edge_log(&s).await)
        .await
        .expect("up");
    assert!(ack.rejected.is_empty(), "{:?}", ack.rejected);
    let at_cloud = codes(&s.cloud, s.business).await;
    assert!(
        at_cloud.contains(&(dock.record.id.0, "DOCK-E".to_owned(), 7)),
        "{at_cloud:?}"
    );
    assert!(s.cloud.check_ledger().await.expect("check").is_empty());
}

#[tokio::test]
async fn a_location_the_edge_may_not_make_is_refused_and_sync_goes_on() {
    let s = setup().await;
    let dock = located(&s.edge, &s, "DOCK", "dock").await;
    let saved: serde_json::Value =
        serde_json::from_str(edge_log(&s).await[0].payload.get()).expect("payload");
    let cloud_dock = located(&s.cloud, &s, "DOCK", "dock").await;
    let ev = |seq: i64, payload: serde_json::Value| SyncEvent {
        seq,
        id: depot_protocol::EventId::new(),
        kind: "location.saved".into(),
        payload: serde_json::value::to_raw_value(&payload).expect("payload"),
        at: depot_protocol::now(),
    };
    let mut foreign = saved.clone();
    foreign["warehouse_id"] = json!(s.other_warehouse.0);
    foreign["code"] = json!("THEIRS");
    let mut cloud_range = saved.clone();
    cloud_range["id"] = json!(123);
    cloud_range["code"] = json!("LOW");
    let batch = vec![
        ev(1, foreign),
        ev(2, cloud_range),
        // The code is the cloud's DOCK already: a clash, not a second DOCK.
        ev(3, saved),
    ];
    let ack = s
        .cloud
        .receive_batch(s.business, s.edge_id.clone(), batch)
        .await
        .expect("batch");
    assert_eq!(
        ack.rejected.iter().map(|r| r.seq).collect::<Vec<_>>(),
        [1, 2, 3],
        "{:?}",
        ack.rejected
    );
    assert_eq!(ack.through, 3);
    assert_eq!(
        codes(&s.cloud, s.business).await,
        [(cloud_dock.record.id.0, "DOCK".to_owned(), 0)]
    );
    assert_ne!(cloud_dock.record.id, dock.record.id);
}

#[tokio::test]
async fn goods_received_and_put_away_offline_reach_the_cloud_as_they_were() {
    let s = setup().await;
    let inbound = s
        .cloud
        .create_inbound(
            s.business,
            serde_json::from_value(json!({"warehouse_id": s.warehouse.0, "reference": "PO-Ε",
                "supplier": "Τυροκομείο", "lines": [{"sku": "ΦΕΤΑ", "quantity": 12}]}))
            .expect("inbound"),
        )
        .await
        .expect("inbound");
    down(&s).await;

    // Offline: a dock and a rack made on the floor, the goods received at
    // the dock (where a reception without a location puts them) and put
    // away where the rules say.
    for (code, kind) in [("DOCK", "dock"), ("R-1", "bulk")] {
        located(&s.edge, &s, code, kind).await;
    }
    let received = s
        .edge
        .receive(
            s.caller,
            serde_json::from_value(
                json!({"inbound_id": inbound.id, "lines": [{"code": "ΦΕΤΑ", "quantity": 12}]}),
            )
            .expect("reception"),
        )
        .await
        .expect("received");
    let task = received.received[0].putaway_task_id.expect("a task");
    assert_eq!(task.0 >> 40, 1, "numbered in the edge's range");
    let at_edge = s.edge.putaway_task(s.business, task).await.expect("task");
    assert_eq!(
        (at_edge.from_location.as_str(), at_edge.suggested.as_deref()),
        ("DOCK", Some("R-1"))
    );
    for n in [5, 7] {
        s.edge
            .putaway_scan(
                s.caller,
                serde_json::from_value(json!({"task_id": task.0, "code": "ΦΕΤΑ",
                    "location": "R-1", "quantity": n}))
                .expect("scan"),
            )
            .await
            .expect("put away");
    }

    // Back online: the cloud has the task as the edge left it, and the
    // stock where the edge put it.
    let ack = s
        .cloud
        .receive_batch(s.business, s.edge_id.clone(), edge_log(&s).await)
        .await
        .expect("up");
    assert!(ack.rejected.is_empty(), "{:?}", ack.rejected);
    let at_cloud = s.cloud.putaway_task(s.business, task).await.expect("task");
    assert_eq!(
        at_cloud,
        s.edge.putaway_task(s.business, task).await.expect("task")
    );
    assert_eq!((at_cloud.put, at_cloud.remaining), (12, 0));
    let held: Vec<(String, i64)> = codes(&s.cloud, s.business)
        .await
        .into_iter()
        .map(|(_, code, n)| (code, n))
        .collect();
    assert!(held.contains(&("R-1".to_owned(), 12)), "{held:?}");
    assert!(held.contains(&("DOCK".to_owned(), 0)), "{held:?}");
    assert!(s.cloud.check_ledger().await.expect("check").is_empty());
    assert!(s.edge.check_ledger().await.expect("check").is_empty());
}
