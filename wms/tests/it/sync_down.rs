//! The cloud's log reaching edges in pages: everything of the business that
//! an edge did not make itself, applied once, with the cursor moved in the
//! same transaction; a page that would leave a hole is refused.

use depot_protocol::BusinessId;
use depot_protocol::order::{Address, OrderStatus};
use depot_protocol::sync::{EdgeId, SyncEvent};
use depot_testkit::seed;
use depot_wms::Wms;
use depot_wms::sync::PageOutcome;
use serde_json::json;

struct Edge {
    id: EdgeId,
    wms: Wms,
}

/// Pulls every page the cloud has for an edge, a few changes at a time.
async fn pull(cloud: &Wms, business: BusinessId, edge: &Edge) -> usize {
    let mut applied = 0;
    loop {
        let (_, cursor) = edge.wms.sync_state().await.expect("state");
        let page = cloud
            .changes_for(business, edge.id.clone(), cursor, 3)
            .await
            .expect("page");
        let more = page.more;
        match edge.wms.apply_page(business, page).await.expect("apply") {
            PageOutcome::Applied { outcomes, .. } => applied += outcomes.len(),
            PageOutcome::Stale => {}
            PageOutcome::Gap { cursor } => panic!("a gap at {cursor} while pulling in order"),
        }
        if !more {
            return applied;
        }
    }
}

/// Sends an edge's whole own log up.
async fn push(cloud: &Wms, business: BusinessId, edge: &Edge) {
    let head = edge.wms.outgoing_head().await.expect("head");
    let log: Vec<SyncEvent> = edge.wms.outgoing_sync(0, head, 100_000).await.expect("log");
    let ack = cloud
        .receive_batch(business, edge.id.clone(), log)
        .await
        .expect("batch");
    assert!(ack.rejected.is_empty(), "{:?}", ack.rejected);
    edge.wms.record_ack(ack.through).await.expect("ack");
}

#[tokio::test]
async fn edges_converge_through_the_cloud() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cloud, _database) = depot_testkit::pg::cloud_engine(dir.path());
    let seeded = seed::business("B").item("A").seed(&cloud).await;
    let (b, w, k, caller, item) = (
        seeded.business,
        seeded.warehouse,
        seeded.key,
        seeded.caller,
        seeded.items[0],
    );
    let mut edges = Vec::new();
    for name in ["mad-1", "bcn-1"] {
        let id = EdgeId::parse(name).expect("id");
        let node = cloud
            .register_edge(b, id.clone(), None)
            .await
            .expect("register")
            .node;
        let wms = Wms::open_node(
            &dir.path().join(format!("{name}.db")),
            &format!("edge:{name}"),
            node,
        )
        .expect("edge");
        edges.push(Edge { id, wms });
    }
    // An unrelated business's changes never reach these edges.
    let other = cloud
        .create_business("Other", "EUR", "UTC")
        .await
        .expect("other");
    cloud
        .create_item(
            other.id,
            serde_json::from_value(json!({"sku": "Z", "name": "Z"})).expect("item"),
        )
        .await
        .expect("item");

    for e in &edges {
        assert!(pull(&cloud, b, e).await > 0);
        assert_eq!(pull(&cloud, b, e).await, 0, "nothing twice");
        assert!(e.wms.authenticate(&k).await.expect("auth").is_some());
        assert!(
            e.wms.business(other.id).await.is_err(),
            "another business leaked to {}",
            e.id
        );
    }

    // Stock moves at one edge; the other sees it through the cloud; an order
    // ingested in the cloud reaches both.
    let adjust = serde_json::from_value(
        json!({"warehouse_id": w.0, "sku": "A", "reason": "received", "quantity": 9}),
    )
    .expect("adjust");
    edges[0]
        .wms
        .adjust(caller, adjust)
        .await
        .expect("adjust at mad-1");
    push(&cloud, b, &edges[0]).await;
    let order = serde_json::from_value(json!({"channel": "web", "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"}, "external_ref": "X1", "warehouse_id": w.0, "lines": [{"sku": "A", "quantity": 2}]})).expect("order");
    let (o, _) = cloud.create_order(caller, order).await.expect("ingest");
    cloud
        .set_order_status(caller, o.id, OrderStatus::Confirmed, None)
        .await
        .expect("confirm");
    for e in &edges {
        pull(&cloud, b, e).await;
        assert_eq!(
            e.wms.stock_level(item, w).await.expect("level"),
            (9, 2),
            "at {}",
            e.id
        );
        assert_eq!(
            e.wms.order(b, o.id).await.expect("order").status,
            OrderStatus::Confirmed
        );
        assert!(e.wms.check_ledger().await.expect("check").is_empty());
        assert!(
            e.wms
                .conflicts(None, 10)
                .await
                .expect("conflicts")
                .is_empty()
        );
    }
    // mad-1's own movement was not sent back to it: applied once, 9 on hand.
    assert_eq!(cloud.stock_level(item, w).await.expect("level"), (9, 2));
}

#[tokio::test]
async fn a_page_past_the_cursor_is_a_gap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cloud, _database) = depot_testkit::pg::cloud_engine(dir.path());
    let b = cloud
        .create_business("B", "EUR", "UTC")
        .await
        .expect("business");
    let id = EdgeId::parse("e1").expect("id");
    let node = cloud
        .register_edge(b.id, id.clone(), None)
        .await
        .expect("register")
        .node;
    let edge = Wms::open_node(&dir.path().join("e1.db"), "edge:e1", node).expect("edge");
    cloud
        .create_warehouse(b.id, "W", "W", Address::default(), false)
        .await
        .expect("wh");
    let first = cloud
        .changes_for(b.id, id.clone(), 0, 1)
        .await
        .expect("page");
    let second = cloud
        .changes_for(b.id, id.clone(), first.to, 1)
        .await
        .expect("page");
    assert!(matches!(
        edge.apply_page(b.id, second.clone()).await.expect("apply"),
        PageOutcome::Gap { cursor: 0 }
    ));
    assert!(matches!(
        edge.apply_page(b.id, first.clone()).await.expect("apply"),
        PageOutcome::Applied { .. }
    ));
    assert!(matches!(
        edge.apply_page(b.id, first).await.expect("apply"),
        PageOutcome::Stale
    ));
    assert!(matches!(
        edge.apply_page(b.id, second).await.expect("apply"),
        PageOutcome::Applied { .. }
    ));
}

/// A change of the cloud's that fails to apply at the edge (a storage error
/// injected under the engine) is refused there: the page is applied, the
/// cursor moves past it, the changes after it arrive, and the edge's status
/// says what it refused and why.
#[tokio::test]
async fn a_change_that_fails_to_apply_at_the_edge_is_refused_and_sync_goes_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cloud, _database) = depot_testkit::pg::cloud_engine(dir.path());
    let seeded = seed::business("B").item("A").seed(&cloud).await;
    let (b, w, caller, item) = (
        seeded.business,
        seeded.warehouse,
        seeded.caller,
        seeded.items[0],
    );
    let id = EdgeId::parse("mad-1").expect("id");
    let node = cloud
        .register_edge(b, id.clone(), None)
        .await
        .expect("register")
        .node;
    let path = dir.path().join("edge.db");
    let edge = Edge {
        id,
        wms: Wms::open_node(&path, "edge:mad-1", node).expect("edge"),
    };
    rusqlite::Connection::open(&path)
        .expect("open")
        .execute_batch(
            "CREATE TRIGGER poison BEFORE INSERT ON stock_movements WHEN NEW.delta = 4242
             BEGIN SELECT json('{not json'); END;",
        )
        .expect("trigger");
    for delta in [4242, 5] {
        let req = serde_json::from_value(
            json!({"warehouse_id": w.0, "sku": "A", "reason": "adjusted", "delta": delta}),
        )
        .expect("adjust");
        cloud.adjust(caller, req).await.expect("adjust");
    }
    pull(&cloud, b, &edge).await;
    assert_eq!(pull(&cloud, b, &edge).await, 0, "nothing left behind");
    assert_eq!(edge.wms.stock_level(item, w).await.expect("level").0, 5);
    let s = edge.wms.sync_snapshot().await.expect("snapshot");
    assert_eq!((s.refused.from_cloud, s.refused.by_cloud), (1, 0));
    let last = s.refused.last.expect("the last refusal");
    assert_eq!(
        (last.kind.as_str(), last.direction.as_deref()),
        ("stock.moved", Some("from_cloud"))
    );
    assert!(
        last.reason.contains("could not be applied here") && last.reason.contains("malformed JSON"),
        "{}",
        last.reason
    );
    assert_eq!(s.conflicts, 1);
    // The cloud's own movement of 4242 is not shown at the edge as done.
    let moved = edge
        .wms
        .business_events(b, 0, Some("stock.moved".into()), 100)
        .await
        .expect("log");
    assert_eq!(moved.len(), 1);
}
