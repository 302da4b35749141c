//! One order changed on both sides: cancellation wins until dispatch, and
//! dispatch stands after it; both are recorded.

use super::*;

#[tokio::test]
async fn a_cancellation_wins_over_packing_done_offline() {
    let mut p = pair().await;
    adjust(&p.cloud.wms, p.caller, p.warehouse, 5).await;
    let o = order(&mut p, "R2", 2).await;
    p.cloud
        .wms
        .set_order_status(p.caller, o, OrderStatus::Confirmed, None)
        .await
        .expect("confirm");
    exchange(&mut p.cloud, &p.edge).await;

    // Offline: the cloud cancels, the edge packs.
    p.cloud
        .wms
        .set_order_status(p.caller, o, OrderStatus::Cancelled, None)
        .await
        .expect("cancel");
    for s in [OrderStatus::Picking, OrderStatus::Packed] {
        p.edge
            .wms
            .set_order_status(p.caller, o, s, None)
            .await
            .expect("edge status");
    }
    let at_cloud = exchange(&mut p.edge, &p.cloud).await;
    assert!(
        at_cloud
            .iter()
            .all(|o| matches!(o, Outcome::Rejected { .. })),
        "{at_cloud:?}"
    );
    let at_edge = exchange(&mut p.cloud, &p.edge).await;
    assert_eq!(at_edge, [Outcome::Applied]);
    assert_eq!(status(&p.cloud.wms, &p, o).await, OrderStatus::Cancelled);
    assert_eq!(status(&p.edge.wms, &p, o).await, OrderStatus::Cancelled);
    same_books(&p).await;
    let conflicts = p
        .cloud
        .wms
        .conflicts(Some(p.caller.business_id), 10)
        .await
        .expect("conflicts");
    assert_eq!(conflicts.len(), 2, "{conflicts:?}");
    assert!(
        conflicts
            .iter()
            .all(|c| c.resolution == "rejected" && c.reason.contains("cancelled"))
    );
}

#[tokio::test]
async fn a_dispatch_stands_over_a_later_cancellation() {
    let mut p = pair().await;
    adjust(&p.cloud.wms, p.caller, p.warehouse, 5).await;
    let o = order(&mut p, "R3", 2).await;
    p.cloud
        .wms
        .set_order_status(p.caller, o, OrderStatus::Confirmed, None)
        .await
        .expect("confirm");
    exchange(&mut p.cloud, &p.edge).await;
    for s in [OrderStatus::Picking, OrderStatus::Packed] {
        p.edge
            .wms
            .set_order_status(p.caller, o, s, None)
            .await
            .expect("edge status");
    }
    exchange(&mut p.edge, &p.cloud).await;

    // Offline: the edge dispatches, then the cloud cancels.
    p.edge
        .wms
        .set_order_status(p.caller, o, OrderStatus::Dispatched, None)
        .await
        .expect("dispatch");
    p.cloud
        .wms
        .set_order_status(p.caller, o, OrderStatus::Cancelled, None)
        .await
        .expect("cancel");
    let at_cloud = exchange(&mut p.edge, &p.cloud).await;
    assert!(
        at_cloud.iter().any(
            |o| matches!(o, Outcome::Merged { resolution, .. } if resolution == "dispatched stands")
        ),
        "{at_cloud:?}"
    );
    let at_edge = exchange(&mut p.cloud, &p.edge).await;
    assert!(
        matches!(at_edge.as_slice(), [Outcome::Rejected { .. }]),
        "{at_edge:?}"
    );
    assert_eq!(status(&p.cloud.wms, &p, o).await, OrderStatus::Dispatched);
    assert_eq!(status(&p.edge.wms, &p, o).await, OrderStatus::Dispatched);
    same_books(&p).await;
    assert_eq!(
        p.cloud
            .wms
            .stock_level(p.item, p.warehouse)
            .await
            .expect("level"),
        (3, 0)
    );
    assert_eq!(
        p.edge
            .wms
            .conflicts(None, 10)
            .await
            .expect("conflicts")
            .len(),
        1
    );
}
