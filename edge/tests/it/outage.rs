//! The link to the broker is cut (a proxy between the edge and the broker
//! stops forwarding and refuses connections): stations keep working at the
//! edge, the cloud keeps working too, and once the link is back everything
//! converges: the same on-hand, the same order statuses, each event once.

use crate::common;
use common::RunningEdge;
use depot_edge::faults::Faults;
use depot_protocol::order::OrderStatus;
use depot_testkit::http::Client;
use depot_testkit::{events::event_ids, eventually, rig::Rig};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stations_work_through_an_outage_and_everything_converges() {
    let rig = Rig::start("out-1", true).await;
    let (b, w, caller) = (rig.business, rig.warehouse, rig.caller);
    let item = rig.item("A").await;
    let cloud = &rig.cloud;
    cloud
        .adjust(
            caller,
            serde_json::from_value(
                json!({"warehouse_id": w.0, "sku": "A", "reason": "received", "quantity": 50}),
            )
            .expect("adj"),
        )
        .await
        .expect("stock");
    let (o, _) = cloud
        .create_order(caller, serde_json::from_value(json!({"channel": "web", "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"}, "external_ref": "O1", "warehouse_id": w.0, "lines": [{"sku": "A", "quantity": 4}]})).expect("order"))
        .await
        .expect("order");
    cloud
        .set_order_status(caller, o.id, OrderStatus::Confirmed, None)
        .await
        .expect("confirm");
    let mut settings = rig.edge_settings();
    settings.broker.resend_after_secs = 2;
    let edge = RunningEdge::start(settings, Faults::default()).await;
    let ew = &edge.wms;
    eventually("the confirmed order at the edge", || async {
        ew.order(b, o.id)
            .await
            .is_ok_and(|o| o.status == OrderStatus::Confirmed)
    })
    .await;

    // The link goes down.
    rig.link().cut();
    eventually("the edge to notice", || async {
        ew.sync_snapshot().await.is_ok_and(|s| !s.connected)
    })
    .await;

    // Stations keep going at the edge, over HTTP: receipts and the order.
    let client = Client::new(&edge.base);
    for q in [3, 5, 8] {
        let r = client
            .raw("POST", &format!("/v1/inventory/{b}/adjust"))
            .header("X-API-KEY", &rig.key)
            .json(&json!({"warehouse_id": w.0, "sku": "A", "reason": "received", "quantity": q}))
            .send()
            .await;
        assert_eq!(r.status, 200);
    }
    for s in ["picking", "packed"] {
        let r = client
            .raw("PUT", &format!("/v1/orders/{b}/{}/status", o.id))
            .header("X-API-KEY", &rig.key)
            .json(&json!({"status": s}))
            .send()
            .await;
        assert_eq!(r.status, 200);
    }
    // …and the cloud keeps going too.
    cloud
        .adjust(
            caller,
            serde_json::from_value(
                json!({"warehouse_id": w.0, "sku": "A", "reason": "damaged", "quantity": 2}),
            )
            .expect("adj"),
        )
        .await
        .expect("cloud adjust");
    assert!(ew.sync_snapshot().await.expect("snapshot").depth >= 5);

    // The link comes back: both sides converge.
    rig.link().restore();
    eventually("the edge's backlog to drain", || async {
        ew.sync_snapshot()
            .await
            .is_ok_and(|s| s.connected && s.depth == 0)
    })
    .await;
    eventually("the cloud's damage to reach the edge", || async {
        ew.stock_level(item, w).await.ok() == cloud.stock_level(item, w).await.ok()
    })
    .await;
    assert_eq!(
        cloud.stock_level(item, w).await.expect("level"),
        (50 + 3 + 5 + 8 - 2, 4)
    );
    assert_eq!(
        cloud.order(b, o.id).await.expect("order").status,
        OrderStatus::Packed
    );
    assert_eq!(
        ew.order(b, o.id).await.expect("order").status,
        OrderStatus::Packed
    );
    let (at_cloud, at_edge) = (event_ids(cloud).await, event_ids(ew).await);
    assert!(
        at_cloud.values().chain(at_edge.values()).all(|n| *n == 1),
        "an event twice"
    );
    let own = ew.outgoing(0, i64::MAX, u32::MAX).await.expect("own");
    assert!(
        own.iter()
            .all(|(_, e)| at_cloud.contains_key(&e.id.to_string())),
        "an edge event is missing in the cloud"
    );
    assert!(cloud.check_ledger().await.expect("check").is_empty());
    assert!(ew.check_ledger().await.expect("check").is_empty());
    assert!(
        cloud
            .conflicts(None, 10)
            .await
            .expect("conflicts")
            .is_empty()
    );
    edge.stop().await;
    rig.stop().await;
}

/// What the database says of the link is the last run's: a box that lost
/// power while connected must not show, once connected again, that it has
/// been connected since a time long gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_run_shows_its_own_link_not_the_last_runs() {
    let rig = Rig::start("out-2", true).await;
    let settings = rig.edge_settings();
    let edge = RunningEdge::start(settings.clone(), Faults::default()).await;
    let ew = edge.wms.clone();
    eventually("the edge connected", || async {
        ew.sync_snapshot().await.is_ok_and(|s| s.connected)
    })
    .await;
    edge.stop().await;
    // As a power cut leaves it: connected, since long ago, with a reason
    // of that run's.
    ew.write(|conn| {
        conn.execute(
            "UPDATE sync_state SET connected = 1, connected_since = '2020-01-01T00:00:00Z',
                    link_error = 'the last run''s trouble'",
            &[],
        )?;
        Ok(())
    })
    .await
    .expect("as a power cut leaves it");
    ew.close().await.expect("close");
    drop(ew);
    let edge = RunningEdge::start(settings, Faults::default()).await;
    let ew = &edge.wms;
    eventually("this run's connection, since now", || async {
        ew.sync_snapshot().await.is_ok_and(|s| {
            s.connected
                && s.connected_since.is_some_and(|t| t.as_str() > "2026")
                && s.link_error.is_none()
        })
    })
    .await;
    edge.stop().await;
}
