//! Device test plumbing: an edge serving with a simulated HID bus, printer
//! records synced from the cloud, and a small HTTP client.

use super::RunningEdge;
use depot_edge::devices::config::PrinterDevice;
use depot_edge::settings::{LocalKey, Settings as EdgeSettings};
use depot_hardware::printer::Endpoint;
use depot_hardware::printer::sim::Simulator;
use depot_hardware::scanner::sim::SimBus;
use depot_protocol::printing::{PrinterFields, PrinterKind};
use depot_testkit::http::Client;
use depot_testkit::{eventually, rig::Rig};
use serde_json::Value;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// An upper bound for anything to happen; tests never sleep.
pub const LIMIT: Duration = Duration::from_secs(20);

/// The settings of an edge that has never been online: business 1, node 1,
/// `key` provisioned locally, and a broker address nothing listens on (the
/// link keeps trying, the API serves). Devices and stations are the test's.
pub async fn offline_settings(dir: &std::path::Path, edge_id: &str, key: &str) -> EdgeSettings {
    let closed = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind")
        .local_addr()
        .expect("addr");
    let mut settings = EdgeSettings {
        business_id: 1,
        edge_id: edge_id.into(),
        node: 1,
        data_dir: dir.to_owned(),
        local_keys: vec![LocalKey(key.into())],
        ..EdgeSettings::default()
    };
    settings.broker.url = format!("mqtt://{closed}");
    settings
}

impl RunningEdge {
    /// An edge whose USB scanners are on `bus`.
    pub async fn start_with_bus(settings: EdgeSettings, bus: SimBus) -> Self {
        let wms = depot_edge::open(&settings).expect("edge");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(
            depot_edge::Daemon::new(wms.clone(), settings)
                .devices(bus)
                .serve(listener, async {
                    let _ = stopped.await;
                }),
        );
        Self {
            wms,
            base,
            stop,
            task,
        }
    }
}

/// A printer configured at the edge on `sim`, with timeouts short enough
/// for tests.
pub fn printer_device(name: &str, sim: &Simulator) -> PrinterDevice {
    PrinterDevice {
        connect_timeout_ms: Some(2000),
        status_timeout_ms: Some(300),
        transfer_timeout_ms: Some(5000),
        close_timeout_ms: Some(2000),
        backoff_initial_ms: Some(20),
        backoff_max_ms: Some(200),
        idle_poll_ms: Some(200),
        ..PrinterDevice::new(
            name,
            Endpoint::Tcp {
                host: "127.0.0.1".into(),
                port: sim.addr().port(),
            },
        )
    }
}

/// Creates a ZPL printer attached to the rig's edge in the cloud; answers
/// its id.
pub async fn cloud_printer(rig: &Rig, name: &str) -> depot_protocol::PrinterId {
    let fields = PrinterFields {
        name: Some(name.into()),
        kind: Some(PrinterKind::Zpl),
        connection: Some(format!("edge://{}", rig.edge_id)),
        station: None,
    };
    rig.cloud
        .create_printer(rig.business, fields)
        .await
        .expect("printer")
        .id
}

/// HTTP calls with the rig's key.
pub struct Api {
    pub base: String,
    pub key: String,
    client: Client,
}

impl Api {
    pub fn new(edge: &RunningEdge, key: &str) -> Self {
        Self {
            base: edge.base.clone(),
            key: key.to_owned(),
            client: Client::new(&edge.base).with_key(key),
        }
    }

    /// (status, body) of a request; `body` is JSON, or raw bytes if a string.
    pub async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = self.client.raw(method, path).timeout(LIMIT);
        req = match body {
            Some(Value::String(raw)) => req.body(raw),
            Some(json) => req.json(&json),
            None => req,
        };
        let r = req.send().await;
        (r.status, r.json())
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        self.call("GET", path, None).await
    }

    /// Waits until the key works at the edge (keys arrive by sync).
    pub async fn ready(&self) {
        eventually("the key at the edge", || async {
            self.get("/v1/edge/status").await.0 == 200
        })
        .await;
    }

    /// The events of `kind` after `after`, waiting for at least one.
    pub async fn events_after(&self, b: i64, after: i64, kind: &str) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + LIMIT;
        loop {
            let (status, body) = self
                .get(&format!(
                    "/v1/events/{b}/list?after={after}&kind={kind}&wait=5000"
                ))
                .await;
            assert_eq!(status, 200, "{body}");
            let events = body["data"]["events"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if !events.is_empty() {
                return events;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no {kind} event after {after}"
            );
        }
    }
}
