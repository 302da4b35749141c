//! Test plumbing: a link that can be cut, waiting for sync, event counts.
#![allow(dead_code)]

pub mod devices;
pub mod offline;
pub mod process;

pub use depot_testkit::eventually;
use depot_wms::Wms;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

/// A TCP proxy that can be cut and restored.
pub struct Link {
    pub addr: SocketAddr,
    up: Arc<AtomicBool>,
    pipes: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Link {
    pub async fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("addr");
        let up = Arc::new(AtomicBool::new(true));
        let pipes: Arc<Mutex<Vec<AbortHandle>>> = Arc::default();
        let (up2, pipes2) = (up.clone(), pipes.clone());
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if !up2.load(Ordering::SeqCst) {
                    continue; // dropped: the connection is refused
                }
                let pipe = tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                if let Ok(mut p) = pipes2.lock() {
                    p.push(pipe.abort_handle());
                }
            }
        });
        Self { addr, up, pipes }
    }

    pub fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        if let Ok(mut p) = self.pipes.lock() {
            for pipe in p.drain(..) {
                pipe.abort();
            }
        }
    }

    pub fn restore(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

pub async fn event_ids(wms: &Wms) -> HashMap<String, usize> {
    let mut ids = HashMap::new();
    for e in wms.events_since(0, u32::MAX).await.expect("events") {
        *ids.entry(e.id.to_string()).or_insert(0) += 1;
    }
    ids
}

use depot_cloud::settings::Settings as CloudSettings;
use depot_edge::faults::Faults;
use depot_edge::settings::{Broker, Settings as EdgeSettings};
use depot_protocol::order::Address;
use depot_protocol::sync::EdgeId;
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, ItemId, WarehouseId};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A cloud with a business, a warehouse, a key and a registered edge,
/// serving and syncing through a broker (the embedded one, or
/// `DEPOT_TEST_MQTT_URL`), optionally reached through a cuttable link.
pub struct Rig {
    pub dir: tempfile::TempDir,
    pub cloud: Wms,
    pub business: BusinessId,
    pub warehouse: WarehouseId,
    pub key: String,
    pub caller: Caller,
    pub edge_id: String,
    pub node: u32,
    /// What the edge connects to: the link when there is one.
    pub broker_url: String,
    pub link: Option<Link>,
    /// The cloud's HTTP API.
    pub cloud_base: String,
    /// The cloud's settings, with the broker it serves through named as an
    /// external one, so that a restarted cloud syncs through it again.
    settings: CloudSettings,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<anyhow::Result<()>>>,
}

impl Rig {
    pub async fn start(edge_id: &str, through_link: bool) -> Self {
        Self::start_with(edge_id, through_link, |_| {}).await
    }

    /// `start`, with the cloud's settings changed by `configure` (its
    /// data directory, under `dir`, comes with them).
    pub async fn start_with(
        edge_id: &str,
        through_link: bool,
        configure: impl FnOnce(&mut CloudSettings),
    ) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut settings = CloudSettings {
            data_dir: dir.path().join("cloud"),
            ..CloudSettings::default()
        };
        settings.broker.embedded_listen = "127.0.0.1:0".parse().expect("addr");
        if let Ok(url) = std::env::var("DEPOT_TEST_MQTT_URL") {
            settings.broker.url = Some(url);
        }
        configure(&mut settings);
        let cloud = Wms::open(&settings.database(), "cloud").expect("cloud");
        let b = cloud
            .create_business("B", "EUR", "UTC")
            .await
            .expect("business");
        let w = cloud
            .create_warehouse(b.id, "W", "W", Address::default(), false)
            .await
            .expect("warehouse");
        let key = cloud.create_key(b.id, None).await.expect("key");
        let caller = Caller {
            key_id: key.key.id,
            business_id: b.id,
        };
        let node = cloud
            .register_edge(b.id, EdgeId::parse(edge_id).expect("edge id"), None)
            .await
            .expect("register")
            .node;
        let broker = depot_cloud::Broker::start(&settings).await.expect("broker");
        let (link, broker_url) = if through_link {
            let addr: SocketAddr = broker
                .url
                .to_string()
                .trim_start_matches("mqtt://")
                .parse()
                .expect("broker address");
            let link = Link::start(addr).await;
            let url = format!("mqtt://{}", link.addr);
            (Some(link), url)
        } else {
            (None, broker.url.to_string())
        };
        let mut again = settings.clone();
        again.broker.url = Some(broker.url.to_string());
        let (cloud_base, stop, task) = serve(cloud.clone(), settings, broker).await;
        Self {
            dir,
            cloud,
            business: b.id,
            warehouse: w.id,
            key: key.secret,
            caller,
            edge_id: edge_id.to_owned(),
            node,
            broker_url,
            link,
            cloud_base,
            settings: again,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Stops the cloud's API and sync service; its database and the broker
    /// stay.
    pub async fn stop_cloud(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.expect("join").expect("cloud");
        }
    }

    /// Serves the cloud again, on its database and through its broker.
    pub async fn restart_cloud(&mut self) {
        self.stop_cloud().await;
        let broker = depot_cloud::Broker::start(&self.settings)
            .await
            .expect("broker");
        let (base, stop, task) = serve(self.cloud.clone(), self.settings.clone(), broker).await;
        self.cloud_base = base;
        self.stop = Some(stop);
        self.task = Some(task);
    }

    pub async fn item(&self, sku: &str) -> ItemId {
        let req =
            serde_json::from_value(serde_json::json!({"sku": sku, "name": sku})).expect("item");
        self.cloud
            .create_item(self.business, req)
            .await
            .expect("item")
            .id
    }

    pub fn edge_settings(&self) -> EdgeSettings {
        EdgeSettings {
            business_id: self.business.0,
            edge_id: self.edge_id.clone(),
            node: self.node,
            data_dir: self.dir.path().join("edge"),
            broker: Broker {
                url: self.broker_url.clone(),
                ..Broker::default()
            },
            ..EdgeSettings::default()
        }
    }

    pub fn link(&self) -> &Link {
        self.link
            .as_ref()
            .expect("the rig was started without a link")
    }

    pub async fn stop(mut self) {
        self.stop_cloud().await;
    }
}

/// Serves `cloud` with `settings` through `broker` on a fresh port: its
/// address, the sender that stops it, and its task.
async fn serve(
    cloud: Wms,
    settings: CloudSettings,
    broker: depot_cloud::Broker,
) -> (String, oneshot::Sender<()>, JoinHandle<anyhow::Result<()>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        depot_cloud::Daemon::new(cloud, settings.clone())
            .sync_through(&broker)
            .serve(listener, async {
                let _ = stopped.await;
            })
            .await
    });
    (base, stop, task)
}

/// An edge serving in this process.
pub struct RunningEdge {
    pub wms: Wms,
    pub base: String,
    stop: oneshot::Sender<()>,
    task: JoinHandle<anyhow::Result<()>>,
}

impl RunningEdge {
    pub async fn start(settings: EdgeSettings, faults: Faults) -> Self {
        let wms = depot_edge::open(&settings).expect("edge");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(
            depot_edge::Daemon::new(wms.clone(), settings)
                .faults(faults)
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

    pub async fn stop(self) {
        let _ = self.stop.send(());
        self.task.await.expect("join").expect("edge");
    }
}

/// The cloud's item `sku` reaches the edge, and a receipt of 3 made at the
/// edge reaches the cloud.
pub async fn syncs_both_ways(rig: &Rig, edge: &RunningEdge, item: ItemId, sku: &str) {
    let (b, w) = (rig.business, rig.warehouse);
    eventually("the cloud's item at the edge", || async {
        edge.wms.item(b, item).await.is_ok()
    })
    .await;
    let r = reqwest::Client::new()
        .post(format!("{}/v1/inventory/{b}/adjust", edge.base))
        .header("X-API-KEY", &rig.key)
        .json(&serde_json::json!({"warehouse_id": w.0, "sku": sku, "reason": "received", "quantity": 3}))
        .send()
        .await
        .expect("adjust");
    assert_eq!(r.status(), 200);
    eventually("the edge's receipt in the cloud", || async {
        rig.cloud
            .stock_level(item, w)
            .await
            .is_ok_and(|(on_hand, _)| on_hand == 3)
    })
    .await;
}
