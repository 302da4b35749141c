//! The connection task: owns the `rumqttc` event loop, polls it, forwards
//! what the service needs, and reconnects with a bounded backoff.

use depot_mqtt::{MqttUrl, explain};
use rumqttc::{ConnectionError, Event, EventLoop, Outgoing, Packet, Publish, SubscribeReasonCode};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// What the connection task tells the service, in the order it happened.
#[derive(Debug)]
pub(super) enum Inbound {
    /// A CONNACK: connection number `generation` is up.
    Connected { generation: u64 },
    /// The connection dropped; the task is backing off to reconnect.
    Disconnected,
    /// A message that arrived on connection `generation`; the broker waits
    /// for its PUBACK, which only that connection may send.
    Message { generation: u64, publish: Publish },
}

pub(super) struct Connection {
    pub event_loop: EventLoop,
    pub inbound: mpsc::UnboundedSender<Inbound>,
    /// Turns true on shutdown.
    pub stop: watch::Receiver<bool>,
    /// The current connection's number, bumped on every CONNACK and every
    /// failure: an acknowledgement for a message of an earlier connection
    /// must not be sent on a later one (rumqttd drops a client over an
    /// unsolicited PUBACK).
    pub generation: Arc<AtomicU64>,
    /// (first wait, longest wait) between connection attempts.
    pub backoff: (Duration, Duration),
    /// The broker, for logs (shown without its password) and to explain
    /// why it cannot be reached.
    pub broker: MqttUrl,
    pub link: super::BrokerLink,
    /// How long to keep polling after a stop for the DISCONNECT to go out.
    pub farewell: Duration,
}

/// Resolves once a stop is requested (or its sender is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

pub(super) async fn run(c: Connection) {
    let Connection {
        mut event_loop,
        inbound,
        mut stop,
        generation,
        backoff: (backoff_min, backoff_max),
        broker,
        link,
        farewell,
    } = c;
    let mut connected = false;
    let mut connected_at = Instant::now();
    let mut delay = backoff_min;
    let mut failures: u64 = 0;
    loop {
        let event = tokio::select! {
            biased;
            () = stopped(&mut stop) => break,
            event = event_loop.poll() => event,
        };
        let forward = match event {
            Ok(Event::Incoming(Packet::ConnAck(_))) => {
                connected = true;
                connected_at = Instant::now();
                failures = 0;
                link.set(true);
                let generation = generation.fetch_add(1, Ordering::AcqRel) + 1;
                tracing::info!(%broker, "sync connected to the MQTT broker");
                Some(Inbound::Connected { generation })
            }
            Ok(Event::Incoming(Packet::Publish(publish))) => Some(Inbound::Message {
                generation: generation.load(Ordering::Acquire),
                publish,
            }),
            Ok(Event::Incoming(Packet::SubAck(ack))) => {
                if ack.return_codes.contains(&SubscribeReasonCode::Failure) {
                    link.refused();
                    tracing::warn!(
                        %broker,
                        codes = ?ack.return_codes,
                        "the broker refused a sync subscription: nothing from the edges arrives; its access rules must let this user subscribe to depot/v1/+/edge/+/up and depot/v1/+/edge/+/state"
                    );
                }
                None
            }
            Ok(_) => None,
            Err(e) => {
                generation.fetch_add(1, Ordering::AcqRel);
                link.set(false);
                // The wait starts over only after a connection that held: one
                // dropped right after its CONNACK (a message the client
                // cannot read, retained on a topic it subscribes to, say)
                // must not turn into a tight reconnect loop.
                if connected && connected_at.elapsed() >= backoff_max {
                    delay = backoff_min;
                }
                failures += 1;
                log_failure(&broker, &e, connected, failures, delay);
                let was_connected = std::mem::replace(&mut connected, false);
                if was_connected && inbound.send(Inbound::Disconnected).is_err() {
                    return;
                }
                tokio::select! {
                    biased;
                    () = stopped(&mut stop) => return,
                    () = tokio::time::sleep(delay) => {}
                }
                delay = delay.saturating_mul(2).min(backoff_max);
                None
            }
        };
        if let Some(forward) = forward {
            if inbound.send(forward).is_err() {
                // The service is gone: nothing left to do.
                return;
            }
        }
    }
    if connected {
        // Let the farewell (`offline`, then DISCONNECT) the service queued
        // go out; the broker publishes the will if it does not.
        let _ = tokio::time::timeout(farewell, async {
            loop {
                match event_loop.poll().await {
                    Ok(Event::Outgoing(Outgoing::Disconnect)) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        })
        .await;
    }
}

fn log_failure(
    broker: &MqttUrl,
    e: &ConnectionError,
    connected: bool,
    failures: u64,
    retry_in: Duration,
) {
    let e = explain(broker, e);
    if connected {
        tracing::warn!(%broker, error = %e, ?retry_in, "sync lost the MQTT connection");
    } else if failures == 1 || retry_in >= Duration::from_secs(1) {
        // Every attempt while the wait is short would flood the log.
        tracing::warn!(%broker, error = %e, ?retry_in, failures, "sync cannot connect to the MQTT broker");
    } else {
        tracing::debug!(%broker, error = %e, ?retry_in, failures, "sync cannot connect to the MQTT broker");
    }
}
