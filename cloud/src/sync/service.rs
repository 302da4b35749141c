//! The service task: owns the per-edge state and handles one thing at a
//! time: a message from the broker, or a round of pages down.

use super::connection::Inbound;
use super::{SyncError, SyncOptions};
use depot_protocol::BusinessId;
use depot_protocol::sync::downstream::Feed;
use depot_protocol::sync::message::Landmark;
use depot_protocol::sync::message::{MAX_MESSAGE_BYTES, decode, encode};
use depot_protocol::sync::topic::{
    CLOUD_STATE, Channel, EdgeId, EdgeTopic, state_filter, up_filter,
};
use depot_protocol::sync::{DownMessage, StateMessage, SyncEvent, UpMessage};
use depot_wms::Wms;
use depot_wms::sync::Sighting;
use rumqttc::{AsyncClient, Publish, QoS};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Events of the log read per check for which businesses changed; past it
/// every edge is checked.
const SCAN_LIMIT: u32 = 1000;
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
    last_round: Instant,
    /// Hellos answered per edge.
    hellos: super::pace::Pace<EdgeKey>,
    /// When edges shown online by a hello alone were last checked for
    /// silence.
    last_sweep: Instant,
}

/// How often edges online by a hello alone are checked, and how long one
/// may go unheard before it is shown offline.
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(15);
const SILENT_AFTER: std::time::Duration = std::time::Duration::from_secs(60);

/// What makes a hello impossible to answer: positions in a log are never
/// negative, and the change an edge applied last is at or before its
/// cursor. (A cursor past the cloud's head is possible: the cloud's
/// database was restored from an older backup; that is answered with
/// `reset`.)
fn malformed(
    cursor: i64,
    head: Option<i64>,
    recover_after: Option<i64>,
    last: Option<Landmark>,
) -> Option<String> {
    if cursor < 0 {
        return Some(format!("the hello's cursor {cursor} is below 0"));
    }
    if let Some(head) = head.filter(|h| *h < 0) {
        return Some(format!("the hello's head {head} is below 0"));
    }
    if let Some(after) = recover_after.filter(|a| *a < 0) {
        return Some(format!("the hello's recover_after {after} is below 0"));
    }
    if let Some(last) = last.filter(|l| l.rev < 0 || l.rev > cursor) {
        return Some(format!(
            "the hello's last change (rev {}) is not within its cursor 0..={cursor}",
            last.rev
        ));
    }
    None
}

/// A batch from an edge, decoded, waiting to be applied with the others of
/// its group.
struct Pending {
    topic: EdgeTopic,
    session: String,
    events: Vec<SyncEvent>,
}

/// The batch a message carries, if it is one (anything else, malformed
/// input included, is left to `dispatch`, which reports it).
fn batch_of(publish: &Publish) -> Option<Pending> {
    let topic = EdgeTopic::parse(&publish.topic).ok()?;
    if topic.channel != Channel::Up {
        return None;
    }
    match decode::<UpMessage>(&publish.payload).ok()? {
        UpMessage::Batch { session, events } => Some(Pending {
            topic,
            session,
            events,
        }),
        UpMessage::Hello { .. } => None,
    }
}

/// What a hello asks of the cloud, besides the sighting it records.
struct Asked {
    cursor: i64,
    last: Option<Landmark>,
    recover_after: Option<i64>,
    node: Option<u32>,
}

enum Progress {
    /// Sent everything there is.
    Done,
    /// Sent a round's worth; more follow.
    More,
    /// Could not read or send; the next tick tries again.
    Failed,
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
                message = inbound.recv() => {
                    let Some(first) = message else {
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

    /// Handles messages in the order they came. Batches wait to be applied
    /// together until the group ends or another kind of message comes, which
    /// then sees them applied: a hello after a batch answers with a cursor
    /// that includes it.
    async fn handle(&mut self, group: Vec<Inbound>) {
        let mut batches = Vec::new();
        let mut handled = Vec::new();
        for message in group {
            match message {
                Inbound::Message {
                    generation,
                    publish,
                } => {
                    match batch_of(&publish) {
                        Some(batch) => batches.push(batch),
                        None => {
                            self.apply(std::mem::take(&mut batches)).await;
                            self.dispatch(&publish).await;
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
        self.apply(batches).await;
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
        for filter in [up, state_filter()] {
            if let Err(e) = self.client.subscribe(filter, QoS::AtLeastOnce).await {
                tracing::warn!(error = %e, "cannot subscribe");
            }
        }
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
        tracing::debug!(generation, edges = self.edges.len(), "sync subscribed");
        // Pages sent while the connection broke may be lost: an edge that
        // sees a hole asks again with a hello.
        self.dirty = true;
    }

    async fn dispatch(&mut self, publish: &Publish) {
        let topic = match EdgeTopic::parse(&publish.topic) {
            Ok(topic) => topic,
            Err(e) => {
                tracing::warn!(topic = %publish.topic, reason = %e, "ignored a message");
                return;
            }
        };
        match topic.channel {
            Channel::Up => self.up(topic, &publish.payload).await,
            Channel::State => self.state(topic, &publish.payload).await,
            Channel::Down => {
                tracing::warn!(%topic, reason = "the cloud does not read down topics", "ignored a message");
            }
        }
    }

    async fn up(&mut self, topic: EdgeTopic, payload: &[u8]) {
        match decode::<UpMessage>(payload) {
            Ok(UpMessage::Hello {
                session,
                version,
                cursor,
                head,
                last,
                recover_after,
                node,
            }) => {
                if let Some(reason) = malformed(cursor, head, recover_after, last) {
                    tracing::warn!(%topic, %reason, "refused a hello");
                    let refused = encode(&DownMessage::Refused { reason });
                    self.send(topic.business, &topic.edge, refused).await;
                    return;
                }
                let key = (topic.business, topic.edge.clone());
                if !self.hellos.admit(&key, Instant::now().into_std()) {
                    tracing::debug!(%topic, "a hello too soon after the last ones: not answered");
                    return;
                }
                let sighting = Sighting {
                    session: Some(session),
                    version: Some(version),
                    head,
                    taking_back_after: None,
                    by_state: false,
                };
                let asked = Asked {
                    cursor,
                    last,
                    recover_after,
                    node,
                };
                self.hello(topic, sighting, asked).await;
            }
            Ok(UpMessage::Batch { session, events }) => {
                self.apply(vec![Pending {
                    topic,
                    session,
                    events,
                }])
                .await;
            }
            Err(e) => tracing::warn!(%topic, reason = %e, "ignored a message"),
        }
    }

    async fn hello(&mut self, topic: EdgeTopic, sighting: Sighting, asked: Asked) {
        let Asked {
            cursor,
            last,
            recover_after,
            node,
        } = asked;
        let EdgeTopic { business, edge, .. } = topic;
        let session = sighting.session.clone().unwrap_or_default();
        let version = sighting.version.clone().unwrap_or_default();
        let head = sighting.head;
        let record = match self.wms.edge(business, edge.clone()).await {
            Ok(Some(record)) => record,
            Ok(None) => {
                tracing::warn!(%business, %edge, reason = "the edge is not registered", "refused a hello");
                let reason = format!(
                    "edge {edge} is not registered in business {business}: register it in the cloud (depot-cloud edge register --business {business} --edge {edge}) or correct business_id and edge_id in this box's settings"
                );
                self.send(business, &edge, encode(&DownMessage::Refused { reason }))
                    .await;
                return;
            }
            Err(e) => {
                tracing::warn!(%business, %edge, reason = %e, "cannot look up the edge");
                return;
            }
        };
        if let Some(node) = node.filter(|n| *n != record.node) {
            tracing::warn!(%business, %edge, node, registered = record.node, reason = "the edge runs as another node", "refused a hello");
            let reason = format!(
                "this box runs as node {node}, but edge {edge} is registered in business {business} as node {}: its records' ids would collide with another box's. Set node = {} in its settings, on a new data directory (a database keeps the node it was made with)",
                record.node, record.node
            );
            self.send(business, &edge, encode(&DownMessage::Refused { reason }))
                .await;
            return;
        }
        // Listed as taking its events back only if there is any to take.
        let sighting = Sighting {
            taking_back_after: Some(recover_after.filter(|after| *after < record.up_cursor)),
            ..sighting
        };
        if let Err(e) = self.wms.edge_seen(business, edge.clone(), sighting).await {
            tracing::warn!(%business, %edge, reason = %e, "cannot record the edge's hello");
        }
        tracing::info!(%business, %edge, %session, %version, cursor, ?head, up_cursor = record.up_cursor, "edge said hello");
        let stranger = match last {
            Some(last) => match self.wms.holds(last).await {
                Ok(holds) => (!holds).then(|| {
                    format!(
                        "the change the edge applied last ({} at rev {}) is not in the cloud's log there",
                        last.id, last.rev
                    )
                }),
                Err(e) => {
                    tracing::warn!(%business, %edge, reason = %e, "cannot check the edge's last change");
                    None
                }
            },
            None => None,
        };
        let past =
            self.head().await.filter(|head| cursor > *head).map(|head| {
                format!("the edge's cursor {cursor} is past the cloud's log (at {head})")
            });
        if let Some(reason) = past.or(stranger) {
            // Not this log (a cloud database restored from an older backup,
            // say): the edge must reload.
            tracing::warn!(%business, %edge, %session, %reason, "sent a reset");
            self.edges.remove(&(business, edge.clone()));
            self.send(business, &edge, encode(&DownMessage::Reset { reason }))
                .await;
            return;
        }
        // An edge whose log may lack its tail takes back what this cloud
        // applied from it, a page per hello, before it sends anything new.
        if let Some(after) = recover_after.filter(|after| *after < record.up_cursor) {
            match self
                .wms
                .own_page(business, &edge, after.max(0), record.up_cursor)
                .await
            {
                Ok(page) => {
                    tracing::info!(%business, %edge, after, through = record.up_cursor, "handing an edge back its own events");
                    self.send(business, &edge, encode(&page)).await;
                }
                Err(e) => {
                    tracing::warn!(%business, %edge, reason = %e, "cannot read the edge's own events");
                }
            }
        }
        // The cursor as it stands: an edge acknowledged further than this
        // (a cloud restored from an older backup) sends the rest again.
        let ack = DownMessage::Ack {
            session: session.clone(),
            through_seq: record.up_cursor,
            gap: false,
            rejected: vec![],
            hello: true,
            hands_back: true,
        };
        self.send(business, &edge, encode(&ack)).await;
        self.edges.insert(
            (business, edge),
            Downlink {
                session,
                feed: Feed::from_hello(cursor.max(0)),
                pending: true,
                stalled: None,
            },
        );
        self.dirty = true;
    }

    /// Applies batches in one transaction, then acknowledges each.
    async fn apply(&mut self, batches: Vec<Pending>) {
        if batches.is_empty() {
            return;
        }
        let mut heads = Vec::with_capacity(batches.len());
        let mut inputs = Vec::with_capacity(batches.len());
        for Pending {
            topic,
            session,
            events,
        } in batches
        {
            heads.push((topic.business, topic.edge.clone(), session, events.len()));
            inputs.push((topic.business, topic.edge, events));
        }
        let results = match self.wms.receive_batches(inputs).await {
            Ok(results) => results,
            Err(e) => {
                for (business, edge, _, count) in &heads {
                    tracing::warn!(%business, %edge, events = count, reason = %e, "refused a batch");
                }
                return;
            }
        };
        for ((business, edge, session, count), result) in heads.into_iter().zip(results) {
            let ack = match result {
                Ok(ack) => ack,
                Err(e) => {
                    tracing::warn!(%business, %edge, events = count, reason = %e, "refused a batch");
                    continue;
                }
            };
            tracing::debug!(
                %business, %edge, %session, events = count, through = ack.through,
                gap = ack.gap, rejected = ack.rejected.len(), "applied a batch"
            );
            for message in super::ack::messages(&session, ack) {
                self.send(business, &edge, encode(&message)).await;
            }
        }
        // The log may have grown: other edges of the business may need it.
        self.dirty = true;
    }

    /// An edge's retained state: recorded for the edge list (an edge that
    /// is not registered changes no row), and `offline` ends its feed.
    async fn state(&mut self, topic: EdgeTopic, payload: &[u8]) {
        if payload.is_empty() {
            // A retained state being cleared.
            return;
        }
        let (business, edge) = (topic.business, topic.edge.clone());
        let recorded = match decode::<StateMessage>(payload) {
            Ok(StateMessage::Offline { session }) => {
                let key = (business, edge.clone());
                if self.edges.get(&key).is_some_and(|d| d.session == session) {
                    tracing::debug!(%business, %edge, %session, "edge went offline");
                    self.edges.remove(&key);
                }
                self.wms.edge_gone(business, edge, session).await
            }
            Ok(StateMessage::Online {
                version,
                session,
                head,
            }) => {
                tracing::debug!(%topic, %version, %session, ?head, "edge is online");
                let sighting = Sighting {
                    session: Some(session),
                    version: Some(version),
                    head,
                    taking_back_after: None,
                    by_state: true,
                };
                self.wms.edge_seen(business, edge, sighting).await
            }
            Err(e) => {
                tracing::warn!(%topic, reason = %e, "ignored a message");
                return;
            }
        };
        if let Err(e) = recorded {
            tracing::warn!(%topic, reason = %e, "cannot record the edge's state");
        }
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

    /// The log's newest rev, or `None` (logged) when it cannot be read.
    async fn head(&self) -> Option<i64> {
        match self.wms.read(depot_wms::store::events::head).await {
            Ok(head) => Some(head),
            Err(e) => {
                tracing::warn!(reason = %e, "cannot read the head of the log");
                None
            }
        }
    }

    /// Marks the edges of businesses with new changes in the log.
    async fn scan(&mut self) {
        let Some(after) = self.scanned else {
            // Nothing is known about what changed: check every edge.
            self.scanned = self.head().await;
            if self.scanned.is_some() {
                self.edges.values_mut().for_each(|d| d.pending = true);
            }
            return;
        };
        let events = match self.wms.events_since(after, SCAN_LIMIT).await {
            Ok(events) => events,
            Err(e) => {
                tracing::warn!(reason = %e, "cannot read the log");
                return;
            }
        };
        let Some(last) = events.last().map(|e| e.seq) else {
            return;
        };
        // A change of no business (a release) concerns every edge.
        let all =
            events.len() >= SCAN_LIMIT as usize || events.iter().any(|e| e.business_id.is_none());
        let touched: HashSet<BusinessId> = events.iter().filter_map(|e| e.business_id).collect();
        for ((business, _), downlink) in &mut self.edges {
            if all || touched.contains(business) {
                downlink.pending = true;
            }
        }
        self.scanned = Some(last);
    }

    /// Sends every edge with pending changes a round of pages.
    async fn round(&mut self) {
        self.dirty = false;
        self.last_round = Instant::now();
        if self.last_sweep.elapsed() >= SWEEP_EVERY {
            self.last_sweep = Instant::now();
            self.hellos.forget_idle(self.last_sweep.into_std());
            if let Err(e) = self.wms.expire_silent_edges(SILENT_AFTER).await {
                tracing::warn!(reason = %e, "cannot check edges for silence");
            }
        }
        if !self.connected {
            return;
        }
        self.scan().await;
        let due: Vec<EdgeKey> = self
            .edges
            .iter()
            .filter(|(_, d)| d.pending)
            .map(|(k, _)| k.clone())
            .collect();
        for key in due {
            match self.feed(&key).await {
                Progress::Done => {
                    if let Some(d) = self.edges.get_mut(&key) {
                        d.pending = false;
                    }
                }
                Progress::More => self.dirty = true,
                Progress::Failed => {}
            }
        }
    }

    /// Up to a round's worth of pages for one edge.
    async fn feed(&mut self, key: &EdgeKey) -> Progress {
        let (business, edge) = key;
        for _ in 0..self.options.pages_per_round {
            let Some(after) = self.edges.get(key).map(|d| d.feed.sent()) else {
                return Progress::Done;
            };
            let page = match self.page(*business, edge, after).await {
                Ok(Some(page)) => page,
                Ok(None) => return Progress::Done,
                Err(reason) => {
                    let d = self.edges.get_mut(key);
                    if d.as_ref().is_some_and(|d| d.stalled == Some(after)) {
                        tracing::debug!(%business, %edge, after, %reason, "cannot page the log down");
                    } else {
                        tracing::warn!(%business, %edge, after, %reason, "cannot page the log down");
                    }
                    if let Some(d) = d {
                        d.stalled = Some(after);
                    }
                    return Progress::Failed;
                }
            };
            if !self.send(*business, edge, page.payload).await {
                return Progress::Failed;
            }
            if let Some(d) = self.edges.get_mut(key) {
                d.feed.published(page.to);
                d.stalled = None;
            }
            if !page.more {
                return Progress::Done;
            }
        }
        Progress::More
    }

    /// The next page after `after`, encoded, or `None` when there is
    /// nothing past it. A page too large for a message is read again with
    /// half as many changes.
    async fn page(
        &self,
        business: BusinessId,
        edge: &EdgeId,
        after: i64,
    ) -> Result<Option<EncodedPage>, String> {
        let mut limit = self.options.page_size;
        loop {
            let page = self
                .wms
                .changes_for(business, edge.clone(), after, limit)
                .await
                .map_err(|e| e.to_string())?;
            if page.to <= after {
                return Ok(None);
            }
            let first = page.changes.first().map(|c| c.rev);
            let (to, more) = (page.to, page.more);
            let payload = encode(&DownMessage::Changes {
                from_rev: page.from,
                to_rev: page.to,
                changes: page.changes,
                more: page.more,
            });
            if payload.len() <= MAX_MESSAGE_BYTES {
                return Ok(Some(EncodedPage { payload, to, more }));
            }
            if limit == 1 {
                // Never skipped: the edge would miss it for good. It waits
                // here (retried every tick) until someone looks.
                return Err(format!(
                    "change {} is too large to send ({} bytes encoded, the limit is {MAX_MESSAGE_BYTES})",
                    first.unwrap_or(to),
                    payload.len()
                ));
            }
            limit = (limit / 2).max(1);
        }
    }
}

struct EncodedPage {
    payload: Vec<u8>,
    to: i64,
    more: bool,
}
