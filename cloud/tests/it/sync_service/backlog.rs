//! The cloud's edge list (`GET /v1/edges/{business_id}/list`) over the real
//! service: an edge with events it has not sent yet shows them as its
//! backlog, with its version and online state, from what it reports in its
//! retained state and hello; the backlog falls to 0 as its batches are
//! applied; its last will takes it offline.

use super::*;
use depot_testkit::http::Client;

/// The cloud's HTTP API on its own task.
async fn serve_api(w: &World) -> (String, oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let (stop, stopped) = oneshot::channel::<()>();
    let wms = w.cloud.clone();
    tokio::spawn(async move {
        let settings = depot_cloud::settings::Settings::default();
        let _ = depot_cloud::Daemon::new(wms, settings.clone())
            .serve(listener, async {
                let _ = stopped.await;
            })
            .await;
    });
    (base, stop)
}

/// This edge's row of the list, once `want` accepts it.
async fn listed(
    base: &str,
    w: &World,
    key: &str,
    what: &str,
    want: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let client = Client::new(base).with_key(key);
    let path = format!("/v1/edges/{}/list", w.business);
    let (client, path) = (&client, &path);
    depot_testkit::eventually_seen(
        what,
        || async move {
            let r = client.get(path).await;
            assert_eq!(r.status, 200);
            r.body["data"]
                .as_array()
                .and_then(|rows| {
                    rows.iter()
                        .find(|e| e["edge_id"] == w.edge_id.as_str())
                        .cloned()
                })
                .unwrap_or_default()
        },
        want,
    )
    .await
}

async fn backlog_scenario(url: &MqttUrl, tag: &str) {
    let w = world(&format!("bl-{tag}")).await;
    let key = w.cloud.create_key(w.business, None).await.expect("key");
    let service = start_service(&w.cloud, url, tag);
    let (base, stop_api) = serve_api(&w).await;
    let mut edge = FakeEdge::connect(url, &w, tag).await;
    edge.cloud_online(&service.session).await;

    let fresh = listed(&base, &w, &key.secret, "the registered edge", |r| {
        r["edge_id"].is_string()
    })
    .await;
    assert_eq!(fresh["online"], false);
    assert!(fresh["backlog"].is_null() && fresh["reported_head"].is_null());
    // Every warehouse of its business; nothing of its refused yet.
    assert_eq!(fresh["warehouses"], serde_json::json!([]));
    assert_eq!(fresh["refused"], 0);
    assert!(fresh["last_refused"].is_null());

    // Its first hello: online, nothing to send; the replay brings it the
    // catalog.
    edge.hello_as("run-1", "9.9.8", 0, Some(0)).await;
    edge.until(WAIT, "the end of the replay", |m| {
        matches!(m, DownMessage::Changes { more: false, .. })
    })
    .await;
    let row = listed(&base, &w, &key.secret, "the hello", |r| r["online"] == true).await;
    assert_eq!(
        (row["version"].as_str(), row["backlog"].as_i64()),
        (Some("9.9.8"), Some(0))
    );

    // The edge makes three events while its link is down, then comes back
    // online: its retained state says so, with its version and head.
    for delta in [5, -1, 2] {
        adjust(&w, delta).await;
    }
    let state = edge.topic(Channel::State);
    let online = StateMessage::Online {
        version: "9.9.9".into(),
        session: "run-1".into(),
        head: Some(3),
    };
    edge.client
        .publish(&state, QoS::AtLeastOnce, true, encode(&online))
        .await
        .expect("publish state");
    let row = listed(&base, &w, &key.secret, "the state's version", |r| {
        r["version"] == "9.9.9"
    })
    .await;
    assert_eq!(row["online"], true);
    assert_eq!(
        (row["up_cursor"].as_i64(), row["backlog"].as_i64()),
        (Some(0), Some(3))
    );
    assert_eq!(row["reported_head"], 3);

    // Hello with the same head: the backlog stands while nothing is sent.
    let (_, cursor) = w.edge.sync_state().await.expect("state");
    edge.hello_as("run-1", "9.9.10", cursor, Some(3)).await;
    assert_eq!(edge.ack("run-1").await, (0, false, 0));
    let row = listed(&base, &w, &key.secret, "the hello's version", |r| {
        r["version"] == "9.9.10"
    })
    .await;
    assert_eq!(row["backlog"], 3);
    assert!(row["last_seen"].is_string());
    assert!(row["taking_back_after"].is_null());

    // The batches drain it.
    let events = edge.outgoing(0).await;
    edge.batch("run-1", events[..2].to_vec()).await;
    assert_eq!(edge.ack("run-1").await, (2, false, 0));
    let row = listed(&base, &w, &key.secret, "a backlog of 1", |r| {
        r["backlog"] == 1
    })
    .await;
    assert_eq!(row["up_cursor"], 2);
    edge.batch("run-1", events[2..].to_vec()).await;
    assert_eq!(edge.ack("run-1").await, (3, false, 0));
    let row = listed(&base, &w, &key.secret, "a backlog of 0", |r| {
        r["backlog"] == 0
    })
    .await;
    assert_eq!(
        (row["up_cursor"].as_i64(), row["reported_head"].as_i64()),
        (Some(3), Some(3))
    );
    assert_eq!(row["online"], true);

    // A hello from the box restored from a backup that ends at seq 1: the
    // list says it is taking its own events back, until a hello says its
    // log is whole.
    edge.send(&UpMessage::Hello(Hello {
        session: "run-1".into(),
        version: "9.9.10".into(),
        cursor,
        head: Some(3),
        last: None,
        recover_after: Some(1),
        node: None,
    }))
    .await;
    let answer = edge
        .until(WAIT, "the answer to the restored box", |m| {
            matches!(m, DownMessage::Ack { hello: true, .. })
        })
        .await;
    assert!(
        answer.iter().any(|m| matches!(
            m,
            DownMessage::Recovered {
                after: 1,
                through: 3,
                ..
            }
        )),
        "{answer:?}"
    );
    listed(&base, &w, &key.secret, "the box taking back", |r| {
        r["taking_back_after"] == 1
    })
    .await;
    edge.hello_as("run-1", "9.9.10", cursor, Some(3)).await;
    assert_eq!(edge.ack("run-1").await, (3, false, 0));
    listed(&base, &w, &key.secret, "the box whole again", |r| {
        r["taking_back_after"].is_null() && r["edge_id"].is_string()
    })
    .await;

    // Its last will: offline.
    let will = StateMessage::Offline {
        session: "run-1".into(),
    };
    edge.client
        .publish(&state, QoS::AtLeastOnce, true, encode(&will))
        .await
        .expect("publish will");
    let row = listed(&base, &w, &key.secret, "the edge offline", |r| {
        r["online"] == false
    })
    .await;
    assert!(row["state_at"].is_string());

    // The cloud's log says when the edge came and went, and when it had a
    // backlog and when that was drained: once each, not per hello or per
    // batch, in the shape the event catalogue documents.
    let told: Vec<_> = w
        .cloud
        .events_since(0, 1_000_000)
        .await
        .expect("events")
        .into_iter()
        .filter(|e| e.kind.starts_with("edge.") || e.kind == "sync.backlog")
        .collect();
    let kinds: Vec<&str> = told.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "edge.online",
            "sync.backlog",
            "sync.backlog",
            "edge.offline"
        ]
    );
    for e in &told {
        let entry = depot_protocol::catalogue::lookup(&e.kind).expect("catalogued");
        depot_protocol::catalogue::schema::check(entry, &e.payload)
            .unwrap_or_else(|p| panic!("{p:?}"));
    }
    assert_eq!(told[0].payload["version"], "9.9.8");
    assert_eq!(told[0].payload["session"], "run-1");
    assert_eq!(
        (
            &told[1].payload["backlog"],
            &told[1].payload["reported_head"]
        ),
        (&json!(3), &json!(3))
    );
    assert_eq!(
        (&told[2].payload["backlog"], &told[2].payload["up_cursor"]),
        (&json!(0), &json!(3))
    );
    assert_eq!(told[3].payload["session"], "run-1");

    // Another tenant's key does not see the list.
    let other = w
        .cloud
        .create_business("Other", "EUR", "UTC")
        .await
        .expect("business");
    let other_key = w.cloud.create_key(other.id, None).await.expect("key");
    let r = Client::new(&base)
        .with_key(other_key.secret.as_str())
        .get(&format!("/v1/edges/{}/list", w.business))
        .await;
    assert_eq!(r.status, 401);

    // Leave no retained state behind on a shared broker.
    edge.client
        .publish(&state, QoS::AtLeastOnce, true, Vec::new())
        .await
        .expect("clear state");
    let _ = stop_api.send(());
    service.shut_down().await;
    edge.leave().await;
}

#[tokio::test]
async fn the_edge_list_shows_backlog_version_and_state() {
    init_logs();
    let tag = unique_tag();
    let (url, _broker) = test_broker().await;
    backlog_scenario(&url, &tag).await;
}
