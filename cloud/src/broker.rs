//! The embedded broker (`rumqttd`, the zero-setup default of
//! `depot-cloud`). Broker URLs and client options, which the edge needs too,
//! are in `depot-mqtt` and re-exported here.
//!
//! The embedded broker speaks MQTT 3.1.1 on the address it is given, has no
//! authentication and no TLS: it is meant for loopback or a trusted network.
//! Anything else gets an external broker (`mqtt://` or `mqtts://` URL).
//!
//! What rumqttd 0.20 gets wrong, and how to live with it (ignored tests in
//! `cloud/tests/it/broker.rs` reproduce the first two; run them with
//! `--ignored` against a newer rumqttd):
//! - A shared subscription (`$share/…`) held by a persistent session: when
//!   the group's last member leaves with a message in flight, the router
//!   thread panics and the broker stops serving. Shared subscribers take a
//!   clean session (`options.set_clean_session(true)` after
//!   [`client_options`]); a single cloud instance needs no share group.
//! - After resuming a persistent session, it ignores an UNSUBSCRIBE of a
//!   subscription made in the earlier connection (no UNSUBACK) unless the
//!   client subscribed again first. Subscribe after every CONNACK.
//! - It logs a client's clean DISCONNECT at error level ("router-drop" or
//!   "no-connection id … is already gone"); `crate::logging` drops both.
//! - It cannot stop, report the port it bound, or take a bound socket (see
//!   [`EmbeddedBroker::start`]).

use depot_protocol::sync::message::MAX_MESSAGE_BYTES;
use rumqttd::{Broker, Config, ConnectionSettings, RouterConfig, ServerSettings};
use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Largest MQTT packet the embedded broker accepts and our clients send or
/// receive: a full sync message plus topic and headers, with room to spare.
pub use depot_mqtt::{MAX_PACKET_BYTES, MqttError, MqttUrl, client_options, redact};

// A message at the protocol's limit must always fit, headers included.
const _: () = assert!(MAX_PACKET_BYTES >= 2 * MAX_MESSAGE_BYTES);

/// How long `EmbeddedBroker::start` waits for the listener to answer.
const READY_TIMEOUT: Duration = Duration::from_secs(5);
/// Bound on each step of a readiness probe (connect, CONNECT, CONNACK).
const PROBE_TIMEOUT: Duration = Duration::from_millis(250);
/// Pause between probes: a refused connect returns at once, so without it
/// the wait would spin on a core.
const PROBE_INTERVAL: Duration = Duration::from_millis(10);

/// rumqttd keeps publishes in an in-memory log per topic filter (one per
/// subscription filter, plus one per topic published before anything
/// matching it was subscribed), never freed, rolled over in segments. That
/// log is all a subscriber that is offline or behind catches up from: one
/// that falls behind its start skips ahead (rumqttd warns "jumping"), so the
/// sync protocol must resend from its cursors (Mosquitto also drops, past
/// 1000 queued messages per session by default). Each log holds at most
/// `SEGMENT_COUNT` segments of `SEGMENT_BYTES` plus one message: about
/// 2.5 MiB, per edge topic that carries traffic.
const SEGMENT_BYTES: usize = MAX_PACKET_BYTES;
const SEGMENT_COUNT: usize = 2;
/// Edges plus cloud instances; beyond this, use an external broker.
const MAX_CONNECTIONS: usize = 10_000;
/// Unacknowledged QoS 1 publishes per connection, as rumqttc's default.
const MAX_INFLIGHT: usize = 100;
/// Messages the router hands one connection per round.
const MAX_OUTGOING_PER_ROUND: u64 = 200;
/// How long a new TCP connection may take to send CONNECT.
const CONNECT_TIMEOUT_MS: u16 = 10_000;

#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: io::Error },
    #[error("cannot start the embedded MQTT broker's thread: {0}")]
    Thread(io::Error),
    #[error("the embedded MQTT broker stopped while starting (its log says why)")]
    Exited,
    #[error("the embedded MQTT broker on {addr} did not answer within {waited:?}: {last}")]
    NotReady {
        addr: SocketAddr,
        waited: Duration,
        last: io::Error,
    },
    #[error(transparent)]
    Mqtt(#[from] MqttError),
}

/// `rumqttd` running on its own threads.
///
/// rumqttd has no shutdown: once started, the broker lives as long as the
/// process (dropping this value leaves it running). That suits the service,
/// which runs it for its whole life, and tests, which start one per test.
pub struct EmbeddedBroker {
    /// Where the MQTT 3.1.1 listener is bound (the real port when the
    /// requested one was 0).
    pub addr: SocketAddr,
    thread: JoinHandle<()>,
}

impl fmt::Debug for EmbeddedBroker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EmbeddedBroker")
            .field("addr", &self.addr)
            .field("running", &self.is_running())
            .finish()
    }
}

impl EmbeddedBroker {
    /// Starts the broker with an MQTT 3.1.1 listener on `listen` (port 0
    /// picks a free port) and returns once it answers an MQTT CONNECT.
    ///
    /// Blocks for as long as that takes (milliseconds; at most five
    /// seconds): from async code, call it before serving or in
    /// `spawn_blocking`.
    ///
    /// rumqttd binds its listener itself and cannot report the port it got,
    /// nor take a bound socket. So the port is settled here: we bind
    /// `listen`, read the port, release it and hand rumqttd that port. This
    /// also turns "address in use" into an error instead of rumqttd logging
    /// it on its thread while we talk to whoever holds the port. The price
    /// is a race: another process could take the port in the millisecond or
    /// so between our release and rumqttd's bind. rumqttd's listener then
    /// fails and its thread ends, reported as [`BrokerError::Exited`] (or as
    /// [`BrokerError::NotReady`] if the intruder does not speak MQTT); only
    /// an intruder that is itself an MQTT broker could answer our probe
    /// first and go unnoticed.
    pub fn start(listen: SocketAddr) -> Result<Self, BrokerError> {
        let addr = reserve(listen)?;
        let config = config(addr);
        let thread = std::thread::Builder::new()
            .name("mqtt-broker".into())
            .spawn(move || {
                let mut broker = Broker::new(config);
                // `start` blocks while the listeners run; it returns only if
                // they all stop (a bind lost to another process, say).
                match broker.start() {
                    Ok(()) => tracing::error!("embedded MQTT broker stopped"),
                    Err(e) => tracing::error!(error = %e, "embedded MQTT broker failed"),
                }
            })
            .map_err(BrokerError::Thread)?;
        let broker = Self { addr, thread };
        broker.wait_ready()?;
        tracing::info!(%addr, "embedded MQTT broker listening (MQTT 3.1.1)");
        Ok(broker)
    }

    /// Whether the listener's thread is still up. rumqttd's router runs on
    /// a thread of its own that this cannot see: [`Self::probe`] tells
    /// whether the broker actually serves.
    pub fn is_running(&self) -> bool {
        !self.thread.is_finished()
    }

    /// One MQTT handshake with the broker (blocking, under a second): `Ok`
    /// when it accepts connections end to end.
    pub fn probe(&self) -> io::Result<()> {
        probe(connectable(self.addr))
    }

    /// The URL clients on this machine connect to (`mqtt://`, with an
    /// unspecified listen address replaced by loopback).
    pub fn url(&self) -> MqttUrl {
        MqttUrl::plain(connectable(self.addr))
    }

    fn wait_ready(&self) -> Result<(), BrokerError> {
        let target = connectable(self.addr);
        let started = Instant::now();
        loop {
            if !self.is_running() {
                return Err(BrokerError::Exited);
            }
            let last = match probe(target) {
                Ok(()) => return Ok(()),
                Err(e) => e,
            };
            if started.elapsed() >= READY_TIMEOUT {
                return Err(BrokerError::NotReady {
                    addr: self.addr,
                    waited: started.elapsed(),
                    last,
                });
            }
            std::thread::sleep(PROBE_INTERVAL);
        }
    }
}

/// Binds `listen` to learn the port it gets, then releases it (see
/// `EmbeddedBroker::start`).
fn reserve(listen: SocketAddr) -> Result<SocketAddr, BrokerError> {
    let bind_err = |source| BrokerError::Bind {
        addr: listen,
        source,
    };
    let listener = TcpListener::bind(listen).map_err(bind_err)?;
    listener.local_addr().map_err(bind_err)
}

fn config(addr: SocketAddr) -> Config {
    let server = ServerSettings {
        name: "mqtt-v4".into(),
        listen: addr,
        tls: None,
        next_connection_delay_ms: 0,
        connections: ConnectionSettings {
            connection_timeout_ms: CONNECT_TIMEOUT_MS,
            max_payload_size: MAX_PACKET_BYTES,
            max_inflight_count: MAX_INFLIGHT,
            auth: None,
            external_auth: None,
            // Without this rumqttd disconnects a client that publishes to a
            // topic no subscription matches yet: an edge whose cloud is not
            // up, a retained state nobody watches yet.
            dynamic_filters: true,
        },
    };
    Config {
        router: RouterConfig {
            max_connections: MAX_CONNECTIONS,
            max_outgoing_packet_count: MAX_OUTGOING_PER_ROUND,
            max_segment_size: SEGMENT_BYTES,
            max_segment_count: SEGMENT_COUNT,
            ..RouterConfig::default()
        },
        v4: Some(HashMap::from([("1".to_owned(), server)])),
        ..Config::default()
    }
}

/// An address to connect to for a listen address (`0.0.0.0` is not one
/// everywhere).
fn connectable(addr: SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => {
            SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), addr.port())
        }
        IpAddr::V6(ip) if ip.is_unspecified() => {
            SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), addr.port())
        }
        _ => addr,
    }
}

/// One MQTT 3.1.1 handshake: CONNECT (clean session, no will), expect an
/// accepting CONNACK, close. Stronger than "the port accepts TCP" (the
/// router answers too) and, unlike a bare TCP probe, not logged by rumqttd
/// as a failed connection. No DISCONNECT: rumqttd 0.20 logs a clean
/// DISCONNECT followed by the close as an error ("no-connection id … is
/// already gone"), a plain close only as "disconnected" at info.
fn probe(addr: SocketAddr) -> io::Result<()> {
    const CLIENT_ID: &[u8] = b"depot-readiness-probe";
    let mut stream = TcpStream::connect_timeout(&addr, PROBE_TIMEOUT)?;
    stream.set_read_timeout(Some(PROBE_TIMEOUT))?;
    stream.set_write_timeout(Some(PROBE_TIMEOUT))?;
    // Short enough for one-byte remaining lengths (under 128).
    #[rustfmt::skip]
    let mut connect = vec![
        0x10, 0, // CONNECT, remaining length (set below)
        0, 4, b'M', b'Q', b'T', b'T', 4, // protocol name, level 4 = 3.1.1
        0x02, // flags: clean session
        0, 10, // keep alive, seconds
        0, CLIENT_ID.len() as u8,
    ];
    connect.extend_from_slice(CLIENT_ID);
    connect[1] = (connect.len() - 2) as u8;
    stream.write_all(&connect)?;
    let mut connack = [0u8; 4];
    stream.read_exact(&mut connack)?;
    // CONNACK, length 2, no session present, return code 0 (accepted).
    if connack != [0x20, 2, 0, 0] {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("not an accepting MQTT CONNACK: {connack:02x?}"),
        ));
    }
    Ok(())
}
