//! A cloud ready for an edge: a business with a warehouse and a key, the
//! edge registered, the cloud serving and syncing through a broker (the
//! embedded one, or `DEPOT_TEST_MQTT_URL`), perhaps reached through a
//! [`Link`] that can be cut; and the settings an edge starts from to sync
//! with it. [`serve_edge`] runs a plain edge in the test's process; how
//! an edge runs with devices or faults is the edge tests' business.

use crate::link::Link;
use crate::seed;
use depot_cloud::settings::Settings as CloudSettings;
use depot_edge::settings::{Broker, Settings as EdgeSettings};
use depot_protocol::sync::EdgeId;
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, ItemId, WarehouseId};
use depot_wms::Wms;
use std::net::SocketAddr;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A cloud with a business, a warehouse, a key and a registered edge,
/// serving and syncing through a broker.
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
    /// The cloud's database when it is on PostgreSQL, dropped last.
    _database: Option<crate::pg::PgDatabase>,
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
        let mut settings = cloud_settings(dir.path().join("cloud"));
        configure(&mut settings);
        let (cloud, database) = crate::pg::cloud_engine(&settings.data_dir);
        let tenant = seed::business("B").seed(&cloud).await;
        let node = cloud
            .register_edge(
                tenant.business,
                EdgeId::parse(edge_id).expect("edge id"),
                None,
            )
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
            business: tenant.business,
            warehouse: tenant.warehouse,
            key: tenant.key,
            caller: tenant.caller,
            edge_id: edge_id.to_owned(),
            node,
            broker_url,
            link,
            cloud_base,
            settings: again,
            stop: Some(stop),
            task: Some(task),
            _database: database,
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

    /// Creates item `sku` in the cloud.
    pub async fn item(&self, sku: &str) -> ItemId {
        seed::item(&self.cloud, self.business, sku).await
    }

    /// The settings of an edge that syncs with this cloud, its data under
    /// `dir`.
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

/// A syncing cloud's settings for a test: its data in `data_dir`, and
/// the broker `DEPOT_TEST_MQTT_URL` names, or an embedded one on a free
/// port.
pub fn cloud_settings(data_dir: std::path::PathBuf) -> CloudSettings {
    let mut settings = CloudSettings {
        data_dir,
        ..CloudSettings::default()
    };
    settings.broker.embedded_listen = "127.0.0.1:0".parse().expect("addr");
    if let Ok(url) = std::env::var("DEPOT_TEST_MQTT_URL") {
        settings.broker.url = Some(url);
    }
    settings
}

/// Serves the edge `wms` with `settings` in this process on a fresh port,
/// as `depot-edge serve` would: its address, the sender that stops it,
/// and its task.
pub async fn serve_edge(
    wms: Wms,
    settings: EdgeSettings,
) -> (String, oneshot::Sender<()>, JoinHandle<anyhow::Result<()>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(
        depot_edge::Daemon::new(wms, settings).serve(listener, async {
            let _ = stopped.await;
        }),
    );
    (base, stop, task)
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
