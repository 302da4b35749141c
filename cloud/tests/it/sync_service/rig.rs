//! The cloud under test: a database with a registered edge, the broker,
//! and the sync service started and stopped around each scenario.

use super::*;
use depot_testkit::seed;

/// Bound on every wait.
pub(crate) const WAIT: Duration = Duration::from_secs(10);

pub(crate) fn init_logs() {
    // `RUST_LOG=depot_cloud=debug cargo test … -- --nocapture` shows the
    // service's side of a failure.
    if let Ok(filter) = tracing_subscriber::EnvFilter::try_from_default_env() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_test_writer()
            .try_init();
    }
}

pub(crate) fn unique_tag() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{}-{}", std::process::id(), nanos % 1_000_000_000_000)
}

pub(crate) async fn embedded_broker(listen: SocketAddr) -> EmbeddedBroker {
    tokio::task::spawn_blocking(move || EmbeddedBroker::start(listen))
        .await
        .expect("broker thread")
        .expect("embedded broker")
}

/// The broker a test runs against: the one `DEPOT_TEST_MQTT_URL` names (a
/// Mosquitto), or else an embedded one on a free port, kept running for as
/// long as the second half is held.
pub(crate) async fn test_broker() -> (MqttUrl, Option<EmbeddedBroker>) {
    match std::env::var("DEPOT_TEST_MQTT_URL") {
        Ok(url) => (MqttUrl::parse(&url).expect("DEPOT_TEST_MQTT_URL"), None),
        Err(_) => {
            let broker = embedded_broker(SocketAddr::from(([127, 0, 0, 1], 0))).await;
            (broker.url(), Some(broker))
        }
    }
}

/// The cloud's database with a business, a warehouse, a key, an item and a
/// registered edge, and that edge's own database.
pub(crate) struct World {
    pub(crate) cloud: Wms,
    pub(crate) edge: Wms,
    pub(crate) edge_id: EdgeId,
    pub(crate) business: BusinessId,
    pub(crate) warehouse: WarehouseId,
    pub(crate) item: ItemId,
    pub(crate) caller: Caller,
    pub(crate) _dir: tempfile::TempDir,
}

pub(crate) async fn world(edge_name: &str) -> World {
    let dir = tempfile::tempdir().expect("tempdir");
    let cloud = Wms::open(&dir.path().join("cloud.db"), "cloud").expect("cloud");
    let seeded = seed::business("B").item("A").seed(&cloud).await;
    let edge_id = EdgeId::parse(edge_name).expect("edge id");
    let record = cloud
        .register_edge(seeded.business, edge_id.clone(), None)
        .await
        .expect("register");
    assert_eq!(record.node, 1);
    let edge = Wms::open_node(
        &dir.path().join("edge.db"),
        &format!("edge:{edge_id}"),
        record.node,
    )
    .expect("edge");
    World {
        cloud,
        edge,
        edge_id,
        business: seeded.business,
        warehouse: seeded.warehouse,
        item: seeded.items[0],
        caller: seeded.caller,
        _dir: dir,
    }
}

/// The service on its own task, and how to stop it.
pub(crate) struct Service {
    pub(crate) session: String,
    pub(crate) stop: oneshot::Sender<()>,
    pub(crate) task: JoinHandle<Result<(), depot_cloud::sync::SyncError>>,
}

pub(crate) fn start_service(wms: &Wms, url: &MqttUrl, tag: &str) -> Service {
    start_shared_service(wms, url, tag, None)
}

/// A service in a shared-subscription group, when `group` is given.
pub(crate) fn start_shared_service(
    wms: &Wms,
    url: &MqttUrl,
    tag: &str,
    group: Option<String>,
) -> Service {
    let session = format!("cloud-{tag}");
    let options = SyncOptions {
        session: session.clone(),
        share_group: group,
        ..SyncOptions::default()
    };
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(run_sync_with(
        wms.clone(),
        url.clone(),
        format!("cloud-{tag}"),
        options,
        async move {
            let _ = stopped.await;
        },
    ));
    Service {
        session,
        stop,
        task,
    }
}

impl Service {
    pub(crate) async fn shut_down(self) {
        let _ = self.stop.send(());
        let ended = timeout(WAIT, self.task)
            .await
            .expect("the service stops in time")
            .expect("the service's task");
        assert!(ended.is_ok(), "{ended:?}");
    }
}
