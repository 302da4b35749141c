//! What the edge's tests share beyond the test kit: an edge served in
//! this process with faults injected into its link (the `faults` feature
//! is the edge's own, so this stays here), and the check that a rig syncs
//! both ways.
#![allow(dead_code)]

pub mod devices;
pub mod offline;
pub mod process;

use depot_edge::faults::Faults;
use depot_edge::settings::Settings as EdgeSettings;
use depot_protocol::ItemId;
use depot_testkit::eventually;
use depot_testkit::http::Client;
use depot_testkit::rig::Rig;
use depot_wms::Wms;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

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
    let r = Client::new(&edge.base)
        .with_key(rig.key.as_str())
        .post(
            &format!("/v1/inventory/{b}/adjust"),
            serde_json::json!({"warehouse_id": w.0, "sku": sku, "reason": "received", "quantity": 3}),
        )
        .await;
    assert_eq!(r.status, 200);
    eventually("the edge's receipt in the cloud", || async {
        rig.cloud
            .stock_level(item, w)
            .await
            .is_ok_and(|(on_hand, _)| on_hand == 3)
    })
    .await;
}
