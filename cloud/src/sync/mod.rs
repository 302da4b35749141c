//! The cloud's side of sync over MQTT: the I/O shell around the pure
//! protocol of `depot_protocol::sync` and the storage of `depot_wms::sync`.
//!
//! Two tasks, the rumqtt way:
//! - the *connection* task owns the `rumqttc` event loop, reconnects forever
//!   with a bounded backoff, and forwards what arrives over a channel;
//! - the *service* (the future [`run_sync`] returns) owns the state and does
//!   the work a group of messages at a time: queues edges' batches on the
//!   writer and acknowledges them to their edges once committed, records
//!   hellos and states the same way (a hello answered once its record
//!   commits), and pages the cloud's log down to every edge that said hello.
//!   It reads and queues the next group while the writer applies the last
//!   (at most two groups queued and unanswered).
//!
//! Flow control: incoming QoS 1 messages are acknowledged (MQTT PUBACK) only
//! once the service has handled them (a batch, or a hello's or a state's
//! record, once queued on the writer), so the broker's inflight window and
//! the groups queued bound what waits between the broker and the writer,
//! and the connection task never blocks on the channel to the service
//! (which could deadlock against the service waiting for room to publish).
//! A PUBACK is flow control, not delivery: what the cloud does not
//! acknowledge to an edge, the edge sends again.
//!
//! Topics and payloads (see `DESIGN.md`, "Sync over MQTT"):
//! - subscribes (QoS 1, after every CONNACK) to every edge's `up` and `state`
//!   topic;
//! - answers on each edge's `down` topic (QoS 1, not retained);
//! - keeps `depot/v1/cloud/state` retained: `online` once subscribed,
//!   `offline` on shutdown and, as the last will, when the connection drops.
//!
//! The session is clean (the broker keeps nothing for the cloud while it is
//! away): what the cloud missed, edges send again from their outboxes, and
//! what edges missed they ask for again with a hello. Edges should say
//! hello again whenever the cloud's state turns `online` with a session
//! they have not seen: a restarted cloud knows no edge until then. Across
//! its own reconnects the service keeps paging the edges it knew (a page
//! lost meanwhile shows the edge a hole, and it says hello); an edge's
//! `offline` state (its session's) ends its feed. A hello whose cursor is
//! past the head of the cloud's log is answered with `reset`; any other with
//! an ack marked `hello` carrying the edge's cursor here as it stands, from
//! which an edge acknowledged further (this database restored from an older
//! backup) sends again.
//!
//! What edges say about themselves (version, the head of their log, online
//! or offline, from hellos, batches and their retained state) is recorded in
//! their `edges` row for the edge list and its backlog.

mod ack;
mod connection;
mod pace;
mod service;

use crate::broker::{BrokerError, MqttUrl, client_options};
use depot_protocol::EventId;
use depot_protocol::sync::StateMessage;
use depot_protocol::sync::message::encode;
use depot_protocol::sync::topic::CLOUD_STATE;
use depot_wms::Wms;
use rumqttc::{AsyncClient, LastWill, QoS};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// Requests (publishes, acks, subscriptions) queued for the connection task.
const REQUEST_CAPACITY: usize = 128;
/// How long a shutdown waits for `offline` and DISCONNECT to go out; past
/// it the socket just closes and the broker publishes the last will.
const FAREWELL: Duration = Duration::from_secs(2);

/// How the sync service runs. `Default` suits production.
#[derive(Debug, Clone)]
pub struct SyncOptions {
    /// Names this run of the service in the cloud's `online`/`offline`
    /// state messages (a fresh UUID by default).
    pub session: String,
    /// Announced in the `online` state message.
    pub version: String,
    /// MQTT keep-alive.
    pub keep_alive: Duration,
    /// Changes per page sent down (halved for a page that would not fit in
    /// a message).
    pub page_size: u32,
    /// Pages one edge is sent in a row before other edges and incoming
    /// messages get a turn (a replay continues right after).
    pub pages_per_round: usize,
    /// How often the log is checked for changes to send down.
    pub tick: Duration,
    /// Wait after the first failed connection attempt; doubles after each
    /// further failure up to `backoff_max`, and starts over once connected.
    pub backoff_min: Duration,
    pub backoff_max: Duration,
    /// Several cloud instances on one database share the edges' `up`
    /// messages through an MQTT 5 shared subscription of this group
    /// (`$share/<group>/...`): the broker hands each message to one of
    /// them. `None`: this instance takes every message.
    pub share_group: Option<String>,
    /// TLS to an `mqtts://` broker (a CA file, a client certificate).
    pub tls: depot_mqtt::Tls,
    /// Kept up to date with whether the connection to the broker is up,
    /// for `/metrics`.
    pub link: BrokerLink,
}

/// Whether this instance's connection to the broker is up, and whether the
/// broker refused a sync subscription on it: set by the connection task,
/// read by `/metrics` (`depot_sync_broker_connected`,
/// `depot_sync_broker_subscriptions_refused`). An instance cut off from
/// the broker, or connected but denied the edges' topics by its rules,
/// sees its edges go offline one by one; this says why at once.
#[derive(Debug, Clone, Default)]
pub struct BrokerLink(Arc<AtomicU8>);

const DOWN: u8 = 0;
const UP: u8 = 1;
const REFUSED: u8 = 2;

impl BrokerLink {
    pub fn is_up(&self) -> bool {
        self.0.load(Ordering::Acquire) != DOWN
    }

    /// Up, but the broker answered a subscription of this connection with
    /// a failure.
    pub fn is_refused(&self) -> bool {
        self.0.load(Ordering::Acquire) == REFUSED
    }

    /// A new connection starts with nothing refused.
    pub(crate) fn set(&self, up: bool) {
        self.0.store(if up { UP } else { DOWN }, Ordering::Release);
    }

    pub(crate) fn refused(&self) {
        let _ = self
            .0
            .compare_exchange(UP, REFUSED, Ordering::AcqRel, Ordering::Acquire);
    }
}

impl Default for SyncOptions {
    fn default() -> Self {
        Self {
            session: EventId::new().to_string(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            keep_alive: Duration::from_secs(30),
            page_size: 200,
            pages_per_round: 16,
            tick: Duration::from_millis(100),
            backoff_min: Duration::from_millis(100),
            backoff_max: Duration::from_secs(5),
            share_group: None,
            tls: depot_mqtt::Tls::default(),
            link: BrokerLink::default(),
        }
    }
}

impl SyncOptions {
    /// Refuses what no broker would take: a share group that is empty or
    /// holds a topic separator or wildcard.
    pub fn check(&self) -> Result<(), SyncError> {
        match &self.share_group {
            Some(g) if g.is_empty() || g.contains(['/', '+', '#']) => {
                Err(SyncError::ShareGroup(g.clone()))
            }
            _ => Ok(()),
        }
    }

    /// Values that cannot stall or spin the service: no zero periods, no
    /// empty pages, a maximum not below the minimum.
    fn normalized(mut self) -> Self {
        const FLOOR: Duration = Duration::from_millis(1);
        self.page_size = self.page_size.max(1);
        self.pages_per_round = self.pages_per_round.max(1);
        self.tick = self.tick.max(FLOOR);
        self.backoff_min = self.backoff_min.max(FLOOR);
        self.backoff_max = self.backoff_max.max(self.backoff_min);
        self
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The broker URL or client id cannot make a connection (bad TLS setup,
    /// empty client id). Connection failures are not errors: the service
    /// retries them forever.
    #[error(transparent)]
    Broker(#[from] BrokerError),
    #[error(transparent)]
    Mqtt(#[from] crate::broker::MqttError),
    /// The MQTT event loop's task ended on its own (it does not, short of a
    /// bug in it).
    #[error("the MQTT connection task stopped unexpectedly")]
    ConnectionTaskEnded,
    #[error("share group {0:?}: expected a name without '/', '+' or '#'")]
    ShareGroup(String),
}

/// Runs the cloud's sync service against the broker at `url` as MQTT client
/// `client_id` until `shutdown` resolves; see [`run_sync_with`].
pub async fn run_sync(
    wms: Wms,
    url: MqttUrl,
    client_id: String,
    shutdown: impl Future<Output = ()>,
) -> Result<(), SyncError> {
    run_sync_with(wms, url, client_id, SyncOptions::default(), shutdown).await
}

/// Runs the cloud's sync service until `shutdown` resolves, then publishes
/// the retained `offline` state, disconnects (within two seconds) and
/// returns `Ok`.
///
/// Connection failures are retried forever with the options' backoff; bad
/// input from edges is logged and skipped. It returns early only with an
/// error in the options (`Err` before connecting) or if the connection task
/// dies. Spawn it (`tokio::spawn`) with a `Send` shutdown future.
///
/// Instances that share a database and a broker share the edges with
/// `share_group`: each batch is applied by whichever instance the broker
/// hands it to, in order all the same (the database's cursor for the edge
/// decides, and a batch that would skip ahead is answered with a gap, which
/// the edge resends from); an edge's pages come from the instance that
/// answered its last hello.
pub async fn run_sync_with(
    wms: Wms,
    url: MqttUrl,
    client_id: String,
    options: SyncOptions,
    shutdown: impl Future<Output = ()>,
) -> Result<(), SyncError> {
    options.check()?;
    let options = options.normalized();
    let offline = encode(&StateMessage::Offline {
        session: options.session.clone(),
    });
    let mut mqtt = client_options(&url, &options.tls, &client_id, options.keep_alive)?;
    mqtt.set_clean_session(true)
        .set_manual_acks(true)
        .set_last_will(LastWill::new(
            CLOUD_STATE,
            offline.clone(),
            QoS::AtLeastOnce,
            true,
        ));
    let (client, event_loop) = AsyncClient::new(mqtt, REQUEST_CAPACITY);
    let (inbound_tx, inbound_rx) = mpsc::unbounded_channel();
    let (stop_tx, stop_rx) = watch::channel(false);
    let generation = Arc::new(AtomicU64::new(0));
    let mut connection = tokio::spawn(connection::run(connection::Connection {
        event_loop,
        inbound: inbound_tx,
        stop: stop_rx,
        generation: generation.clone(),
        backoff: (options.backoff_min, options.backoff_max),
        broker: url,
        link: options.link.clone(),
        farewell: FAREWELL,
    }));
    let mut service = service::Service::new(wms, client.clone(), options, generation);
    let outcome = tokio::select! {
        () = shutdown => Ok(()),
        ended = service.run(inbound_rx) => ended,
    };
    // Say goodbye if there is room to; if not, closing the socket makes the
    // broker publish the last will, which says the same.
    if client
        .try_publish(CLOUD_STATE, QoS::AtLeastOnce, true, offline)
        .is_ok()
    {
        let _ = client.try_disconnect();
    }
    let _ = stop_tx.send(true);
    if tokio::time::timeout(FAREWELL + Duration::from_secs(1), &mut connection)
        .await
        .is_err()
    {
        connection.abort();
    }
    tracing::info!("sync service stopped");
    outcome
}
