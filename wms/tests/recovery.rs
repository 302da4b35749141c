//! An edge taking its own events back from the cloud, engine to engine:
//! a new box for an edge the cloud already has 2,500 events of renumbers
//! what it made meanwhile past them, takes them back in pages (duplicates
//! and holes recognized), and only then sends its own.

use depot_protocol::BusinessId;
use depot_protocol::order::Address;
use depot_protocol::sync::message::DownMessage;
use depot_protocol::sync::{EdgeId, SyncEvent};
use depot_wms::Wms;
use depot_wms::recovery::{Recovered, RecoveredPage};
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

#[tokio::test]
async fn a_new_box_takes_its_events_back_in_pages_and_numbers_its_own_after_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cloud = Wms::open(&dir.path().join("cloud.db"), "cloud").expect("cloud");
    let b = cloud
        .create_business("B", "EUR", "UTC")
        .await
        .expect("business")
        .id;
    cloud
        .create_warehouse(b, "W", "W", Address::default(), false)
        .await
        .expect("warehouse");
    let edge_id = EdgeId::parse("e1").expect("edge id");
    let node = cloud
        .register_edge(b, edge_id.clone(), None)
        .await
        .expect("register")
        .node;

    // The old box: its events reach the cloud, then the box is gone.
    let old = Wms::open_node(&dir.path().join("old.db"), "edge:e1", node).expect("old box");
    assert_eq!(old.recover_after().await.expect("state"), Some(0));
    assert!(
        old.cloud_cursor_seen(0).await.expect("answer"),
        "a new edge"
    );
    assert_eq!(old.recover_after().await.expect("state"), None);
    let sent = scans(&old, b, SENT as usize, "old").await;
    let events = own(&old, 0, SENT).await;
    for chunk in events.chunks(400) {
        let ack = cloud
            .receive_batch(b, edge_id.clone(), chunk.to_vec())
            .await
            .expect("receive");
        assert!(ack.rejected.is_empty() && !ack.gap, "{ack:?}");
    }

    // The new box works before it has reached the cloud.
    let new = Wms::open_node(&dir.path().join("new.db"), "edge:e1", node).expect("new box");
    let offline = scans(&new, b, 3, "new").await;
    assert_eq!(new.recover_after().await.expect("state"), Some(0));
    assert!(
        !new.cloud_cursor_seen(SENT).await.expect("answer"),
        "the cloud holds events this log lacks"
    );

    let mut after = 0;
    let mut pages = 0;
    let mut first = None;
    loop {
        let p = page(
            cloud
                .own_page(b, &edge_id, after, SENT)
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
