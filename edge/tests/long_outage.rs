//! A week-sized backlog: 200,000 events made at the edge while the link is
//! down drain after it comes back, the edge keeps answering stations
//! meanwhile, and the cloud's live changes reach the edge during the drain
//! instead of waiting behind it. `DEPOT_TEST_BACKLOG` sets another size.

mod common;

use common::{Link, eventually};
use depot_cloud::settings::Settings as CloudSettings;
use depot_edge::settings::{Broker, Settings as EdgeSettings};
use depot_protocol::order::Address;
use depot_protocol::sync::EdgeId;
use depot_protocol::tenant::Caller;
use depot_wms::Wms;
use serde_json::json;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_long_outage_drains_without_stopping_the_floor() {
    let backlog: i64 = std::env::var("DEPOT_TEST_BACKLOG")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cloud_settings = CloudSettings {
        data_dir: dir.path().join("cloud"),
        ..CloudSettings::default()
    };
    cloud_settings.broker.embedded_listen = "127.0.0.1:0".parse().expect("addr");
    let cloud = Wms::open(&cloud_settings.database(), "cloud").expect("cloud");
    let b = cloud
        .create_business("B", "EUR", "UTC")
        .await
        .expect("business");
    let w = cloud
        .create_warehouse(b.id, "W", "W", Address::default(), false)
        .await
        .expect("wh");
    let key = cloud.create_key(b.id, None).await.expect("key");
    let caller = Caller {
        key_id: key.key.id,
        business_id: b.id,
    };
    let floor = cloud
        .create_item(
            b.id,
            serde_json::from_value(json!({"sku": "FLOOR", "name": "F"})).expect("item"),
        )
        .await
        .expect("item")
        .id;
    let office = cloud
        .create_item(
            b.id,
            serde_json::from_value(json!({"sku": "OFFICE", "name": "O"})).expect("item"),
        )
        .await
        .expect("item")
        .id;
    let node = cloud
        .register_edge(b.id, EdgeId::parse("long-1").expect("id"), None)
        .await
        .expect("register")
        .node;
    let broker = depot_cloud::Broker::start(&cloud_settings)
        .await
        .expect("broker");
    let broker_addr: SocketAddr = broker
        .url
        .to_string()
        .trim_start_matches("mqtt://")
        .parse()
        .expect("addr");
    let link = Link::start(broker_addr).await;
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let (stop_cloud, cloud_stopped) = tokio::sync::oneshot::channel::<()>();
    let cloud_task = {
        let (cloud, settings) = (cloud.clone(), cloud_settings.clone());
        tokio::spawn(async move {
            depot_cloud::serve(listener, cloud, &settings, &broker, async {
                let _ = cloud_stopped.await;
            })
            .await
        })
    };
    let settings = EdgeSettings {
        business_id: b.id.0,
        edge_id: "long-1".into(),
        node,
        data_dir: dir.path().join("edge"),
        broker: Broker {
            url: format!("mqtt://{}", link.addr),
            ..Broker::default()
        },
        ..EdgeSettings::default()
    };
    let edge = depot_edge::open(&settings).expect("edge");
    let edge_listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", edge_listener.local_addr().expect("addr"));
    let (stop_edge, edge_stopped) = tokio::sync::oneshot::channel::<()>();
    let edge_task = tokio::spawn(depot_edge::serve(
        edge_listener,
        edge.clone(),
        settings,
        async {
            let _ = edge_stopped.await;
        },
    ));
    eventually("the catalog at the edge", || async {
        edge.item(b.id, office).await.is_ok()
    })
    .await;

    // The week offline: the backlog piles up at the edge.
    link.cut();
    eventually("the edge to notice", || async {
        edge.sync_snapshot().await.is_ok_and(|s| !s.connected)
    })
    .await;
    let started = Instant::now();
    let mut writers = tokio::task::JoinSet::new();
    let per = backlog / 32;
    for _ in 0..32 {
        let edge = edge.clone();
        writers.spawn(async move {
            for _ in 0..per {
                let req = serde_json::from_value(json!({"warehouse_id": w.id.0, "sku": "FLOOR", "reason": "adjusted", "delta": 1})).expect("adj");
                edge.adjust(caller, req).await.expect("adjust");
            }
        });
    }
    while writers.join_next().await.is_some() {}
    let made = per * 32;
    let pile = started.elapsed();
    assert!(edge.sync_snapshot().await.expect("snapshot").depth >= made);

    // Back online: the drain starts; stations keep working and the cloud's
    // own change comes down while the backlog still goes up.
    link.restore();
    let drain = Instant::now();
    cloud.adjust(caller, serde_json::from_value(json!({"warehouse_id": w.id.0, "sku": "OFFICE", "reason": "received", "quantity": 9})).expect("adj")).await.expect("office");
    let client = reqwest::Client::new();
    let mut slowest = Duration::ZERO;
    let mut live_arrived_with_backlog = None;
    loop {
        let t = Instant::now();
        let r = client
            .post(format!("{base}/v1/inventory/{}/adjust", b.id))
            .header("X-API-KEY", &key.secret)
            .json(
                &json!({"warehouse_id": w.id.0, "sku": "FLOOR", "reason": "adjusted", "delta": 1}),
            )
            .send()
            .await
            .expect("a station during the drain");
        assert_eq!(
            r.status(),
            200,
            "the edge refused a station during the drain"
        );
        slowest = slowest.max(t.elapsed());
        let s = edge.sync_snapshot().await.expect("snapshot");
        if live_arrived_with_backlog.is_none()
            && edge.stock_level(office, w.id).await.expect("level").0 == 9
        {
            live_arrived_with_backlog = Some(s.depth);
        }
        // The outage's backlog is what the edge made first (out_seq 1 to
        // `made`); the stations' writes meanwhile keep a little more coming.
        if s.connected && s.acked >= made {
            break;
        }
        assert!(
            drain.elapsed() < Duration::from_secs(600),
            "the backlog did not drain: {} left",
            s.depth
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let drained = drain.elapsed();
    eventually("the cloud to match the edge", || async {
        cloud.stock_level(floor, w.id).await.ok() == edge.stock_level(floor, w.id).await.ok()
    })
    .await;
    let waiting = live_arrived_with_backlog.expect("the cloud's change reached the edge");
    assert!(
        waiting > 0 || made < 10_000,
        "the cloud's change waited behind the whole backlog"
    );
    println!(
        "backlog of {made} events made in {:.1}s, drained in {:.1}s ({:.0} events/s); slowest station answer during the drain {:.0} ms; \
         the cloud's change arrived with {waiting} events still to go up",
        pile.as_secs_f64(),
        drained.as_secs_f64(),
        made as f64 / drained.as_secs_f64(),
        slowest.as_secs_f64() * 1000.0
    );
    assert!(cloud.check_ledger().await.expect("check").is_empty());

    let _ = stop_edge.send(());
    edge_task.await.expect("join").expect("edge");
    let _ = stop_cloud.send(());
    cloud_task.await.expect("join").expect("cloud");
}
