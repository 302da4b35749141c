//! Duplicated, delayed and reordered messages (20% each way, injected in
//! the edge's link) and connections dropped at random points, while
//! stations and the cloud both keep writing: the result converges with
//! nothing lost and nothing applied twice.

use crate::common;
use common::RunningEdge;
use depot_edge::faults::Faults;
use depot_protocol::order::OrderStatus;
use depot_testkit::http::Client;
use depot_testkit::{events::event_ids, eventually, rig::Rig};
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn converges_through_duplicates_reordering_and_drops() {
    // Shown when the test fails: what the link and the cloud were doing.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("DEPOT_TEST_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .with_test_writer()
        .try_init();
    let rig = Rig::start("chaos-1", true).await;
    let (b, w, caller, cloud) = (rig.business, rig.warehouse, rig.caller, rig.cloud.clone());
    let items = [rig.item("EDGE").await, rig.item("CLOUD").await];
    cloud
        .adjust(
            caller,
            serde_json::from_value(
                json!({"warehouse_id": w.0, "sku": "EDGE", "reason": "received", "quantity": 100}),
            )
            .expect("adj"),
        )
        .await
        .expect("stock");
    let mut orders = Vec::new();
    for n in 0..4 {
        let (o, _) = cloud
            .create_order(caller, serde_json::from_value(json!({"channel": "web", "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"}, "external_ref": format!("F{n}"), "warehouse_id": w.0, "lines": [{"sku": "EDGE", "quantity": 2}]})).expect("order"))
            .await
            .expect("order");
        cloud
            .set_order_status(caller, o.id, OrderStatus::Confirmed, None)
            .await
            .expect("confirm");
        orders.push(o.id);
    }
    let mut settings = rig.edge_settings();
    settings.broker.window = 40;
    settings.broker.resend_after_secs = 1;
    let running = RunningEdge::start(
        settings,
        Faults {
            duplicate: 0.2,
            delay: 0.2,
            seed: 20261121,
        },
    )
    .await;
    let (edge, base) = (running.wms.clone(), running.base.clone());
    let key = rig.key.clone();
    eventually("the orders at the edge", || async {
        edge.order(b, orders[3])
            .await
            .is_ok_and(|o| o.status == OrderStatus::Confirmed)
    })
    .await;

    // Stations at the edge: many small writes and order progress.
    let client = Client::new(&base);
    let stations = {
        let (client, secret, bid, wid, orders) =
            (client.clone(), key.clone(), b.0, w.0, orders.clone());
        tokio::spawn(async move {
            for n in 0..150 {
                let delta = if n % 4 == 0 { -1 } else { 1 };
                let r = client.raw("POST", &format!("/v1/inventory/{bid}/adjust"))
                    .header("X-API-KEY", &secret)
                    .json(&json!({"warehouse_id": wid, "sku": "EDGE", "reason": "adjusted", "delta": delta}))
                    .send().await;
                assert_eq!(r.status, 200);
                if n % 30 == 0 {
                    let o = orders[(n / 30) % orders.len()];
                    let next = ["picking", "packed"][(n / 30 / orders.len()) % 2];
                    let _ = client
                        .raw("PUT", &format!("/v1/orders/{bid}/{o}/status"))
                        .header("X-API-KEY", &secret)
                        .json(&json!({"status": next}))
                        .send()
                        .await;
                }
            }
        })
    };
    // The cloud writes too, on its own item.
    let office = {
        let cloud = cloud.clone();
        let wid = w.0;
        tokio::spawn(async move {
            for _ in 0..40 {
                let req = serde_json::from_value(json!({"warehouse_id": wid, "sku": "CLOUD", "reason": "received", "quantity": 3})).expect("adj");
                cloud.adjust(caller, req).await.expect("cloud adjust");
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    };
    // And the connection drops at random points.
    let mut rng = 0x5eed_u64;
    for _ in 0..6 {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        tokio::time::sleep(Duration::from_millis(40 + (rng >> 33) % 120)).await;
        rig.link().cut();
        tokio::time::sleep(Duration::from_millis(30 + (rng >> 40) % 80)).await;
        rig.link().restore();
    }
    stations.await.expect("stations");
    office.await.expect("office");

    eventually("the edge's backlog to drain", || async {
        edge.sync_snapshot()
            .await
            .is_ok_and(|s| s.connected && s.depth == 0)
    })
    .await;
    eventually("the cloud's writes at the edge", || async {
        edge.stock_level(items[1], w).await.ok() == cloud.stock_level(items[1], w).await.ok()
    })
    .await;
    for item in &items {
        assert_eq!(
            edge.stock_level(*item, w).await.expect("level"),
            cloud.stock_level(*item, w).await.expect("level")
        );
    }
    assert_eq!(cloud.stock_level(items[1], w).await.expect("level").0, 120);
    for o in &orders {
        assert_eq!(
            edge.order(b, *o).await.expect("order").status,
            cloud.order(b, *o).await.expect("order").status
        );
    }
    let (at_cloud, at_edge) = (event_ids(&cloud).await, event_ids(&edge).await);
    assert!(
        at_cloud.values().chain(at_edge.values()).all(|n| *n == 1),
        "an event applied twice"
    );
    let own = edge.outgoing(0, i64::MAX, u32::MAX).await.expect("own");
    assert_eq!(own.len(), 150 + 5);
    assert!(
        own.iter()
            .all(|(_, e)| at_cloud.contains_key(&e.id.to_string())),
        "an edge event is missing in the cloud"
    );
    assert!(cloud.check_ledger().await.expect("check").is_empty());
    assert!(edge.check_ledger().await.expect("check").is_empty());

    running.stop().await;
    rig.stop().await;
}
