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

use depot_cloud::broker::{EmbeddedBroker, MqttUrl, client_options};
use depot_cloud::sync::{SyncOptions, run_sync_with};
use depot_protocol::order::Address;
use depot_protocol::sync::message::{MAX_MESSAGE_BYTES, decode, encode};
use depot_protocol::sync::topic::{CLOUD_STATE, Channel, EdgeId, EdgeTopic};
use depot_protocol::sync::{DownMessage, StateMessage, SyncEvent, UpMessage};
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, ItemId, WarehouseId};
use depot_wms::Wms;
use depot_wms::sync::{Page, PageOutcome};
use rumqttc::{AsyncClient, Event, Packet, Publish, QoS};
use serde_json::json;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::timeout;

/// Bound on every wait.
const WAIT: Duration = Duration::from_secs(10);

fn init_logs() {
    // `RUST_LOG=depot_cloud=debug cargo test … -- --nocapture` shows the
    // service's side of a failure.
    if let Ok(filter) = tracing_subscriber::EnvFilter::try_from_default_env() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_test_writer()
            .try_init();
    }
}

fn unique_tag() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{}-{}", std::process::id(), nanos % 1_000_000_000_000)
}

async fn embedded_broker(listen: SocketAddr) -> EmbeddedBroker {
    tokio::task::spawn_blocking(move || EmbeddedBroker::start(listen))
        .await
        .expect("broker thread")
        .expect("embedded broker")
}

/// The cloud's database with a business, a warehouse, a key, an item and a
/// registered edge, and that edge's own database.
struct World {
    cloud: Wms,
    edge: Wms,
    edge_id: EdgeId,
    business: BusinessId,
    warehouse: WarehouseId,
    item: ItemId,
    caller: Caller,
    _dir: tempfile::TempDir,
}

async fn world(edge_name: &str) -> World {
    let dir = tempfile::tempdir().expect("tempdir");
    let cloud = Wms::open(&dir.path().join("cloud.db"), "cloud").expect("cloud");
    let b = cloud
        .create_business("B", "EUR", "UTC")
        .await
        .expect("business");
    let w = cloud
        .create_warehouse(b.id, "W", "W", Address::default(), false)
        .await
        .expect("warehouse");
    let k = cloud.create_key(b.id, None).await.expect("key");
    let item = cloud
        .create_item(
            b.id,
            serde_json::from_value(json!({"sku": "A", "name": "A"})).expect("item"),
        )
        .await
        .expect("item");
    let edge_id = EdgeId::parse(edge_name).expect("edge id");
    let record = cloud
        .register_edge(b.id, edge_id.clone(), None)
        .await
        .expect("register");
    assert_eq!(record.node, 1);
    let edge = Wms::open_node(
        &dir.path().join("edge.db"),
        &format!("edge:{edge_id}"),
        record.node,
    )
    .expect("edge");
    World {
        cloud,
        edge,
        edge_id,
        business: b.id,
        warehouse: w.id,
        item: item.id,
        caller: Caller {
            key_id: k.key.id,
            business_id: b.id,
        },
        _dir: dir,
    }
}

/// The service on its own task, and how to stop it.
struct Service {
    session: String,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), depot_cloud::sync::SyncError>>,
}

fn start_service(wms: &Wms, url: &MqttUrl, tag: &str) -> Service {
    let session = format!("cloud-{tag}");
    let options = SyncOptions {
        session: session.clone(),
        ..SyncOptions::default()
    };
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(run_sync_with(
        wms.clone(),
        url.clone(),
        format!("cloud-{tag}"),
        options,
        async move {
            let _ = stopped.await;
        },
    ));
    Service {
        session,
        stop,
        task,
    }
}

impl Service {
    async fn shut_down(self) {
        let _ = self.stop.send(());
        let ended = timeout(WAIT, self.task)
            .await
            .expect("the service stops in time")
            .expect("the service's task");
        assert!(ended.is_ok(), "{ended:?}");
    }
}

/// A plain MQTT client playing the edge: subscribed to the down topics of
/// its business and to the cloud's state, it applies the pages it gets to
/// its `Wms` as they come.
struct FakeEdge {
    client: AsyncClient,
    packets: mpsc::UnboundedReceiver<Result<Packet, String>>,
    backlog: VecDeque<Publish>,
    event_loop: JoinHandle<()>,
    wms: Wms,
    business: BusinessId,
    edge_id: EdgeId,
    /// Down messages to other edges whose id has this run's tag.
    strays: Vec<(String, DownMessage)>,
    tag: String,
}

impl FakeEdge {
    async fn connect(url: &MqttUrl, w: &World, tag: &str) -> Self {
        let mut options =
            client_options(url, &format!("edge-{tag}"), Duration::from_secs(30)).expect("options");
        options.set_clean_session(true);
        let (client, mut event_loop) = AsyncClient::new(options, 64);
        let (tx, packets) = mpsc::unbounded_channel();
        let event_loop = tokio::spawn(async move {
            loop {
                match event_loop.poll().await {
                    Ok(Event::Incoming(p)) => {
                        if tx.send(Ok(p)).is_err() {
                            return;
                        }
                    }
                    Ok(Event::Outgoing(_)) => {}
                    Err(e) => {
                        let _ = tx.send(Err(e.to_string()));
                        return;
                    }
                }
            }
        });
        let mut edge = Self {
            client,
            packets,
            backlog: VecDeque::new(),
            event_loop,
            wms: w.edge.clone(),
            business: w.business,
            edge_id: w.edge_id.clone(),
            strays: Vec::new(),
            tag: tag.to_owned(),
        };
        edge.packet(|p| matches!(p, Packet::ConnAck(_))).await;
        for filter in ["depot/v1/+/edge/+/down", CLOUD_STATE] {
            edge.client
                .subscribe(filter, QoS::AtLeastOnce)
                .await
                .expect("subscribe");
            edge.packet(|p| matches!(p, Packet::SubAck(_))).await;
        }
        edge
    }

    /// The next packet `want` accepts; publishes on the way are kept.
    async fn packet(&mut self, want: impl Fn(&Packet) -> bool) -> Packet {
        let found = timeout(WAIT, async {
            loop {
                match self.packets.recv().await {
                    Some(Ok(p)) if want(&p) => return p,
                    Some(Ok(Packet::Publish(m))) => self.backlog.push_back(m),
                    Some(Ok(_)) => {}
                    Some(Err(e)) => panic!("the fake edge's connection failed: {e}"),
                    None => panic!("the fake edge's event loop ended"),
                }
            }
        })
        .await;
        found.expect("the expected packet in time")
    }

    async fn publish(&mut self) -> Publish {
        if let Some(m) = self.backlog.pop_front() {
            return m;
        }
        match self.packet(|p| matches!(p, Packet::Publish(_))).await {
            Packet::Publish(m) => m,
            _ => unreachable!(),
        }
    }

    async fn send_raw(&self, topic: &str, payload: Vec<u8>) {
        self.client
            .publish(topic, QoS::AtLeastOnce, false, payload)
            .await
            .expect("publish");
    }

    fn topic(&self, channel: Channel) -> String {
        EdgeTopic::new(self.business, self.edge_id.clone(), channel).to_string()
    }

    async fn send(&self, message: &UpMessage) {
        self.send_raw(&self.topic(Channel::Up), encode(message))
            .await;
    }

    async fn hello(&self, session: &str, cursor: i64) {
        self.send(&UpMessage::Hello {
            session: session.into(),
            version: "t".into(),
            cursor,
        })
        .await;
    }

    /// Waits for the cloud to say `online` in session `session` (an earlier
    /// run's retained state is skipped).
    async fn cloud_online(&mut self, session: &str) {
        loop {
            let m = self.publish().await;
            if m.topic == CLOUD_STATE
                && decode::<StateMessage>(&m.payload).is_ok_and(
                    |s| matches!(s, StateMessage::Online { session: s, .. } if s == session),
                )
            {
                return;
            }
        }
    }

    /// Waits for `offline` of session `session`.
    async fn cloud_offline(&mut self, session: &str) {
        loop {
            let m = self.publish().await;
            if m.topic == CLOUD_STATE
                && decode::<StateMessage>(&m.payload).is_ok_and(|s| {
                    s == StateMessage::Offline {
                        session: session.into(),
                    }
                })
            {
                return;
            }
        }
    }

    /// The next message on this edge's down topic; pages are applied on the
    /// way, as an edge would.
    async fn down(&mut self) -> DownMessage {
        let own = self.topic(Channel::Down);
        loop {
            let m = self.publish().await;
            if m.topic == CLOUD_STATE {
                continue;
            }
            let message: DownMessage = decode(&m.payload).expect("a down message");
            if m.topic != own {
                if m.topic.contains(&self.tag) {
                    self.strays.push((m.topic.clone(), message));
                }
                continue;
            }
            if let DownMessage::Changes {
                from_rev,
                to_rev,
                changes,
                more,
            } = &message
            {
                let page = Page {
                    from: *from_rev,
                    to: *to_rev,
                    changes: changes.clone(),
                    more: *more,
                };
                match self.wms.apply_page(page).await.expect("apply a page") {
                    PageOutcome::Applied { .. } | PageOutcome::Stale => {}
                    PageOutcome::Gap { cursor } => {
                        panic!("a page ({from_rev}, {to_rev}] past the cursor {cursor}")
                    }
                }
            }
            return message;
        }
    }

    /// Down messages until one that `want` accepts, within `within`; all of
    /// them are returned, the accepted one last.
    async fn until(
        &mut self,
        within: Duration,
        what: &str,
        want: impl Fn(&DownMessage) -> bool,
    ) -> Vec<DownMessage> {
        let mut seen = Vec::new();
        let found = timeout(within, async {
            loop {
                let m = self.down().await;
                let done = want(&m);
                seen.push(m);
                if done {
                    return;
                }
            }
        })
        .await;
        assert!(found.is_ok(), "no {what} within {within:?}; got {seen:?}");
        seen
    }

    /// The next acknowledgement of `session`: (through, gap, rejected).
    async fn ack(&mut self, session: &str) -> (i64, bool, usize) {
        let seen = self
            .until(
                WAIT,
                &format!("ack of {session}"),
                |m| matches!(m, DownMessage::Ack { session: s, .. } if s == session),
            )
            .await;
        match seen.last() {
            Some(DownMessage::Ack {
                through_seq,
                gap,
                rejected,
                ..
            }) => (*through_seq, *gap, rejected.len()),
            _ => unreachable!(),
        }
    }

    /// This edge's own events from `after`, as they travel up.
    async fn outgoing(&self, after: i64) -> Vec<SyncEvent> {
        let head = self.wms.outgoing_head().await.expect("head");
        self.wms
            .outgoing(after, head, 10_000)
            .await
            .expect("outgoing")
            .into_iter()
            .map(|(seq, e)| SyncEvent {
                seq,
                id: e.id,
                kind: e.kind,
                payload: e.payload,
                at: e.at,
            })
            .collect()
    }

    async fn batch(&self, session: &str, events: Vec<SyncEvent>) {
        self.send(&UpMessage::Batch {
            session: session.into(),
            events,
        })
        .await;
    }

    async fn leave(self) {
        let _ = self.client.disconnect().await;
        let mut packets = self.packets;
        let _ = timeout(WAIT, async { while packets.recv().await.is_some() {} }).await;
        self.event_loop.abort();
    }
}

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
            rejected: vec![]
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

    // 4. Bad input is ignored, and the service still answers.
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
        encode(&UpMessage::Hello {
            session: session.into(),
            version: "t".into(),
            cursor: 0,
        })
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
    assert!(
        seen.iter()
            .any(|m| matches!(m, DownMessage::Reset { reason } if reason.contains("1000000000"))),
        "{seen:?}"
    );
    assert!(edge.strays.is_empty(), "{:?}", edge.strays);
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
    let intruder_options =
        client_options(&url, &format!("cloud-{tag}"), Duration::from_secs(30)).expect("options");
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
