//! `depot-edge serve`, a real process, under a stand-in for systemd: a
//! datagram socket in `NOTIFY_SOCKET` and a short `WATCHDOG_USEC`. It says
//! READY=1 once its port answers, reports its sync state, feeds the
//! watchdog, and stops feeding once its writer hangs. And the unit files
//! pass `systemd-analyze verify` where that tool exists.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_depot-edge");
/// What the units would set is 30 s; this keeps the test short.
const WATCHDOG: Duration = Duration::from_millis(400);

struct Edge {
    child: Child,
    /// host:port
    addr: String,
    sock: UnixDatagram,
    _dir: tempfile::TempDir,
}

impl Drop for Edge {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn(extra: &[(&str, &str)]) -> Edge {
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("notify");
    let sock = UnixDatagram::bind(&socket).expect("bind the notify socket");
    let mut cmd = Command::new(BIN);
    cmd.arg("serve")
        .env("DEPOT_LOG", "warn")
        .env("DEPOT_BUSINESS_ID", "1")
        .env("DEPOT_EDGE_ID", "notify-test")
        .env("DEPOT_NODE", "1")
        .env("DEPOT_DATA_DIR", dir.path().join("edge"))
        .env("DEPOT_LISTEN", "127.0.0.1:0")
        // Nothing listens there: the link keeps retrying, the box serves.
        .env("DEPOT_BROKER__URL", "mqtt://127.0.0.1:1")
        .env("NOTIFY_SOCKET", &socket)
        .env("WATCHDOG_USEC", WATCHDOG.as_micros().to_string())
        .env_remove("WATCHDOG_PID")
        .env_remove("DEPOT_CONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn depot-edge");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("address line");
    let addr = line
        .trim()
        .rsplit("http://")
        .next()
        .unwrap_or_default()
        .to_owned();
    assert!(addr.starts_with("127.0.0.1:"), "{line}");
    Edge {
        child,
        addr,
        sock,
        _dir: dir,
    }
}

/// The next datagram before `deadline`, with when it came.
fn next(sock: &UnixDatagram, deadline: Instant) -> Option<(Instant, String)> {
    let left = deadline.checked_duration_since(Instant::now())?;
    sock.set_read_timeout(Some(left.max(Duration::from_millis(1))))
        .expect("timeout");
    let mut buf = [0u8; 4096];
    let n = sock.recv(&mut buf).ok()?;
    Some((
        Instant::now(),
        String::from_utf8_lossy(&buf[..n]).into_owned(),
    ))
}

/// Waits for the datagram that says READY=1, keeping what came before.
fn ready(edge: &Edge) -> (Instant, String, Vec<String>) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut before = Vec::new();
    while let Some((at, d)) = next(&edge.sock, deadline) {
        if d.lines().any(|l| l == "READY=1") {
            return (at, d, before);
        }
        before.push(d);
    }
    panic!("no READY=1 within 30 s; got {before:?}");
}

/// A plain HTTP/1.1 GET: status and body.
fn get(addr: &str, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("request");
    let mut answer = String::new();
    s.read_to_string(&mut answer).expect("answer");
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

#[test]
fn ready_once_serving_then_status_and_a_fed_watchdog() {
    let edge = spawn(&[]);
    let (_, datagram, _) = ready(&edge);
    // Asked the moment READY=1 arrived: the port answers, no key needed.
    assert_eq!(
        get(&edge.addr, "/healthz"),
        (200, r#"{"status":"ok"}"#.into())
    );
    assert_eq!(
        get(&edge.addr, "/readyz"),
        (200, r#"{"status":"ok"}"#.into())
    );
    let status = datagram
        .lines()
        .find_map(|l| l.strip_prefix("STATUS="))
        .expect("a status with READY=1");
    assert!(status.contains("cloud not connected"), "{status}");
    assert!(status.contains("outbox"), "{status}");

    // Status lines keep coming (at least every 5 s), and the watchdog is
    // fed at about half its interval.
    let start = Instant::now();
    let deadline = start + Duration::from_secs(15);
    let (mut statuses, mut feeds, mut readies) = (0, Vec::new(), 0);
    while let Some((at, d)) = next(&edge.sock, deadline) {
        for line in d.lines() {
            match line {
                "READY=1" => readies += 1,
                "WATCHDOG=1" => feeds.push(at),
                l if l.starts_with("STATUS=") => statuses += 1,
                _ => {}
            }
        }
        if statuses >= 1 && feeds.len() >= 10 {
            break;
        }
    }
    assert_eq!(readies, 0, "READY=1 is said once");
    assert!(statuses >= 1, "no STATUS= after READY=1");
    assert!(feeds.len() >= 10, "{} feeds in 15 s", feeds.len());
    // Far more than one per interval on average: the feeding is regular,
    // with room for a loaded machine.
    let span = feeds[feeds.len() - 1] - feeds[0];
    let per = span / (feeds.len() as u32 - 1);
    assert!(per < WATCHDOG, "a feed every {per:?} on average");
}

#[test]
fn a_hung_writer_starves_the_watchdog() {
    const HANG_AFTER_MS: u64 = 1500;
    let edge = spawn(&[(
        "DEPOT_TEST_HANG_WRITER_AFTER_MS",
        &HANG_AFTER_MS.to_string(),
    )]);
    let (ready_at, _, before) = ready(&edge);
    // The hang is armed before READY=1, so it happens no later than this.
    let hang_by = ready_at + Duration::from_millis(HANG_AFTER_MS);
    let mut feeds: Vec<Instant> = before
        .iter()
        .filter(|d| d.lines().any(|l| l == "WATCHDOG=1"))
        .map(|_| ready_at)
        .collect();
    let deadline = hang_by + 4 * WATCHDOG + Duration::from_secs(2);
    while let Some((at, d)) = next(&edge.sock, deadline) {
        if d.lines().any(|l| l == "WATCHDOG=1") {
            feeds.push(at);
        }
    }
    assert!(
        feeds.len() >= 2,
        "the watchdog was fed before the hang: {} feeds",
        feeds.len()
    );
    let last = feeds[feeds.len() - 1];
    assert!(
        last <= hang_by + WATCHDOG,
        "fed {:?} after the writer hung",
        last - hang_by
    );
    // Still up (systemd is what would restart it), but no longer ready.
    let (status, _) = get(&edge.addr, "/healthz");
    assert_eq!(status, 200);
    let (status, body) = get(&edge.addr, "/readyz");
    assert_eq!(status, 503, "{body}");
    assert!(body.contains(r#""code":503"#), "{body}");
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_owned()
}

/// The sysusers snippet makes the user and group the units run as, in a
/// scratch root (skipped where systemd-sysusers is not installed).
#[test]
fn the_sysusers_snippet_makes_the_user() {
    let found = Command::new("systemd-sysusers").arg("--version").output();
    if !found.is_ok_and(|o| o.status.success()) {
        println!("note: systemd-sysusers is not installed; the snippet was not tried");
        return;
    }
    let root = tempfile::tempdir().expect("tempdir");
    let etc = root.path().join("etc");
    std::fs::create_dir(&etc).expect("etc");
    for f in ["passwd", "group", "shadow", "gshadow"] {
        std::fs::write(etc.join(f), "").expect("empty database");
    }
    let out = Command::new("systemd-sysusers")
        .arg(format!("--root={}", root.path().display()))
        .arg(repo().join("systemd/depot.sysusers.conf"))
        .output()
        .expect("systemd-sysusers");
    assert!(out.status.success(), "{out:?}");
    let passwd = std::fs::read_to_string(etc.join("passwd")).expect("passwd");
    let group = std::fs::read_to_string(etc.join("group")).expect("group");
    assert!(
        passwd
            .lines()
            .any(|l| l.starts_with("depot:") && l.contains(":/var/lib/depot:")),
        "{passwd}"
    );
    assert!(group.lines().any(|l| l.starts_with("depot:")), "{group}");
    for unit in ["depot-edge.service", "depot-cloud.service"] {
        let text = std::fs::read_to_string(repo().join("systemd").join(unit)).expect("unit");
        assert!(
            text.contains("\nUser=depot\n") && text.contains("\nGroup=depot\n"),
            "{unit}"
        );
    }
}

/// The units pass `systemd-analyze verify` (skipped where systemd is not
/// installed). The tool insists that `ExecStart=` exists, so the copies it
/// checks point at the binary this build made.
#[test]
fn the_units_verify() {
    let found = Command::new("systemd-analyze").arg("--version").output();
    if !found.is_ok_and(|o| o.status.success()) {
        println!("note: systemd-analyze is not installed; the units were not verified");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let mut units = Vec::new();
    for unit in ["depot-edge.service", "depot-cloud.service"] {
        let text = std::fs::read_to_string(repo().join("systemd").join(unit)).expect("unit file");
        assert!(
            text.contains("ExecStart=/usr/bin/"),
            "{unit}: ExecStart names /usr/bin, where the packages put the binaries"
        );
        let text = text
            .replace("/usr/bin/depot-edge", BIN)
            .replace("/usr/bin/depot-cloud", BIN);
        let path = dir.path().join(unit);
        std::fs::write(&path, text).expect("copy");
        units.push(path);
    }
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .args(&units)
        .output()
        .expect("systemd-analyze verify");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Only what concerns our units: a container's own unit files may
    // draw remarks of their own.
    let ours: Vec<&str> = said.lines().filter(|l| l.contains("depot-")).collect();
    assert!(out.status.success() && ours.is_empty(), "{said}");
}
