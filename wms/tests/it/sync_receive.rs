//! The cloud receiving an edge's log: batches applied exactly once and in
//! order whatever order they arrive in, gaps reported, cursors kept, bad
//! events rejected without stopping the queue, unknown edges refused.

use depot_protocol::sync::{EdgeId, SyncEvent};
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, EventId, ItemId, WarehouseId};
use depot_testkit::seed;
use depot_wms::Wms;
use serde_json::json;

struct Setup {
    cloud: Wms,
    edge: Wms,
    edge_id: EdgeId,
    business: BusinessId,
    caller: Caller,
    warehouse: WarehouseId,
    item: ItemId,
    _dir: tempfile::TempDir,
    /// The cloud's database when it is on PostgreSQL.
    _database: Option<depot_testkit::pg::PgDatabase>,
}

async fn setup() -> Setup {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cloud, database) = depot_testkit::pg::cloud_engine(dir.path());
    let seeded = seed::business("B").item("A").seed(&cloud).await;
    let edge_id = EdgeId::parse("mad-1").expect("edge id");
    let record = cloud
        .register_edge(seeded.business, edge_id.clone(), Some("Madrid dock".into()))
        .await
        .expect("register");
    assert_eq!(record.node, 1);
    let edge =
        Wms::open_node(&dir.path().join("edge.db"), "edge:mad-1", record.node).expect("edge");
    // The edge starts from the cloud's catalog.
    let (_, events) = depot_testkit::events::own_since(&cloud, 0).await;
    edge.apply_remote(events).await.expect("bootstrap");
    Setup {
        cloud,
        edge,
        edge_id,
        business: seeded.business,
        caller: seeded.caller,
        warehouse: seeded.warehouse,
        item: seeded.items[0],
        _dir: dir,
        _database: database,
    }
}

async fn edge_log(s: &Setup) -> Vec<SyncEvent> {
    let head = s.edge.outgoing_head().await.expect("head");
    s.edge
        .outgoing_sync(0, head, 100_000)
        .await
        .expect("outgoing")
}

/// Adjusts the item's stock at the edge by `delta`.
async fn adjust_at_edge(s: &Setup, delta: i64) {
    let req = serde_json::from_value(
        json!({"warehouse_id": s.warehouse.0, "sku": "A", "reason": "adjusted", "delta": delta}),
    )
    .expect("adjust");
    s.edge
        .adjust(s.caller, req)
        .await
        .expect("adjust at the edge");
}

/// The item's on-hand in the cloud and at the edge.
async fn levels(s: &Setup) -> (i64, i64) {
    let cloud = s
        .cloud
        .stock_level(s.item, s.warehouse)
        .await
        .expect("level");
    let edge = s
        .edge
        .stock_level(s.item, s.warehouse)
        .await
        .expect("level");
    (cloud.0, edge.0)
}

/// The edge as the cloud has it registered.
async fn record(s: &Setup) -> depot_wms::sync::EdgeRecord {
    s.cloud
        .edge(s.business, s.edge_id.clone())
        .await
        .expect("edge")
        .expect("registered")
}

#[tokio::test]
async fn batches_apply_once_and_in_order_however_they_arrive() {
    let s = setup().await;
    for delta in [5, -2, 7, 1, -3, 4] {
        adjust_at_edge(&s, delta).await;
    }
    let log = edge_log(&s).await;
    assert_eq!(
        log.iter().map(|e| e.seq).collect::<Vec<_>>(),
        (1..=6).collect::<Vec<_>>()
    );

    // Out of order: the cloud applies nothing past a hole and says so.
    let ack = s
        .cloud
        .receive_batch(s.business, s.edge_id.clone(), log[3..5].to_vec())
        .await
        .expect("batch");
    assert_eq!((ack.through, ack.gap), (0, true));
    let ack = s
        .cloud
        .receive_batch(s.business, s.edge_id.clone(), log[0..2].to_vec())
        .await
        .expect("batch");
    assert_eq!((ack.through, ack.gap), (2, false));
    // A duplicate of what was applied, with the rest.
    let ack = s
        .cloud
        .receive_batch(s.business, s.edge_id.clone(), log[1..6].to_vec())
        .await
        .expect("batch");
    assert_eq!((ack.through, ack.gap), (6, false));
    let ack = s
        .cloud
        .receive_batch(s.business, s.edge_id.clone(), log.clone())
        .await
        .expect("batch");
    assert_eq!((ack.through, ack.gap, ack.rejected.len()), (6, false, 0));

    assert_eq!(levels(&s).await, (12, 12));
    let record = record(&s).await;
    assert_eq!(record.up_cursor, 6);
    assert!(record.last_seen.is_some());
}

/// A burst of batches is applied in the order they came, however many jobs
/// they make: each batch here is one event, so 300 batches queue 300 jobs in
/// one call, more than tokio lets one task do before it must yield (its
/// cooperative budget of 128). Jobs queued by futures polled together were
/// reordered past that budget: later batches were applied first, saw a
/// hole, and were answered with a gap that made the edge send its whole
/// window again.
#[tokio::test]
async fn a_burst_of_many_batches_is_applied_in_order() {
    let s = setup().await;
    for delta in 1..=300 {
        adjust_at_edge(&s, delta % 7 + 1).await;
    }
    let log = edge_log(&s).await;
    assert_eq!(log.len(), 300);
    let batches = log
        .iter()
        .map(|e| (s.business, s.edge_id.clone(), vec![e.clone()]))
        .collect();
    let acks = s.cloud.receive_batches(batches).await;
    let answered: Vec<(i64, bool)> = acks
        .into_iter()
        .map(|a| a.map(|a| (a.through, a.gap)).expect("applied"))
        .collect();
    let expected: Vec<(i64, bool)> = (1..=300).map(|seq| (seq, false)).collect();
    assert_eq!(answered, expected);
    assert_eq!(record(&s).await.up_cursor, 300);
    let total: i64 = (1..=300).map(|delta| delta % 7 + 1).sum();
    assert_eq!(levels(&s).await, (total, total));
}

#[tokio::test]
async fn bad_events_are_rejected_and_the_queue_moves_on() {
    let s = setup().await;
    let ev = |seq: i64, kind: &str, payload: serde_json::Value| SyncEvent {
        seq,
        id: EventId::new(),
        kind: kind.into(),
        payload: serde_json::value::to_raw_value(&payload).expect("payload"),
        at: depot_protocol::now(),
    };
    let good = edge_log(&s).await;
    assert!(good.is_empty());
    let req = serde_json::from_value(
        json!({"warehouse_id": s.warehouse.0, "sku": "A", "reason": "adjusted", "delta": 3}),
    )
    .expect("adjust");
    s.edge.adjust(s.caller, req).await.expect("adjust");
    let mut movement: serde_json::Value =
        serde_json::from_str(edge_log(&s).await.remove(0).payload.get()).expect("movement");
    movement["business_id"] = json!(999);
    movement["id"] = json!(EventId::new().0.to_string());
    let batch = vec![
        ev(1, "item.created", json!({"sku": "EVIL"})),
        ev(2, "stock.moved", movement),
        ev(
            3,
            "sync.oversized",
            json!({"kind": "stock.moved", "bytes": 999_999}),
        ),
        ev(4, "stock.moved", json!({"garbage": true})),
    ];
    let ack = s
        .cloud
        .receive_batch(s.business, s.edge_id.clone(), batch)
        .await
        .expect("batch");
    assert_eq!((ack.through, ack.gap), (4, false));
    assert_eq!(
        ack.rejected.iter().map(|r| r.seq).collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );
    assert!(
        ack.rejected[0].reason.contains("may not send"),
        "{:?}",
        ack.rejected
    );
    assert!(
        ack.rejected[1].reason.contains("another business"),
        "{:?}",
        ack.rejected
    );
    assert_eq!(
        s.cloud
            .conflicts(Some(s.business), 10)
            .await
            .expect("conflicts")
            .len(),
        4
    );
    assert_eq!(
        s.cloud
            .stock_level(s.item, s.warehouse)
            .await
            .expect("level")
            .0,
        0,
        "nothing of it was applied"
    );
}

#[tokio::test]
async fn unknown_edges_are_refused() {
    let s = setup().await;
    let stranger = EdgeId::parse("bcn-9").expect("id");
    let r = s.cloud.receive_batch(s.business, stranger, vec![]).await;
    assert!(matches!(r, Err(depot_wms::WmsError::NotFound(_))));
    let other_business = s
        .cloud
        .receive_batch(BusinessId(77), s.edge_id.clone(), vec![])
        .await;
    assert!(matches!(
        other_business,
        Err(depot_wms::WmsError::NotFound(_))
    ));
    let again = s
        .cloud
        .register_edge(s.business, s.edge_id.clone(), None)
        .await;
    assert!(matches!(again, Err(depot_wms::WmsError::Conflict { .. })));
}

/// Makes applying a movement of `delta` fail in the cloud the way a
/// storage error would (a runtime error, not a constraint): a fault
/// injected under the engine. Answers how the database words the error.
async fn poison(cloud: &Wms, delta: i64) -> &'static str {
    // Each database's own runtime error: malformed JSON, a division by 0.
    let sqlite = format!(
        "CREATE TRIGGER poison BEFORE INSERT ON stock_movements WHEN NEW.delta = {delta}
         BEGIN SELECT json('{{not json'); END;"
    );
    let postgres = format!(
        "CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN PERFORM 1 / 0; RETURN NEW; END $$;
         CREATE TRIGGER poison BEFORE INSERT ON stock_movements FOR EACH ROW
         WHEN (NEW.delta = {delta}) EXECUTE FUNCTION poison();"
    );
    cloud
        .write(move |c| {
            Ok(match c.dialect() {
                depot_sql::Dialect::Sqlite => {
                    c.execute_batch(&sqlite)?;
                    "malformed JSON"
                }
                depot_sql::Dialect::Postgres => {
                    c.execute_batch(&postgres)?;
                    "ERROR: division by zero"
                }
            })
        })
        .await
        .expect("trigger")
}

#[tokio::test]
async fn an_event_that_fails_to_apply_is_refused_and_sync_goes_on() {
    let s = setup().await;
    let error = poison(&s.cloud, 4242).await;
    for delta in [4242, 1, 2] {
        let req = serde_json::from_value(
            json!({"warehouse_id": s.warehouse.0, "sku": "A", "reason": "adjusted", "delta": delta}),
        )
        .expect("adjust");
        s.edge.adjust(s.caller, req).await.expect("adjust");
    }
    let log = edge_log(&s).await;
    let ack = s
        .cloud
        .receive_batch(s.business, s.edge_id.clone(), log.clone())
        .await
        .expect("a failing event does not fail the batch");
    assert_eq!((ack.through, ack.gap), (3, false));
    assert_eq!(ack.rejected.len(), 1, "{:?}", ack.rejected);
    assert_eq!(ack.rejected[0].seq, 1);
    assert!(
        ack.rejected[0]
            .reason
            .starts_with(&format!("could not be applied here: storage: {error}")),
        "{}",
        ack.rejected[0].reason
    );
    // The events after it are applied; the failed one left nothing.
    let level = s
        .cloud
        .stock_level(s.item, s.warehouse)
        .await
        .expect("level");
    assert_eq!(level.0, 3);
    // Sent again (an ack lost), nothing changes.
    let again = s
        .cloud
        .receive_batch(s.business, s.edge_id.clone(), log)
        .await
        .expect("batch");
    assert_eq!((again.through, again.rejected.len()), (3, 0));
    // The cloud says so: a conflict of the edge's business, the edge list,
    // the metrics.
    let conflicts = s
        .cloud
        .conflicts(Some(s.business), 10)
        .await
        .expect("conflicts");
    assert_eq!(conflicts.len(), 1);
    assert_eq!(conflicts[0].resolution, "failed");
    let record = s
        .cloud
        .edge(s.business, s.edge_id.clone())
        .await
        .expect("edge")
        .expect("registered");
    assert_eq!(record.refused, 1);
    let last = record.last_refused.expect("the last refusal");
    assert_eq!(last.kind, "stock.moved");
    assert!(last.reason.contains(error), "{}", last.reason);
    assert_eq!(s.cloud.fleet().await.expect("fleet").refused, 1);
    // Streams and webhooks read only what happened.
    let log = s
        .cloud
        .business_events(s.business, 0, Some("stock.moved".into()), 100)
        .await
        .expect("log");
    let origin = format!("edge:{}", s.edge_id);
    assert_eq!(log.iter().filter(|e| e.origin == origin).count(), 2);
}

/// An edge shown online by a hello alone has no last will to say when it
/// goes: once silent for long enough it is shown offline (and logged so),
/// while one whose retained state says online stays online.
#[tokio::test]
async fn an_edge_online_by_a_hello_alone_goes_offline_when_silent() {
    use depot_wms::sync::Sighting;
    let s = setup().await;
    let stated = EdgeId::parse("mad-2").expect("id");
    s.cloud
        .register_edge(s.business, stated.clone(), None)
        .await
        .expect("register");
    let sighting = |by_state: bool| Sighting {
        session: Some("run-1".into()),
        version: Some("t".into()),
        head: Some(0),
        taking_back_after: (!by_state).then_some(None),
        by_state,
        downlink_owner: None,
    };
    s.cloud
        .edge_seen(s.business, s.edge_id.clone(), sighting(false))
        .await
        .expect("hello");
    s.cloud
        .edge_seen(s.business, stated.clone(), sighting(true))
        .await
        .expect("state");
    // Its hello of the same run keeps the state's word.
    s.cloud
        .edge_seen(s.business, stated.clone(), sighting(false))
        .await
        .expect("hello");
    let online = |e: &EdgeId| {
        let (cloud, b, e) = (s.cloud.clone(), s.business, e.clone());
        async move {
            cloud
                .edge(b, e)
                .await
                .expect("edge")
                .expect("registered")
                .online
        }
    };
    assert!(online(&s.edge_id).await && online(&stated).await);
    // Heard from just now: nothing goes.
    let gone = s
        .cloud
        .expire_silent_edges(std::time::Duration::from_secs(60))
        .await
        .expect("expire");
    assert_eq!(gone, 0);
    s.cloud
        .write(|conn| {
            conn.execute("UPDATE edges SET last_seen = '2020-01-01T00:00:00Z'", &[])?;
            Ok(())
        })
        .await
        .expect("a while later");
    let gone = s
        .cloud
        .expire_silent_edges(std::time::Duration::from_secs(60))
        .await
        .expect("expire");
    assert_eq!(gone, 1);
    assert!(!online(&s.edge_id).await);
    assert!(online(&stated).await, "its last will says when it goes");
    let offline = s
        .cloud
        .business_events(s.business, 0, Some("edge.offline".into()), 10)
        .await
        .expect("log");
    assert_eq!(offline.len(), 1);
    assert_eq!(offline[0].payload["edge_id"], s.edge_id.as_str());
}

/// A movement from an edge that would take a level out of its range is
/// refused like one from a request (a conflict of the edge's business),
/// never stored as a level that overflowed, and the queue moves on.
#[tokio::test]
async fn a_movement_past_the_stock_ceiling_is_refused_not_stored() {
    let s = setup().await;
    let req = serde_json::from_value(
        json!({"warehouse_id": s.warehouse.0, "sku": "A", "reason": "adjusted", "delta": 7}),
    )
    .expect("adjust");
    s.edge.adjust(s.caller, req).await.expect("adjust");
    let mut log = edge_log(&s).await;
    let mut huge: serde_json::Value = serde_json::from_str(log[0].payload.get()).expect("json");
    huge["id"] = json!(uuid::Uuid::now_v7().to_string());
    huge["delta"] = json!(depot_protocol::stock::MAX_ON_HAND);
    log.push(SyncEvent {
        seq: 2,
        id: EventId::new(),
        kind: "stock.moved".into(),
        payload: serde_json::value::to_raw_value(&huge).expect("raw"),
        at: depot_protocol::now(),
    });
    let mut after = log[0].clone();
    after.seq = 3;
    after.id = EventId::new();
    let mut again: serde_json::Value = serde_json::from_str(after.payload.get()).expect("json");
    again["id"] = json!(uuid::Uuid::now_v7().to_string());
    after.payload = serde_json::value::to_raw_value(&again).expect("raw");
    log.push(after);
    let ack = s
        .cloud
        .receive_batch(s.business, s.edge_id.clone(), log)
        .await
        .expect("batch");
    assert_eq!(ack.through, 3);
    assert_eq!(ack.rejected.len(), 1, "{:?}", ack.rejected);
    assert_eq!(ack.rejected[0].seq, 2);
    assert!(
        !ack.rejected[0].reason.starts_with("could not be applied"),
        "refused for what it is, not as a failure: {}",
        ack.rejected[0].reason
    );
    let level = s
        .cloud
        .stock_level(s.item, s.warehouse)
        .await
        .expect("level");
    assert_eq!(level.0, 14);
}

/// Cloud instances sharing the edges: the instance that answered an
/// edge's last hello owns its downlink, and a state message (which no
/// instance answers) leaves the owner as it was.
#[tokio::test]
async fn the_instance_that_answered_the_last_hello_owns_the_downlink() {
    use depot_wms::sync::Sighting;
    let s = setup().await;
    let other = EdgeId::parse("bcn-1").expect("id");
    s.cloud
        .register_edge(s.business, other.clone(), None)
        .await
        .expect("register");
    let hello = |owner: Option<&str>| Sighting {
        session: Some("run-1".into()),
        taking_back_after: owner.map(|_| None),
        by_state: owner.is_none(),
        downlink_owner: owner.map(str::to_owned),
        ..Sighting::default()
    };
    let seen = |edge: &EdgeId, owner: Option<&str>| {
        let (cloud, b, e, sighting) = (s.cloud.clone(), s.business, edge.clone(), hello(owner));
        async move { cloud.edge_seen(b, e, sighting).await.expect("seen") }
    };
    let owned = |owner: &str| {
        let (cloud, owner) = (s.cloud.clone(), owner.to_owned());
        async move {
            let mut edges: Vec<String> = cloud
                .downlinks_of(owner)
                .await
                .expect("downlinks")
                .into_iter()
                .map(|(_, e)| e.as_str().to_owned())
                .collect();
            edges.sort();
            edges
        }
    };
    assert!(owned("instance-a").await.is_empty());
    seen(&s.edge_id, Some("instance-a")).await;
    seen(&other, Some("instance-a")).await;
    assert_eq!(owned("instance-a").await, ["bcn-1", s.edge_id.as_str()]);
    // The next hello reached B: B pages that edge now, A the other.
    seen(&s.edge_id, Some("instance-b")).await;
    seen(&s.edge_id, None).await;
    assert_eq!(owned("instance-a").await, ["bcn-1"]);
    assert_eq!(owned("instance-b").await, [s.edge_id.as_str()]);
}
