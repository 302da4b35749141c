//! The edge's link to the cloud. The protocol state (what to send, when to
//! send it again, what is acknowledged) lives in the sans-IO
//! `depot_protocol::sync::Outbox`; the events live in the database. This is
//! the thin shell between them and the broker: one task polls rumqttc's
//! event loop and forwards what arrives; this task owns the state and does
//! the work in order.

mod task;
mod trouble;

pub use task::run;
#[cfg(feature = "faults")]
pub use task::run_with_faults;

#[cfg(feature = "faults")]
use crate::faults::{Faults, Injector};
use crate::settings::Settings;
use depot_mqtt::{client_options, explain};
use depot_protocol::BusinessId;
use depot_protocol::sync::message::{self, DownMessage, StateMessage, UpMessage};
use depot_protocol::sync::outbox::{AckIn, Action, Outbox};
use depot_protocol::sync::topic::CLOUD_STATE;
use depot_protocol::sync::{Channel, EdgeId, EdgeTopic};
use depot_wms::Wms;
use depot_wms::recovery::{Recovered, RecoveredPage};
use depot_wms::sync::{Page, PageOutcome};
use rumqttc::{AsyncClient, Event, LastWill, Packet, QoS, SubscribeReasonCode};
use std::future::Future;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// How often the outbox is looked at for new events (and silence checked).
const TICK: Duration = Duration::from_millis(50);
/// How long a hello may go unanswered before it is said again.
const HELLO_RETRY: Duration = Duration::from_secs(2);
/// A hello at least this often while connected. The cloud drops the feed of
/// an edge it sees go offline; the broker may deliver an old connection's
/// last will after the new connection's hello, so a feed can end while the
/// edge is online. A periodic hello (cheap: a replay from the cursor that
/// is usually empty) heals that and anything else that loses a feed.
const HELLO_EVERY: Duration = Duration::from_secs(10);
/// Reconnect backoff bounds.
const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("broker settings: {0}")]
    Broker(String),
    #[error("edge id: {0}")]
    EdgeId(String),
}

enum Incoming {
    Connected,
    Message {
        topic: String,
        payload: Vec<u8>,
    },
    Disconnected(String),
    /// The broker answered a SUBSCRIBE with a failure (its access rules).
    SubscriptionRefused,
}

struct Topics {
    up: String,
    down: String,
    state: String,
}

struct Link {
    wms: Wms,
    client: AsyncClient,
    topics: Topics,
    outbox: Outbox,
    /// One session per run of the daemon, in hello, `online` and the last
    /// will alike: the cloud ends a feed when the `offline` it sees names the
    /// session the feed was opened for.
    session: String,
    /// The cloud's own session, from its retained state: a new one means a
    /// restarted cloud that has forgotten this edge's feed.
    cloud_session: Option<String>,
    /// Faults injected on the sync topics (tests only).
    #[cfg(feature = "faults")]
    faults: Option<Injector>,
    /// When the last hello went out, until the cloud answers anything: a
    /// hello can be lost (the cloud not yet subscribed, a dropped link).
    awaiting_answer: Option<Instant>,
    last_hello: Instant,
    /// An acknowledgement moved the window: what it opened is sent at once
    /// instead of at the next tick, which would otherwise pace a backlog.
    window_opened: bool,
    business: BusinessId,
    /// The log may lack events the cloud has (a restore, a new box): none
    /// of this node's own go up until the cloud has answered, and those it
    /// has come back first (`depot_wms::recovery`).
    recovering: bool,
    /// The cloud said it does not hand own events back, and the log says
    /// so: said once per run rather than at every hello.
    stall_logged: bool,
    /// Why the last attempt to reach the broker failed: logged and recorded
    /// when it changes, not at every retry of a broker that stays away.
    last_failure: Option<String>,
    /// Since when hellos on this connection have gone unanswered.
    unanswered_since: Option<Instant>,
    /// How long the cloud may stay silent before the box says so: two
    /// resend periods.
    silence_limit: Duration,
    /// Connected, but something stands in the way of sync (a refused
    /// subscription, a silent cloud, a cloud that refuses this box), and
    /// the status says this.
    trouble_said: Option<String>,
    /// The node number this box runs as, said in every hello.
    node: u32,
    /// A refusal came after a cloud served this box: said once per run.
    foreign_refusal_said: bool,
}

impl Link {
    /// Publishes on the up topic, through the fault injector if there is one.
    async fn publish_up(&mut self, payload: Vec<u8>) {
        let topic = self.topics.up.clone();
        for (topic, payload) in self.through_faults(topic, payload) {
            self.publish(&topic, false, payload).await;
        }
    }

    async fn publish(&self, topic: &str, retain: bool, payload: Vec<u8>) {
        if let Err(e) = self
            .client
            .publish(topic, QoS::AtLeastOnce, retain, payload)
            .await
        {
            tracing::warn!(error = %e, topic, "could not queue a publish");
        }
    }

    /// The newest event of this node's log, for the cloud's edge list
    /// (backlog); `None` (logged) when it cannot be read, which only leaves
    /// the list less precise.
    async fn head(&self) -> Option<i64> {
        match self.wms.outgoing_head().await {
            Ok(head) => Some(head),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the outbox");
                None
            }
        }
    }

    async fn hello(&mut self) {
        let cursor = match self.wms.sync_state().await {
            Ok((_, cursor)) => cursor,
            Err(e) => {
                tracing::error!(error = %e, "cannot read the sync state");
                return;
            }
        };
        let last = match self.wms.last_applied().await {
            Ok(last) => last,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the last change applied");
                None
            }
        };
        let recover_after = match self.wms.recover_after().await {
            Ok(after) => after,
            Err(e) => {
                tracing::error!(error = %e, "cannot read the recovery state");
                return;
            }
        };
        self.recovering = recover_after.is_some();
        let hello = UpMessage::Hello {
            session: self.outbox.session().to_owned(),
            version: VERSION.into(),
            cursor,
            head: self.head().await,
            last,
            recover_after,
            node: Some(self.node),
        };
        self.publish_up(message::encode(&hello)).await;
        self.awaiting_answer = Some(Instant::now());
        self.unanswered_since.get_or_insert_with(Instant::now);
        self.last_hello = Instant::now();
    }

    async fn connected(&mut self) {
        self.outbox.connected(self.session.clone(), Instant::now());
        self.unanswered_since = None;
        // Subscribed before the hello, so the answer cannot be missed.
        for topic in [self.topics.down.as_str(), CLOUD_STATE] {
            if let Err(e) = self.client.subscribe(topic, QoS::AtLeastOnce).await {
                tracing::warn!(error = %e, topic, "could not subscribe");
            }
        }
        let online = StateMessage::Online {
            version: VERSION.into(),
            session: self.session.clone(),
            head: self.head().await,
        };
        self.publish(&self.topics.state, true, message::encode(&online))
            .await;
        self.hello().await;
        if let Err(e) = self.wms.set_connected(true).await {
            tracing::warn!(error = %e, "could not record the link state");
        }
        self.last_failure = None;
        self.trouble_said = None;
        tracing::info!(
            session = self.outbox.session(),
            acked = self.outbox.acked(),
            "connected to the broker"
        );
    }

    /// The cloud's retained state changed: a cloud that came back with a new
    /// session needs this edge's hello to serve it again.
    async fn cloud_state(&mut self, payload: &[u8]) {
        if let Ok(StateMessage::Online { session, .. }) = message::decode::<StateMessage>(payload) {
            // The first `online` after a connect may mean the cloud only now
            // subscribed and missed the hello; a new session means a
            // restarted cloud that forgot this edge. Either way, hello again
            // (a repeated hello only replays from the cursor).
            let known = self.cloud_session.replace(session.clone());
            let news = known.as_deref() != Some(session.as_str()) || self.awaiting_answer.is_some();
            if news && self.outbox.is_connected() {
                tracing::info!(%session, "the cloud is online: saying hello");
                self.hello().await;
            }
        }
    }

    async fn message(&mut self, topic: &str, payload: &[u8]) {
        if topic == CLOUD_STATE {
            return self.cloud_state(payload).await;
        }
        if topic != self.topics.down {
            return;
        }
        let msg = match message::decode::<DownMessage>(payload) {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(error = %e, "ignored a malformed message from the cloud");
                return;
            }
        };
        self.awaiting_answer = None;
        self.unanswered_since = None;
        // A refusal is an answer too, but not one that ends the trouble.
        let served = !matches!(msg, DownMessage::Refused { .. });
        if served {
            self.outbox.served();
        }
        if served && self.trouble_said.take().is_some() {
            tracing::info!("the cloud answers again");
            self.say_trouble(None).await;
        }
        match msg {
            DownMessage::Ack {
                session,
                through_seq,
                gap,
                rejected,
                hello,
                hands_back,
            } => {
                if self.recovering {
                    if !hello {
                        // Nothing of this node's went up in this session.
                        return;
                    }
                    match self.wms.cloud_cursor_seen(through_seq, hands_back).await {
                        Ok(true) => {
                            tracing::info!(
                                cloud_cursor = through_seq,
                                "the cloud holds nothing this log lacks"
                            );
                            self.recovering = false;
                        }
                        // The cloud's events come back in pages first.
                        Ok(false) if hands_back => return,
                        Ok(false) => {
                            if !self.stall_logged {
                                self.stall_logged = true;
                                tracing::error!(
                                    cloud_cursor = through_seq,
                                    "{}",
                                    depot_wms::recovery::STALLED
                                );
                            }
                            return;
                        }
                        Err(e) => {
                            tracing::error!(error = %e, "could not record the recovery state");
                            return;
                        }
                    }
                }
                for r in &rejected {
                    tracing::warn!(seq = r.seq, id = %r.id, reason = %r.reason, "the cloud rejected an event");
                }
                // Kept as conflicts here, where the station that made them
                // sees them (the status route, the event log).
                if !rejected.is_empty() {
                    if let Err(e) = self.wms.record_rejections(rejected.clone()).await {
                        tracing::error!(error = %e, "could not record the cloud's rejections");
                    }
                }
                let ack = AckIn {
                    session: &session,
                    through: through_seq,
                    gap,
                    hello,
                };
                self.acknowledged(ack).await;
            }
            DownMessage::Changes {
                from_rev,
                to_rev,
                changes,
                more,
            } => {
                match self
                    .wms
                    .apply_page(
                        self.business,
                        Page {
                            from: from_rev,
                            to: to_rev,
                            changes,
                            more,
                        },
                    )
                    .await
                {
                    Ok(PageOutcome::Gap { cursor }) => {
                        tracing::info!(cursor, from_rev, "a page would leave a hole: asking again");
                        self.hello().await;
                    }
                    Ok(_) => {}
                    Err(e) => tracing::error!(error = %e, "could not apply a page from the cloud"),
                }
            }
            DownMessage::Recovered {
                after,
                through,
                events,
                more,
            } => {
                self.take_back(RecoveredPage {
                    after,
                    through,
                    events,
                    more,
                })
                .await;
            }
            // Heard, but not served: the hello every HELLO_EVERY asks
            // again, and the first acknowledgement clears this.
            DownMessage::Refused { reason } => self.refused(reason).await,
            DownMessage::Reset { reason } => {
                // The cloud's log is never trimmed and applying a change is
                // idempotent by event id, so a reload is a replay from the
                // start: what is here already is skipped, what the cloud
                // (restored from an older backup, say) has is filled in.
                tracing::warn!(%reason, "the cloud cannot serve this edge from its cursor: reloading its changes from the start");
                match self.wms.reset_down_cursor().await {
                    Ok(()) => self.hello().await,
                    Err(e) => {
                        tracing::error!(error = %e, "could not reset the cloud cursor; the next hello asks again");
                    }
                }
            }
        }
    }

    /// Feeds an acknowledgement to the outbox and records what it moved.
    async fn acknowledged(&mut self, ack: AckIn<'_>) {
        let before = self.outbox.acked();
        match self.outbox.on_ack(ack, Instant::now()) {
            Some(Action::Prune { through }) => {
                self.window_opened = true;
                if let Err(e) = self.wms.record_ack(through).await {
                    tracing::error!(error = %e, "could not record the acknowledgement");
                }
            }
            Some(Action::Rewind { to }) => {
                tracing::warn!(
                    acknowledged = before,
                    cloud_has = to,
                    "the cloud has less than it acknowledged (restored from a backup?): sending the rest again"
                );
                // Persisted, so a restart before the resend is
                // acknowledged still starts from here.
                if let Err(e) = self.wms.rewind_ack(to).await {
                    tracing::error!(error = %e, "could not record the acknowledgement");
                }
            }
            Some(Action::Send { .. }) | None => {}
        }
    }

    /// Applies a page of this node's own events handed back by the cloud.
    async fn take_back(&mut self, page: RecoveredPage) {
        if !self.recovering {
            return;
        }
        let through = page.through;
        match self.wms.take_back(self.business, page).await {
            Ok(Recovered::NotNeeded) => self.recovering = false,
            Ok(Recovered::Gap { stale: true, .. }) => {}
            Ok(Recovered::Gap { recovered, .. }) => {
                tracing::info!(recovered, "a page of own events was lost: asking again");
                self.hello().await;
            }
            Ok(Recovered::Applied {
                recovered,
                done: false,
                rejected,
                ..
            }) => {
                tracing::info!(
                    recovered,
                    through,
                    rejected,
                    "took own events back from the cloud"
                );
                self.hello().await;
            }
            Ok(Recovered::Applied {
                recovered,
                done: true,
                renumbered,
                missing,
                rejected,
            }) => {
                if missing > 0 {
                    tracing::error!(
                        missing,
                        through,
                        "the cloud could not hand back some of this node's events (applied before it kept their seqs): their effects are in the cloud, not here"
                    );
                }
                tracing::warn!(
                    through = recovered,
                    renumbered,
                    rejected,
                    "this node's log is whole again: events made since the restore go up after the cloud's"
                );
                self.recovering = false;
                // As the cloud's answer to a hello: its cursor as it stands.
                let session = self.session.clone();
                self.acknowledged(AckIn {
                    session: &session,
                    through: recovered,
                    gap: false,
                    hello: true,
                })
                .await;
            }
            Err(e) => tracing::error!(error = %e, "could not take own events back from the cloud"),
        }
    }

    /// What goes on for one message: with the `faults` feature, what the
    /// injector lets through (nothing, it, or it twice); otherwise the
    /// message itself.
    fn through_faults(&mut self, topic: String, payload: Vec<u8>) -> Vec<(String, Vec<u8>)> {
        #[cfg(feature = "faults")]
        if let Some(f) = self.faults.as_mut() {
            return f.pass(topic, payload);
        }
        vec![(topic, payload)]
    }

    /// Delivers what the fault injector held back, both ways.
    #[cfg(feature = "faults")]
    async fn release_held(&mut self) {
        let Some(held) = self.faults.as_mut().map(Injector::release) else {
            return;
        };
        for (topic, payload) in held {
            if topic == self.topics.up {
                self.publish(&topic, false, payload).await;
            } else {
                self.message(&topic, &payload).await;
            }
        }
    }

    /// Publishes whatever the outbox says is due.
    async fn pump(&mut self) {
        if !self.outbox.is_connected() {
            return;
        }
        self.check_silence().await;
        if self
            .awaiting_answer
            .is_some_and(|at| at.elapsed() >= HELLO_RETRY)
        {
            tracing::info!("no answer to hello: saying it again");
            self.hello().await;
        } else if self.last_hello.elapsed() >= HELLO_EVERY {
            self.hello().await;
        }
        if self.recovering {
            return;
        }
        let head = match self.wms.outgoing_head().await {
            Ok(h) => h,
            Err(e) => {
                tracing::error!(error = %e, "cannot read the outbox");
                return;
            }
        };
        while let Some(Action::Send { from, to }) = self.outbox.poll(head, Instant::now()) {
            let limit = u32::try_from(to - from + 1).unwrap_or(u32::MAX);
            let events = match self.wms.outgoing_sync(from - 1, to, limit).await {
                Ok(events) => events,
                Err(e) => {
                    tracing::error!(error = %e, "cannot read the outbox");
                    return;
                }
            };
            let (batches, oversized) = message::batches(self.outbox.session(), events);
            for e in oversized {
                tracing::error!(seq = e.seq, id = %e.id, kind = %e.kind, "an event is too large to send; the cloud will record it as rejected");
            }
            for b in batches {
                self.publish_up(message::encode(&b)).await;
            }
        }
    }
}
