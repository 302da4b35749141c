//! `depot-cloud serve`, a real process, under a stand-in for systemd: a
//! datagram socket in `NOTIFY_SOCKET` and a short `WATCHDOG_USEC`. It says
//! READY=1 once it serves, then a status line with its broker and its
//! edges, feeds the watchdog, and says STOPPING=1 on SIGTERM; once its
//! writer hangs it stops feeding the watchdog, so systemd restarts it.

use crate::process;
use process::{admin, serve, terminate};
use std::os::unix::net::UnixDatagram;
use std::time::{Duration, Instant};

/// What the unit sets is 30 s; this keeps the test short.
const WATCHDOG: Duration = Duration::from_millis(400);

/// The next datagram before `deadline`, if any.
fn next(sock: &UnixDatagram, deadline: Instant) -> Option<String> {
    let left = deadline.checked_duration_since(Instant::now())?;
    sock.set_read_timeout(Some(left.max(Duration::from_millis(1))))
        .expect("timeout");
    let mut buf = [0u8; 4096];
    let n = sock.recv(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf[..n]).into_owned())
}

/// Reads datagrams until one has a line `done` accepts; what came, in order.
fn until(sock: &UnixDatagram, what: &str, done: impl Fn(&str) -> bool) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut got = Vec::new();
    while let Some(d) = next(sock, deadline) {
        let found = d.lines().any(&done);
        got.push(d);
        if found {
            return got;
        }
    }
    panic!("no {what} within 30 s; got {got:?}");
}

#[test]
fn ready_then_a_status_line_with_the_broker_and_the_edges_and_a_fed_watchdog() {
    let dir = tempfile::tempdir().expect("tempdir");
    admin(dir.path(), &["business", "create", "--name", "Test"]);
    admin(
        dir.path(),
        &["edge", "register", "--business", "1", "--edge", "dock-1"],
    );
    let socket = dir.path().join("notify");
    let sock = UnixDatagram::bind(&socket).expect("bind the notify socket");
    let socket = socket.display().to_string();
    let watchdog = WATCHDOG.as_micros().to_string();
    let (mut cloud, base) = serve(
        dir.path(),
        &[("NOTIFY_SOCKET", &socket), ("WATCHDOG_USEC", &watchdog)],
    );
    let addr = base.trim_start_matches("http://");

    let before = until(&sock, "READY=1", |l| l == "READY=1");
    let ready = before.last().expect("the READY=1 datagram");
    assert!(
        ready
            .lines()
            .any(|l| l.starts_with(&format!("STATUS=serving on {addr}; broker "))),
        "{ready}"
    );

    // The embedded broker connects within a moment; the edge never came.
    let got = until(&sock, "a status with the broker and the edges", |l| {
        l == format!("STATUS=serving on {addr}; broker connected; edges 0 online, 1 offline")
    });
    assert!(!got.is_empty());
    until(&sock, "WATCHDOG=1", |l| l == "WATCHDOG=1");

    terminate(&mut cloud);
    until(&sock, "STOPPING=1", |l| l == "STOPPING=1");
}

#[test]
fn a_hung_writer_starves_the_watchdog() {
    const HANG_AFTER: Duration = Duration::from_millis(1500);
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("notify");
    let sock = UnixDatagram::bind(&socket).expect("bind the notify socket");
    let socket = socket.display().to_string();
    let watchdog = WATCHDOG.as_micros().to_string();
    let hang = HANG_AFTER.as_millis().to_string();
    let (mut cloud, _) = serve(
        dir.path(),
        &[
            ("NOTIFY_SOCKET", &socket),
            ("WATCHDOG_USEC", &watchdog),
            ("DEPOT_TEST_HANG_WRITER_AFTER_MS", &hang),
        ],
    );
    until(&sock, "READY=1", |l| l == "READY=1");
    // The hang is armed before READY=1, so it happens no later than this.
    let hang_by = Instant::now() + HANG_AFTER;
    let deadline = hang_by + 4 * WATCHDOG + Duration::from_secs(2);
    let mut feeds = Vec::new();
    while let Some(d) = next(&sock, deadline) {
        if d.lines().any(|l| l == "WATCHDOG=1") {
            feeds.push(Instant::now());
        }
    }
    // A hung writer does not stop in time: systemd would kill it too.
    let _ = cloud.kill();
    let _ = cloud.wait();
    assert!(
        feeds.len() >= 2,
        "the watchdog was fed before the hang: {} feeds",
        feeds.len()
    );
    let last = feeds[feeds.len() - 1];
    assert!(
        last <= hang_by + WATCHDOG,
        "fed {:?} after the writer hung",
        last.saturating_duration_since(hang_by)
    );
}
