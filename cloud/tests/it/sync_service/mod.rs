//! The cloud's sync service over a real broker, with a plain rumqttc client
//! and an edge-side `Wms` playing the edge: hello and replay, batches acked
//! once (gaps and duplicates included), bad input ignored, live changes
//! pushed without asking, a clean shutdown, and reconnecting to a broker
//! that is late or takes the connection away.
//!
//! With `DEPOT_TEST_MQTT_URL` set (say `mqtt://127.0.0.1:1883`, a
//! Mosquitto), the main scenario runs against that broker instead of the
//! embedded one. Client ids, edge ids and sessions carry a per-run tag, so
//! runs sharing a broker do not take each other's messages.

mod backlog;
mod burst;
mod cli;
mod fake_edge;
mod hellos;
use crate::process;
mod rig;
mod shared;

use depot_cloud::broker::{EmbeddedBroker, MqttUrl, client_options};
use depot_cloud::sync::{SyncOptions, run_sync_with};
use depot_protocol::sync::message::{Hello, Landmark, MAX_MESSAGE_BYTES, decode, encode};
use depot_protocol::sync::topic::{CLOUD_STATE, Channel, EdgeId, EdgeTopic};
use depot_protocol::sync::{DownMessage, StateMessage, SyncEvent, UpMessage};
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, ItemId, WarehouseId};
use depot_wms::Wms;
use depot_wms::sync::{Page, PageOutcome};
use fake_edge::*;
use rig::*;
use rumqttc::{AsyncClient, Event, Packet, Publish, QoS};
use serde_json::json;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::timeout;

async fn adjust(w: &World, delta: i64) {
    let req = serde_json::from_value(json!({
        "warehouse_id": w.warehouse.0, "sku": "A", "reason": "adjusted", "delta": delta
    }))
    .expect("adjust request");
    w.edge
        .adjust(w.caller, req)
        .await
        .expect("adjust at the edge");
}

async fn levels(w: &World) -> ((i64, i64), (i64, i64)) {
    (
        w.cloud
            .stock_level(w.item, w.warehouse)
            .await
            .expect("cloud level"),
        w.edge
            .stock_level(w.item, w.warehouse)
            .await
            .expect("edge level"),
    )
}

async fn scenario(url: &MqttUrl, tag: &str) {
    let w = world(&format!("e1-{tag}")).await;
    let service = start_service(&w.cloud, url, tag);
    let mut edge = FakeEdge::connect(url, &w, tag).await;
    edge.cloud_online(&service.session).await;

    // 1. Hello: the acknowledgement at once, then the replay.
    edge.hello("s1", 0).await;
    let first = edge.down().await;
    assert_eq!(
        first,
        DownMessage::Ack {
            session: "s1".into(),
            through_seq: 0,
            gap: false,
            rejected: vec![],
            hello: true,
            hands_back: true,
        }
    );
    let replay = edge
        .until(WAIT, "the end of the replay", |m| {
            matches!(m, DownMessage::Changes { more: false, .. })
        })
        .await;
    assert!(
        replay
            .iter()
            .all(|m| matches!(m, DownMessage::Changes { .. })),
        "{replay:?}"
    );
    assert_eq!(
        w.edge.business(w.business).await.expect("business").id,
        w.business
    );
    w.edge
        .warehouse(w.business, w.warehouse)
        .await
        .expect("the warehouse reached the edge");
    assert_eq!(
        w.edge.item(w.business, w.item).await.expect("item").id,
        w.item
    );

    // 2. Stock moves at the edge; its batch is applied and acknowledged.
    adjust(&w, 7).await;
    adjust(&w, -2).await;
    let events = edge.outgoing(0).await;
    let n = events.len() as i64;
    assert_eq!(n, 2);
    edge.batch("s1", events).await;
    assert_eq!(edge.ack("s1").await, (n, false, 0));
    let (cloud, at_edge) = levels(&w).await;
    assert_eq!(cloud, at_edge);
    assert_eq!(cloud.0, 5);

    // 3. A batch past the cursor is a gap; a duplicate is acked, not
    // applied twice.
    adjust(&w, 4).await;
    adjust(&w, 1).await;
    let events = edge.outgoing(n).await;
    assert_eq!(
        events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        [n + 1, n + 2]
    );
    edge.batch("s1", events[1..].to_vec()).await;
    assert_eq!(edge.ack("s1").await, (n, true, 0));
    edge.batch("s1", events.clone()).await;
    assert_eq!(edge.ack("s1").await, (n + 2, false, 0));
    edge.batch("s1", events).await;
    assert_eq!(edge.ack("s1").await, (n + 2, false, 0));
    let (cloud, at_edge) = levels(&w).await;
    assert_eq!(cloud, at_edge);
    assert_eq!(cloud.0, 10, "each movement once");

    // 4. Bad input is ignored (an edge the cloud does not know is told
    // so), and the service still answers.
    let up = edge.topic(Channel::Up);
    let ghost = EdgeTopic::new(
        w.business,
        EdgeId::parse(&format!("ghost-{tag}")).expect("id"),
        Channel::Up,
    )
    .to_string();
    let elsewhere = EdgeTopic::new(
        BusinessId(w.business.0 + 1000),
        w.edge_id.clone(),
        Channel::Up,
    )
    .to_string();
    let hello = |session: &str| {
        encode(&UpMessage::Hello(Hello {
            session: session.into(),
            version: "t".into(),
            cursor: 0,
            head: None,
            last: None,
            recover_after: None,
            node: None,
        }))
    };
    edge.send_raw(&up, b"not json".to_vec()).await;
    edge.send_raw(&up, br#"{"type":"nope"}"#.to_vec()).await;
    edge.send_raw(&up, Vec::new()).await;
    edge.send_raw(
        &up,
        encode(&DownMessage::Reset {
            reason: "wrong way".into(),
        }),
    )
    .await;
    edge.send_raw(&ghost, hello("ghost")).await;
    edge.send_raw(
        &ghost,
        encode(&UpMessage::Batch {
            session: "ghost".into(),
            events: edge.outgoing(0).await,
        }),
    )
    .await;
    edge.send_raw(&elsewhere, hello("elsewhere")).await;
    edge.send_raw(
        &format!("depot/v1/0/edge/e1-{tag}/up"),
        hello("bad-business"),
    )
    .await;
    let mut oversized = hello("big");
    oversized.resize(MAX_MESSAGE_BYTES + 1, b' ');
    assert!(serde_json::from_slice::<UpMessage>(&oversized).is_ok());
    edge.send_raw(&up, oversized).await;
    // A box set up as another node than the edge is registered as: its
    // ids would collide with another box's, so it is refused, and told.
    edge.send_raw(
        &up,
        encode(&UpMessage::Hello(Hello {
            session: "s-node".into(),
            version: "t".into(),
            cursor: 0,
            head: None,
            last: None,
            recover_after: None,
            node: Some(999),
        })),
    )
    .await;
    // A cursor the cloud's log never reached: reload.
    edge.hello("s-future", 1_000_000_000).await;
    let (_, cursor) = w.edge.sync_state().await.expect("state");
    edge.hello("s2", cursor).await;
    let seen = edge
        .until(
            WAIT,
            "ack of s2",
            |m| matches!(m, DownMessage::Ack { session, .. } if session == "s2"),
        )
        .await;
    assert!(
        seen.iter()
            .all(|m| !matches!(m, DownMessage::Ack { session, .. } if session != "s2")),
        "only s2 answered: {seen:?}"
    );
    assert!(
        matches!(seen.last(), Some(DownMessage::Ack { through_seq, gap: false, .. }) if *through_seq == n + 2),
        "{seen:?}"
    );
    let registered = w
        .cloud
        .edge(w.business, w.edge_id.clone())
        .await
        .expect("edge")
        .expect("registered")
        .node;
    let wrong_node = format!(
        "this box runs as node 999, but edge {} is registered in business {} as node {registered}",
        w.edge_id, w.business
    );
    assert!(
        edge.refusals.iter().any(|r| r.starts_with(&wrong_node)),
        "{:?}",
        edge.refusals
    );
    assert!(
        seen.iter()
            .any(|m| matches!(m, DownMessage::Reset { reason } if reason.contains("1000000000"))),
        "{seen:?}"
    );
    // Hellos from edges the cloud does not know are answered with why,
    // on their own down topics, and nothing else goes there.
    let refused_at = |topic: &str| {
        edge.strays.iter().any(|(t, m)| {
            t == &topic.replace("/up", "/down")
                && matches!(m, DownMessage::Refused { reason } if reason.contains("is not registered in business"))
        })
    };
    assert!(
        refused_at(&ghost) && refused_at(&elsewhere),
        "{:?}",
        edge.strays
    );
    assert!(
        edge.strays
            .iter()
            .all(|(_, m)| matches!(m, DownMessage::Refused { .. })),
        "{:?}",
        edge.strays
    );
    let (cloud, _) = levels(&w).await;
    assert_eq!(cloud.0, 10, "the unregistered edge's batch was not applied");
    let record = w
        .cloud
        .edge(w.business, w.edge_id.clone())
        .await
        .expect("edge")
        .expect("registered");
    assert_eq!(record.version.as_deref(), Some("t"));

    // 5. An order ingested in the cloud reaches the edge on the tick,
    // without a new hello.
    let order = serde_json::from_value(json!({
        "channel": "web", "external_ref": format!("X-{tag}"), "warehouse_id": w.warehouse.0,
        "lines": [{"sku": "A", "quantity": 2}]
    }))
    .expect("order");
    let (order, _) = w.cloud.create_order(w.caller, order).await.expect("ingest");
    edge.until(Duration::from_secs(3), "the new order", |m| {
        matches!(m, DownMessage::Changes { changes, .. }
            if changes.iter().any(|c| c.kind == "order.created"))
    })
    .await;
    assert_eq!(
        w.edge
            .order(w.business, order.id)
            .await
            .expect("the order at the edge")
            .id,
        order.id
    );
    let (cloud, at_edge) = levels(&w).await;
    assert_eq!(cloud, at_edge);
    assert_eq!(cloud.0, 10);

    // A clean shutdown says offline.
    let session = service.session.clone();
    service.shut_down().await;
    edge.cloud_offline(&session).await;
    edge.leave().await;
}

#[tokio::test]
async fn the_cloud_syncs_an_edge_over_mqtt() {
    init_logs();
    let tag = unique_tag();
    match std::env::var("DEPOT_TEST_MQTT_URL") {
        Ok(url) => {
            let url = MqttUrl::parse(&url).expect("DEPOT_TEST_MQTT_URL");
            println!("against {url}");
            scenario(&url, &tag).await;
        }
        Err(_) => {
            let broker = embedded_broker(SocketAddr::from(([127, 0, 0, 1], 0))).await;
            scenario(&broker.url(), &tag).await;
            broker.probe().expect("the broker still answers");
        }
    }
}

/// Shared subscriptions need a broker that deals them out: Mosquitto
/// (`DEPOT_TEST_MQTT_URL`), or else the embedded rumqttd.
#[tokio::test]
async fn two_cloud_instances_share_the_edges() {
    init_logs();
    let tag = unique_tag();
    let (url, _broker) = test_broker().await;
    shared::two_instances(&url, &tag).await;
}

#[tokio::test]
async fn a_restored_cloud_is_told_by_the_edges_last_change() {
    init_logs();
    let tag = unique_tag();
    let broker = embedded_broker(SocketAddr::from(([127, 0, 0, 1], 0))).await;
    shared::landmarks(&broker.url(), &tag).await;
}

/// Started before its broker, the service keeps trying; when another client
/// takes its connection (same client id), it connects again, subscribes
/// again and answers as before.
#[tokio::test]
async fn the_service_waits_for_the_broker_and_reconnects() {
    init_logs();
    let tag = unique_tag();
    let w = world(&format!("e1-{tag}")).await;
    // A port where, for now, something accepts and hangs up at once.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let url = MqttUrl::plain(addr);
    let service = start_service(&w.cloud, &url, &tag);
    let (socket, _) = timeout(WAIT, listener.accept())
        .await
        .expect("the service tries to connect")
        .expect("accept");
    drop(socket);
    drop(listener);
    assert!(
        !service.task.is_finished(),
        "a failed connection is retried"
    );

    let _broker = embedded_broker(addr).await;
    let mut edge = FakeEdge::connect(&url, &w, &tag).await;
    edge.cloud_online(&service.session).await;
    edge.hello("s1", 0).await;
    assert_eq!(edge.ack("s1").await, (0, false, 0));

    // Another client with the cloud's id: the broker drops the service's
    // connection for it.
    let intruder_options = client_options(
        &url,
        &depot_mqtt::Tls::default(),
        &format!("cloud-{tag}"),
        Duration::from_secs(30),
    )
    .expect("options");
    let (intruder, mut intruder_loop) = AsyncClient::new(intruder_options, 8);
    let connected = timeout(WAIT, async {
        loop {
            match intruder_loop.poll().await {
                Ok(Event::Incoming(Packet::ConnAck(_))) => return,
                Ok(_) => {}
                Err(e) => panic!("the intruder cannot connect: {e}"),
            }
        }
    })
    .await;
    assert!(connected.is_ok(), "the intruder connects");
    drop(intruder);
    drop(intruder_loop);

    // The service is back: online again, and it answers.
    edge.cloud_online(&service.session).await;
    edge.hello("s2", 0).await;
    assert_eq!(edge.ack("s2").await, (0, false, 0));

    service.shut_down().await;
    edge.leave().await;
}

/// A hello the cloud cannot answer (negative positions, a last change past
/// the cursor) is refused with why; a box saying hello in a loop gets a
/// burst answered, then about one a second, not a replay each.
#[tokio::test]
async fn bad_hellos_are_refused_and_a_flood_is_paced() {
    init_logs();
    let tag = unique_tag();
    let broker = embedded_broker(SocketAddr::from(([127, 0, 0, 1], 0))).await;
    let url = broker.url();
    let w = world(&format!("e9-{tag}")).await;
    let service = start_service(&w.cloud, &url, &tag);
    let mut edge = FakeEdge::connect(&url, &w, &tag).await;
    edge.cloud_online(&service.session).await;
    let hello = |session: &str, cursor: i64, head: Option<i64>, recover_after: Option<i64>| {
        UpMessage::Hello(Hello {
            session: session.into(),
            version: "t".into(),
            cursor,
            head,
            last: None,
            recover_after,
            node: None,
        })
    };
    edge.send(&hello("neg-cursor", -1, None, None)).await;
    edge.send(&hello("neg-head", 0, Some(-5), None)).await;
    edge.send(&hello("neg-recover", 0, None, Some(i64::MIN)))
        .await;
    edge.hello_with_last(
        "last-past",
        3,
        Landmark {
            rev: 4,
            id: depot_protocol::EventId::new(),
        },
    )
    .await;
    edge.hello("fine", 0).await;
    edge.until(
        WAIT,
        "the answer to a good hello",
        |m| matches!(m, DownMessage::Ack { session, .. } if session == "fine"),
    )
    .await;
    for want in [
        "cursor -1 is below 0",
        "head -5 is below 0",
        "recover_after -9223372036854775808 is below 0",
        "last change (rev 4) is not within its cursor 0..=3",
    ] {
        assert!(
            edge.refusals.iter().any(|r| r.contains(want)),
            "{want}: {:?}",
            edge.refusals
        );
    }

    // A flood: 60 hellos at once.
    for i in 0..60 {
        edge.hello(&format!("flood-{i}"), 0).await;
    }
    // Then a box that says hello once a second, as an unanswered edge
    // would, is answered again soon.
    let mut seen = Vec::new();
    let mut answered_again = false;
    for _ in 0..15 {
        edge.hello("last-word", 0).await;
        let waited = timeout(Duration::from_secs(1), async {
            loop {
                let m = edge.down().await;
                let done = matches!(&m, DownMessage::Ack { session, .. } if session == "last-word");
                seen.push(m);
                if done {
                    return;
                }
            }
        })
        .await;
        if waited.is_ok() {
            answered_again = true;
            break;
        }
    }
    assert!(answered_again, "the last word was never answered");
    let answered = seen
        .iter()
        .filter(|m| matches!(m, DownMessage::Ack { hello: true, session, .. } if session.starts_with("flood-")))
        .count();
    // The burst (the good hello above took one), then one a second while
    // the flood lasted and the last word waited its turn.
    assert!((5..=20).contains(&answered), "{answered} of 60 answered");
    service.shut_down().await;
    edge.leave().await;
}
