//! The event log as a websocket: key or ticket, filters, resuming after the
//! last event seen, revocation, and a burst to many clients with one that
//! stalls.

use depot_protocol::event::EventKind;
use depot_protocol::stock::AdjustRequest;
use depot_testkit::cloud::{TestCloud, spawn_cloud};
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

fn ws_url(app: &TestCloud, business: i64, query: &str) -> String {
    format!(
        "{}/v1/events/{business}/stream{query}",
        app.base.replacen("http://", "ws://", 1)
    )
}

/// Connects with `key` as the header (or none): the socket, or the status
/// the server refused the upgrade with.
async fn connect(url: &str, key: Option<&str>) -> Result<Ws, u16> {
    let mut req = url.into_client_request().expect("request");
    if let Some(k) = key {
        req.headers_mut()
            .insert("x-api-key", k.parse().expect("header"));
    }
    match tokio_tungstenite::connect_async(req).await {
        Ok((ws, _)) => Ok(ws),
        Err(tokio_tungstenite::tungstenite::Error::Http(r)) => Err(r.status().as_u16()),
        Err(e) => panic!("connect: {e}"),
    }
}

/// The next frame of events, within a bound (pings do not extend it).
async fn frame(ws: &mut Ws) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let msg = tokio::time::timeout_at(deadline, ws.next())
            .await
            .expect("a frame in time")
            .expect("open")
            .expect("frame");
        match msg {
            Message::Text(t) => return serde_json::from_str(&t).expect("json"),
            Message::Ping(_) | Message::Pong(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// Frames until `n` events came: their kinds and the last `next`.
async fn events(ws: &mut Ws, n: usize) -> (Vec<Value>, i64) {
    let mut out = Vec::new();
    let mut next = 0;
    while out.len() < n {
        let f = frame(ws).await;
        next = f["next"].as_i64().expect("next");
        out.extend(f["events"].as_array().expect("events").iter().cloned());
    }
    (out, next)
}

async fn adjust(app: &TestCloud, sku: &str, warehouse: usize, quantity: i64) {
    let req: AdjustRequest = serde_json::from_value(json!({
        "warehouse_id": app.a.warehouses[warehouse].0, "sku": sku,
        "reason": "received", "quantity": quantity}))
    .expect("request");
    app.wms.adjust(app.a.caller, req).await.expect("adjust");
}

fn kinds(events: &[Value]) -> Vec<&str> {
    events.iter().filter_map(|e| e["kind"].as_str()).collect()
}

#[tokio::test]
async fn a_screen_follows_the_log_and_resumes_after_what_it_saw() {
    let app = spawn_cloud().await;
    let b = app.a.business.0;
    app.item("LIVE-1").await;
    let mut ws = connect(&ws_url(&app, b, ""), Some(&app.a.key))
        .await
        .expect("connect");
    adjust(&app, "LIVE-1", 0, 5).await;
    let (seen, next) = events(&mut ws, 1).await;
    assert_eq!(kinds(&seen), ["stock.moved"]);
    assert_eq!(seen[0]["payload"]["delta"], 5);
    assert_eq!(seen[0]["seq"].as_i64(), Some(next));
    drop(ws);

    // What happened while it was away comes first, in order, then live.
    adjust(&app, "LIVE-1", 0, 1).await;
    adjust(&app, "LIVE-1", 1, 2).await;
    let mut ws = connect(
        &ws_url(&app, b, &format!("?after={next}")),
        Some(&app.a.key),
    )
    .await
    .expect("connect");
    let (missed, _) = events(&mut ws, 2).await;
    let deltas: Vec<i64> = missed
        .iter()
        .filter_map(|e| e["payload"]["delta"].as_i64())
        .collect();
    assert_eq!(deltas, [1, 2]);
    adjust(&app, "LIVE-1", 0, 3).await;
    let (live, _) = events(&mut ws, 1).await;
    assert_eq!(live[0]["payload"]["delta"], 3);

    // Filters: kinds and warehouse; the other warehouse's movement and the
    // other kinds never arrive.
    let w1 = app.a.warehouses[0].0;
    let mut only = connect(
        &ws_url(&app, b, &format!("?kinds=stock.*&warehouse_id={w1}")),
        Some(&app.a.key),
    )
    .await
    .expect("connect");
    adjust(&app, "LIVE-1", 1, 7).await;
    app.item("LIVE-2").await;
    adjust(&app, "LIVE-1", 0, 9).await;
    let (filtered, _) = events(&mut only, 1).await;
    assert_eq!(kinds(&filtered), ["stock.moved"]);
    assert_eq!(filtered[0]["payload"]["delta"], 9);
    assert_eq!(filtered.len(), 1);

    // A status change names its order's warehouse, so a warehouse's screen
    // takes its own orders' and not the other warehouse's.
    let w2 = app.a.warehouses[1].0;
    let mut other = connect(
        &ws_url(
            &app,
            b,
            &format!("?kinds=order.*,stock.*&warehouse_id={w2}"),
        ),
        Some(&app.a.key),
    )
    .await
    .expect("connect");
    let order = app.order("LIVE-O1", &[("LIVE-1", 1)]).await;
    assert_eq!(app.set_status(order, "confirmed").await.status, 200);
    adjust(&app, "LIVE-1", 1, 4).await;
    let (seen, _) = events(&mut other, 1).await;
    assert_eq!(kinds(&seen), ["stock.moved"], "{seen:?}");
    assert_eq!(seen[0]["payload"]["warehouse_id"], w2);
    let r = app
        .get(&format!("/v1/events/{b}/list?kind=order.status_changed"))
        .await;
    let change = &r.body["data"]["events"][0]["payload"];
    assert_eq!(change["warehouse_id"], w1, "{change}");
}

#[tokio::test]
async fn browsers_use_a_ticket_once_and_bad_requests_are_refused() {
    let app = spawn_cloud().await;
    let (a, b) = (app.a.business.0, app.b.business.0);
    let r = app
        .post(&format!("/v1/events/{a}/tickets"), json!({}))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let ticket = r.body["data"]["ticket"]
        .as_str()
        .expect("ticket")
        .to_owned();
    assert_eq!(r.body["data"]["expires_in"], 60);

    let url = ws_url(&app, a, &format!("?ticket={ticket}&kinds=item.*"));
    let mut ws = connect(&url, None).await.expect("a ticket opens a stream");
    app.item("TICKET-1").await;
    let (seen, _) = events(&mut ws, 1).await;
    assert_eq!(seen[0]["payload"]["sku"], "TICKET-1");
    assert_eq!(connect(&url, None).await.err(), Some(401), "spent");
    // Whatever a ticket is made of, an unknown one is refused, not an error.
    for made_up in ["%CE%A9".repeat(1000), "wst_".into(), "%00".into()] {
        let url = ws_url(&app, a, &format!("?ticket={made_up}"));
        assert_eq!(connect(&url, None).await.err(), Some(401), "{made_up:.40}");
    }

    // A ticket of A on B's path, no credentials, a key of another business.
    let r = app
        .post(&format!("/v1/events/{a}/tickets"), json!({}))
        .await;
    let other = r.body["data"]["ticket"]
        .as_str()
        .expect("ticket")
        .to_owned();
    let to_b = ws_url(&app, b, &format!("?ticket={other}"));
    assert_eq!(connect(&to_b, None).await.err(), Some(401));
    assert_eq!(connect(&ws_url(&app, a, ""), None).await.err(), Some(401));
    assert_eq!(
        connect(&ws_url(&app, a, ""), Some(&app.b.key)).await.err(),
        Some(401)
    );
    let r = app
        .call(
            "POST",
            &format!("/v1/events/{b}/tickets"),
            Some(&app.a.key),
            None,
        )
        .await;
    assert_eq!(r.status, 401);

    // Bad filters are named; a plain GET is told to upgrade.
    let r = app
        .get(&format!(
            "/v1/events/{a}/stream?kinds=Order&warehouse_id=0&after=-1"
        ))
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    let mut named: Vec<&str> = r.body["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .filter_map(|e| e["name"].as_str())
        .collect();
    named.sort_unstable();
    assert_eq!(named, ["after", "kinds", "warehouse_id"]);
    let r = app.get(&format!("/v1/events/{a}/stream")).await;
    assert_eq!(r.status, 426, "{:?}", r.body);
    assert_eq!(r.body["error"], 1);
}

#[tokio::test]
async fn key_events_never_reach_a_stream_and_a_revoked_key_ends_it() {
    let app = spawn_cloud().await;
    let a = app.a.business;
    let key = app
        .wms
        .create_key(a, Some("screen".into()))
        .await
        .expect("key");
    let mut ws = connect(&ws_url(&app, a.0, "?after=0"), Some(&key.secret))
        .await
        .expect("connect");
    // The whole log of A so far (as the events route reads it), and no key
    // event in it, though keys were made.
    let log = app
        .wms
        .business_events(a, 0, None, 100_000)
        .await
        .expect("log");
    let (seen, _) = events(&mut ws, log.len()).await;
    assert_eq!(seen.len(), log.len());
    let all = app.wms.events_since(0, 100_000).await.expect("all");
    assert!(
        all.iter()
            .any(|e| e.kind.starts_with("key.") && e.business_id == Some(a))
    );
    assert!(!seen.is_empty());
    assert!(
        kinds(&seen).iter().all(|k| !k.starts_with("key.")),
        "{seen:?}"
    );

    app.wms.revoke_key(key.key.id).await.expect("revoke");
    let end = tokio::time::timeout(Duration::from_secs(15), async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Close(Some(c)))) => return Some(c.reason.to_string()),
                Some(Ok(_)) => {}
                _ => return None,
            }
        }
    })
    .await
    .expect("the stream ends in time");
    assert_eq!(end.as_deref(), Some("the API key was revoked"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_screens_get_a_burst_in_order_while_one_stalls() {
    const CLIENTS: usize = 200;
    const BURST: usize = 10_000;
    let app = spawn_cloud().await;
    let b = app.a.business.0;
    let url = ws_url(&app, b, "?kinds=station.scanned&station=pack-1");
    // One that connects and never reads.
    let _stalled = connect(&url, Some(&app.a.key)).await.expect("connect");
    let mut readers = Vec::new();
    for _ in 0..CLIENTS {
        let mut ws = connect(&url, Some(&app.a.key)).await.expect("connect");
        readers.push(tokio::spawn(async move {
            // Only the positions are read: the clients share the cores
            // with the server, and a full parse of 2,000,000 events would
            // measure them rather than it.
            #[derive(serde::Deserialize)]
            struct Seq {
                seq: i64,
            }
            #[derive(serde::Deserialize)]
            struct Frame {
                events: Vec<Seq>,
            }
            let mut seqs: Vec<i64> = Vec::with_capacity(BURST);
            while seqs.len() < BURST {
                let msg = tokio::time::timeout(Duration::from_secs(60), ws.next())
                    .await
                    .expect("a frame in time")
                    .expect("open")
                    .expect("frame");
                if let Message::Text(t) = msg {
                    let f: Frame = serde_json::from_str(&t).expect("frame");
                    seqs.extend(f.events.iter().map(|e| e.seq));
                }
            }
            let _ = ws.close(None).await;
            seqs
        }));
    }
    // The burst: 100 commits of 100 station scans, as a busy floor makes
    // them, through the writer.
    let started = std::time::Instant::now();
    let business = app.a.business;
    for batch in 0..BURST / 100 {
        app.wms
            .write(move |c| {
                for i in 0..100 {
                    depot_wms::sql::append_event(
                        c,
                        "cloud",
                        Some(business),
                        EventKind::StationScanned,
                        &json!({"station": "pack-1", "code": format!("{batch}-{i}")}),
                    )?;
                }
                Ok(())
            })
            .await
            .expect("burst");
    }
    let written = started.elapsed();
    for r in readers {
        let seqs = tokio::time::timeout(Duration::from_secs(120), r)
            .await
            .expect("every reader finishes while one stalls")
            .expect("reader");
        assert_eq!(seqs.len(), BURST);
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "in log order");
    }
    println!(
        "{BURST} events written in {written:?}, delivered to {CLIENTS} clients in {:?}",
        started.elapsed()
    );
}
