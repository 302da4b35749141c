//! The design's conflict rule, end to end over the real link: while the
//! edge is cut off, the cloud cancels two orders; the floor packs one and
//! dispatches the other. The cancellation wins over the packing; the
//! dispatch stands over the cancellation. Each side records what it could
//! not apply as sent, and shows it: on the edge's status route, in its
//! event log (`sync.conflict`), and in the conflicts list of both.

use crate::common;
use common::RunningEdge;
use depot_edge::faults::Faults;
use depot_protocol::OrderId;
use depot_protocol::order::OrderStatus;
use depot_testkit::http::Client;
use depot_testkit::{eventually, rig::Rig};
use depot_wms::Wms;
use serde_json::{Value, json};

async fn set_status(edge: &Client, rig: &Rig, o: OrderId, s: &str) {
    let r = edge
        .put(
            &format!("/v1/orders/{}/{o}/status", rig.business),
            json!({"status": s}),
        )
        .await;
    assert_eq!(r.status, 200, "{s}: {}", r.text());
}

async fn get(server: &Client, path: String) -> Value {
    let r = server.get(&path).await;
    assert_eq!(r.status, 200);
    r.body
}

async fn status_of(wms: &Wms, rig: &Rig, o: OrderId) -> Option<OrderStatus> {
    wms.order(rig.business, o).await.ok().map(|o| o.status)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cancellation_wins_until_dispatch_and_both_sides_show_the_conflicts() {
    let rig = Rig::start("conf-1", true).await;
    let (b, w, caller) = (rig.business, rig.warehouse, rig.caller);
    let item = rig.item("A").await;
    let cloud = rig.cloud.clone();
    cloud
        .adjust(
            caller,
            serde_json::from_value(
                json!({"warehouse_id": w.0, "sku": "A", "reason": "received", "quantity": 20}),
            )
            .expect("adj"),
        )
        .await
        .expect("stock");
    let mut orders = Vec::new();
    for reference in ["PACKED-OFFLINE", "DISPATCHED-OFFLINE"] {
        let (o, _) = cloud
            .create_order(
                caller,
                serde_json::from_value(json!({"channel": "web", "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"}, "external_ref": reference,
                "warehouse_id": w.0, "lines": [{"sku": "A", "quantity": 3}]}))
                .expect("order"),
            )
            .await
            .expect("order");
        cloud
            .set_order_status(caller, o.id, OrderStatus::Confirmed, None)
            .await
            .expect("confirm");
        orders.push(o.id);
    }
    let (packed, dispatched) = (orders[0], orders[1]);
    let mut settings = rig.edge_settings();
    settings.broker.resend_after_secs = 2;
    let edge = RunningEdge::start(settings, Faults::default()).await;
    let ew = edge.wms.clone();
    let client = Client::new(&edge.base).with_key(rig.key.as_str());
    let cloud_api = Client::new(&rig.cloud_base).with_key(rig.key.as_str());
    eventually("the orders at the edge", || async {
        status_of(&ew, &rig, dispatched).await == Some(OrderStatus::Confirmed)
    })
    .await;
    for s in ["picking", "packed"] {
        set_status(&client, &rig, dispatched, s).await;
    }
    eventually("the packing to reach the cloud", || async {
        status_of(&cloud, &rig, dispatched).await == Some(OrderStatus::Packed)
    })
    .await;

    rig.link().cut();
    eventually("the edge to notice", || async {
        ew.sync_snapshot().await.is_ok_and(|s| !s.connected)
    })
    .await;
    for s in ["picking", "packed"] {
        set_status(&client, &rig, packed, s).await;
    }
    set_status(&client, &rig, dispatched, "dispatched").await;
    for o in [packed, dispatched] {
        cloud
            .set_order_status(caller, o, OrderStatus::Cancelled, Some("customer".into()))
            .await
            .expect("cancel");
    }
    rig.link().restore();

    eventually("both sides to settle", || async {
        status_of(&ew, &rig, packed).await == Some(OrderStatus::Cancelled)
            && status_of(&cloud, &rig, dispatched).await == Some(OrderStatus::Dispatched)
            && ew.sync_snapshot().await.is_ok_and(|s| s.depth == 0)
    })
    .await;
    assert_eq!(
        status_of(&cloud, &rig, packed).await,
        Some(OrderStatus::Cancelled)
    );
    assert_eq!(
        status_of(&ew, &rig, dispatched).await,
        Some(OrderStatus::Dispatched)
    );
    eventually("the same books", || async {
        ew.stock_level(item, w).await.ok() == cloud.stock_level(item, w).await.ok()
    })
    .await;
    // The dispatched order's goods left; the cancelled one's stay.
    assert_eq!(cloud.stock_level(item, w).await.expect("level"), (17, 0));

    // The cloud: the edge's picking and packing of the cancelled order were
    // refused, the dispatch was applied over the cancellation.
    let at_cloud = get(&cloud_api, format!("/v1/conflicts/{b}/list")).await;
    let rows = at_cloud["data"].as_array().expect("rows").clone();
    let refused = rows
        .iter()
        .filter(|c| c["resolution"] == "rejected" && c["origin"] == "edge:conf-1")
        .count();
    assert_eq!(refused, 2, "{rows:#?}");
    assert!(
        rows.iter().any(|c| c["resolution"] == "dispatched stands"),
        "{rows:#?}"
    );

    // The edge: it learned of its two refused events from the acks, and
    // refused the cancellation of what it had dispatched.
    eventually("the edge to record the refusals", || async {
        ew.sync_snapshot().await.is_ok_and(|s| s.conflicts == 3)
    })
    .await;
    let status = get(&client, "/v1/edge/status".to_owned()).await;
    assert_eq!(status["data"]["conflicts"], 3, "{status:#}");
    let listed = get(&client, format!("/v1/conflicts/{b}/list?rejected=true")).await;
    assert_eq!(listed["recordsFiltered"], "3", "{listed:#}");
    let stream = get(&client, format!("/v1/events/{b}/list?kind=sync.conflict")).await;
    let events = stream["data"]["events"].as_array().expect("events").clone();
    assert_eq!(events.len(), 3, "{stream:#}");
    assert!(
        events.iter().any(|e| e["payload"]["origin"] == "cloud"
            && e["payload"]["reason"]
                .as_str()
                .is_some_and(|r| r.contains("dispatched"))),
        "{events:#?}"
    );
    assert!(
        events
            .iter()
            .filter(|e| e["payload"]["reason"]
                .as_str()
                .is_some_and(|r| r.contains("the cloud refused it")))
            .count()
            == 2,
        "{events:#?}"
    );
    edge.stop().await;
    rig.stop().await;
}
