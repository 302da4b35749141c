//! MQTT plumbing shared by the cloud and the edge: the embedded broker
//! (`rumqttd`, the zero-setup default of `depot-cloud`), broker URLs, and the
//! client options every `rumqttc` connection of ours starts from.
//!
//! The embedded broker speaks MQTT 3.1.1 on the address it is given, has no
//! authentication and no TLS: it is meant for loopback or a trusted network.
//! Anything else gets an external broker (`mqtt://` or `mqtts://` URL).
//!
//! What rumqttd 0.20 gets wrong, and how to live with it (ignored tests in
//! `cloud/tests/broker.rs` reproduce the first two; run them with
//! `--ignored` against a newer rumqttd):
//! - A shared subscription (`$share/…`) held by a persistent session: when
//!   the group's last member leaves with a message in flight, the router
//!   thread panics and the broker stops serving. Shared subscribers take a
//!   clean session (`options.set_clean_session(true)` after
//!   [`client_options`]); a single cloud instance needs no share group.
//! - After resuming a persistent session, it ignores an UNSUBSCRIBE of a
//!   subscription made in the earlier connection (no UNSUBACK) unless the
//!   client subscribed again first. Subscribe after every CONNACK.
//! - It logs a client's clean DISCONNECT at error level ("router-drop").
//! - It cannot stop, report the port it bound, or take a bound socket (see
//!   [`EmbeddedBroker::start`]).

use depot_protocol::sync::message::MAX_MESSAGE_BYTES;
use rumqttc::{MqttOptions, TlsConfiguration, Transport};
use rumqttd::{Broker, Config, ConnectionSettings, RouterConfig, ServerSettings};
use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::str::FromStr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Largest MQTT packet the embedded broker accepts and our clients send or
/// receive: a full sync message plus topic and headers, with room to spare.
pub const MAX_PACKET_BYTES: usize = 1024 * 1024;

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
    /// `url` is shown with its password masked.
    #[error("MQTT URL {url:?}: {reason}")]
    Url { url: String, reason: String },
    #[error("an MQTT client id must not be empty (a persistent session needs one)")]
    EmptyClientId,
    #[error("TLS setup: {0}")]
    Tls(#[from] rustls::Error),
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

/// A broker's address: `mqtt://[user[:password]@]host[:port]` (plain TCP,
/// port 1883 by default) or `mqtts://…` (TLS, port 8883 by default, server
/// verified against the webpki roots). Credentials may be percent-encoded.
/// `Debug` and `Display` never show the password.
#[derive(Clone, PartialEq, Eq)]
pub struct MqttUrl {
    pub tls: bool,
    /// Host name or IP address (IPv6 without brackets).
    pub host: String,
    pub port: u16,
    pub username: Option<String>,
    pub password: Option<String>,
}

impl MqttUrl {
    /// `mqtt://addr`, no credentials.
    pub fn plain(addr: SocketAddr) -> Self {
        Self {
            tls: false,
            host: addr.ip().to_string(),
            port: addr.port(),
            username: None,
            password: None,
        }
    }

    /// Parses `mqtt://…` or `mqtts://…`; errors name the problem and show
    /// the URL with its password masked.
    pub fn parse(url: &str) -> Result<Self, BrokerError> {
        let fail = |reason: &str| BrokerError::Url {
            url: redact(url),
            reason: reason.to_owned(),
        };
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| fail("expected mqtt://host[:port] or mqtts://host[:port]"))?;
        let (tls, default_port) = match scheme.to_ascii_lowercase().as_str() {
            "mqtt" => (false, 1883),
            "mqtts" => (true, 8883),
            _ => {
                return Err(fail(&format!(
                    "unknown scheme {scheme:?}: use mqtt:// (plain TCP) or mqtts:// (TLS)"
                )));
            }
        };
        if rest.contains(['?', '#']) {
            return Err(fail("an MQTT URL takes no query or fragment"));
        }
        // Credentials end at the last '@', so that a password with an
        // unencoded '@' or '/' still parses; the host ends at the next '/',
        // and after it only an empty path makes sense for MQTT.
        let (userinfo, hostpath) = match rest.rfind('@') {
            Some(at) => (Some(&rest[..at]), &rest[at + 1..]),
            None => (None, rest),
        };
        let (hostport, path) = hostpath.split_at(hostpath.find('/').unwrap_or(hostpath.len()));
        if !path.is_empty() && path != "/" {
            return Err(fail("an MQTT URL takes no path"));
        }
        let (host, port) = split_host_port(hostport).map_err(|r| fail(&r))?;
        let port = match port {
            None => default_port,
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| fail(&format!("port {p:?} is not a number from 1 to 65535")))?,
        };
        let (username, password) = match userinfo {
            None => (None, None),
            Some(info) => {
                let (user, pass) = match info.split_once(':') {
                    Some((u, p)) => (u, Some(p)),
                    None => (info, None),
                };
                let user = percent_decode(user).map_err(|r| fail(&r))?;
                if user.is_empty() {
                    return Err(fail("credentials need a user name before the password"));
                }
                let pass = pass.map(percent_decode).transpose().map_err(|r| fail(&r))?;
                (Some(user), pass)
            }
        };
        Ok(Self {
            tls,
            host,
            port,
            username,
            password,
        })
    }

    /// The host as `rumqttc` wants it: IPv6 literals bracketed, since it
    /// joins host and port with a ':' before resolving.
    fn connect_host(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        }
    }
}

fn split_host_port(hostport: &str) -> Result<(String, Option<&str>), String> {
    if let Some(rest) = hostport.strip_prefix('[') {
        let (ip, after) = rest
            .split_once(']')
            .ok_or("an IPv6 address needs its closing ']'")?;
        ip.parse::<Ipv6Addr>()
            .map_err(|_| format!("{ip:?} is not an IPv6 address"))?;
        let port = match after {
            "" => None,
            p => Some(
                p.strip_prefix(':')
                    .ok_or("expected ':port' after the IPv6 address")?,
            ),
        };
        return Ok((ip.to_owned(), port));
    }
    if hostport.matches(':').count() > 1 {
        return Err("an IPv6 address must be in brackets, as in mqtt://[::1]:1883".into());
    }
    let (host, port) = match hostport.split_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (hostport, None),
    };
    if host.is_empty() {
        return Err("the URL names no host".into());
    }
    let valid = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_');
    if !host.chars().all(valid) {
        return Err(format!("{host:?} is not a host name or IP address"));
    }
    Ok((host.to_owned(), port))
}

fn percent_decode(s: &str) -> Result<String, String> {
    let bad = || "bad percent-encoding in the credentials".to_owned();
    let mut out = Vec::with_capacity(s.len());
    let mut bytes = s.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let hex = [bytes.next().ok_or_else(bad)?, bytes.next().ok_or_else(bad)?];
            // Checked first: `from_str_radix` would take a sign ("%+1").
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return Err(bad());
            }
            let hex = std::str::from_utf8(&hex).map_err(|_| bad())?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
        } else {
            out.push(b);
        }
    }
    String::from_utf8(out).map_err(|_| "credentials are not UTF-8 once decoded".into())
}

/// A URL string with any password replaced, for error messages about URLs
/// that may not even parse.
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let end = rest.rfind('@');
    match end.and_then(|at| rest[..at].find(':').map(|colon| (colon, at))) {
        Some((colon, at)) => format!("{scheme}://{}:***{}", &rest[..colon], &rest[at..]),
        None => url.to_owned(),
    }
}

impl FromStr for MqttUrl {
    type Err = BrokerError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for MqttUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://", if self.tls { "mqtts" } else { "mqtt" })?;
        if let Some(user) = &self.username {
            write!(f, "{user}")?;
            if self.password.is_some() {
                f.write_str(":***")?;
            }
            f.write_str("@")?;
        }
        write!(f, "{}:{}", self.connect_host(), self.port)
    }
}

impl fmt::Debug for MqttUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MqttUrl({self})")
    }
}

/// Options for a `rumqttc` (MQTT 3.1.1) connection to `url`:
/// - packets up to [`MAX_PACKET_BYTES`] both ways (rumqttc's default is
///   10 KiB, far below a sync message);
/// - a persistent session (clean session off), so the broker queues QoS 1
///   messages while the client is away; hence `client_id` must be stable
///   and must not be empty;
/// - `keep_alive` in whole seconds, from 1 s to 65535 s (MQTT's range;
///   zero turns keep-alive off);
/// - credentials and TLS (rustls with ring, webpki roots) from the URL.
///
/// Callers add what is theirs: a last will, inflight limits. They should
/// subscribe after every CONNACK, session present or not, and a shared
/// (`$share/…`) subscriber on the embedded broker should turn the session
/// clean (see the module's notes on rumqttd).
pub fn client_options(
    url: &MqttUrl,
    client_id: &str,
    keep_alive: Duration,
) -> Result<MqttOptions, BrokerError> {
    if client_id.is_empty() {
        return Err(BrokerError::EmptyClientId);
    }
    let mut options = MqttOptions::new(client_id, url.connect_host(), url.port);
    // rumqttc panics on a non-zero keep-alive under a second and silently
    // truncates one over u16::MAX seconds.
    let keep_alive = if keep_alive.is_zero() {
        Duration::ZERO
    } else {
        Duration::from_secs(keep_alive.as_secs().clamp(1, u64::from(u16::MAX)))
    };
    options
        .set_keep_alive(keep_alive)
        .set_max_packet_size(MAX_PACKET_BYTES, MAX_PACKET_BYTES)
        .set_clean_session(false);
    if let Some(user) = &url.username {
        options.set_credentials(user.clone(), url.password.clone().unwrap_or_default());
    }
    if url.tls {
        options.set_transport(Transport::tls_with_config(TlsConfiguration::Rustls(
            tls_config()?,
        )));
    }
    Ok(options)
}

/// rustls with ring named explicitly: `ClientConfig::builder()` would panic
/// if another crate ever enabled a second provider.
fn tls_config() -> Result<Arc<rustls::ClientConfig>, BrokerError> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> MqttUrl {
        MqttUrl::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn reason(s: &str) -> String {
        match MqttUrl::parse(s) {
            Ok(u) => panic!("{s} parsed as {u}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn urls() {
        let u = parse("mqtt://broker.local:1884");
        assert_eq!(
            (u.tls, u.host.as_str(), u.port, &u.username),
            (false, "broker.local", 1884, &None)
        );
        assert_eq!(parse("mqtt://h").port, 1883);
        assert_eq!(parse("mqtts://h/").port, 8883);
        assert!(parse("MQTTS://h").tls);
        let u = parse("mqtts://edge%2D1:p%40ss:w@rd@h:8884");
        assert_eq!(u.username.as_deref(), Some("edge-1"));
        assert_eq!(u.password.as_deref(), Some("p@ss:w@rd"));
        assert_eq!((u.host.as_str(), u.port), ("h", 8884));
        let u = parse("mqtt://u:a/b@h");
        assert_eq!((u.password.as_deref(), u.host.as_str()), (Some("a/b"), "h"));
        assert_eq!(parse("mqtt://user@h").password, None);
        let u = parse("mqtt://[::1]:1999");
        assert_eq!((u.host.as_str(), u.port), ("::1", 1999));
        assert_eq!(u.to_string(), "mqtt://[::1]:1999");
        assert_eq!(
            MqttUrl::plain(SocketAddr::from(([127, 0, 0, 1], 5))).to_string(),
            "mqtt://127.0.0.1:5"
        );
    }

    #[test]
    fn bad_urls_say_why() {
        for (url, why) in [
            ("http://h:1883", "unknown scheme \"http\""),
            ("h:1883", "expected mqtt://"),
            ("mqtt://", "names no host"),
            ("mqtt://:1883", "names no host"),
            ("mqtt://u:p@", "names no host"),
            ("mqtt://h:0", "port \"0\""),
            ("mqtt://h:99999", "port \"99999\""),
            ("mqtt://h:x", "port \"x\""),
            ("mqtt://h/topic", "no path"),
            ("mqtt://h?x=1", "no query"),
            ("mqtt://::1", "in brackets"),
            ("mqtt://[::1", "closing ']'"),
            ("mqtt://[nope]:1", "not an IPv6"),
            ("mqtt://h st", "not a host name"),
            ("mqtt://:pw@h", "user name"),
            ("mqtt://u:%zz@h", "percent-encoding"),
            ("mqtt://u:%+1@h", "percent-encoding"),
            ("mqtt://u:%4@h", "percent-encoding"),
        ] {
            let r = reason(url);
            assert!(r.contains(why), "{url}: {r}");
        }
    }

    #[test]
    fn passwords_never_print() {
        let u = parse("mqtts://edge:hunter2@h");
        for shown in [u.to_string(), format!("{u:?}")] {
            assert!(!shown.contains("hunter2"), "{shown}");
            assert!(shown.contains("edge:***@h:8883"), "{shown}");
        }
        let e = reason("ftp://edge:hunter2@h");
        assert!(!e.contains("hunter2"), "{e}");
        assert_eq!(redact("mqtt://h:1"), "mqtt://h:1");
    }

    #[test]
    fn options() {
        let url = parse("mqtts://u:p@broker.example:8884");
        let o = client_options(&url, "edge-1", Duration::from_millis(1500)).expect("options");
        assert_eq!(o.broker_address(), ("broker.example".to_owned(), 8884));
        assert_eq!(o.client_id(), "edge-1");
        assert!(!o.clean_session());
        assert_eq!(o.keep_alive(), Duration::from_secs(1));
        assert_eq!(o.max_packet_size(), MAX_PACKET_BYTES);
        let login = o.credentials().expect("credentials");
        assert_eq!(
            (login.username.as_str(), login.password.as_str()),
            ("u", "p")
        );
        assert!(matches!(o.transport(), Transport::Tls(_)));

        let plain = parse("mqtt://[::1]");
        let o = client_options(&plain, "c", Duration::from_millis(10)).expect("options");
        assert_eq!(o.broker_address(), ("[::1]".to_owned(), 1883));
        assert_eq!(o.keep_alive(), Duration::from_secs(1));
        assert!(matches!(o.transport(), Transport::Tcp));
        assert!(o.credentials().is_none());
        let o = client_options(&plain, "c", Duration::from_secs(1 << 20)).expect("options");
        assert_eq!(o.keep_alive(), Duration::from_secs(65535));

        assert!(matches!(
            client_options(&plain, "", Duration::from_secs(30)),
            Err(BrokerError::EmptyClientId)
        ));
    }
}
