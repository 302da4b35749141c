//! A client that leaves the embedded broker cleanly (DISCONNECT, then the
//! close) is not an error: rumqttd 0.20 logs it as one, in one of two
//! words, and `depot-cloud serve` must not pass either on. The edge's
//! doctor leaves so after every check, and the cloud's own sync client at
//! every stop.

use crate::process;
use process::{serve_logging_to, terminate};
use std::io::{BufRead, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;

/// Clients that each connect, are accepted and leave with a DISCONNECT:
/// enough that rumqttd's race lands on each of its two errors.
const CLIENTS: usize = 60;

/// One MQTT 3.1.1 client's whole life: CONNECT, CONNACK, DISCONNECT, close.
fn connect_and_leave(port: u16, id: &str) {
    let mut tcp = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let mut connect = vec![0x10, 0, 0, 4, b'M', b'Q', b'T', b'T', 4, 0x02, 0, 10, 0];
    connect.push(u8::try_from(id.len()).expect("a short id"));
    connect.extend_from_slice(id.as_bytes());
    connect[1] = u8::try_from(connect.len() - 2).expect("a short packet");
    tcp.write_all(&connect).expect("CONNECT");
    let mut connack = [0u8; 4];
    tcp.read_exact(&mut connack).expect("CONNACK");
    assert_eq!(connack, [0x20, 2, 0, 0], "accepted");
    tcp.write_all(&[0xe0, 0]).expect("DISCONNECT");
}

#[test]
fn clients_that_leave_cleanly_log_no_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log_path = dir.path().join("stderr.log");
    let log = std::fs::File::create(&log_path).expect("log file");
    // rumqttd at info: each client's arrival shows, so the log is read.
    let (mut cloud, _, mut stdout) = serve_logging_to(
        dir.path(),
        &[("DEPOT_LOG", "warn,rumqttd=info"), ("NO_COLOR", "1")],
        Stdio::from(log),
    );
    let mut line = String::new();
    stdout.read_line(&mut line).expect("the broker line");
    let port: u16 = line
        .trim()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no broker port in {line:?}"));
    for i in 0..CLIENTS {
        connect_and_leave(port, &format!("leaves-cleanly-{i}"));
    }
    terminate(&mut cloud);

    let said = std::fs::read_to_string(&log_path).expect("read the log");
    let arrived = (0..CLIENTS)
        .filter(|i| said.contains(&format!("\"leaves-cleanly-{i}\"")))
        .count();
    assert_eq!(arrived, CLIENTS, "each client shows in the log:\n{said}");
    let errors: Vec<&str> = said.lines().filter(|l| l.contains("ERROR")).collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}
