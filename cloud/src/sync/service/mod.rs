//! The service task: owns the per-edge state and handles one thing at a
//! time: a group of messages from the broker, the answers to batches the
//! writer has committed, or a round of pages down. Here the loop and
//! states; `batches.rs` queues batches and answers them; `hello.rs`
//! answers hellos; `feed.rs` pages the log down.

mod batches;
mod feed;
mod hello;
mod message;

use batches::{APPLYING, Applying, Recorded, Then};
use message::{Decoded, Message, Pending};

use super::connection::Inbound;
use super::{SyncError, SyncOptions};
use depot_protocol::BusinessId;
use depot_protocol::sync::StateMessage;
use depot_protocol::sync::downstream::Feed;
use depot_protocol::sync::message::encode;
use depot_protocol::sync::topic::{
    CLOUD_STATE, Channel, EdgeId, EdgeTopic, state_filter, up_filter,
};
use depot_wms::Wms;
use depot_wms::sync::Sighting;
use rumqttc::{AsyncClient, Publish, QoS};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Messages taken from the queue at once. The batches among them are
/// applied in one transaction, so a backlog draining from many edges (or a
/// window of batches from one) costs one commit per group, not per batch.
const GROUP: usize = 64;

type EdgeKey = (BusinessId, EdgeId);

/// What the cloud sends one edge that said hello.
#[derive(Debug)]
struct Downlink {
    /// The session of the edge's last hello.
    session: String,
    feed: Feed,
    /// The log may hold changes for it past `feed.sent()`.
    pending: bool,
    /// Paging from this rev failed (and was logged at warn): retried every
    /// tick, logged again only at debug.
    stalled: Option<i64>,
}

pub(super) struct Service {
    wms: Wms,
    client: AsyncClient,
    options: SyncOptions,
    generation: Arc<AtomicU64>,
    connected: bool,
    edges: HashMap<EdgeKey, Downlink>,
    /// How far the log has been checked for businesses with new changes;
    /// `None` until the head could be read.
    scanned: Option<i64>,
    /// A round of pages is due as soon as no message waits.
    dirty: bool,
    /// Groups of batches queued on the writer, to answer in this order.
    applying: VecDeque<Applying>,
    /// Hellos' and states' records queued on the writer since the last
    /// group was: they go with the next (see [`Service::queue`]).
    recording: Vec<(Recorded, depot_wms::Result<depot_wms::writer::Queued<()>>)>,
    last_round: Instant,
    /// Hellos answered per edge.
    hellos: super::pace::Pace<EdgeKey>,
    /// When edges shown online by a hello alone were last checked for
    /// silence.
    last_sweep: Instant,
}

impl Service {
    pub(super) fn new(
        wms: Wms,
        client: AsyncClient,
        options: SyncOptions,
        generation: Arc<AtomicU64>,
    ) -> Self {
        Self {
            wms,
            client,
            options,
            generation,
            connected: false,
            edges: HashMap::new(),
            scanned: None,
            dirty: false,
            applying: VecDeque::new(),
            recording: Vec::new(),
            last_round: Instant::now(),
            hellos: super::pace::Pace::new(super::pace::BURST, super::pace::EVERY),
            last_sweep: Instant::now(),
        }
    }

    /// Handles what arrives and sends pages down, until the connection task
    /// goes away.
    pub(super) async fn run(
        &mut self,
        mut inbound: mpsc::UnboundedReceiver<Inbound>,
    ) -> Result<(), SyncError> {
        self.scanned = self.head().await;
        loop {
            let tick = tokio::time::sleep_until(self.last_round + self.options.tick);
            tokio::select! {
                biased;
                acks = batches::first_answered(&mut self.applying) => self.answered(acks).await,
                message = inbound.recv(), if self.applying.len() < APPLYING => {
                    let Some(first) = message else {
                        self.settle().await;
                        return Err(SyncError::ConnectionTaskEnded);
                    };
                    let mut group = vec![first];
                    while group.len() < GROUP {
                        match inbound.try_recv() {
                            Ok(message) => group.push(message),
                            Err(_) => break,
                        }
                    }
                    self.handle(group).await;
                    // A steady stream of messages does not hold pages back
                    // for longer than a tick.
                    if self.last_round.elapsed() >= self.options.tick {
                        self.round().await;
                    }
                }
                () = tick => self.round().await,
                // Pages go out once the messages waiting are handled, so a
                // burst of batches makes one round, not one per batch.
                () = std::future::ready(()), if self.dirty => self.round().await,
            }
        }
    }

    /// Handles messages in the order they came. Batches wait to be queued
    /// together until the group ends or another kind of message of the
    /// same edge comes, which then waits for them (and those of its edge
    /// queued before) to be applied: a hello after a batch answers with a
    /// cursor that includes it. Another edge's hello or state does not wait
    /// for them (messages on different topics keep no order in MQTT
    /// anyway): when a hundred edges reconnect at once, their hellos and
    /// states do not cut the burst of their batches into a commit each.
    ///
    /// Hellos and states are recorded the same way: queued, and a hello
    /// answered once its record commits, before the batches queued after
    /// it are (see `batches.rs`).
    ///
    /// The group's messages are acknowledged to the broker once handled,
    /// batches and records once queued: so the broker sends the next group
    /// while the writer applies this one. That is flow control, not
    /// delivery: an edge sends again what the cloud does not acknowledge to
    /// it, and says hello again when a hello goes unanswered.
    async fn handle(&mut self, group: Vec<Inbound>) {
        let mut batches = Vec::new();
        let mut handled = Vec::new();
        for message in group {
            match message {
                Inbound::Message {
                    generation,
                    publish,
                } => {
                    match Decoded::decode(&publish) {
                        Decoded::Batch(batch) => batches.push(batch),
                        Decoded::Other(other) => {
                            let queued = self.applying.iter().flat_map(Applying::edges);
                            if other.waits_for(batches.iter().map(Pending::edge).chain(queued)) {
                                self.apply(std::mem::take(&mut batches)).await;
                            }
                            self.dispatch(other).await;
                        }
                    }
                    handled.push((generation, publish));
                }
                Inbound::Connected { generation } => {
                    self.apply(std::mem::take(&mut batches)).await;
                    self.acknowledge(std::mem::take(&mut handled)).await;
                    self.connected(generation).await;
                }
                Inbound::Disconnected => {
                    self.apply(std::mem::take(&mut batches)).await;
                    self.acknowledge(std::mem::take(&mut handled)).await;
                    self.connected = false;
                }
            }
        }
        self.queue(batches).await;
        self.acknowledge(handled).await;
    }

    /// Acknowledged to the broker once handled: its inflight window is what
    /// bounds the queue between the two tasks. A message of an earlier
    /// connection cannot be acknowledged on this one.
    async fn acknowledge(&self, handled: Vec<(u64, Publish)>) {
        let current = self.generation.load(Ordering::Acquire);
        for (generation, publish) in handled {
            if generation == current {
                if let Err(e) = self.client.ack(&publish).await {
                    tracing::debug!(error = %e, "cannot acknowledge a message");
                }
            }
        }
    }

    /// Subscribes (every connection starts clean), then says `online`: by
    /// then the subscriptions are in place, so an edge that sees it may say
    /// hello.
    async fn connected(&mut self, generation: u64) {
        self.connected = true;
        let up = up_filter(self.options.share_group.as_deref());
        let mut filters = vec![up, state_filter()];
        // Sharing the edges with other instances: the cloud's state is
        // watched too, for another's last will (see `cloud_state`).
        if self.options.share_group.is_some() {
            filters.push(CLOUD_STATE.to_owned());
        }
        for filter in filters {
            if let Err(e) = self.client.subscribe(filter, QoS::AtLeastOnce).await {
                tracing::warn!(error = %e, "cannot subscribe");
            }
        }
        self.say_online().await;
        tracing::debug!(generation, edges = self.edges.len(), "sync subscribed");
        // Pages sent while the connection broke may be lost: an edge that
        // sees a hole asks again with a hello.
        self.dirty = true;
    }

    /// Publishes the cloud's retained `online`, with this instance's session.
    async fn say_online(&self) {
        let online = encode(&StateMessage::Online {
            version: self.options.version.clone(),
            session: self.options.session.clone(),
            head: None,
        });
        if let Err(e) = self
            .client
            .publish(CLOUD_STATE, QoS::AtLeastOnce, true, online)
            .await
        {
            tracing::warn!(error = %e, "cannot publish the cloud's state");
        }
    }

    /// The cloud's retained state, watched while sharing the edges with
    /// other instances: the state topic is one for them all, so another
    /// instance's last will (or goodbye) says the cloud is offline while
    /// this one serves. This one says `online` again, with its session:
    /// edges that see a session new to them say hello, and this instance
    /// answers.
    async fn cloud_state(&mut self, state: StateMessage) {
        if let StateMessage::Offline { session } = state {
            if session != self.options.session && self.connected {
                tracing::info!(%session, "another instance of the cloud went offline: this one says it serves");
                self.say_online().await;
            }
        }
    }

    async fn dispatch(&mut self, message: Message) {
        match message {
            Message::Hello(topic, hello) => self.hello(topic, hello).await,
            Message::State(topic, state) => self.state(topic, state).await,
            Message::CloudState(state) => self.cloud_state(state).await,
            Message::Cleared => {}
            Message::Ignored { topic, reason } => {
                tracing::warn!(%topic, %reason, "ignored a message");
            }
        }
    }

    /// An edge's retained state: recorded for the edge list (an edge that
    /// is not registered changes no row), and `offline` ends its feed. The
    /// record is queued and goes on with the group.
    async fn state(&mut self, topic: EdgeTopic, state: StateMessage) {
        let (business, edge) = (topic.business, topic.edge.clone());
        let written = match state {
            StateMessage::Offline { session } => {
                let key = (business, edge.clone());
                if self.edges.get(&key).is_some_and(|d| d.session == session) {
                    tracing::debug!(%business, %edge, %session, "edge went offline");
                    self.edges.remove(&key);
                }
                self.forget_downlink(&key, &session);
                self.wms.queue_edge_gone(business, edge, session).await
            }
            StateMessage::Online {
                version,
                session,
                head,
            } => {
                tracing::debug!(%topic, %version, %session, ?head, "edge is online");
                let sighting = Sighting {
                    session: Some(session),
                    version: Some(version),
                    head,
                    taking_back_after: None,
                    by_state: true,
                    downlink_owner: None,
                };
                self.wms.queue_edge_seen(business, edge, sighting).await
            }
        };
        self.record(topic, Then::State, written);
    }

    /// Publishes to an edge's down topic; false when the connection task is
    /// gone.
    async fn send(&self, business: BusinessId, edge: &EdgeId, payload: Vec<u8>) -> bool {
        let topic = EdgeTopic::new(business, edge.clone(), Channel::Down).to_string();
        match self
            .client
            .publish(topic, QoS::AtLeastOnce, false, payload)
            .await
        {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(%business, %edge, error = %e, "cannot publish");
                false
            }
        }
    }
}
