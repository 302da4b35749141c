//! The embedded MQTT broker with real rumqttc clients: QoS 1 round trips,
//! the protocol's largest message, retained state, last wills, persistent
//! sessions and shared subscriptions. When `DEPOT_TEST_MQTT_URL` names an
//! external broker (CI runs Mosquitto), the same scenarios run against it
//! too: they are written once, against a URL.
//!
//! Client ids, payloads and share groups carry a per-run tag, so runs that
//! share an external broker cannot take each other's messages.

use depot_cloud::broker::{EmbeddedBroker, MqttUrl, client_options};
use depot_protocol::sync::message::MAX_MESSAGE_BYTES;
use depot_protocol::sync::topic::{CLOUD_STATE, up_filter};
use rumqttc::{AsyncClient, ConnAck, Event, LastWill, MqttOptions, Packet, Publish, QoS};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::timeout;

const UP: &str = "depot/v1/1/edge/e1/up";
const EDGE_STATE: &str = "depot/v1/1/edge/e1/state";
/// Bound on every wait: generous for a loaded CI machine, short enough that
/// a lost message fails the test instead of hanging it.
const WAIT: Duration = Duration::from_secs(10);

fn start_broker() -> EmbeddedBroker {
    // `RUST_LOG=rumqttd=debug cargo test … -- --nocapture` shows the broker's
    // side of a failure.
    if let Ok(filter) = tracing_subscriber::EnvFilter::try_from_default_env() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_test_writer()
            .try_init();
    }
    EmbeddedBroker::start(SocketAddr::from(([127, 0, 0, 1], 0))).expect("embedded broker")
}

/// A connected client whose event loop runs on its own task; what the
/// broker sends arrives on `packets`.
struct Client {
    client: AsyncClient,
    packets: mpsc::UnboundedReceiver<Result<Packet, String>>,
    /// Packets that arrived while a wait looked for another kind (a queued
    /// message ahead of a SUBACK, say), kept for the next wait.
    backlog: VecDeque<Packet>,
    event_loop: JoinHandle<()>,
}

impl Client {
    /// Connects and waits for the CONNACK.
    async fn connect(url: &MqttUrl, id: &str, will: Option<LastWill>) -> (Self, ConnAck) {
        Self::connect_with(url, id, |o| {
            if let Some(will) = will {
                o.set_last_will(will);
            }
        })
        .await
    }

    /// Connects with options of `client_options` adjusted by `adjust`.
    async fn connect_with(
        url: &MqttUrl,
        id: &str,
        adjust: impl FnOnce(&mut MqttOptions),
    ) -> (Self, ConnAck) {
        let mut options = client_options(
            url,
            &depot_mqtt::Tls::default(),
            id,
            Duration::from_secs(30),
        )
        .expect("client options");
        adjust(&mut options);
        let (client, mut event_loop) = AsyncClient::new(options, 16);
        let (tx, packets) = mpsc::unbounded_channel();
        let event_loop = tokio::spawn(async move {
            loop {
                match event_loop.poll().await {
                    Ok(Event::Incoming(packet)) => {
                        if tx.send(Ok(packet)).is_err() {
                            return;
                        }
                    }
                    Ok(Event::Outgoing(_)) => {}
                    // rumqttc would reconnect on the next poll; a test wants
                    // to hear about it instead.
                    Err(e) => {
                        let _ = tx.send(Err(e.to_string()));
                        return;
                    }
                }
            }
        });
        let mut c = Self {
            client,
            packets,
            backlog: VecDeque::new(),
            event_loop,
        };
        let ack = c
            .next(|p| match p {
                Packet::ConnAck(ack) => Some(ack.clone()),
                _ => None,
            })
            .await;
        (c, ack)
    }

    /// The first packet `pick` accepts, the backlog first; fails on an
    /// event loop error or after `WAIT`.
    async fn next<T>(&mut self, mut pick: impl FnMut(&Packet) -> Option<T>) -> T {
        if let Some((i, t)) = self
            .backlog
            .iter()
            .enumerate()
            .find_map(|(i, p)| pick(p).map(|t| (i, t)))
        {
            self.backlog.remove(i);
            return t;
        }
        let backlog = &mut self.backlog;
        let packets = &mut self.packets;
        let found = timeout(WAIT, async {
            loop {
                match packets.recv().await {
                    Some(Ok(packet)) => match pick(&packet) {
                        Some(t) => return t,
                        None => backlog.push_back(packet),
                    },
                    Some(Err(e)) => panic!("MQTT connection failed: {e}"),
                    None => panic!("MQTT event loop ended"),
                }
            }
        })
        .await;
        found.expect("the expected MQTT packet in time")
    }

    async fn subscribe(&mut self, filter: &str) {
        self.client
            .subscribe(filter, QoS::AtLeastOnce)
            .await
            .expect("subscribe request");
        let codes = self
            .next(|p| match p {
                Packet::SubAck(ack) => Some(ack.return_codes.clone()),
                _ => None,
            })
            .await;
        assert!(
            matches!(
                codes.as_slice(),
                [rumqttc::SubscribeReasonCode::Success(QoS::AtLeastOnce)]
            ),
            "{filter}: {codes:?}"
        );
    }

    /// Publishes at QoS 1 and waits for the broker's PUBACK.
    async fn publish(&mut self, topic: &str, payload: Vec<u8>, retain: bool) {
        self.client
            .publish(topic, QoS::AtLeastOnce, retain, payload)
            .await
            .expect("publish request");
        self.next(|p| matches!(p, Packet::PubAck(_)).then_some(()))
            .await;
    }

    /// The next message on `topic` whose payload satisfies `want`.
    async fn message(&mut self, topic: &str, want: impl Fn(&[u8]) -> bool) -> Publish {
        self.next(|p| match p {
            Packet::Publish(m) if m.topic == topic && want(&m.payload) => Some(m.clone()),
            _ => None,
        })
        .await
    }

    /// Whether no message on `topic` is waiting or arrives within `within`.
    async fn quiet(&mut self, topic: &str, within: Duration) -> bool {
        let on_topic = |p: &Packet| matches!(p, Packet::Publish(m) if m.topic == topic);
        if self.backlog.iter().any(on_topic) {
            return false;
        }
        let backlog = &mut self.backlog;
        let packets = &mut self.packets;
        let heard = timeout(within, async {
            // A closed channel is not a message: stay quiet till the end.
            while let Some(p) = packets.recv().await {
                match p {
                    Ok(p) if on_topic(&p) => return,
                    Ok(p) => backlog.push_back(p),
                    Err(_) => {}
                }
            }
            std::future::pending::<()>().await;
        })
        .await;
        heard.is_err()
    }

    /// Ends the connection the way a crash or a cut cable does: no
    /// DISCONNECT, the socket just goes away with the event loop.
    async fn drop_connection(self) {
        self.event_loop.abort();
        let _ = self.event_loop.await;
    }

    /// Unsubscribes, then disconnects: a persistent session left behind on
    /// a shared broker would queue messages for nobody.
    async fn leave(mut self, filter: &str) {
        self.client.unsubscribe(filter).await.expect("unsubscribe");
        self.next(|p| matches!(p, Packet::UnsubAck(_)).then_some(()))
            .await;
        self.disconnect().await;
    }

    /// Clean DISCONNECT, then waits for the event loop to wind down.
    async fn disconnect(mut self) {
        self.client.disconnect().await.expect("disconnect request");
        let _ = timeout(WAIT, async { while self.packets.recv().await.is_some() {} }).await;
        self.event_loop.abort();
    }
}

/// (a): QoS 1 from one client to a subscribed other.
async fn round_trip(url: &MqttUrl, tag: &str) {
    let (mut cloud, _) = Client::connect(url, &format!("cloud-{tag}"), None).await;
    cloud.subscribe(UP).await;
    let (mut edge, _) = Client::connect(url, &format!("edge-{tag}"), None).await;
    let payload = format!("{{\"hello\":\"{tag}\"}}").into_bytes();
    edge.publish(UP, payload.clone(), false).await;

    let got = cloud.message(UP, |p| p == payload.as_slice()).await;
    assert_eq!(got.qos, QoS::AtLeastOnce);
    assert!(!got.retain);

    cloud.leave(UP).await;
    edge.disconnect().await;
}

/// (b): a message of `MAX_MESSAGE_BYTES` (rumqttc's default limit is
/// 10 KiB; the broker's must be raised too).
async fn largest_message(url: &MqttUrl, tag: &str) {
    let (mut cloud, _) = Client::connect(url, &format!("cloud-{tag}"), None).await;
    cloud.subscribe(UP).await;
    let (mut edge, _) = Client::connect(url, &format!("edge-{tag}"), None).await;
    let mut payload: Vec<u8> = (0..MAX_MESSAGE_BYTES).map(|i| (i % 251) as u8).collect();
    payload[..tag.len()].copy_from_slice(tag.as_bytes());
    edge.publish(UP, payload.clone(), false).await;

    let got = cloud.message(UP, |p| p.starts_with(tag.as_bytes())).await;
    assert_eq!(got.payload.len(), MAX_MESSAGE_BYTES);
    assert!(got.payload == payload, "the payload arrives intact");

    cloud.leave(UP).await;
    edge.disconnect().await;
}

/// (c): the latest retained message, and only it, reaches a client that
/// subscribes afterwards.
async fn retained(url: &MqttUrl, tag: &str) {
    let (mut cloud, _) = Client::connect(url, &format!("cloud-{tag}"), None).await;
    cloud
        .publish(CLOUD_STATE, format!("offline {tag}").into_bytes(), true)
        .await;
    cloud
        .publish(CLOUD_STATE, format!("online {tag}").into_bytes(), true)
        .await;

    let (mut edge, _) = Client::connect(url, &format!("edge-{tag}"), None).await;
    edge.subscribe(CLOUD_STATE).await;
    let got = edge.message(CLOUD_STATE, |_| true).await;
    assert_eq!(got.payload, format!("online {tag}").as_bytes());
    assert!(got.retain, "delivered as retained");
    assert!(
        edge.quiet(CLOUD_STATE, Duration::from_millis(300)).await,
        "only the latest retained message"
    );

    clear_retained(&mut cloud, CLOUD_STATE).await;
    cloud.disconnect().await;
    edge.leave(CLOUD_STATE).await;
}

/// (d): an edge's last will, retained, is published when its connection
/// drops without DISCONNECT, to subscribers and to whoever looks later.
async fn last_will(url: &MqttUrl, tag: &str) {
    let (mut cloud, _) = Client::connect(url, &format!("cloud-{tag}"), None).await;
    cloud.subscribe(EDGE_STATE).await;

    let offline = format!("offline {tag}");
    let will = LastWill::new(EDGE_STATE, offline.clone(), QoS::AtLeastOnce, true);
    let (mut edge, _) = Client::connect(url, &format!("edge-{tag}"), Some(will)).await;
    let online = format!("online {tag}").into_bytes();
    edge.publish(EDGE_STATE, online.clone(), true).await;
    cloud.message(EDGE_STATE, |p| p == online.as_slice()).await;

    edge.drop_connection().await;
    let got = cloud.message(EDGE_STATE, |p| p == offline.as_bytes()).await;
    assert_eq!(got.qos, QoS::AtLeastOnce);

    let (mut late, _) = Client::connect(url, &format!("late-{tag}"), None).await;
    late.subscribe(EDGE_STATE).await;
    let got = late.message(EDGE_STATE, |_| true).await;
    assert_eq!(got.payload, offline.as_bytes());
    assert!(got.retain);

    clear_retained(&mut late, EDGE_STATE).await;
    late.leave(EDGE_STATE).await;
    cloud.leave(EDGE_STATE).await;
}

/// A DISCONNECT discards the will.
async fn no_will_after_disconnect(url: &MqttUrl, tag: &str) {
    let (mut cloud, _) = Client::connect(url, &format!("cloud-{tag}"), None).await;
    cloud.subscribe(EDGE_STATE).await;
    let will = LastWill::new(EDGE_STATE, format!("offline {tag}"), QoS::AtLeastOnce, true);
    let (edge, _) = Client::connect(url, &format!("edge-{tag}"), Some(will)).await;
    edge.disconnect().await;
    assert!(
        cloud.quiet(EDGE_STATE, Duration::from_millis(500)).await,
        "no will after a DISCONNECT"
    );
    cloud.leave(EDGE_STATE).await;
}

/// What `client_options`' persistent session buys: QoS 1 messages sent
/// while a subscriber was away wait for it.
async fn persistent_session(url: &MqttUrl, tag: &str) {
    let down = "depot/v1/1/edge/e1/down";
    let id = format!("edge-{tag}");
    let (mut edge, ack) = Client::connect(url, &id, None).await;
    assert!(!ack.session_present, "a new client id starts a new session");
    edge.subscribe(down).await;
    edge.drop_connection().await;

    let (mut cloud, _) = Client::connect(url, &format!("cloud-{tag}"), None).await;
    let payload = format!("ack {tag}").into_bytes();
    cloud.publish(down, payload.clone(), false).await;
    cloud.disconnect().await;

    let (mut edge, ack) = Client::connect(url, &id, None).await;
    assert!(ack.session_present, "the broker kept the session");
    // Subscribing again after every connect, as a client must when the
    // session may be gone, is harmless when it is not; rumqttd even needs it
    // (without it, it never answers the UNSUBSCRIBE below).
    edge.subscribe(down).await;
    edge.message(down, |p| p == payload.as_slice()).await;
    assert!(
        edge.quiet(down, Duration::from_millis(300)).await,
        "delivered once"
    );
    edge.leave(down).await;
}

/// The cloud's `up` filter as a shared subscription: each message goes to
/// exactly one member of the group, and both members get some.
async fn shared_subscription(url: &MqttUrl, tag: &str) {
    let filter = up_filter(Some(&format!("cloud-{tag}")));
    let (mut one, _) = Client::connect(url, &format!("cloud-1-{tag}"), None).await;
    one.subscribe(&filter).await;
    let (mut two, _) = Client::connect(url, &format!("cloud-2-{tag}"), None).await;
    two.subscribe(&filter).await;

    let (mut edge, _) = Client::connect(url, &format!("edge-{tag}"), None).await;
    let sent: Vec<String> = (0..10).map(|i| format!("{tag} {i}")).collect();
    for m in &sent {
        edge.publish(UP, m.clone().into_bytes(), false).await;
    }
    let ours = |p: &Packet| match p {
        Packet::Publish(m) if m.payload.starts_with(tag.as_bytes()) => {
            Some(String::from_utf8_lossy(&m.payload).into_owned())
        }
        _ => None,
    };
    let mut got_one: Vec<String> = one.backlog.drain(..).filter_map(|p| ours(&p)).collect();
    let mut got_two: Vec<String> = two.backlog.drain(..).filter_map(|p| ours(&p)).collect();
    let all = timeout(WAIT, async {
        while got_one.len() + got_two.len() < sent.len() {
            tokio::select! {
                Some(Ok(p)) = one.packets.recv() => got_one.extend(ours(&p)),
                Some(Ok(p)) = two.packets.recv() => got_two.extend(ours(&p)),
            }
        }
    })
    .await;
    assert!(all.is_ok(), "got {got_one:?} and {got_two:?}");
    assert!(
        !got_one.is_empty() && !got_two.is_empty(),
        "both members get a share: {got_one:?} / {got_two:?}"
    );
    let mut all: Vec<String> = got_one.into_iter().chain(got_two).collect();
    all.sort_unstable();
    let mut want = sent;
    want.sort_unstable();
    assert_eq!(all, want, "each message exactly once");

    one.leave(&filter).await;
    two.leave(&filter).await;
    edge.disconnect().await;
}

/// The last member of a shared group leaves (crashes) while a message it
/// was sent is unacknowledged; the broker must carry on.
async fn shared_member_leaves_mid_flight(url: &MqttUrl, tag: &str, clean_session: bool) {
    let filter = up_filter(Some(&format!("cloud-{tag}")));
    let (mut member, _) = Client::connect_with(url, &format!("cloud-{tag}"), |o| {
        // Never acknowledge, so the message stays in flight.
        o.set_manual_acks(true).set_clean_session(clean_session);
    })
    .await;
    member.subscribe(&filter).await;
    let (mut edge, _) = Client::connect(url, &format!("edge-{tag}"), None).await;
    let payload = format!("{tag} 1").into_bytes();
    edge.publish(UP, payload.clone(), false).await;
    member.message(UP, |p| p == payload.as_slice()).await;
    member.drop_connection().await;
    edge.disconnect().await;

    round_trip(url, &format!("{tag}-after")).await;

    // Connecting with a clean session ends the old one: no session left
    // behind to queue the group's messages on a shared broker.
    let (member, _) = Client::connect_with(url, &format!("cloud-{tag}"), |o| {
        o.set_clean_session(true);
    })
    .await;
    member.disconnect().await;
}

/// An empty retained message deletes the retained one: leave a shared
/// broker as found.
async fn clear_retained(c: &mut Client, topic: &str) {
    c.publish(topic, Vec::new(), true).await;
}

#[tokio::test]
async fn qos1_round_trip() {
    let broker = start_broker();
    assert_ne!(broker.addr.port(), 0, "the real port is reported");
    round_trip(&broker.url(), "t").await;
    assert!(broker.is_running());
}

#[tokio::test]
async fn the_largest_sync_message_passes() {
    largest_message(&start_broker().url(), "t").await;
}

#[tokio::test]
async fn retained_state_reaches_later_subscribers() {
    retained(&start_broker().url(), "t").await;
}

#[tokio::test]
async fn last_will_fires_when_the_connection_drops() {
    last_will(&start_broker().url(), "t").await;
}

#[tokio::test]
async fn no_last_will_after_a_clean_disconnect() {
    no_will_after_disconnect(&start_broker().url(), "t").await;
}

#[tokio::test]
async fn a_persistent_session_gets_what_was_sent_while_away() {
    persistent_session(&start_broker().url(), "t").await;
}

#[tokio::test]
async fn a_shared_subscription_splits_the_load() {
    shared_subscription(&start_broker().url(), "t").await;
}

#[tokio::test]
async fn a_clean_session_shared_subscriber_may_leave_mid_flight() {
    let broker = start_broker();
    shared_member_leaves_mid_flight(&broker.url(), "t", true).await;
    broker.probe().expect("the broker still answers");
}

/// What `a_clean_session_shared_subscriber_may_leave_mid_flight` avoids.
/// Run it with `--ignored` to check whether a newer rumqttd is fixed.
#[tokio::test]
#[ignore = "rumqttd 0.20 bug: when the last member of a shared group with a persistent \
            session leaves with a message in flight, the router thread panics \
            (\"group must exists\", router/routing.rs) and the broker stops serving"]
async fn a_persistent_shared_subscriber_may_leave_mid_flight() {
    let broker = start_broker();
    shared_member_leaves_mid_flight(&broker.url(), "t", false).await;
    broker.probe().expect("the broker still answers");
}

/// What the `subscribe` on resuming in `persistent_session` works around.
#[tokio::test]
#[ignore = "rumqttd 0.20 bug: after a persistent session resumes, an UNSUBSCRIBE of a \
            subscription from the earlier connection gets no UNSUBACK (and is not \
            applied) unless the client subscribed again first"]
async fn unsubscribe_right_after_resuming_a_session() {
    let broker = start_broker();
    let url = broker.url();
    let (mut edge, _) = Client::connect(&url, "edge", None).await;
    edge.subscribe(UP).await;
    edge.drop_connection().await;
    let (edge, ack) = Client::connect(&url, "edge", None).await;
    assert!(ack.session_present);
    edge.leave(UP).await;
}

#[tokio::test]
async fn a_taken_port_is_an_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("addr");
    let err = EmbeddedBroker::start(addr).expect_err("the port is taken");
    assert!(err.to_string().contains(&addr.to_string()), "{err}");
}

/// (e): with `DEPOT_TEST_MQTT_URL` set (say `mqtt://127.0.0.1:1883`), every
/// scenario runs against that broker too, one after the other (they share
/// its topics). Without it, the test passes having done nothing.
#[tokio::test]
async fn scenarios_on_an_external_broker() {
    let Ok(url) = std::env::var("DEPOT_TEST_MQTT_URL") else {
        println!("skipped: DEPOT_TEST_MQTT_URL is not set");
        return;
    };
    let url = MqttUrl::parse(&url).expect("DEPOT_TEST_MQTT_URL");
    println!("against {url}");
    let tag = unique_tag();
    round_trip(&url, &format!("{tag}-a")).await;
    largest_message(&url, &format!("{tag}-b")).await;
    retained(&url, &format!("{tag}-c")).await;
    last_will(&url, &format!("{tag}-d")).await;
    no_will_after_disconnect(&url, &format!("{tag}-w")).await;
    persistent_session(&url, &format!("{tag}-p")).await;
    shared_subscription(&url, &format!("{tag}-s")).await;
    shared_member_leaves_mid_flight(&url, &format!("{tag}-m"), false).await;
}

fn unique_tag() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{}-{nanos}", std::process::id())
}
