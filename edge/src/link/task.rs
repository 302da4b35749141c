//! The task that owns the link: it connects (and reconnects, with
//! backoff), forwards what rumqttc's event loop hears, and hands each
//! message and each tick to the [`Link`]'s state in order.

use super::{Link, LinkError, VERSION};
#[cfg(feature = "faults")]
use crate::faults::{Faults, Injector};
use crate::settings::Settings;
use depot_mqtt::{client_options, explain};
use depot_protocol::BusinessId;
use depot_protocol::sync::link::{Identity, LinkState, Topics};
use depot_protocol::sync::message;
use depot_protocol::sync::{Channel, EdgeId, EdgeTopic};
use depot_wms::Wms;
use rumqttc::{AsyncClient, Event, LastWill, Packet, QoS, SubscribeReasonCode};
use std::future::Future;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// How often the state is told the time (hellos due, silence, the outbox).
const TICK: Duration = Duration::from_millis(50);
/// Reconnect backoff bounds.
const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// What the connection's poller hands over.
enum Incoming {
    Connected,
    Message {
        topic: String,
        payload: Vec<u8>,
        /// Sent as retained, on subscribing.
        retained: bool,
    },
    Disconnected(String),
    /// The broker answered a SUBSCRIBE with a failure (its access rules).
    SubscriptionRefused,
}

/// Runs the link until `shutdown` resolves: connects (and reconnects,
/// with backoff, for as long as it takes), sends the outbox, applies what
/// the cloud sends.
pub async fn run(
    wms: Wms,
    settings: Settings,
    shutdown: impl Future<Output = ()>,
) -> Result<(), LinkError> {
    #[cfg(feature = "faults")]
    return run_with_faults(wms, settings, Faults::default(), shutdown).await;
    #[cfg(not(feature = "faults"))]
    run_link(wms, settings, shutdown).await
}

/// `run`, with faults injected on the sync topics (for tests only, and
/// only in a build with the `faults` feature).
#[cfg(feature = "faults")]
pub async fn run_with_faults(
    wms: Wms,
    settings: Settings,
    faults: Faults,
    shutdown: impl Future<Output = ()>,
) -> Result<(), LinkError> {
    run_link(wms, settings, Some(faults), shutdown).await
}

async fn run_link(
    wms: Wms,
    settings: Settings,
    #[cfg(feature = "faults")] faults: Option<Faults>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), LinkError> {
    let (url, tls) = settings
        .broker
        .connection()
        .map_err(|e| LinkError::Broker(e.to_string()))?;
    let edge = EdgeId::parse(&settings.edge_id).map_err(|e| LinkError::EdgeId(e.to_string()))?;
    let business = BusinessId(settings.business_id);
    let topic = |c| EdgeTopic::new(business, edge.clone(), c).to_string();
    let topics = Topics {
        up: topic(Channel::Up),
        down: topic(Channel::Down),
        state: topic(Channel::State),
    };
    // What the database says of the link is a previous process's (a power
    // cut leaves it "connected", since a time long gone): this run starts
    // down, and says so from now.
    if let Err(e) = wms.link_starting().await {
        tracing::warn!(error = %e, "could not record the link state");
    }
    let (acked, _) = wms.sync_state().await.unwrap_or((0, 0));
    let resend = Duration::from_secs(settings.broker.resend_after_secs);
    let me = Identity {
        topics,
        session: uuid::Uuid::now_v7().simple().to_string(),
        version: VERSION.into(),
        node: settings.node,
    };
    let state = LinkState::new(me, acked, settings.broker.window, resend, Instant::now());
    let client_id = format!("depot-edge-{business}-{edge}");
    let mut options = client_options(&url, &tls, &client_id, Duration::from_secs(30))
        .map_err(|e| LinkError::Broker(e.to_string()))?;
    // The outbox resends from the acknowledgement after every connect, so
    // nothing depends on the broker keeping a session.
    options.set_clean_session(true);
    options.set_last_will(LastWill::new(
        &state.topics().state,
        message::encode(&state.offline()),
        QoS::AtLeastOnce,
        true,
    ));
    let (client, mut eventloop) = AsyncClient::new(options, 256);

    // Unbounded on purpose: if this channel could fill while the link task
    // waits to publish, the event loop would stop polling and neither would
    // ever move again. What arrives is bounded by the outbox window.
    let (tx, mut rx) = mpsc::unbounded_channel();
    let poller = tokio::spawn(async move {
        let mut backoff = BACKOFF_MIN;
        loop {
            let forwarded = match eventloop.poll().await {
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    backoff = BACKOFF_MIN;
                    tx.send(Incoming::Connected)
                }
                Ok(Event::Incoming(Packet::Publish(p))) => tx.send(Incoming::Message {
                    topic: p.topic,
                    payload: p.payload.to_vec(),
                    retained: p.retain,
                }),
                Ok(Event::Incoming(Packet::SubAck(ack)))
                    if ack.return_codes.contains(&SubscribeReasonCode::Failure) =>
                {
                    tx.send(Incoming::SubscriptionRefused)
                }
                Ok(_) => Ok(()),
                Err(e) => {
                    let sent = tx.send(Incoming::Disconnected(explain(&url, &e)));
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(BACKOFF_MAX);
                    sent
                }
            };
            if forwarded.is_err() {
                return;
            }
        }
    });

    let mut link = Link {
        wms,
        client,
        business,
        state,
        #[cfg(feature = "faults")]
        faults: faults.filter(|f| !f.is_off()).map(Injector::new),
    };
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            incoming = rx.recv() => match incoming {
                Some(Incoming::Connected) => {
                    let out = link.state.connected(Instant::now());
                    link.perform(out).await;
                }
                Some(Incoming::Message {
                    topic,
                    payload,
                    retained,
                }) => {
                    let messages = if topic == link.state.topics().down {
                        link.through_faults(topic, payload)
                    } else {
                        vec![(topic, payload)]
                    };
                    for (topic, payload) in messages {
                        link.message(&topic, &payload, retained).await;
                    }
                }
                Some(Incoming::Disconnected(reason)) => {
                    let out = link.state.disconnected(reason);
                    link.perform(out).await;
                }
                Some(Incoming::SubscriptionRefused) => {
                    let out = link.state.subscription_refused();
                    link.perform(out).await;
                }
                None => break,
            },
            _ = tick.tick() => {
                #[cfg(feature = "faults")]
                link.release_held().await;
                let out = link.state.tick(Instant::now());
                link.perform(out).await;
            }
        }
    }
    // A clean DISCONNECT makes the broker drop the last will, so say
    // `offline` first: the cloud ends this edge's feed and lists it offline.
    // Whatever of the two is not flushed before the socket closes, the will
    // says the same.
    if link.state.is_connected() {
        let offline = message::encode(&link.state.offline());
        link.publish(&link.state.topics().state, true, offline)
            .await;
    }
    let _ = link.client.disconnect().await;
    poller.abort();
    let _ = link.wms.set_connected(false).await;
    Ok(())
}
