//! Two nodes converge by exchanging their own events: the cloud's catalog,
//! keys and orders reach an edge; the edge's movements and status changes
//! reach the cloud; duplicates change nothing; conflicting status changes
//! merge by the design's rule and are recorded.
//!
//! Here the basics and bad input; `conflicts.rs`: status changes made on
//! both sides; `warehouse.rs`: the floor's work and print jobs;
//! `releases.rs`: releases and their translations.

mod conflicts;
mod releases;
mod sscc;
mod trust;
mod warehouse;

use depot_protocol::order::{Address, OrderStatus};
use depot_protocol::tenant::Caller;
use depot_protocol::{ItemId, OrderId, WarehouseId, catalogue};
use depot_wms::Wms;
use depot_wms::replica::Outcome;
use serde_json::json;

struct Node {
    wms: Wms,
    /// How much of this node's own log the other side has.
    sent: i64,
}

/// Applies `from`'s new own events on `to`: an edge's by their outgoing
/// numbers, as its outbox sends them; the cloud's by their place in its
/// log, as its sync pages them (the cloud numbers nothing outgoing on
/// PostgreSQL).
async fn exchange(from: &mut Node, to: &Node) -> Vec<Outcome> {
    let cloud = from.wms.origin() == "cloud";
    let (head, events) = if cloud {
        let (head, events) = depot_testkit::events::own_since(&from.wms, from.sent).await;
        // As sync does: the cloud sends an edge only the kinds it applies.
        let events = events
            .into_iter()
            .filter(|e| catalogue::sent_to_edges().any(|k| k == e.kind))
            .collect();
        (head, events)
    } else {
        let head = from.wms.outgoing_head().await.expect("head");
        let events = from
            .wms
            .outgoing(from.sent, head, 100_000)
            .await
            .expect("outgoing")
            .into_iter()
            .map(|(_, e)| e)
            .collect();
        (head, events)
    };
    from.sent = head;
    to.wms.apply_remote(events).await.expect("apply")
}

struct Pair {
    cloud: Node,
    edge: Node,
    caller: Caller,
    key: String,
    warehouse: WarehouseId,
    item: ItemId,
    _dir: tempfile::TempDir,
    /// The cloud's database when it is on PostgreSQL.
    _database: Option<depot_testkit::pg::PgDatabase>,
}

async fn pair() -> Pair {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cloud, database) = depot_testkit::pg::cloud_engine(dir.path());
    let edge = Wms::open_node(&dir.path().join("edge.db"), "edge:mad-1", 1).expect("edge");
    let b = cloud
        .create_business("B", "EUR", "UTC")
        .await
        .expect("business");
    let w = cloud
        .create_warehouse(b.id, "MAD1", "Madrid", Address::default(), false)
        .await
        .expect("warehouse");
    let k = cloud.create_key(b.id, None).await.expect("key");
    let item = cloud
        .create_item(b.id, serde_json::from_value(json!({"sku": "A", "name": "Widget", "prices": [{"price_list_id": 1, "amount": "2.50", "currency": "EUR"}]})).expect("item"))
        .await
        .expect("create item");
    let caller = Caller {
        key_id: k.key.id,
        business_id: b.id,
    };
    let mut p = Pair {
        cloud: Node {
            wms: cloud,
            sent: 0,
        },
        edge: Node { wms: edge, sent: 0 },
        caller,
        key: k.secret,
        warehouse: w.id,
        item: item.id,
        _dir: dir,
        _database: database,
    };
    let outcomes = exchange(&mut p.cloud, &p.edge).await;
    assert!(
        outcomes.iter().all(|o| *o == Outcome::Applied),
        "{outcomes:?}"
    );
    p
}

async fn order(p: &mut Pair, reference: &str, quantity: i64) -> OrderId {
    let req = serde_json::from_value(
        json!({"channel": "web", "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"}, "external_ref": reference, "warehouse_id": p.warehouse.0,
        "lines": [{"sku": "A", "quantity": quantity}]}),
    )
    .expect("order");
    let (o, _) = p
        .cloud
        .wms
        .create_order(p.caller, req)
        .await
        .expect("ingest");
    o.id
}

async fn adjust(wms: &Wms, caller: Caller, w: WarehouseId, delta: i64) {
    let req = serde_json::from_value(
        json!({"warehouse_id": w.0, "sku": "A", "reason": "adjusted", "delta": delta}),
    )
    .expect("adjust");
    wms.adjust(caller, req).await.expect("adjust");
}

async fn same_books(p: &Pair) {
    let c = p
        .cloud
        .wms
        .stock_level(p.item, p.warehouse)
        .await
        .expect("cloud level");
    let e = p
        .edge
        .wms
        .stock_level(p.item, p.warehouse)
        .await
        .expect("edge level");
    assert_eq!(c, e, "cloud (on hand, reserved) vs edge");
    assert!(p.cloud.wms.check_ledger().await.expect("check").is_empty());
    assert!(p.edge.wms.check_ledger().await.expect("check").is_empty());
}

async fn status(wms: &Wms, p: &Pair, id: OrderId) -> OrderStatus {
    wms.order(p.caller.business_id, id)
        .await
        .expect("order")
        .status
}

/// Confirms an order made in the cloud.
async fn confirmed(p: &mut Pair, reference: &str, quantity: i64) -> OrderId {
    let o = order(p, reference, quantity).await;
    p.cloud
        .wms
        .set_order_status(p.caller, o, OrderStatus::Confirmed, None)
        .await
        .expect("confirm");
    o
}

fn no_rejections(outcomes: &[Outcome]) {
    assert!(
        outcomes
            .iter()
            .all(|o| matches!(o, Outcome::Applied | Outcome::Duplicate)),
        "{outcomes:?}"
    );
}

#[tokio::test]
async fn the_edge_gets_the_cloud_and_the_cloud_gets_the_edge() {
    let mut p = pair().await;
    // The key works at the edge, offline from then on.
    let at_edge = p.edge.wms.authenticate(&p.key).await.expect("auth");
    assert_eq!(at_edge, Some(p.caller));
    let item = p
        .edge
        .wms
        .item(p.caller.business_id, p.item)
        .await
        .expect("item at the edge");
    assert_eq!(
        (
            item.sku.as_str(),
            item.prices[0].amount.to_string().as_str()
        ),
        ("A", "2.50")
    );

    adjust(&p.cloud.wms, p.caller, p.warehouse, 10).await;
    let o = order(&mut p, "R1", 3).await;
    p.cloud
        .wms
        .set_order_status(p.caller, o, OrderStatus::Confirmed, None)
        .await
        .expect("confirm");
    exchange(&mut p.cloud, &p.edge).await;
    same_books(&p).await;
    assert_eq!(status(&p.edge.wms, &p, o).await, OrderStatus::Confirmed);

    // The edge works the order and counts stock; the cloud follows.
    for s in [
        OrderStatus::Picking,
        OrderStatus::Packed,
        OrderStatus::Dispatched,
    ] {
        p.edge
            .wms
            .set_order_status(p.caller, o, s, None)
            .await
            .expect("edge status");
    }
    adjust(&p.edge.wms, p.caller, p.warehouse, -1).await;
    let outcomes = exchange(&mut p.edge, &p.cloud).await;
    assert!(
        outcomes.iter().all(|o| *o == Outcome::Applied),
        "{outcomes:?}"
    );
    assert_eq!(status(&p.cloud.wms, &p, o).await, OrderStatus::Dispatched);
    same_books(&p).await;
    assert_eq!(
        p.cloud
            .wms
            .stock_level(p.item, p.warehouse)
            .await
            .expect("level"),
        (6, 0)
    );

    // Nothing applied from elsewhere is sent back, and repeats change nothing.
    assert!(
        exchange(&mut p.cloud, &p.edge).await.is_empty(),
        "the cloud echoed the edge's events"
    );
    p.edge.sent = 0;
    let again = exchange(&mut p.edge, &p.cloud).await;
    assert!(again.iter().all(|o| *o == Outcome::Duplicate), "{again:?}");
    same_books(&p).await;
}

#[tokio::test]
async fn unknown_and_malformed_events_are_rejected_not_fatal() {
    let p = pair().await;
    let bad = |kind: &str, payload: serde_json::Value| depot_protocol::event::Event {
        seq: 0,
        id: depot_protocol::EventId::new(),
        origin: "edge:x".into(),
        business_id: Some(p.caller.business_id),
        kind: kind.into(),
        version: 1,
        payload,
        at: depot_protocol::now(),
    };
    let outcomes = p
        .cloud
        .wms
        .apply_remote(vec![
            bad("stock.moved", json!({"nonsense": true})),
            bad("order.status_changed", json!({"order_id": 999_999, "change": {"from": null, "to": "packed", "actor": "x", "note": null, "at": "2026-01-01T00:00:00Z"}})),
            bad("teleport.started", json!({})),
        ])
        .await
        .expect("a bad batch is not an error");
    assert!(
        outcomes
            .iter()
            .all(|o| matches!(o, Outcome::Rejected { .. })),
        "{outcomes:?}"
    );
    assert_eq!(
        p.cloud
            .wms
            .conflicts(None, 10)
            .await
            .expect("conflicts")
            .len(),
        3
    );
}
