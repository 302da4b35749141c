//! MQTT client plumbing shared by the cloud and the edge: broker URLs, the
//! TLS files a connection trusts and shows, the options every `rumqttc`
//! connection of ours starts from, and why a connection failed.

mod diagnose;
#[cfg(feature = "testing")]
pub mod testing;
mod tls;

pub use diagnose::{Probe, explain, probe};
pub use tls::{Tls, TlsFiles};

use depot_protocol::sync::message::MAX_MESSAGE_BYTES;
use rumqttc::{MqttOptions, TlsConfiguration, Transport};
use std::fmt;
use std::net::{Ipv6Addr, SocketAddr};
use std::str::FromStr;
use std::time::Duration;

/// The largest MQTT packet accepted or sent, both ways: above the largest
/// sync message with room for the envelope.
pub const MAX_PACKET_BYTES: usize = 1024 * 1024;

const _: () = assert!(MAX_PACKET_BYTES >= 2 * MAX_MESSAGE_BYTES);

#[derive(Debug, thiserror::Error)]
pub enum MqttError {
    /// `url` is shown with its password masked.
    #[error("MQTT URL {url:?}: {reason}")]
    Url { url: String, reason: String },
    #[error("an MQTT client id must not be empty (a persistent session needs one)")]
    EmptyClientId,
    #[error("TLS setup: {0}")]
    Tls(#[from] rustls::Error),
    /// A TLS file setting that cannot be used; `path` is the file named.
    #[error("{setting}{}: {reason}", path.as_deref().map(|p| format!(" ({p})")).unwrap_or_default())]
    TlsFile {
        setting: &'static str,
        path: Option<String>,
        reason: String,
    },
}

/// A broker's address: `mqtt://[user[:password]@]host[:port]` (plain TCP,
/// port 1883 by default) or `mqtts://…` (TLS, port 8883 by default, server
/// verified against the webpki roots or a CA file, see [`Tls`]).
/// Credentials may be percent-encoded.
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
    pub fn parse(url: &str) -> Result<Self, MqttError> {
        let fail = |reason: &str| MqttError::Url {
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

    /// The host as URLs write it: IPv6 literals bracketed.
    pub(crate) fn bracketed_host(&self) -> String {
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
pub fn redact(url: &str) -> String {
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
    type Err = MqttError;
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
        write!(f, "{}:{}", self.bracketed_host(), self.port)
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
/// - credentials from the URL; for `mqtts://`, TLS as `tls` says (rustls
///   with ring).
///
/// Callers add what is theirs: a last will, inflight limits. They should
/// subscribe after every CONNACK, session present or not, and a shared
/// (`$share/…`) subscriber on the embedded broker should turn the session
/// clean (see the module's notes on rumqttd).
pub fn client_options(
    url: &MqttUrl,
    tls: &Tls,
    client_id: &str,
    keep_alive: Duration,
) -> Result<MqttOptions, MqttError> {
    if client_id.is_empty() {
        return Err(MqttError::EmptyClientId);
    }
    // The bare host, IPv6 literals unbracketed: rumqttc takes it as the
    // name the broker's certificate must carry, which for an address is
    // the address itself. To connect it joins host and port with a ':',
    // which no longer parses as an address but resolves all the same.
    let mut options = MqttOptions::new(client_id, url.host.clone(), url.port);
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
            tls.client_config()?,
        )));
    }
    Ok(options)
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
        let o = client_options(&url, &Tls::default(), "edge-1", Duration::from_millis(1500))
            .expect("options");
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
        let o = client_options(&plain, &Tls::default(), "c", Duration::from_millis(10))
            .expect("options");
        assert_eq!(o.broker_address(), ("::1".to_owned(), 1883));
        assert_eq!(o.keep_alive(), Duration::from_secs(1));
        assert!(matches!(o.transport(), Transport::Tcp));
        assert!(o.credentials().is_none());
        let o = client_options(&plain, &Tls::default(), "c", Duration::from_secs(1 << 20))
            .expect("options");
        assert_eq!(o.keep_alive(), Duration::from_secs(65535));

        assert!(matches!(
            client_options(&plain, &Tls::default(), "", Duration::from_secs(30)),
            Err(MqttError::EmptyClientId)
        ));
    }
}
