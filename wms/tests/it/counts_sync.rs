//! Cycle counts across nodes: a count made at the cloud is counted on the
//! floor; the cloud approves it while the edge, cut off, moves stock out
//! of the location and approves it too. Both books converge on what the
//! counter found less what left afterwards, with the variance booked once.

use super::locations_sync::{Setup, down, edge_log, located, setup};
use depot_protocol::count::{CountCreate, CountScan, CountStatus};
use depot_protocol::{CountId, Page};
use depot_wms::Wms;
use serde_json::json;

pub(crate) async fn adjust(wms: &Wms, s: &Setup, body: serde_json::Value) {
    let mut body = body;
    body["warehouse_id"] = json!(s.warehouse.0);
    body["sku"] = json!("ΦΕΤΑ");
    wms.adjust(s.caller, serde_json::from_value(body).expect("adjust"))
        .await
        .expect("adjusted");
}

async fn scan(wms: &Wms, s: &Setup, id: CountId, body: serde_json::Value) {
    let req: CountScan = serde_json::from_value(body).expect("scan");
    wms.count_scan(s.caller, id, req).await.expect("scanned");
}

/// On-hand of the setup's item at `location`, as `wms` lists it.
pub(crate) async fn at(wms: &Wms, s: &Setup, location: &str) -> i64 {
    let page = Page::parse(None, None).expect("page");
    let depot_protocol::Listed { rows, .. } = wms
        .list_locations(s.business, Default::default(), page)
        .await
        .expect("locations");
    rows.into_iter()
        .find(|l| l.record.code == location)
        .map(|l| l.on_hand)
        .unwrap_or(0)
}

pub(crate) async fn up(s: &Setup) {
    let ack = s
        .cloud
        .receive_batch(s.business, s.edge_id.clone(), edge_log(s).await)
        .await
        .expect("up");
    assert!(ack.rejected.is_empty(), "{:?}", ack.rejected);
}

#[tokio::test]
async fn an_approval_at_the_cloud_and_moves_at_the_edge_converge_and_book_once() {
    let s = setup().await;
    for (code, kind) in [("P-1", "pick"), ("R-1", "bulk")] {
        located(&s.cloud, &s, code, kind).await;
    }
    adjust(
        &s.cloud,
        &s,
        json!({"reason": "received", "quantity": 10, "location": "P-1"}),
    )
    .await;
    let req: CountCreate = serde_json::from_value(json!({"warehouse_id": s.warehouse.0,
        "locations": ["P-1"], "tolerance_units": 5}))
    .expect("create");
    let count = s.cloud.create_count(s.caller, req).await.expect("count");
    let id = count.summary.id;
    down(&s).await;

    // On the floor: 8 found where the books say 10; within the tolerance.
    scan(
        &s.edge,
        &s,
        id,
        json!({"location": "P-1", "code": "ΦΕΤΑ", "quantity": 8}),
    )
    .await;
    scan(&s.edge, &s, id, json!({"location": "P-1"})).await;
    up(&s).await;

    // The edge, cut off again, moves 3 out of P-1 and approves the count
    // itself; the cloud approves it too, without either knowing.
    adjust(
        &s.edge,
        &s,
        json!({"reason": "transfer", "quantity": 3, "location": "P-1", "to_location": "R-1"}),
    )
    .await;
    let at_edge = s
        .edge
        .approve_count(s.caller, id)
        .await
        .expect("approved at the edge");
    let at_cloud = s
        .cloud
        .approve_count(s.caller, id)
        .await
        .expect("approved at the cloud");
    assert_eq!(at_edge.lines, at_cloud.lines);
    assert_eq!(at(&s.cloud, &s, "P-1").await, 8);
    assert_eq!(at(&s.edge, &s, "P-1").await, 5);

    // Both ways: the same books, the variance booked once.
    up(&s).await;
    down(&s).await;
    for wms in [&s.cloud, &s.edge] {
        assert_eq!((at(wms, &s, "P-1").await, at(wms, &s, "R-1").await), (5, 3));
        let c = wms.count(s.business, id).await.expect("count");
        assert_eq!(c.summary.status, CountStatus::Approved);
        assert!(wms.check_ledger().await.expect("check").is_empty());
    }
}

#[tokio::test]
async fn a_count_made_and_recounted_offline_reaches_the_cloud() {
    let s = setup().await;
    located(&s.cloud, &s, "P-1", "pick").await;
    adjust(
        &s.cloud,
        &s,
        json!({"reason": "received", "quantity": 4, "location": "P-1"}),
    )
    .await;
    // A second counter's key, made at the cloud as keys are.
    let second = s
        .cloud
        .create_key(s.business, Some("second counter".into()))
        .await
        .expect("key");
    let other = depot_protocol::tenant::Caller {
        key_id: second.key.id,
        business_id: s.business,
    };
    down(&s).await;

    let req: CountCreate =
        serde_json::from_value(json!({"warehouse_id": s.warehouse.0, "locations": ["P-1"]}))
            .expect("create");
    let count = s.edge.create_count(s.caller, req).await.expect("count");
    let id = count.summary.id;
    assert_eq!(id.0 >> 40, 1, "numbered in the edge's range");
    scan(
        &s.edge,
        &s,
        id,
        json!({"location": "P-1", "code": "ΦΕΤΑ", "quantity": 1}),
    )
    .await;
    scan(&s.edge, &s, id, json!({"location": "P-1"})).await;
    let recount: CountScan =
        serde_json::from_value(json!({"location": "P-1", "code": "ΦΕΤΑ", "quantity": 2}))
            .expect("scan");
    let refused = s.edge.count_scan(s.caller, id, recount.clone()).await;
    assert!(refused.is_err(), "the first counter may not recount");
    s.edge
        .count_scan(other, id, recount)
        .await
        .expect("recounted");
    s.edge
        .count_scan(
            other,
            id,
            serde_json::from_value(json!({"location": "P-1"})).expect("close"),
        )
        .await
        .expect("closed");
    s.edge.approve_count(s.caller, id).await.expect("approved");
    up(&s).await;
    let at_cloud = s
        .cloud
        .count(s.business, id)
        .await
        .expect("count at the cloud");
    assert_eq!(at_cloud, s.edge.count(s.business, id).await.expect("count"));
    assert_eq!(at(&s.cloud, &s, "P-1").await, 2);
    assert!(s.cloud.check_ledger().await.expect("check").is_empty());
}
