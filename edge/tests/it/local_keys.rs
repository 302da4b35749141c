//! Keys provisioned in the edge's configuration, with the real `depot-edge`
//! process: a box that has never reached its broker serves its status and
//! takes writes with them (a wrong key gets 401 with the error body); once
//! online, the cloud's keys arrive and the provisioned one keeps working, a
//! key taken out of the configuration stops working, and nothing of the
//! local keys reaches the cloud.

use crate::common;
use common::process::spawn;
use depot_testkit::http::Client;
use depot_testkit::{eventually, rig::Rig};
use serde_json::{Value, json};

fn sha256_hex(key: &str) -> String {
    depot_wms::tenants::hash_key(key)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// (status, body) of a request to `edge` with `key`.
async fn call(
    edge: &Client,
    method: &str,
    path: String,
    key: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let r = edge.with_key(key).call(method, &path, body).await;
    (r.status, r.json())
}

fn assert_unauthorized((status, body): &(u16, Value)) {
    assert_eq!(*status, 401, "{body}");
    assert_eq!(body["error"], 1, "{body}");
    assert_eq!(body["code"], 401, "{body}");
    assert!(body["message"].is_string(), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn provisioned_keys_serve_a_box_that_was_never_online() {
    let edge_id = format!("lk{}", std::process::id());
    let rig = Rig::start(&edge_id, false).await;
    let (b, w) = (rig.business, rig.warehouse);
    let item = rig.item("A").await;
    // A broker address where nothing listens.
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        format!("mqtt://{}", l.local_addr().expect("addr"))
    };
    let (hashed, plain) = (
        "station-key-0123456789abcdef",
        "dpk_00112233445566778899aabbccddeeff0011223344556677",
    );
    let mut env = vec![
        ("DEPOT_BUSINESS_ID", b.0.to_string()),
        ("DEPOT_EDGE_ID", edge_id.clone()),
        ("DEPOT_NODE", rig.node.to_string()),
        (
            "DEPOT_DATA_DIR",
            rig.dir.path().join("edge").display().to_string(),
        ),
        ("DEPOT_LISTEN", "127.0.0.1:0".into()),
        ("DEPOT_BROKER__URL", dead),
        (
            "DEPOT_LOCAL_KEYS",
            format!("[\"{}\", \"{plain}\"]", sha256_hex(hashed)),
        ),
    ];

    // Never online: only the provisioned keys exist here.
    let edge = spawn(&env);
    let http = Client::new(&edge.base);
    let status = "/v1/edge/status".to_owned();
    for key in [hashed, plain] {
        let (code, body) = call(&http, "GET", status.clone(), key, None).await;
        assert_eq!(code, 200, "{body}");
        assert_eq!(body["data"]["business_id"], b.0);
        assert_eq!(body["data"]["connected"], false);
    }
    // A write goes through the key check to the engine, which has no
    // catalog yet: the item is unknown, not the caller.
    let adjust = format!("/v1/inventory/{b}/adjust");
    let receipt = json!({"warehouse_id": w.0, "sku": "A", "reason": "received", "quantity": 7});
    let (code, body) = call(&http, "POST", adjust.clone(), hashed, Some(receipt.clone())).await;
    assert_eq!(code, 404, "{body}");
    assert_eq!(body["error"], 1);
    assert_unauthorized(&call(&http, "GET", status.clone(), "wrong-key-0123456789", None).await);
    assert_unauthorized(
        &call(
            &http,
            "POST",
            adjust.clone(),
            "wrong-key-0123456789",
            Some(receipt.clone()),
        )
        .await,
    );
    // The cloud's key has not reached a box that was never online.
    assert_unauthorized(&call(&http, "GET", status.clone(), &rig.key, None).await);
    // Bound to the edge's business.
    let elsewhere = format!("/v1/inventory/{}/adjust", b.0 + 1);
    assert_unauthorized(&call(&http, "POST", elsewhere, hashed, Some(receipt.clone())).await);
    drop(edge);

    // Online, with the plain key taken out of the configuration.
    env.retain(|(k, _)| !k.starts_with("DEPOT_BROKER__URL") && *k != "DEPOT_LOCAL_KEYS");
    env.push(("DEPOT_BROKER__URL", rig.broker_url.clone()));
    env.push(("DEPOT_LOCAL_KEYS", format!("[\"{}\"]", sha256_hex(hashed))));
    let edge = spawn(&env);
    let http = Client::new(&edge.base);
    let status = "/v1/edge/status".to_owned();
    let cloud_key = rig.key.clone();
    eventually("the cloud's key at the edge", || {
        let (http, status, key) = (http.clone(), status.clone(), cloud_key.clone());
        async move { call(&http, "GET", status, &key, None).await.0 == 200 }
    })
    .await;
    let adjust = format!("/v1/inventory/{b}/adjust");
    eventually("the item at the edge", || {
        let (http, adjust, receipt) = (http.clone(), adjust.clone(), receipt.clone());
        async move { call(&http, "POST", adjust, hashed, Some(receipt)).await.0 == 200 }
    })
    .await;
    assert_eq!(
        call(&http, "GET", status.clone(), hashed, None).await.0,
        200
    );
    assert_unauthorized(&call(&http, "GET", status.clone(), plain, None).await);

    // The adjustment made with the local key reaches the cloud; the key
    // itself does not.
    eventually("the adjustment in the cloud", || async {
        rig.cloud.stock_level(item, w).await.ok() == Some((7, 0))
    })
    .await;
    assert!(
        rig.cloud
            .authenticate(hashed)
            .await
            .expect("auth")
            .is_none()
    );
    assert_eq!(rig.cloud.keys(b).await.expect("keys").len(), 1);
    let from_edge: Vec<String> = rig
        .cloud
        .events_since(0, u32::MAX)
        .await
        .expect("events")
        .into_iter()
        .filter(|e| e.origin == format!("edge:{edge_id}"))
        .map(|e| e.kind)
        .collect();
    assert_eq!(from_edge, ["stock.moved"]);

    // A clean stop closes the database: its write-ahead log is folded in
    // and removed, and the file alone is the box's whole state.
    edge.terminate();
    let data = rig.dir.path().join("edge");
    for side in ["edge.db-wal", "edge.db-shm"] {
        assert!(
            !data.join(side).exists(),
            "{side} outlived the stop on SIGTERM"
        );
    }
    rig.stop().await;
}
