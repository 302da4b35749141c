//! The link to the broker is cut (a proxy between the edge and the broker
//! stops forwarding and refuses connections): stations keep working at the
//! edge, the cloud keeps working too, and once the link is back everything
//! converges: the same on-hand, the same order statuses, each event once.

mod common;

use common::{Link, event_ids, eventually};
use depot_cloud::settings::Settings as CloudSettings;
use depot_edge::settings::{Broker, Settings as EdgeSettings};
use depot_protocol::order::{Address, OrderStatus};
use depot_protocol::sync::EdgeId;
use depot_protocol::tenant::Caller;
use depot_wms::Wms;
use serde_json::json;
use std::net::SocketAddr;
use tokio::net::TcpListener;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stations_work_through_an_outage_and_everything_converges() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cloud_settings = CloudSettings {
        data_dir: dir.path().join("cloud"),
        ..CloudSettings::default()
    };
    cloud_settings.broker.embedded_listen = "127.0.0.1:0".parse().expect("addr");
    let cloud = Wms::open(&cloud_settings.database(), "cloud").expect("cloud");
    let b = cloud
        .create_business("B", "EUR", "UTC")
        .await
        .expect("business");
    let w = cloud
        .create_warehouse(b.id, "W", "W", Address::default(), false)
        .await
        .expect("wh");
    let key = cloud.create_key(b.id, None).await.expect("key");
    let caller = Caller {
        key_id: key.key.id,
        business_id: b.id,
    };
    let item = cloud
        .create_item(
            b.id,
            serde_json::from_value(json!({"sku": "A", "name": "A"})).expect("item"),
        )
        .await
        .expect("item");
    cloud
        .adjust(
            caller,
            serde_json::from_value(
                json!({"warehouse_id": w.id.0, "sku": "A", "reason": "received", "quantity": 50}),
            )
            .expect("adj"),
        )
        .await
        .expect("stock");
    let (o, _) = cloud
        .create_order(caller, serde_json::from_value(json!({"channel": "web", "external_ref": "O1", "warehouse_id": w.id.0, "lines": [{"sku": "A", "quantity": 4}]})).expect("order"))
        .await
        .expect("order");
    cloud
        .set_order_status(caller, o.id, OrderStatus::Confirmed, None)
        .await
        .expect("confirm");
    let node = cloud
        .register_edge(b.id, EdgeId::parse("out-1").expect("id"), None)
        .await
        .expect("register")
        .node;

    // The real broker is only reachable through the proxy.
    let broker = depot_cloud::Broker::start(&cloud_settings)
        .await
        .expect("broker");
    let broker_addr: SocketAddr = broker
        .url
        .to_string()
        .trim_start_matches("mqtt://")
        .parse()
        .expect("broker addr");
    let link = Link::start(broker_addr).await;
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let (stop_cloud, cloud_stopped) = tokio::sync::oneshot::channel::<()>();
    let cloud_task = {
        let (cloud, settings) = (cloud.clone(), cloud_settings.clone());
        tokio::spawn(async move {
            depot_cloud::serve(listener, cloud, &settings, &broker, async {
                let _ = cloud_stopped.await;
            })
            .await
        })
    };
    let settings = EdgeSettings {
        business_id: b.id.0,
        edge_id: "out-1".into(),
        node,
        data_dir: dir.path().join("edge"),
        broker: Broker {
            url: format!("mqtt://{}", link.addr),
            resend_after_secs: 2,
            ..Broker::default()
        },
        ..EdgeSettings::default()
    };
    let edge = depot_edge::open(&settings).expect("edge");
    let edge_listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", edge_listener.local_addr().expect("addr"));
    let (stop_edge, edge_stopped) = tokio::sync::oneshot::channel::<()>();
    let edge_task = tokio::spawn(depot_edge::serve(
        edge_listener,
        edge.clone(),
        settings,
        async {
            let _ = edge_stopped.await;
        },
    ));
    eventually("the confirmed order at the edge", || async {
        edge.order(b.id, o.id)
            .await
            .is_ok_and(|o| o.status == OrderStatus::Confirmed)
    })
    .await;

    // The link goes down.
    link.cut();
    eventually("the edge to notice", || async {
        edge.sync_snapshot().await.is_ok_and(|s| !s.connected)
    })
    .await;

    // Stations keep going at the edge, over HTTP: counts, receipts, the order.
    let client = reqwest::Client::new();
    let post = |path: String, body: serde_json::Value| {
        client
            .post(format!("{base}{path}"))
            .header("X-API-KEY", &key.secret)
            .json(&body)
            .send()
    };
    for q in [3, 5, 8] {
        let r = post(
            format!("/v1/inventory/{}/adjust", b.id),
            json!({"warehouse_id": w.id.0, "sku": "A", "reason": "received", "quantity": q}),
        )
        .await
        .expect("adjust");
        assert_eq!(r.status(), 200);
    }
    for s in ["picking", "packed"] {
        let r = client
            .put(format!("{base}/v1/orders/{}/{}/status", b.id, o.id))
            .header("X-API-KEY", &key.secret)
            .json(&json!({"status": s}))
            .send()
            .await
            .expect("status");
        assert_eq!(r.status(), 200);
    }
    // …and the cloud keeps going too.
    cloud
        .adjust(
            caller,
            serde_json::from_value(
                json!({"warehouse_id": w.id.0, "sku": "A", "reason": "damaged", "quantity": 2}),
            )
            .expect("adj"),
        )
        .await
        .expect("cloud adjust");
    assert!(edge.sync_snapshot().await.expect("snapshot").depth >= 5);

    // The link comes back: both sides converge.
    link.restore();
    eventually("the edge's backlog to drain", || async {
        edge.sync_snapshot()
            .await
            .is_ok_and(|s| s.connected && s.depth == 0)
    })
    .await;
    eventually("the cloud's damage to reach the edge", || async {
        edge.stock_level(item.id, w.id).await.ok() == cloud.stock_level(item.id, w.id).await.ok()
    })
    .await;
    let level = cloud.stock_level(item.id, w.id).await.expect("level");
    assert_eq!(level, (50 + 3 + 5 + 8 - 2, 4));
    assert_eq!(
        cloud.order(b.id, o.id).await.expect("order").status,
        OrderStatus::Packed
    );
    assert_eq!(
        edge.order(b.id, o.id).await.expect("order").status,
        OrderStatus::Packed
    );
    let (at_cloud, at_edge) = (event_ids(&cloud).await, event_ids(&edge).await);
    assert!(
        at_cloud.values().chain(at_edge.values()).all(|n| *n == 1),
        "an event twice"
    );
    // Every event the edge made is in the cloud.
    let edge_own = edge.outgoing(0, i64::MAX, u32::MAX).await.expect("own");
    assert!(
        edge_own
            .iter()
            .all(|(_, e)| at_cloud.contains_key(&e.id.to_string()))
    );
    assert!(cloud.check_ledger().await.expect("check").is_empty());
    assert!(edge.check_ledger().await.expect("check").is_empty());
    assert!(
        cloud
            .conflicts(None, 10)
            .await
            .expect("conflicts")
            .is_empty()
    );

    let _ = stop_edge.send(());
    edge_task.await.expect("join").expect("edge");
    let _ = stop_cloud.send(());
    cloud_task.await.expect("join").expect("cloud");
}
