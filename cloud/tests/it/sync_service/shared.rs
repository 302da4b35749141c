//! Two cloud instances on one database share the edges' messages through
//! a shared subscription: each batch is applied by one of them, once, in
//! order, and the edge converges as with one instance.

use super::*;

async fn both_online(edge: &mut FakeEdge, sessions: [&str; 2]) {
    let mut seen = std::collections::HashSet::new();
    timeout(WAIT, async {
        while seen.len() < 2 {
            let m = edge.publish().await;
            if m.topic != CLOUD_STATE {
                continue;
            }
            if let Ok(StateMessage::Online { session, .. }) = decode::<StateMessage>(&m.payload) {
                if sessions.contains(&session.as_str()) {
                    seen.insert(session);
                }
            }
        }
    })
    .await
    .expect("both instances say online");
}

pub(crate) async fn two_instances(url: &MqttUrl, tag: &str) {
    let w = world(&format!("e1-{tag}")).await;
    let twin = Wms::open(&w.cloud.data_dir().join("cloud.db"), "cloud")
        .expect("a second instance on the database");
    let mut edge = FakeEdge::connect(url, &w, tag).await;
    let group = format!("depot-cloud-{tag}");
    let a = start_shared_service(&w.cloud, url, &format!("{tag}-a"), Some(group.clone()));
    let b = start_shared_service(&twin, url, &format!("{tag}-b"), Some(group));
    both_online(&mut edge, [a.session.as_str(), b.session.as_str()]).await;

    // The catalog comes down from whichever instance took the hello.
    let session = format!("s-{tag}");
    edge.hello(&session, 0).await;
    edge.until(WAIT, "the catalog", |m| {
        matches!(m, DownMessage::Changes { more: false, .. })
    })
    .await;
    let mut deltas = 0;
    for i in 1..=40 {
        adjust(&w, i).await;
        deltas += i;
    }
    let events = edge.outgoing(0).await;
    let last = events.last().map(|e| e.seq).expect("events");
    // One batch per event, all at once: the broker deals them out.
    for e in &events {
        edge.batch(&session, vec![e.clone()]).await;
    }
    let mut sent = events.len();
    let mut acks = 0;
    let mut through = 0;
    while through < last {
        let (t, gap, rejected) = edge.ack(&session).await;
        acks += 1;
        assert_eq!(rejected, 0);
        if gap && t >= through {
            // A batch reached an instance before the one ahead of it was
            // applied: the edge sends again from the cursor, as its outbox
            // does.
            let rest: Vec<SyncEvent> = events.iter().filter(|e| e.seq > t).cloned().collect();
            sent += 1;
            edge.batch(&session, rest).await;
        }
        through = through.max(t);
    }
    // Every batch was handed to one instance, not to both: as many acks as
    // batches (an instance that took them all twice would answer twice).
    // A second ack would follow the first within moments: whatever comes
    // before the line is quiet for 300 ms is counted.
    while let Ok(m) = timeout(Duration::from_millis(300), edge.down()).await {
        if matches!(&m, DownMessage::Ack { session: s, hello: false, .. } if *s == session) {
            acks += 1;
        }
    }
    assert_eq!(acks, sent, "one acknowledgement per batch sent");
    let ((cloud_level, _), (edge_level, _)) = levels(&w).await;
    assert_eq!(cloud_level, deltas);
    assert_eq!(cloud_level, edge_level);
    let applied = w
        .cloud
        .business_events(w.business, 0, Some("stock.moved".into()), 1000)
        .await
        .expect("events")
        .into_iter()
        .filter(|e| e.origin.starts_with("edge:"))
        .count();
    assert_eq!(applied, events.len(), "each event applied once");

    // Hellos reach either instance; the one that answered the last pages
    // the edge, and the other, which answered an earlier one, stops: a
    // change made in the cloud comes down once, not once per instance.
    let mut owners = std::collections::HashSet::new();
    for _ in 0..32 {
        let (_, cursor) = w.edge.sync_state().await.expect("state");
        edge.hello(&session, cursor).await;
        edge.until(WAIT, "the hello's answer", |m| {
            matches!(m, DownMessage::Ack { hello: true, .. })
        })
        .await;
        for instance in [&a.session, &b.session] {
            let owned = w
                .cloud
                .downlinks_of(instance.clone())
                .await
                .expect("owners");
            if !owned.is_empty() {
                owners.insert(instance.clone());
            }
        }
        if owners.len() == 2 {
            break;
        }
    }
    assert_eq!(owners.len(), 2, "both instances answered a hello");
    while timeout(Duration::from_millis(300), edge.down())
        .await
        .is_ok()
    {}
    let req = serde_json::from_value(json!({
        "warehouse_id": w.warehouse.0, "sku": "A", "reason": "adjusted", "delta": 1
    }))
    .expect("adjust request");
    w.cloud
        .adjust(w.caller, req)
        .await
        .expect("adjust in the cloud");
    let mut pages = 0;
    while let Ok(m) = timeout(Duration::from_millis(1500), edge.down()).await {
        if matches!(&m, DownMessage::Changes { changes, .. } if !changes.is_empty()) {
            pages += 1;
        }
    }
    assert_eq!(pages, 1, "the change came down from one instance");
    a.shut_down().await;
    b.shut_down().await;
    edge.leave().await;
}

/// An edge names the last change it applied; a cloud whose log holds
/// another change at that rev (restored from an older backup, then grown
/// past the edge's cursor) cannot serve it from its cursor: reset.
pub(crate) async fn landmarks(url: &MqttUrl, tag: &str) {
    let w = world(&format!("e1-{tag}")).await;
    let mut edge = FakeEdge::connect(url, &w, tag).await;
    let service = start_service(&w.cloud, url, tag);
    edge.cloud_online(&service.session).await;
    let session = format!("s-{tag}");
    edge.hello(&session, 0).await;
    edge.until(WAIT, "the catalog", |m| {
        matches!(m, DownMessage::Changes { more: false, .. })
    })
    .await;
    let last = w
        .edge
        .last_applied()
        .await
        .expect("last applied")
        .expect("the edge applied the catalog");
    let (_, cursor) = w.edge.sync_state().await.expect("state");
    assert!(last.rev <= cursor);

    // The same log: answered as usual.
    edge.hello_with_last(&session, cursor, last).await;
    edge.until(WAIT, "the hello's ack", |m| {
        matches!(m, DownMessage::Ack { hello: true, .. })
    })
    .await;

    // Another change at that rev: reset.
    let stranger = Landmark {
        rev: last.rev,
        id: depot_protocol::EventId::new(),
    };
    edge.hello_with_last(&session, cursor, stranger).await;
    let seen = edge
        .until(WAIT, "a reset", |m| matches!(m, DownMessage::Reset { .. }))
        .await;
    assert!(
        seen.iter()
            .all(|m| !matches!(m, DownMessage::Ack { hello: true, .. })),
        "{seen:?}"
    );
    service.shut_down().await;
    edge.leave().await;
}
