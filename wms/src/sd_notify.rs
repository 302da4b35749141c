//! The systemd notification protocol (`sd_notify`), by hand: a datagram of
//! `KEY=VALUE` lines to the socket named by `NOTIFY_SOCKET`. Both services
//! use it for `READY=1`, `STATUS=…`, `STOPPING=1` and the watchdog
//! (`WATCHDOG=1`). With `NOTIFY_SOCKET` unset every call does nothing, so
//! the daemons run the same from a shell, a container or a test.
//!
//! The formatting and the reading of the environment are pure functions;
//! [`Notifier`] only sends. Sending never blocks: a notification systemd
//! has no room for is dropped (the next one says the same or more), so a
//! wedged service manager cannot stall the runtime.

use crate::Wms;
use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// One notification line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// Startup is complete: systemd starts the units ordered after this one.
    Ready,
    /// Shutting down.
    Stopping,
    /// Free text `systemctl status` shows.
    Status(String),
    /// Still alive (resets the `WatchdogSec=` timer).
    Watchdog,
}

/// The datagram for `messages`: one `KEY=VALUE` per line. A newline in a
/// status would start a bogus assignment, so it becomes a space.
pub fn encode(messages: &[Message]) -> String {
    messages
        .iter()
        .map(|m| match m {
            Message::Ready => "READY=1".to_owned(),
            Message::Stopping => "STOPPING=1".to_owned(),
            Message::Watchdog => "WATCHDOG=1".to_owned(),
            Message::Status(s) => format!("STATUS={}", s.replace(['\n', '\r'], " ")),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where `NOTIFY_SOCKET` points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A socket in the file system (`/run/systemd/notify`).
    Path(PathBuf),
    /// A Linux abstract socket (`@name`: the name without the `@`).
    Abstract(Vec<u8>),
}

/// Reads a `NOTIFY_SOCKET` value. Empty or relative values are not sockets
/// systemd hands out (and `vsock:` is not supported here): `None`.
pub fn parse_socket(value: &OsStr) -> Option<Target> {
    let bytes = value.as_bytes();
    match bytes.first()? {
        b'@' if bytes.len() > 1 => Some(Target::Abstract(bytes[1..].to_vec())),
        b'/' => Some(Target::Path(PathBuf::from(value))),
        _ => None,
    }
}

/// How often to feed the watchdog, from `WATCHDOG_USEC` and `WATCHDOG_PID`:
/// half the interval systemd enforces, as sd_watchdog_enabled(3) advises.
/// `None` when the watchdog is off, malformed, or meant for another process
/// (`WATCHDOG_PID` set to a pid that is not `own_pid`).
pub fn watchdog_period(usec: Option<&str>, pid: Option<&str>, own_pid: u32) -> Option<Duration> {
    let usec: u64 = usec?.trim().parse().ok().filter(|u| *u > 0)?;
    if let Some(pid) = pid {
        if pid.trim().parse::<u32>().ok()? != own_pid {
            return None;
        }
    }
    Some(Duration::from_micros(usec) / 2)
}

/// Sends notifications to systemd; a no-op when not started by it.
#[derive(Clone, Default)]
pub struct Notifier {
    inner: Option<Arc<Socket>>,
}

struct Socket {
    sock: UnixDatagram,
    addr: SocketAddr,
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifier")
            .field("enabled", &self.is_enabled())
            .finish()
    }
}

impl Notifier {
    /// Does nothing, whatever it is told.
    pub fn disabled() -> Self {
        Self::default()
    }

    /// From `NOTIFY_SOCKET`. An unusable value is logged and ignored: the
    /// service must still run (systemd then times its start out, which
    /// says more than a refusal to start would).
    pub fn from_env() -> Self {
        let Some(value) = std::env::var_os("NOTIFY_SOCKET") else {
            return Self::disabled();
        };
        match parse_socket(&value).map(|t| Self::to(&t)) {
            Some(Ok(n)) => n,
            Some(Err(error)) => {
                tracing::warn!(socket = ?value, %error, "cannot use NOTIFY_SOCKET");
                Self::disabled()
            }
            None => {
                tracing::warn!(socket = ?value, "NOTIFY_SOCKET is not a socket path or @name");
                Self::disabled()
            }
        }
    }

    /// Sends to `target`.
    pub fn to(target: &Target) -> io::Result<Self> {
        let addr = match target {
            Target::Path(p) => SocketAddr::from_pathname(p)?,
            Target::Abstract(name) => abstract_addr(name)?,
        };
        let sock = UnixDatagram::unbound()?;
        sock.set_nonblocking(true)?;
        Ok(Self {
            inner: Some(Arc::new(Socket { sock, addr })),
        })
    }

    pub fn is_enabled(&self) -> bool {
        self.inner.is_some()
    }

    /// Sends `messages` in one datagram. Failures are logged, never fatal:
    /// a service must not stop serving because its supervisor went away.
    pub fn send(&self, messages: &[Message]) {
        let Some(s) = &self.inner else { return };
        let datagram = encode(messages);
        if let Err(error) = s.sock.send_to_addr(datagram.as_bytes(), &s.addr) {
            tracing::debug!(%error, "systemd notification not sent");
        }
    }

    pub fn ready(&self, status: impl Into<String>) {
        self.send(&[Message::Ready, Message::Status(status.into())]);
    }

    pub fn status(&self, status: impl Into<String>) {
        self.send(&[Message::Status(status.into())]);
    }

    pub fn stopping(&self) {
        self.send(&[Message::Stopping, Message::Status("stopping".into())]);
    }
}

#[cfg(target_os = "linux")]
fn abstract_addr(name: &[u8]) -> io::Result<SocketAddr> {
    use std::os::linux::net::SocketAddrExt;
    SocketAddr::from_abstract_name(name)
}

#[cfg(not(target_os = "linux"))]
fn abstract_addr(_: &[u8]) -> io::Result<SocketAddr> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "abstract sockets exist only on Linux",
    ))
}

/// The watchdog settings systemd passed, with this process's pid.
pub fn watchdog_from_env() -> Option<Duration> {
    let usec = std::env::var("WATCHDOG_USEC").ok();
    let pid = std::env::var("WATCHDOG_PID").ok();
    watchdog_period(usec.as_deref(), pid.as_deref(), std::process::id())
}

/// Feeds the watchdog every `period` for as long as the service is alive,
/// which means more than "the process exists": a job must make a round trip
/// through the one writer within `period` (a writer stuck on a lock or a
/// dead disk stops the feeding, and systemd restarts the service), and the
/// tokio runtime must run this task on time (this runs on it). A failed
/// check is logged and skipped; the next one may pass.
pub async fn feed_watchdog(notifier: Notifier, wms: Wms, period: Duration) {
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        match wms.ping(period).await {
            Ok(()) => notifier.send(&[Message::Watchdog]),
            Err(error) => tracing::error!(%error, "liveness check failed: the watchdog is not fed"),
        }
    }
}

/// A switch for tests only: `DEPOT_TEST_HANG_WRITER_AFTER_MS=<n>` makes the
/// writer hang for good `n` milliseconds after start, to show that the
/// watchdog then starves. The name says what it is for; a value that is not
/// a number is ignored; and the service logs an error at start when it is
/// set, so it cannot go unnoticed in a deployment.
pub const TEST_HANG_WRITER: &str = "DEPOT_TEST_HANG_WRITER_AFTER_MS";

/// Arms [`TEST_HANG_WRITER`] when it is set.
pub fn arm_test_hang(wms: &Wms) {
    let Some(ms) = std::env::var(TEST_HANG_WRITER)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    else {
        return;
    };
    tracing::error!(
        after_ms = ms,
        "{TEST_HANG_WRITER} is set: the writer will hang on purpose (a test switch)"
    );
    let wms = wms.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        wms.hang_writer_for_tests().await;
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn messages_are_lines_of_assignments() {
        assert_eq!(encode(&[Message::Ready]), "READY=1");
        assert_eq!(
            encode(&[
                Message::Ready,
                Message::Status("serving on 1.2.3.4:80".into())
            ]),
            "READY=1\nSTATUS=serving on 1.2.3.4:80"
        );
        assert_eq!(encode(&[Message::Watchdog]), "WATCHDOG=1");
        assert_eq!(
            encode(&[Message::Stopping, Message::Status("a\nREADY=1\r".into())]),
            "STOPPING=1\nSTATUS=a READY=1 "
        );
    }

    #[test]
    fn sockets_are_paths_or_abstract_names() {
        let parse = |s: &str| parse_socket(&OsString::from(s));
        assert_eq!(
            parse("/run/systemd/notify"),
            Some(Target::Path("/run/systemd/notify".into()))
        );
        assert_eq!(
            parse("@/org/freedesktop/systemd1/notify/42"),
            Some(Target::Abstract(
                b"/org/freedesktop/systemd1/notify/42".to_vec()
            ))
        );
        assert_eq!(parse(""), None);
        assert_eq!(parse("@"), None);
        assert_eq!(parse("relative/notify"), None);
        assert_eq!(parse("vsock:2:1234"), None);
    }

    #[test]
    fn the_watchdog_is_fed_at_half_its_interval_and_only_for_us() {
        let half = Some(Duration::from_millis(15_000));
        assert_eq!(watchdog_period(Some("30000000"), None, 7), half);
        assert_eq!(watchdog_period(Some("30000000"), Some("7"), 7), half);
        assert_eq!(watchdog_period(Some("30000000"), Some("8"), 7), None);
        assert_eq!(watchdog_period(Some("30000000"), Some("x"), 7), None);
        assert_eq!(watchdog_period(Some("0"), None, 7), None);
        assert_eq!(watchdog_period(Some("soon"), None, 7), None);
        assert_eq!(watchdog_period(None, Some("7"), 7), None);
    }

    fn receive(sock: &UnixDatagram) -> String {
        let mut buf = [0u8; 512];
        let n = sock.recv(&mut buf).expect("a datagram");
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }

    #[test]
    fn datagrams_reach_a_path_socket() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("notify");
        let sock = UnixDatagram::bind(&path).expect("bind");
        sock.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let n = Notifier::to(&Target::Path(path)).expect("notifier");
        n.ready("up");
        n.send(&[Message::Watchdog]);
        assert_eq!(receive(&sock), "READY=1\nSTATUS=up");
        assert_eq!(receive(&sock), "WATCHDOG=1");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn datagrams_reach_an_abstract_socket() {
        use std::os::linux::net::SocketAddrExt;
        let name = format!("depot-notify-test-{}", std::process::id());
        let addr = SocketAddr::from_abstract_name(name.as_bytes()).expect("name");
        let sock = UnixDatagram::bind_addr(&addr).expect("bind");
        sock.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let value = OsString::from(format!("@{name}"));
        let target = parse_socket(&value).expect("abstract");
        Notifier::to(&target).expect("notifier").stopping();
        assert_eq!(receive(&sock), "STOPPING=1\nSTATUS=stopping");
    }

    #[test]
    fn a_disabled_notifier_sends_nothing_and_a_vanished_socket_is_no_error() {
        Notifier::disabled().ready("nobody listens");
        let dir = tempfile::tempdir().expect("tempdir");
        let n = Notifier::to(&Target::Path(dir.path().join("gone"))).expect("notifier");
        n.ready("nobody listens either");
    }

    #[tokio::test]
    async fn the_watchdog_starves_once_the_writer_hangs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let wms = Wms::open(&dir.path().join("w.db"), "test").expect("open");
        let path = dir.path().join("notify");
        let sock = UnixDatagram::bind(&path).expect("bind");
        sock.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let n = Notifier::to(&Target::Path(path)).expect("notifier");
        let feeding = tokio::spawn(feed_watchdog(n, wms.clone(), Duration::from_millis(50)));
        let sock = tokio::task::spawn_blocking(move || {
            assert_eq!(receive(&sock), "WATCHDOG=1");
            sock
        })
        .await
        .expect("first feed");
        wms.hang_writer_for_tests().await;
        // What was sent before the hang may still be queued; then silence.
        let quiet = tokio::task::spawn_blocking(move || {
            sock.set_read_timeout(Some(Duration::from_millis(300)))
                .expect("timeout");
            let mut buf = [0u8; 64];
            let mut late = 0;
            while sock.recv(&mut buf).is_ok() {
                late += 1;
                if late > 3 {
                    return false;
                }
            }
            true
        })
        .await
        .expect("listen");
        assert!(quiet, "the watchdog was still fed with a hung writer");
        assert!(wms.ping(Duration::from_millis(50)).await.is_err());
        feeding.abort();
    }
}
