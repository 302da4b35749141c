//! The server sheds slow and idle callers ([http] settings): half a header
//! or nothing is closed after the header-read timeout, a kept-alive
//! connection after the idle timeout, a body that stalls is answered 408;
//! with every place taken a newcomer takes an idle connection's place, and
//! is refused 503 only while every connection has a request in progress,
//! then served again once those are shed.

use depot_testkit::cloud;
use depot_testkit::http::Client;
use depot_wms::http::server::HttpSettings;
use serde_json::Value;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Short timeouts, so the test runs in seconds.
fn quick(max_connections: usize, body_read_timeout_secs: u64) -> HttpSettings {
    HttpSettings {
        header_read_timeout_secs: 1,
        body_read_timeout_secs,
        idle_timeout_secs: 2,
        max_connections,
    }
}

async fn connect(app: &cloud::TestCloud) -> TcpStream {
    let addr = app.base.trim_start_matches("http://");
    TcpStream::connect(addr).await.expect("connect")
}

/// Waits for the server to close `s` (EOF or reset): how long it took.
async fn closed_after(s: &mut TcpStream, at_most: Duration) -> Duration {
    let start = Instant::now();
    let mut buf = [0u8; 4096];
    loop {
        let read = tokio::time::timeout(at_most, s.read(&mut buf))
            .await
            .unwrap_or_else(|_| panic!("still open after {at_most:?}"));
        match read {
            Ok(0) | Err(_) => return start.elapsed(),
            Ok(_) => {}
        }
    }
}

/// Reads one answer: its status and JSON body.
async fn answer(s: &mut TcpStream) -> (u16, Value, String) {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf))
            .await
            .expect("an answer in time")
            .expect("read");
        assert!(
            n > 0,
            "closed before answering: {:?}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&got[..head_end]).to_lowercase();
    let status: u16 = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("status");
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("content-length: {head}"));
    while got.len() < head_end + length {
        let n = s.read(&mut buf).await.expect("read body");
        assert!(n > 0, "closed in the body");
        got.extend_from_slice(&buf[..n]);
    }
    let body = serde_json::from_slice(&got[head_end..head_end + length]).unwrap_or(Value::Null);
    (status, body, head)
}

const HEALTHZ: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: depot\r\n\r\n";

#[tokio::test]
async fn slow_and_idle_callers_are_closed_in_time() {
    let app = cloud::spawn_cloud_configured(|s| s.http = quick(64, 1)).await;

    // Nothing at all, then half a header: the header-read timeout (1 s).
    let mut silent = connect(&app).await;
    let mut half = connect(&app).await;
    half.write_all(b"GET /healthz HTTP/1.1\r\nHost: dep")
        .await
        .expect("write");
    for s in [&mut silent, &mut half] {
        let took = closed_after(s, Duration::from_secs(5)).await;
        assert!(took < Duration::from_secs(3), "{took:?}");
    }

    // Kept alive after an answer: the idle timeout (2 s), not the header's.
    let mut kept = connect(&app).await;
    kept.write_all(HEALTHZ).await.expect("write");
    let (status, body, _) = answer(&mut kept).await;
    assert_eq!((status, &body["status"]), (200, &Value::from("ok")));
    let took = closed_after(&mut kept, Duration::from_secs(6)).await;
    assert!(
        took >= Duration::from_millis(1800) && took < Duration::from_secs(4),
        "{took:?}"
    );

    // A body that stalls: 408 with the error body, then closed.
    let mut slow = connect(&app).await;
    let path = format!("/v1/items/{}/create", app.a.business);
    slow.write_all(
        format!(
            "POST {path} HTTP/1.1\r\nHost: depot\r\nX-API-KEY: {}\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{{\"sku\":",
            app.a.key
        )
        .as_bytes(),
    )
    .await
    .expect("write");
    let started = Instant::now();
    let (status, body, head) = answer(&mut slow).await;
    assert_eq!(status, 408, "{body}");
    assert_eq!((&body["error"], &body["code"]), (&1.into(), &408.into()));
    assert!(head.contains("connection: close"), "{head}");
    assert!(started.elapsed() < Duration::from_secs(3));
    closed_after(&mut slow, Duration::from_secs(2)).await;
    // Nothing of it was kept.
    let r = app.get(&format!("/v1/items/{}/list", app.a.business)).await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn a_newcomer_takes_an_idle_place_and_is_refused_only_when_all_are_busy() {
    const PLACES: usize = 4;
    let app = cloud::spawn_cloud_configured(|s| s.http = quick(PLACES, 3)).await;
    // A new connection for each request, as a newcomer makes.
    let fresh = || {
        Client::built(
            &app.base,
            reqwest::Client::builder().pool_max_idle_per_host(0),
        )
    };

    // Every place held by a socket that sends nothing more: a station is
    // still served, in the place of the one that waited longest. Each was
    // answered once, so the server has taken it, and they went idle in
    // this order.
    let mut idle = Vec::new();
    for _ in 0..PLACES {
        let mut s = connect(&app).await;
        s.write_all(HEALTHZ).await.expect("write");
        assert_eq!(answer(&mut s).await.0, 200);
        idle.push(s);
    }
    let r = fresh().get("/healthz").await;
    assert_eq!(r.status, 200);
    let first = closed_after(&mut idle[0], Duration::from_millis(500)).await;
    assert!(first < Duration::from_millis(500));
    for s in &mut idle[1..] {
        closed_after(s, Duration::from_secs(3)).await;
    }

    // Every place with a request in progress (a body that stalls): the
    // newcomer is refused 503 with the error body.
    let path = format!("/v1/items/{}/create", app.a.business);
    let mut busy = Vec::new();
    for _ in 0..PLACES {
        let mut s = connect(&app).await;
        s.write_all(
            format!(
                "POST {path} HTTP/1.1\r\nHost: depot\r\nX-API-KEY: {}\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{{",
                app.a.key
            )
            .as_bytes(),
        )
        .await
        .expect("write");
        busy.push(s);
    }
    // Once the server has read every one's header, a newcomer is refused.
    let r = depot_testkit::eventually_seen(
        "every place with a request in progress",
        || async { fresh().get("/healthz").await },
        |r| r.status == 503,
    )
    .await;
    assert_eq!(r.header("retry-after"), Some("1"));
    let body = r.body;
    assert_eq!((&body["error"], &body["code"]), (&1.into(), &503.into()));
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));

    // Once the body timeout sheds them (408), newcomers are served again.
    for s in &mut busy {
        let (status, _, _) = answer(s).await;
        assert_eq!(status, 408);
    }
    let r = fresh().get("/healthz").await;
    assert_eq!(r.status, 200);
}
