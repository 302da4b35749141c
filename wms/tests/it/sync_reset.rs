//! A cloud restored from an older backup, at the storage level: the edge's
//! down cursor is past the restored log, so changes the restored cloud makes
//! land at revs the edge thinks it has; after `reset_down_cursor` a replay
//! from the start fills them in and skips the rest. Up, the restored cloud
//! has less of the edge's log than it acknowledged: after `rewind_ack` the
//! edge's events go again and are applied there once. The cloud records
//! what each edge reports (head, state) for its edge list.

use depot_protocol::order::Address;
use depot_protocol::sync::{EdgeId, SyncEvent};
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, ItemId, WarehouseId};
use depot_wms::Wms;
use depot_wms::sync::{PageOutcome, Sighting};
use serde_json::json;

const EDGE: &str = "rs-1";

fn edge_id() -> EdgeId {
    EdgeId::parse(EDGE).expect("edge id")
}

/// Applies every page `cloud` has for the edge after its cursor; answers
/// how many changes were applied (duplicates not counted).
async fn pull(cloud: &Wms, business: BusinessId, edge: &Wms) -> usize {
    let mut applied = 0;
    loop {
        let (_, cursor) = edge.sync_state().await.expect("state");
        let page = cloud
            .changes_for(business, edge_id(), cursor, 4)
            .await
            .expect("page");
        let more = page.more;
        match edge.apply_page(business, page).await.expect("apply") {
            PageOutcome::Applied { outcomes, .. } => {
                applied += outcomes
                    .iter()
                    .filter(|o| **o != depot_wms::replica::Outcome::Duplicate)
                    .count();
            }
            PageOutcome::Stale => {}
            PageOutcome::Gap { cursor } => panic!("a gap at {cursor}"),
        }
        if !more {
            return applied;
        }
    }
}

/// Sends the edge's log after its acknowledgement up, and records the ack.
async fn push(cloud: &Wms, business: BusinessId, edge: &Wms) {
    let (acked, _) = edge.sync_state().await.expect("state");
    let head = edge.outgoing_head().await.expect("head");
    let events: Vec<SyncEvent> = edge
        .outgoing_sync(acked, head, 10_000)
        .await
        .expect("outgoing");
    let ack = cloud
        .receive_batch(business, edge_id(), events)
        .await
        .expect("batch");
    assert!(!ack.gap && ack.rejected.is_empty(), "{ack:?}");
    edge.record_ack(ack.through).await.expect("ack");
}

async fn adjust(wms: &Wms, caller: Caller, w: WarehouseId, delta: i64) {
    let req = serde_json::from_value(
        json!({"warehouse_id": w.0, "sku": "A", "reason": "adjusted", "delta": delta}),
    )
    .expect("request");
    wms.adjust(caller, req).await.expect("adjust");
}

#[tokio::test]
async fn a_cloud_restored_from_a_backup_is_reloaded_and_sent_everything_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cloud_a = Wms::open(&dir.path().join("a.db"), "cloud").expect("cloud");
    let b = cloud_a
        .create_business("B", "EUR", "UTC")
        .await
        .expect("business");
    let w = cloud_a
        .create_warehouse(b.id, "W", "W", Address::default(), false)
        .await
        .expect("warehouse")
        .id;
    let key = cloud_a.create_key(b.id, None).await.expect("key");
    let caller = Caller {
        key_id: key.key.id,
        business_id: b.id,
    };
    let item: ItemId = cloud_a
        .create_item(
            b.id,
            serde_json::from_value(json!({"sku": "A", "name": "A"})).expect("item"),
        )
        .await
        .expect("item")
        .id;
    let node = cloud_a
        .register_edge(b.id, edge_id(), None)
        .await
        .expect("register")
        .node;
    let edge =
        Wms::open_node(&dir.path().join("edge.db"), &format!("edge:{EDGE}"), node).expect("edge");
    adjust(&cloud_a, caller, w, 20).await;
    assert!(pull(&cloud_a, b.id, &edge).await > 0);

    // The backup is taken; the edge works on and syncs with cloud A.
    depot_testkit::backup(&dir.path().join("a.db"), &dir.path().join("b.db")).await;
    for delta in [3, 4, 5] {
        adjust(&edge, caller, w, delta).await;
    }
    push(&cloud_a, b.id, &edge).await;
    pull(&cloud_a, b.id, &edge).await;
    let (acked, cursor) = edge.sync_state().await.expect("state");
    assert_eq!(acked, 3);

    // Cloud B runs on the backup and makes a change of its own: its rev is
    // one the edge's cursor has already passed.
    let cloud_b = Wms::open(&dir.path().join("b.db"), "cloud").expect("cloud b");
    adjust(&cloud_b, caller, w, 100).await;
    let head_b = cloud_b.events_head().await.expect("head");
    assert!(
        cursor > head_b,
        "the edge's cursor {cursor} is past B's log ({head_b})"
    );
    assert_eq!(
        pull(&cloud_b, b.id, &edge).await,
        0,
        "served from its cursor, the edge misses B's change"
    );

    // Reset: the down cursor goes back to 0, counted; the replay fills in
    // B's change and skips what the edge had.
    edge.reset_down_cursor().await.expect("reset");
    let s = edge.sync_snapshot().await.expect("snapshot");
    assert_eq!((s.cloud_cursor, s.resets), (0, 1));
    assert!(s.last_reset_at.is_some());
    assert_eq!(
        pull(&cloud_b, b.id, &edge).await,
        1,
        "only B's change is new"
    );
    assert_eq!(edge.sync_state().await.expect("state").1, head_b);

    // Up: B acknowledges less than A did. The acknowledgement moves back
    // (never forward), and the edge's events reach B once.
    let up_b = cloud_b
        .edge(b.id, edge_id())
        .await
        .expect("edge")
        .expect("registered")
        .up_cursor;
    assert_eq!(up_b, 0);
    edge.rewind_ack(up_b).await.expect("rewind");
    edge.rewind_ack(7).await.expect("a rewind never raises it");
    assert_eq!(edge.sync_state().await.expect("state").0, 0);
    push(&cloud_b, b.id, &edge).await;
    assert_eq!(edge.sync_state().await.expect("state").0, 3);
    let record = cloud_b
        .edge(b.id, edge_id())
        .await
        .expect("edge")
        .expect("registered");
    assert_eq!(
        (record.up_cursor, record.backlog),
        (3, None),
        "an edge that reports no head has an unknown backlog, not 0"
    );
    assert_eq!(
        cloud_b.stock_level(item, w).await.expect("level"),
        edge.stock_level(item, w).await.expect("level")
    );
    assert_eq!(
        cloud_b.stock_level(item, w).await.expect("level").0,
        20 + 3 + 4 + 5 + 100
    );
    assert!(cloud_b.check_ledger().await.expect("check").is_empty());
    assert!(edge.check_ledger().await.expect("check").is_empty());
}

#[tokio::test]
async fn the_cloud_keeps_what_each_edge_reports() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cloud = Wms::open(&dir.path().join("cloud.db"), "cloud").expect("cloud");
    let b = cloud
        .create_business("B", "EUR", "UTC")
        .await
        .expect("business");
    let fresh = cloud
        .register_edge(b.id, edge_id(), None)
        .await
        .expect("register");
    assert_eq!(
        (fresh.reported_head, fresh.backlog, fresh.online),
        (None, None, false)
    );
    let sighting = |session: &str, head: Option<i64>| Sighting {
        session: Some(session.into()),
        version: Some("1.2.3".into()),
        head,
        taking_back_after: None,
        by_state: true,
        downlink_owner: None,
    };
    let record = || async {
        cloud
            .edge(b.id, edge_id())
            .await
            .expect("edge")
            .expect("registered")
    };
    cloud
        .edge_seen(b.id, edge_id(), sighting("run-1", Some(12)))
        .await
        .expect("seen");
    let r = record().await;
    assert_eq!(
        (r.version.as_deref(), r.reported_head, r.backlog, r.online),
        (Some("1.2.3"), Some(12), Some(12), true)
    );
    // An older edge reports no head: the last one stays.
    cloud
        .edge_seen(b.id, edge_id(), sighting("run-1", None))
        .await
        .expect("seen");
    assert_eq!(record().await.reported_head, Some(12));
    // The late will of an earlier run does not take this one offline; its
    // own does.
    cloud
        .edge_gone(b.id, edge_id(), "run-0".into())
        .await
        .expect("gone");
    assert!(record().await.online);
    cloud
        .edge_gone(b.id, edge_id(), "run-1".into())
        .await
        .expect("gone");
    let r = record().await;
    assert!(!r.online && r.state_at.is_some());
}
