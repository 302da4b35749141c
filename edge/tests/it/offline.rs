//! With no broker at all, the edge serves the stations from its own
//! database: the outbox grows, the status route and the CLI say so.

use crate::common;
use depot_testkit::http::Client;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_floor_keeps_working_without_the_cloud() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (offline, wms) =
        common::offline::bootstrap(dir.path(), &dir.path().join("edge"), "mad-1").await;
    let common::offline::Offline {
        settings,
        business,
        warehouse,
        key,
    } = offline;

    let (base, stop, server) = depot_testkit::rig::serve_edge(wms.clone(), settings.clone()).await;

    let client = Client::new(&base);
    for q in [3, 4, 5] {
        let r = client.raw("POST", &format!("/v1/inventory/{}/adjust", business))
            .header("X-API-KEY", &key)
            .json(&json!({"warehouse_id": warehouse, "sku": "A", "reason": "received", "quantity": q}))
            .send().await;
        assert_eq!(r.status, 200);
    }
    let status: Value = client
        .raw("GET", "/v1/edge/status")
        .header("X-API-KEY", &key)
        .send()
        .await
        .body;
    let s = &status["data"];
    assert_eq!(s["edge_id"], "mad-1");
    assert_eq!(s["connected"], false);
    assert_eq!(s["depth"], 3, "{status}");
    assert!(s["oldest_unacked_at"].is_string());
    let inventory: Value = client
        .raw("GET", &format!("/v1/inventory/{}/items/list", business))
        .header("X-API-KEY", &key)
        .send()
        .await
        .body;
    assert_eq!(inventory["data"][0]["on_hand"], 12);
    let unauthorized = client.raw("GET", "/v1/edge/status").send().await;
    assert_eq!(unauthorized.status, 401);

    let _ = stop.send(());
    server.await.expect("join").expect("serve");
}
