//! Cloud, embedded broker and an edge, each serving for real: what the
//! cloud knows reaches the edge, what the stations do at the edge reaches
//! the cloud, and the edge's key works at the edge.

use depot_edge::settings::{Broker, Settings as EdgeSettings};
use depot_protocol::order::OrderStatus;
use depot_protocol::sync::EdgeId;
use depot_testkit::eventually;
use depot_testkit::http::Client;
use depot_testkit::seed;
use depot_wms::Wms;
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cloud_and_edge_converge_over_mqtt() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cloud_settings = depot_testkit::rig::cloud_settings(dir.path().join("cloud"));
    let cloud = Wms::open(&cloud_settings.database(), "cloud").expect("cloud");
    let seeded = seed::business("B")
        .warehouses(&[("MAD1", "Madrid", false)])
        .item("A")
        .seed(&cloud)
        .await;
    let (b, w, key, caller, item) = (
        seeded.business,
        seeded.warehouse,
        seeded.key,
        seeded.caller,
        seeded.items[0],
    );
    let edge_id = format!("e{}", std::process::id());
    let record = cloud
        .register_edge(b, EdgeId::parse(&edge_id).expect("id"), None)
        .await
        .expect("register");

    let broker = depot_cloud::Broker::start(&cloud_settings)
        .await
        .expect("broker");
    let broker_url = broker.url.to_string();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let (stop_cloud, cloud_stopped) = tokio::sync::oneshot::channel::<()>();
    let cloud_task = {
        let (cloud, settings) = (cloud.clone(), cloud_settings.clone());
        tokio::spawn(async move {
            depot_cloud::Daemon::new(cloud, settings.clone())
                .sync_through(&broker)
                .serve(listener, async {
                    let _ = cloud_stopped.await;
                })
                .await
        })
    };

    let edge_settings = EdgeSettings {
        business_id: b.0,
        edge_id: edge_id.clone(),
        node: record.node,
        data_dir: dir.path().join("edge"),
        broker: Broker {
            url: broker_url,
            ..Broker::default()
        },
        ..EdgeSettings::default()
    };
    let edge = depot_edge::open(&edge_settings).expect("edge");
    let (edge_base, stop_edge, edge_task) =
        depot_testkit::rig::serve_edge(edge.clone(), edge_settings).await;

    // Down: the catalog and the key reach the edge. Should it not, what
    // both sides know of the link says where it stopped.
    let arrived = tokio::time::timeout(
        Duration::from_secs(50),
        eventually("the item at the edge", || async {
            edge.item(b, item).await.is_ok()
        }),
    )
    .await;
    if arrived.is_err() {
        panic!(
            "the item did not reach the edge in 50 s; the edge's sync: {:?}; the cloud's record of it: {:?}",
            edge.sync_snapshot().await,
            cloud.edges(b).await
        );
    }
    eventually("the key at the edge", || async {
        matches!(edge.authenticate(&key).await, Ok(Some(_)))
    })
    .await;

    // Up: a station receives stock at the edge, over HTTP, with the key.
    let r = Client::new(&edge_base)
        .with_key(key.as_str())
        .post(
            &format!("/v1/inventory/{b}/adjust"),
            json!({"warehouse_id": w.0, "sku": "A", "reason": "received", "quantity": 7}),
        )
        .await;
    assert_eq!(r.status, 200);
    eventually("the movement in the cloud", || async {
        cloud.stock_level(item, w).await.map(|l| l.0).ok() == Some(7)
    })
    .await;

    // Down again: an order confirmed in the cloud is confirmed at the edge.
    let order = serde_json::from_value(
        json!({"channel": "web", "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"}, "external_ref": "E2E-1", "warehouse_id": w.0,
        "lines": [{"sku": "A", "quantity": 2}]}),
    )
    .expect("order");
    let (o, _) = cloud.create_order(caller, order).await.expect("ingest");
    cloud
        .set_order_status(caller, o.id, OrderStatus::Confirmed, None)
        .await
        .expect("confirm");
    eventually("the confirmed order at the edge", || async {
        edge.order(b, o.id).await.map(|o| o.status).ok() == Some(OrderStatus::Confirmed)
    })
    .await;
    assert_eq!(edge.stock_level(item, w).await.expect("level"), (7, 2));

    // The edge's own movement was not sent back down to it.
    eventually("an empty outbox", || async {
        edge.sync_snapshot()
            .await
            .map(|s| s.depth == 0 && s.connected)
            .unwrap_or(false)
    })
    .await;
    assert_eq!(
        edge.stock_level(item, w).await.expect("level"),
        cloud.stock_level(item, w).await.expect("level")
    );
    assert!(cloud.check_ledger().await.expect("check").is_empty());
    assert!(edge.check_ledger().await.expect("check").is_empty());

    let _ = stop_edge.send(());
    edge_task.await.expect("join").expect("edge");
    let _ = stop_cloud.send(());
    cloud_task.await.expect("join").expect("cloud");
}
