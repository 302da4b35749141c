//! Returns across nodes: a return authorised at the cloud is received at
//! the edge, cut off, while the cloud grades its last unit too, or calls
//! the return off. Both scans count on both nodes, what arrived wins over
//! a cancellation, and their books agree.

use super::counts_sync::{adjust, at, up};
use super::locations_sync::{Setup, down, located, setup};
use depot_protocol::OrderStatus;
use depot_protocol::returns::{Return, ReturnCreate, ReturnReceive, ReturnStatus};
use depot_wms::Wms;
use serde_json::json;

/// A dispatched order of 2 × ΦΕΤΑ, and a return of both units.
async fn returned(s: &Setup) -> Return {
    adjust(&s.cloud, s, json!({"reason": "received", "quantity": 5})).await;
    let req = serde_json::from_value(json!({"channel": "web", "external_ref": "Ω-7",
        "warehouse_id": s.warehouse.0, "lines": [{"sku": "ΦΕΤΑ", "quantity": 2}],
        "shipping_address": {"name": "Ελένη Παππά", "line1": "Ερμού 12", "postal_code": "105 63",
                             "city": "Αθήνα", "country": "GR"}}))
    .expect("order");
    let (order, _) = s.cloud.create_order(s.caller, req).await.expect("order");
    for status in [
        OrderStatus::Confirmed,
        OrderStatus::Picking,
        OrderStatus::Packed,
        OrderStatus::Dispatched,
    ] {
        s.cloud
            .set_order_status(s.caller, order.id, status, None)
            .await
            .expect("status");
    }
    let req: ReturnCreate = serde_json::from_value(json!({"order_id": order.id,
        "lines": [{"line_no": 1, "quantity": 2, "reason": "not_as_described"}]}))
    .expect("return");
    s.cloud.create_return(s.caller, req).await.expect("return")
}

async fn grade(wms: &Wms, s: &Setup, r: &Return, grade: &str) {
    let req: ReturnReceive =
        serde_json::from_value(json!({"code": "ΦΕΤΑ", "grade": grade})).expect("scan");
    wms.receive_return(s.caller, r.id, req)
        .await
        .expect("graded");
}

#[tokio::test]
async fn units_graded_at_both_ends_while_apart_both_count_on_both() {
    let s = setup().await;
    for (code, kind) in [("RET-1", "returns"), ("Q-1", "quarantine")] {
        located(&s.cloud, &s, code, kind).await;
    }
    let r = returned(&s).await;
    down(&s).await;
    assert_eq!(
        s.edge
            .customer_return(s.business, r.id)
            .await
            .expect("at the edge")
            .status,
        ReturnStatus::Open
    );

    // Apart: the edge restocks one unit, then the other; the cloud, told
    // of a unit at its own desk, grades one damaged.
    grade(&s.edge, &s, &r, "restock").await;
    grade(&s.edge, &s, &r, "restock").await;
    grade(&s.cloud, &s, &r, "damaged").await;
    up(&s).await;
    down(&s).await;

    for wms in [&s.cloud, &s.edge] {
        let back = wms.customer_return(s.business, r.id).await.expect("return");
        let l = &back.lines[0];
        assert_eq!(
            (back.status, l.restocked, l.damaged, l.scrapped, l.remaining),
            (ReturnStatus::Received, 2, 1, 0, 0),
            "{}",
            wms.origin()
        );
        assert_eq!(
            (at(wms, &s, "RET-1").await, at(wms, &s, "Q-1").await),
            (2, 1)
        );
        assert!(wms.check_ledger().await.expect("check").is_empty());
    }
}

#[tokio::test]
async fn a_unit_graded_at_the_edge_wins_over_a_cancellation_at_the_cloud() {
    let s = setup().await;
    located(&s.cloud, &s, "Q-1", "quarantine").await;
    let r = returned(&s).await;
    down(&s).await;
    // Apart: the parcel arrives at the warehouse while the merchant, told
    // nothing, calls the return off.
    grade(&s.edge, &s, &r, "damaged").await;
    s.cloud
        .cancel_return(s.caller, r.id)
        .await
        .expect("cancelled");
    up(&s).await;
    down(&s).await;
    for wms in [&s.cloud, &s.edge] {
        let back = wms.customer_return(s.business, r.id).await.expect("return");
        assert_eq!(
            (back.status, back.lines[0].damaged),
            (ReturnStatus::Receiving, 1),
            "{}",
            wms.origin()
        );
        assert_eq!(at(wms, &s, "Q-1").await, 1);
        assert!(wms.check_ledger().await.expect("check").is_empty());
    }
}
