//! The cloud's database is restored from an older backup. Cloud A runs and
//! the edge syncs with it both ways; a backup of A is taken; the edge works
//! on and A acknowledges and answers it all; A stops, and cloud B starts on
//! the backup, on the same broker, and makes a change of its own. The
//! edge's cursor is past B's log, so B answers its hello with `reset`: the
//! edge reloads B's log from the start, and B's acknowledgement is below
//! the edge's, so the edge sends what B lost again. They converge: the same
//! on-hand per item and warehouse, the same order statuses, every edge
//! event in B exactly once.

use crate::common;
use common::RunningEdge;
use depot_cloud::settings::Settings as CloudSettings;
use depot_edge::faults::Faults;
use depot_edge::settings::{Broker, Settings as EdgeSettings};
use depot_protocol::order::OrderStatus;
use depot_protocol::sync::EdgeId;
use depot_protocol::tenant::Caller;
use depot_protocol::{OrderId, WarehouseId};
use depot_testkit::seed;
use depot_testkit::{events::event_ids, eventually};
use depot_wms::Wms;
use serde_json::json;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A cloud serving and syncing through a broker that outlives it.
struct Cloud {
    stop: oneshot::Sender<()>,
    task: JoinHandle<anyhow::Result<()>>,
}

impl Cloud {
    async fn start(wms: Wms, settings: CloudSettings, broker: Arc<depot_cloud::Broker>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            depot_cloud::Daemon::new(wms, settings.clone())
                .sync_through(&broker)
                .serve(listener, async {
                    let _ = stopped.await;
                })
                .await
        });
        Self { stop, task }
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        self.task.await.expect("join").expect("cloud");
    }
}

async fn adjust(wms: &Wms, caller: Caller, w: WarehouseId, sku: &str, delta: i64) {
    let req = serde_json::from_value(
        json!({"warehouse_id": w.0, "sku": sku, "reason": "adjusted", "delta": delta}),
    )
    .expect("adjust request");
    wms.adjust(caller, req).await.expect("adjust");
}

async fn order(wms: &Wms, caller: Caller, w: WarehouseId, sku: &str, reference: &str) -> OrderId {
    let req = serde_json::from_value(json!({
        "channel": "web", "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"}, "external_ref": reference, "warehouse_id": w.0,
        "lines": [{"sku": sku, "quantity": 2}]
    }))
    .expect("order request");
    let (o, _) = wms.create_order(caller, req).await.expect("order");
    wms.set_order_status(caller, o.id, OrderStatus::Confirmed, None)
        .await
        .expect("confirm");
    o.id
}

async fn status(wms: &Wms, caller: Caller, o: OrderId, to: OrderStatus) {
    wms.set_order_status(caller, o, to, None)
        .await
        .expect("status");
}

async fn head(wms: &Wms) -> i64 {
    wms.events_head().await.expect("head")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cloud_restored_from_a_backup_and_the_edge_converge() {
    let dir = tempfile::tempdir().expect("tempdir");
    let edge_id = format!("rs{}", std::process::id());
    let settings = depot_testkit::rig::cloud_settings(dir.path().join("a"));
    let broker = Arc::new(depot_cloud::Broker::start(&settings).await.expect("broker"));

    // Cloud A: a business, stock, two confirmed orders, a registered edge.
    let a = Wms::open(&settings.database(), "cloud").expect("cloud a");
    let seeded = seed::business("B").item("A").item("B").seed(&a).await;
    let (b, w, caller, items) = (
        seeded.business,
        seeded.warehouse,
        seeded.caller,
        seeded.items,
    );
    adjust(&a, caller, w, "A", 50).await;
    adjust(&a, caller, w, "B", 30).await;
    let o1 = order(&a, caller, w, "A", "O1").await;
    let o2 = order(&a, caller, w, "B", "O2").await;
    let node = a
        .register_edge(b, EdgeId::parse(&edge_id).expect("id"), None)
        .await
        .expect("register")
        .node;
    let cloud_a = Cloud::start(a.clone(), settings.clone(), broker.clone()).await;

    let edge = RunningEdge::start(
        EdgeSettings {
            business_id: b.0,
            edge_id: edge_id.clone(),
            node,
            data_dir: dir.path().join("edge"),
            broker: Broker {
                url: broker.url.to_string(),
                resend_after_secs: 2,
                ..Broker::default()
            },
            ..EdgeSettings::default()
        },
        Faults::default(),
    )
    .await;
    let ew = &edge.wms;
    eventually("the orders at the edge", || async {
        ew.order(b, o2)
            .await
            .is_ok_and(|o| o.status == OrderStatus::Confirmed)
    })
    .await;

    // Both ways with A.
    adjust(ew, caller, w, "A", 3).await;
    status(ew, caller, o1, OrderStatus::Picking).await;
    eventually("A to have the edge's work", || async {
        a.order(b, o1)
            .await
            .is_ok_and(|o| o.status == OrderStatus::Picking)
    })
    .await;

    // The backup; then more work at the edge, all acknowledged by A and
    // the edge's cursor at A's head.
    depot_testkit::backup(&settings.database(), &dir.path().join("b").join("cloud.db")).await;
    adjust(ew, caller, w, "A", 5).await;
    adjust(ew, caller, w, "B", -1).await;
    status(ew, caller, o1, OrderStatus::Packed).await;
    status(ew, caller, o2, OrderStatus::Picking).await;
    eventually(
        "A to acknowledge everything and the edge to follow A",
        || async {
            let s = ew.sync_snapshot().await.expect("snapshot");
            s.depth == 0 && s.cloud_cursor == head(&a).await
        },
    )
    .await;
    let acked_by_a = ew.sync_snapshot().await.expect("snapshot").acked;
    cloud_a.stop().await;

    // Cloud B, on the backup, makes a change before the edge is back.
    let b_settings = CloudSettings {
        data_dir: dir.path().join("b"),
        ..settings.clone()
    };
    let bw = Wms::open(&b_settings.database(), "cloud").expect("cloud b");
    adjust(&bw, caller, w, "B", 10).await;
    let cursor = ew.sync_snapshot().await.expect("snapshot").cloud_cursor;
    assert!(
        cursor > head(&bw).await,
        "the edge's cursor {cursor} is past B's log"
    );
    let up_b = bw
        .edge(b, EdgeId::parse(&edge_id).expect("id"))
        .await
        .expect("edge")
        .expect("registered")
        .up_cursor;
    assert!(
        up_b < acked_by_a,
        "B lost acknowledged events ({up_b} < {acked_by_a})"
    );
    let cloud_b = Cloud::start(bw.clone(), b_settings, broker.clone()).await;

    eventually("the edge to reload and B to have everything", || async {
        let s = ew.sync_snapshot().await.expect("snapshot");
        let up = bw
            .edge(b, EdgeId::parse(&edge_id).expect("id"))
            .await
            .ok()
            .flatten()
            .map_or(0, |e| e.up_cursor);
        s.resets >= 1 && s.depth == 0 && up == s.head && s.cloud_cursor >= head(&bw).await
    })
    .await;
    eventually("the same on-hand in B and at the edge", || async {
        let mut same = true;
        for &item in &items {
            same &= bw.stock_level(item, w).await.ok() == ew.stock_level(item, w).await.ok();
        }
        same
    })
    .await;
    assert_eq!(
        bw.stock_level(items[0], w).await.expect("level").0,
        50 + 3 + 5
    );
    assert_eq!(
        bw.stock_level(items[1], w).await.expect("level").0,
        30 - 1 + 10,
        "B's own change reached the edge, the edge's reached B"
    );
    for (o, want) in [(o1, OrderStatus::Packed), (o2, OrderStatus::Picking)] {
        assert_eq!(bw.order(b, o).await.expect("order").status, want);
        assert_eq!(ew.order(b, o).await.expect("order").status, want);
    }
    let (at_b, at_edge) = (event_ids(&bw).await, event_ids(ew).await);
    assert!(
        at_b.values().chain(at_edge.values()).all(|n| *n == 1),
        "an event twice"
    );
    let own = ew.outgoing(0, i64::MAX, u32::MAX).await.expect("own");
    assert!(
        own.iter()
            .all(|(_, e)| at_b.contains_key(&e.id.to_string())),
        "an edge event is missing in B"
    );
    assert!(bw.check_ledger().await.expect("check").is_empty());
    assert!(ew.check_ledger().await.expect("check").is_empty());
    assert!(bw.conflicts(None, 10).await.expect("conflicts").is_empty());
    assert!(ew.conflicts(None, 10).await.expect("conflicts").is_empty());
    edge.stop().await;
    cloud_b.stop().await;
}
