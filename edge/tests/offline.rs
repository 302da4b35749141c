//! With no broker at all, the edge serves the stations from its own
//! database: the outbox grows, the status route and the CLI say so.

use depot_edge::settings::{Broker, Settings};
use depot_protocol::order::Address;
use depot_wms::Wms;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_floor_keeps_working_without_the_cloud() {
    let dir = tempfile::tempdir().expect("tempdir");
    // What the cloud would have sent: business, warehouse, key, item.
    let cloud = Wms::open(&dir.path().join("cloud.db"), "cloud").expect("cloud");
    let b = cloud
        .create_business("B", "EUR", "UTC")
        .await
        .expect("business");
    let w = cloud
        .create_warehouse(b.id, "W", "W", Address::default(), false)
        .await
        .expect("wh");
    let key = cloud.create_key(b.id, None).await.expect("key").secret;
    cloud
        .create_item(
            b.id,
            serde_json::from_value(json!({"sku": "A", "name": "A"})).expect("item"),
        )
        .await
        .expect("item");

    // A broker address nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr");
    let settings = Settings {
        business_id: b.id.0,
        edge_id: "mad-1".into(),
        node: 1,
        data_dir: dir.path().join("edge"),
        broker: Broker {
            url: format!("mqtt://{closed}"),
            ..Broker::default()
        },
        ..Settings::default()
    };
    let wms = depot_edge::open(&settings).expect("open edge");
    let head = cloud.outgoing_head().await.expect("head");
    let events = cloud
        .outgoing(0, head, 1000)
        .await
        .expect("events")
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    wms.apply_remote(events).await.expect("bootstrap");

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(depot_edge::serve(
        listener,
        wms.clone(),
        settings.clone(),
        async {
            let _ = stopped.await;
        },
    ));

    let client = reqwest::Client::new();
    for q in [3, 4, 5] {
        let r = client
            .post(format!("{base}/v1/inventory/{}/adjust", b.id))
            .header("X-API-KEY", &key)
            .json(&json!({"warehouse_id": w.id.0, "sku": "A", "reason": "received", "quantity": q}))
            .send()
            .await
            .expect("adjust");
        assert_eq!(r.status(), 200);
    }
    let status: Value = client
        .get(format!("{base}/v1/edge/status"))
        .header("X-API-KEY", &key)
        .send()
        .await
        .expect("status")
        .json()
        .await
        .expect("json");
    let s = &status["data"];
    assert_eq!(s["edge_id"], "mad-1");
    assert_eq!(s["connected"], false);
    assert_eq!(s["depth"], 3, "{status}");
    assert!(s["oldest_unacked_at"].is_string());
    let inventory: Value = client
        .get(format!("{base}/v1/inventory/{}/items/list", b.id))
        .header("X-API-KEY", &key)
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("json");
    assert_eq!(inventory["data"][0]["on_hand"], 12);
    let unauthorized = client
        .get(format!("{base}/v1/edge/status"))
        .send()
        .await
        .expect("status");
    assert_eq!(unauthorized.status(), 401);

    let _ = stop.send(());
    server.await.expect("join").expect("serve");
}
