//! An edge taking its own events back from the cloud, engine to engine:
//! a new box for an edge the cloud already has 2,500 events of renumbers
//! what it made meanwhile past them, takes them back in pages (duplicates
//! and holes recognized), and only then sends its own.

use depot_protocol::order::{Address, OrderStatus};
use depot_protocol::picking::Wave;
use depot_protocol::sync::message::DownMessage;
use depot_protocol::sync::{EdgeId, SyncEvent};
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, WarehouseId};
use depot_wms::Wms;
use depot_wms::database::{NODE_SHIFT, RECOVERY_GAP};
use depot_wms::recovery::{Recovered, RecoveredPage};
use depot_wms::sync::PageOutcome;
use serde_json::json;

const SENT: i64 = 2_500;

async fn scans(edge: &Wms, b: BusinessId, n: usize, station: &str) -> Vec<String> {
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        let e = edge
            .station_event(b, json!({"business_id": b, "station": station, "n": i}))
            .await
            .expect("station event");
        ids.push(e.id.to_string());
    }
    ids
}

async fn own(edge: &Wms, after: i64, through: i64) -> Vec<SyncEvent> {
    edge.outgoing_sync(after, through, u32::MAX)
        .await
        .expect("outgoing")
}

fn page(m: DownMessage) -> RecoveredPage {
    let DownMessage::Recovered {
        after,
        through,
        events,
        more,
        ..
    } = m
    else {
        panic!("a recovered page expected, got {m:?}")
    };
    RecoveredPage {
        after,
        through,
        events,
        more,
    }
}

/// A cloud in `dir` with one business and `edge` registered in it, and
/// the edge's node number (and its database, when it is on PostgreSQL).
async fn cloud(
    dir: &tempfile::TempDir,
    edge: &EdgeId,
) -> (Wms, BusinessId, u32, Option<depot_testkit::pg::PgDatabase>) {
    let (cloud, database) = depot_testkit::pg::cloud_engine(dir.path());
    let b = cloud
        .create_business("B", "EUR", "UTC")
        .await
        .expect("business")
        .id;
    let node = cloud
        .register_edge(b, edge.clone(), None)
        .await
        .expect("register")
        .node;
    (cloud, b, node, database)
}

/// The old box scans [`SENT`] times and its events reach the cloud;
/// answers their ids.
async fn sent_up(old: &Wms, cloud: &Wms, b: BusinessId, edge_id: &EdgeId) -> Vec<String> {
    let sent = scans(old, b, SENT as usize, "old").await;
    for chunk in own(old, 0, SENT).await.chunks(400) {
        let ack = cloud
            .receive_batch(b, edge_id.clone(), chunk.to_vec())
            .await
            .expect("receive");
        assert!(ack.rejected.is_empty() && !ack.gap, "{ack:?}");
    }
    sent
}

#[tokio::test]
async fn a_new_box_takes_its_events_back_in_pages_and_numbers_its_own_after_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let edge_id = EdgeId::parse("e1").expect("edge id");
    let (cloud, b, node, _database) = cloud(&dir, &edge_id).await;
    cloud
        .create_warehouse(b, "W", "W", Address::default(), false)
        .await
        .expect("warehouse");

    // The old box: its events reach the cloud, then the box is gone.
    let old = Wms::open_node(&dir.path().join("old.db"), "edge:e1", node).expect("old box");
    assert_eq!(old.recover_after().await.expect("state"), Some(0));
    assert!(
        old.cloud_cursor_seen(0, true).await.expect("answer"),
        "a new edge"
    );
    assert_eq!(old.recover_after().await.expect("state"), None);
    let sent = sent_up(&old, &cloud, b, &edge_id).await;

    // The new box works before it has reached the cloud.
    let new = Wms::open_node(&dir.path().join("new.db"), "edge:e1", node).expect("new box");
    let offline = scans(&new, b, 3, "new").await;
    assert_eq!(new.recover_after().await.expect("state"), Some(0));
    // An older cloud answers with its cursor only: the recovery says why it
    // cannot go on, and says it no more once the cloud hands events back.
    let stalled = || async {
        let s = new.sync_snapshot().await.expect("snapshot");
        s.recovery.expect("still recovering").stalled
    };
    assert!(!new.cloud_cursor_seen(SENT, false).await.expect("answer"));
    assert_eq!(
        stalled().await.as_deref(),
        Some(depot_wms::recovery::STALLED)
    );
    assert!(
        !new.cloud_cursor_seen(SENT, true).await.expect("answer"),
        "the cloud holds events this log lacks"
    );
    assert_eq!(stalled().await, None);

    let mut after = 0;
    let mut pages = 0;
    let mut first = None;
    loop {
        let p = page(
            cloud
                .own_page(b, &edge_id, "s", after, SENT)
                .await
                .expect("own page"),
        );
        pages += 1;
        first.get_or_insert_with(|| p.clone());
        match new.take_back(b, p).await.expect("take back") {
            Recovered::Applied {
                recovered,
                done,
                renumbered,
                missing,
                rejected,
            } => {
                assert_eq!(rejected, 0);
                assert_eq!(renumbered, if pages == 1 { 3 } else { 0 });
                if done {
                    assert_eq!((recovered, missing), (SENT, 0));
                    break;
                }
                assert!(recovered > after, "no progress at {after}");
                // The first page again is an old duplicate now.
                let again = first.clone().expect("first page");
                assert_eq!(
                    new.take_back(b, again).await.expect("duplicate"),
                    Recovered::Gap {
                        recovered,
                        stale: true
                    }
                );
                after = recovered;
            }
            other => panic!("page {pages}: {other:?}"),
        }
    }
    assert!(
        pages > 1,
        "2,500 events fit one page: the paging is untested"
    );
    assert_eq!(new.recover_after().await.expect("state"), None);
    assert_eq!(
        new.take_back(b, first.expect("first page"))
            .await
            .expect("late duplicate"),
        Recovered::NotNeeded
    );

    // Its log holds the old box's events in their places, then its own.
    let log = own(&new, 0, SENT + 10).await;
    let ids: Vec<String> = log.iter().map(|e| e.id.to_string()).collect();
    let seqs: Vec<i64> = log.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=SENT + 3).collect::<Vec<_>>());
    assert_eq!(ids[..SENT as usize], sent[..]);
    assert_eq!(ids[SENT as usize..], offline[..]);
    let snapshot = new.sync_snapshot().await.expect("snapshot");
    assert_eq!((snapshot.acked, snapshot.depth), (SENT, 3));

    // And the cloud takes those three as new.
    let ack = cloud
        .receive_batch(b, edge_id, own(&new, SENT, SENT + 3).await)
        .await
        .expect("receive");
    assert_eq!((ack.through, ack.gap), (SENT + 3, false));
    assert!(ack.rejected.is_empty(), "{ack:?}");
}

/// A box that made nothing before its first page came back, then scans
/// between two pages: the scan is numbered past the cloud's cursor, not at
/// the seqs the next page fills (which would stop the recovery for good
/// on a unique seq).
#[tokio::test]
async fn a_scan_between_two_pages_is_numbered_past_the_cloud_s_cursor() {
    let dir = tempfile::tempdir().expect("tempdir");
    let edge_id = EdgeId::parse("e1").expect("edge id");
    let (cloud, b, node, _database) = cloud(&dir, &edge_id).await;
    cloud
        .create_warehouse(b, "W", "W", Address::default(), false)
        .await
        .expect("warehouse");
    let old = Wms::open_node(&dir.path().join("old.db"), "edge:e1", node).expect("old box");
    assert!(old.cloud_cursor_seen(0, true).await.expect("answer"));
    let sent = sent_up(&old, &cloud, b, &edge_id).await;
    let new = Wms::open_node(&dir.path().join("new.db"), "edge:e1", node).expect("new box");
    assert!(!new.cloud_cursor_seen(SENT, true).await.expect("answer"));
    let mut after = 0;
    let mut between = Vec::new();
    loop {
        let p = page(
            cloud
                .own_page(b, &edge_id, "s", after, SENT)
                .await
                .expect("own page"),
        );
        match new.take_back(b, p).await.expect("take back") {
            Recovered::Applied { done: true, .. } => break,
            Recovered::Applied { recovered, .. } => {
                if between.is_empty() {
                    between = scans(&new, b, 2, "between").await;
                }
                after = recovered;
            }
            other => panic!("after {after}: {other:?}"),
        }
    }
    assert_eq!(between.len(), 2, "one page only: nothing came between two");
    let log = own(&new, 0, SENT + 10).await;
    let ids: Vec<String> = log.iter().map(|e| e.id.to_string()).collect();
    let seqs: Vec<i64> = log.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=SENT + 2).collect::<Vec<_>>());
    assert_eq!(ids[..SENT as usize], sent[..]);
    assert_eq!(ids[SENT as usize..], between[..]);
}

/// Everything the cloud has for `edge`, applied there as the link does.
async fn pull(cloud: &Wms, b: BusinessId, edge_id: &EdgeId, edge: &Wms) {
    loop {
        let (_, cursor) = edge.sync_state().await.expect("state");
        let page = cloud
            .changes_for(b, edge_id.clone(), cursor, 100)
            .await
            .expect("page");
        let more = page.more;
        assert!(matches!(
            edge.apply_page(b, page).await.expect("apply"),
            PageOutcome::Applied { .. } | PageOutcome::Stale
        ));
        if !more {
            return;
        }
    }
}

async fn wave_of(edge: &Wms, b: BusinessId, w: WarehouseId) -> Wave {
    edge.create_wave(
        b,
        serde_json::from_value(json!({"warehouse_id": w, "max_orders": 1})).expect("wave"),
    )
    .await
    .expect("create wave")
}

#[tokio::test]
async fn records_made_before_the_cloud_answers_do_not_take_the_ids_of_those_coming_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let edge_id = EdgeId::parse("e2").expect("edge id");
    let (cloud, b, node, _database) = cloud(&dir, &edge_id).await;
    let key = cloud.create_key(b, None).await.expect("key");
    let caller = Caller {
        key_id: key.key.id,
        business_id: b,
    };
    let mut warehouses = Vec::new();
    for code in ["W1", "W2"] {
        let w = cloud
            .create_warehouse(b, code, code, Address::default(), false)
            .await
            .expect("warehouse")
            .id;
        let sku = format!("S-{code}");
        cloud
            .create_item(
                b,
                serde_json::from_value(json!({"sku": sku, "name": sku})).expect("item"),
            )
            .await
            .expect("item");
        cloud
            .adjust(
                caller,
                serde_json::from_value(
                    json!({"warehouse_id": w, "sku": sku, "reason": "received", "quantity": 5}),
                )
                .expect("adjust"),
            )
            .await
            .expect("receive");
        let order = serde_json::from_value(json!({"channel": "web", "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"}, "external_ref": code, "warehouse_id": w, "lines": [{"sku": sku, "quantity": 1}]})).expect("order");
        let (o, _) = cloud.create_order(caller, order).await.expect("order");
        cloud
            .set_order_status(caller, o.id, OrderStatus::Confirmed, None)
            .await
            .expect("confirm");
        warehouses.push(w);
    }

    // The old box waves W1's order; the wave reaches the cloud, then the
    // box is gone.
    let old = Wms::open_node(&dir.path().join("old.db"), "edge:e2", node).expect("old box");
    assert!(old.cloud_cursor_seen(0, true).await.expect("answer"));
    pull(&cloud, b, &edge_id, &old).await;
    let lost = wave_of(&old, b, warehouses[0]).await;
    let lo = i64::from(node) << NODE_SHIFT;
    assert_eq!(lost.id.0, lo + 1);
    let head = old.sync_snapshot().await.expect("snapshot").head;
    let ack = cloud
        .receive_batch(b, edge_id.clone(), own(&old, 0, head).await)
        .await
        .expect("receive");
    assert!(ack.rejected.is_empty() && !ack.gap, "{ack:?}");

    // The new box waves W2's order before the cloud has answered: had it
    // numbered from its own empty table, the wave would be the old one's.
    let new = Wms::open_node(&dir.path().join("new.db"), "edge:e2", node).expect("new box");
    pull(&cloud, b, &edge_id, &new).await;
    let made = wave_of(&new, b, warehouses[1]).await;
    assert_eq!(made.id.0, lo + RECOVERY_GAP + 1);
    assert!(!new.cloud_cursor_seen(head, true).await.expect("answer"));
    let p = page(
        cloud
            .own_page(b, &edge_id, "s", 0, head)
            .await
            .expect("own page"),
    );
    match new.take_back(b, p).await.expect("take back") {
        Recovered::Applied {
            done: true,
            rejected: 0,
            missing: 0,
            ..
        } => {}
        other => panic!("{other:?}"),
    }

    // Both waves are there, whole, and nothing clashed.
    for (wave, warehouse) in [(&lost, warehouses[0]), (&made, warehouses[1])] {
        let here = new.wave(b, wave.id).await.expect("wave");
        assert_eq!(here.warehouse_id, warehouse);
        assert_eq!(here.units_total, 1);
    }
    assert_eq!(new.sync_snapshot().await.expect("snapshot").conflicts, 0);
    // With the log whole, numbering goes on past the largest.
    let again = cloud
        .create_order(caller, serde_json::from_value(json!({"channel": "web", "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"}, "external_ref": "W2-b", "warehouse_id": warehouses[1], "lines": [{"sku": "S-W2", "quantity": 1}]})).expect("order"))
        .await
        .expect("order")
        .0;
    cloud
        .set_order_status(caller, again.id, OrderStatus::Confirmed, None)
        .await
        .expect("confirm");
    pull(&cloud, b, &edge_id, &new).await;
    assert_eq!(wave_of(&new, b, warehouses[1]).await.id.0, made.id.0 + 1);
}

/// The cloud is restored from an older backup while a box takes its events
/// back: what the box took is all there is, and the events it made
/// meanwhile, moved past the cloud's old cursor to make room, move back to
/// follow them. Otherwise the box would wait for pages the cloud no longer
/// has, and its log would keep a hole the cloud stops at.
#[tokio::test]
async fn a_cloud_restored_while_a_box_takes_its_events_back_ends_the_recovery_without_a_hole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let edge_id = EdgeId::parse("e3").expect("edge id");
    let (cloud, b, node, _database) = cloud(&dir, &edge_id).await;
    let old = Wms::open_node(&dir.path().join("old.db"), "edge:e3", node).expect("old box");
    assert!(old.cloud_cursor_seen(0, true).await.expect("answer"));
    let sent = scans(&old, b, SENT as usize, "old").await;
    for chunk in own(&old, 0, SENT).await.chunks(400) {
        cloud
            .receive_batch(b, edge_id.clone(), chunk.to_vec())
            .await
            .expect("receive");
    }

    let new = Wms::open_node(&dir.path().join("new.db"), "edge:e3", node).expect("new box");
    let offline = scans(&new, b, 3, "new").await;
    let first = page(
        cloud
            .own_page(b, &edge_id, "s", 0, SENT)
            .await
            .expect("page"),
    );
    let Recovered::Applied {
        recovered,
        done: false,
        renumbered: 3,
        ..
    } = new.take_back(b, first).await.expect("take back")
    else {
        panic!("a first page of several expected")
    };
    // Still more to come from a cloud that holds it all.
    assert!(!new.cloud_cursor_seen(SENT, true).await.expect("answer"));
    // The cloud, restored, holds less than the box took back.
    assert!(
        new.cloud_cursor_seen(recovered - 10, true)
            .await
            .expect("answer"),
        "nothing more can come back"
    );
    assert_eq!(new.recover_after().await.expect("state"), None);
    let log = own(&new, 0, SENT + 10).await;
    let seqs: Vec<i64> = log.iter().map(|e| e.seq).collect();
    let ids: Vec<String> = log.iter().map(|e| e.id.to_string()).collect();
    assert_eq!(seqs, (1..=recovered + 3).collect::<Vec<_>>(), "no hole");
    let taken = usize::try_from(recovered).expect("count");
    assert_eq!(ids[..taken], sent[..taken]);
    assert_eq!(ids[taken..], offline[..]);
}
