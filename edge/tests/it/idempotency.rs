//! `Idempotency-Key` at the edge: every write it serves (the warehouse
//! routes and its own station and scale routes) is described with the key
//! and takes it; a retry of a write, or of a station's scan or task, gets
//! the first answer and applies nothing.

use crate::common;
use common::RunningEdge;
use depot_edge::devices::config::StationConfig;
use depot_edge::faults::Faults;
use depot_testkit::http::{Client, Res};
use serde_json::{Value, json};

const STATION: &str = "desk-1";

struct Floor {
    edge: RunningEdge,
    business: i64,
    warehouse: i64,
    /// The edge, with the key.
    client: Client,
    _dir: tempfile::TempDir,
}

/// An offline edge with a business, a warehouse, item `A`, a key and a
/// station with no devices.
async fn floor() -> Floor {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut offline, wms) =
        common::offline::bootstrap(dir.path(), &dir.path().join("edge"), "idem-1").await;
    drop(wms);
    offline.settings.stations = vec![StationConfig {
        name: STATION.into(),
        scanners: Vec::new(),
        scale: None,
        printer: None,
        tolerance_g: 20,
        tolerance_pct: 5.0,
        packaging_g: 0,
        weigh_timeout_ms: 5000,
    }];
    let edge = RunningEdge::start(offline.settings, Faults::default()).await;
    Floor {
        client: Client::new(&edge.base).with_key(offline.key.as_str()),
        edge,
        business: offline.business.0,
        warehouse: offline.warehouse,
        _dir: dir,
    }
}

fn replayed(r: &Res) -> bool {
    r.header("idempotent-replayed") == Some("true")
}

impl Floor {
    async fn send(&self, method: &str, path: &str, key: Option<&[u8]>, body: &Value) -> Res {
        let mut req = self.client.raw(method, path).json(body);
        if let Some(k) = key {
            req = req.header("Idempotency-Key", k);
        }
        req.send().await
    }

    async fn events(&self, kind: &str) -> usize {
        self.edge
            .wms
            .events_since(0, u32::MAX)
            .await
            .expect("events")
            .iter()
            .filter(|e| e.kind == kind)
            .count()
    }
}

/// The edge's writes, with their paths filled for this floor.
fn writes(doc: &Value, business: i64) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        for method in ["post", "put", "patch", "delete"] {
            let Some(op) = item.get(method) else { continue };
            let concrete = path
                .split('/')
                .map(|segment| match segment {
                    "{business_id}" => business.to_string(),
                    "{station}" => STATION.to_owned(),
                    "{scale_id}" => "no-such-scale".to_owned(),
                    s if s.starts_with('{') => "1".to_owned(),
                    s => s.to_owned(),
                })
                .collect::<Vec<_>>()
                .join("/");
            out.push((method.to_uppercase(), concrete, op.clone()));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_write_at_the_edge_is_described_with_the_key_and_takes_it() {
    let f = floor().await;
    let doc = f.client.with_key(None).get("/v1/openapi.json").await.body;
    // The same description in 3.0.3, valid where CI has a validator.
    let doc30 = f
        .client
        .with_key(None)
        .get("/v1/openapi-3.0.json")
        .await
        .body;
    assert_eq!(doc30["openapi"], "3.0.3");
    if let Ok(validator) = std::env::var("DEPOT_TEST_OPENAPI_VALIDATOR") {
        let dir = tempfile::tempdir().expect("tempdir");
        for (name, d) in [("edge-3.1.json", &doc), ("edge-3.0.json", &doc30)] {
            let path = dir.path().join(name);
            std::fs::write(&path, d.to_string()).expect("write");
            let out = std::process::Command::new(&validator)
                .arg(&path)
                .output()
                .expect("validator");
            assert!(
                out.status.success(),
                "{name}: {}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
    }
    let routes = writes(&doc, f.business);
    for route in [
        "POST /v1/edge/stations/desk-1/scan",
        "PUT /v1/edge/stations/desk-1/task",
        "POST /v1/edge/stations/desk-1/pack",
        "POST /v1/edge/stations/desk-1/release",
        "POST /v1/edge/scales/no-such-scale/zero",
        "POST /v1/edge/scales/no-such-scale/tare",
        "POST /v1/inventory/1/adjust",
        "POST /v1/picking/1/item/scan",
    ] {
        let route = route.replace("/1/", &format!("/{}/", f.business));
        assert!(
            routes.iter().any(|(m, p, _)| format!("{m} {p}") == route),
            "{route} is not described"
        );
    }
    for (i, (method, path, op)) in routes.iter().enumerate() {
        let what = format!("{method} {path}");
        let params = op["parameters"].as_array().cloned().unwrap_or_default();
        assert!(
            params
                .iter()
                .any(|p| p["name"] == "Idempotency-Key" && p["in"] == "header"),
            "{what}: {params:?}"
        );
        for status in ["409", "422"] {
            assert!(
                op["responses"][status]["description"]
                    .as_str()
                    .is_some_and(|d| d.contains("Idempotency-Key")),
                "{what}: {status}"
            );
        }

        let body = json!({});
        let refused = f.send(method, path, Some("clé".as_bytes()), &body).await;
        assert_eq!(refused.status, 400, "{what}: {:?}", refused.json());
        let key = format!("edge-route-{i}");
        let first = f.send(method, path, Some(key.as_bytes()), &body).await;
        assert_eq!(
            first.header("idempotency-key"),
            Some(key.as_str()),
            "{what}"
        );
        assert!(
            first.status < 500,
            "{what}: {} {:?}",
            first.status,
            first.json()
        );
        let again = f.send(method, path, Some(key.as_bytes()), &body).await;
        assert_eq!(again.status, first.status, "{what}: {:?}", again.json());
        if (200..300).contains(&first.status) {
            assert!(replayed(&again), "{what}");
            assert_eq!(again.bytes, first.bytes, "{what}");
        }
    }
    f.edge.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_retry_at_the_edge_applies_nothing() {
    let f = floor().await;
    let adjust = format!("/v1/inventory/{}/adjust", f.business);
    let body =
        json!({"warehouse_id": f.warehouse, "sku": "A", "reason": "received", "quantity": 4});
    let first = f.send("POST", &adjust, Some(b"edge-adjust"), &body).await;
    assert_eq!(first.status, 200, "{:?}", first.json());
    let moved = f.events("stock.moved").await;
    let again = f.send("POST", &adjust, Some(b"edge-adjust"), &body).await;
    assert!(replayed(&again));
    assert_eq!(again.bytes, first.bytes);
    assert_eq!(f.events("stock.moved").await, moved, "applied once");
    let other =
        json!({"warehouse_id": f.warehouse, "sku": "A", "reason": "received", "quantity": 5});
    let reused = f.send("POST", &adjust, Some(b"edge-adjust"), &other).await;
    assert_eq!(reused.status, 422);

    // The station runs a keyed request in its own task: the key goes with
    // it, and the write that logs the report stores the answer.
    let task = format!("/v1/edge/stations/{STATION}/task");
    let logged = f.events("station.scanned").await;
    let set = f
        .send("PUT", &task, Some(b"task-1"), &json!({"task": "idle"}))
        .await;
    assert_eq!(set.status, 200, "{:?}", set.json());
    assert_eq!(f.events("station.scanned").await, logged + 1);
    let set_again = f
        .send("PUT", &task, Some(b"task-1"), &json!({"task": "idle"}))
        .await;
    assert!(replayed(&set_again));
    assert_eq!(set_again.bytes, set.bytes);
    assert_eq!(
        f.events("station.scanned").await,
        logged + 1,
        "not run again"
    );

    // A scan the station refuses (no task) is answered and logged once.
    let scan = format!("/v1/edge/stations/{STATION}/scan");
    let refused = f
        .send("POST", &scan, Some(b"scan-1"), &json!({"code": "A"}))
        .await;
    assert_eq!(refused.status, 409, "{:?}", refused.json());
    assert_eq!(f.events("station.scanned").await, logged + 2);
    let retried = f
        .send("POST", &scan, Some(b"scan-1"), &json!({"code": "A"}))
        .await;
    assert_eq!(retried.status, 409);
    assert!(replayed(&retried), "the first answer, from its log write");
    assert_eq!(retried.bytes, refused.bytes);
    assert_eq!(f.events("station.scanned").await, logged + 2);
    // Without a key each scan is its own.
    let unkeyed = f.send("POST", &scan, None, &json!({"code": "A"})).await;
    assert_eq!(unkeyed.status, 409);
    assert_eq!(f.events("station.scanned").await, logged + 3);
    f.edge.stop().await;
}
