//! A real `depot-edge` with its file limit at 1,024 and 1,100 sockets
//! opened to it that never send a byte: stations keep being served
//! throughout (each newcomer takes the place of the longest-idle socket),
//! and every idle socket is closed within the header-read timeout.

use crate::common;
use common::process::spawn_with_file_limit;
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

const IDLE_SOCKETS: usize = 1_100;
const FILE_LIMIT: u64 = 1_024;
const HEADER_TIMEOUT_SECS: u64 = 3;
const STATION_KEY: &str = "station-key-0123456789abcdef";

/// This process opens the idle sockets: it needs room for them.
fn raise_own_file_limit(at_least: u64) {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    if limit.current.is_some_and(|c| c >= at_least) {
        return;
    }
    let raised = rustix::process::Rlimit {
        current: limit.maximum,
        maximum: limit.maximum,
    };
    setrlimit(Resource::Nofile, raised).expect("raise this test's file limit");
    let now = getrlimit(Resource::Nofile).current;
    assert!(
        now.is_none_or(|c| c >= at_least),
        "the test needs {at_least} files, its hard limit allows {now:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_idle_sockets_do_not_lock_out_the_stations() {
    raise_own_file_limit(IDLE_SOCKETS as u64 + 512);
    let dir = tempfile::tempdir().expect("tempdir");
    // A broker address where nothing listens: the box serves offline.
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        format!("mqtt://{}", l.local_addr().expect("addr"))
    };
    let env = vec![
        ("DEPOT_BUSINESS_ID", "1".to_owned()),
        ("DEPOT_EDGE_ID", format!("idle{}", std::process::id())),
        ("DEPOT_NODE", "1".to_owned()),
        ("DEPOT_DATA_DIR", dir.path().display().to_string()),
        ("DEPOT_LISTEN", "127.0.0.1:0".into()),
        ("DEPOT_BROKER__URL", dead),
        ("DEPOT_LOCAL_KEYS", format!("[\"{STATION_KEY}\"]")),
        (
            "DEPOT_HTTP__HEADER_READ_TIMEOUT_SECS",
            HEADER_TIMEOUT_SECS.to_string(),
        ),
    ];
    let edge = spawn_with_file_limit(&env, FILE_LIMIT);
    let addr = edge.base.trim_start_matches("http://").to_owned();
    let status = format!("{}/v1/edge/status", edge.base);
    // A station that opens a new connection for every request, as one
    // whose previous connection was closed would.
    let station = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(5))
        .build()
        .expect("client");
    let served = |r: reqwest::Result<reqwest::Response>| r.is_ok_and(|r| r.status() == 200);
    assert!(served(
        station
            .get(&status)
            .header("X-API-KEY", STATION_KEY)
            .send()
            .await
    ));

    // 1,100 sockets that send nothing; each one's closing is timed.
    let mut watchers = tokio::task::JoinSet::new();
    let opened = Instant::now();
    for _ in 0..IDLE_SOCKETS {
        let mut socket = TcpStream::connect(&addr).await.expect("connect");
        let connected = Instant::now();
        watchers.spawn(async move {
            let mut buf = [0u8; 64];
            let closed = tokio::time::timeout(Duration::from_secs(30), socket.read(&mut buf)).await;
            match closed {
                Ok(Ok(0) | Err(_)) => Some(connected.elapsed()),
                // Open after 30 s, or answered without a request.
                _ => None,
            }
        });
    }
    let opening = opened.elapsed();

    // While they are open, the station is served, every time.
    let mut answers = Vec::new();
    for _ in 0..20 {
        let asked = Instant::now();
        let r = station
            .get(&status)
            .header("X-API-KEY", STATION_KEY)
            .send()
            .await;
        answers.push((served(r), asked.elapsed()));
    }

    let mut closed_after = Vec::with_capacity(IDLE_SOCKETS);
    while let Some(closed) = watchers.join_next().await {
        closed_after.push(closed.expect("watcher"));
    }
    let still_open = closed_after.iter().filter(|c| c.is_none()).count();
    let mut took: Vec<Duration> = closed_after.into_iter().flatten().collect();
    took.sort_unstable();
    let limit = Duration::from_secs(HEADER_TIMEOUT_SECS + 2);
    let late = took.iter().filter(|t| **t > limit).count();
    let evicted = took.iter().filter(|t| **t < Duration::from_secs(1)).count();
    let slowest = took.last().copied().unwrap_or_default();
    let station_slowest = answers.iter().map(|(_, t)| *t).max().unwrap_or_default();
    eprintln!(
        "{IDLE_SOCKETS} idle sockets opened in {opening:?}: {evicted} closed within a second (their places taken), \
         the slowest closed after {slowest:?}; {still_open} still open; station answered 20/20 in at most {station_slowest:?}"
    );
    assert!(
        answers.iter().all(|(ok, _)| *ok),
        "the station was not served every time: {answers:?}"
    );
    assert_eq!(still_open, 0, "idle sockets left open");
    assert_eq!(late, 0, "closed later than {limit:?}: slowest {slowest:?}");

    // And after them, as before.
    assert!(served(
        station
            .get(&status)
            .header("X-API-KEY", STATION_KEY)
            .send()
            .await
    ));
    edge.terminate();
}
