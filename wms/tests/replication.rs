//! Two nodes converge by exchanging their own events: the cloud's catalog,
//! keys and orders reach an edge; the edge's movements and status changes
//! reach the cloud; duplicates change nothing; conflicting status changes
//! merge by the design's rule and are recorded.

use depot_protocol::order::{Address, OrderStatus};
use depot_protocol::tenant::Caller;
use depot_protocol::{ItemId, OrderId, WarehouseId};
use depot_wms::Wms;
use depot_wms::replica::{self, Outcome};
use serde_json::json;

struct Node {
    wms: Wms,
    /// How much of this node's own log the other side has.
    sent: i64,
}

/// Applies `from`'s new own events on `to`.
async fn exchange(from: &mut Node, to: &Node) -> Vec<Outcome> {
    let head = from.wms.outgoing_head().await.expect("head");
    let events: Vec<_> = from
        .wms
        .outgoing(from.sent, head, 100_000)
        .await
        .expect("outgoing")
        .into_iter()
        .map(|(_, e)| e)
        // As sync does: the cloud sends an edge only the kinds it applies.
        .filter(|e| from.wms.origin() != "cloud" || replica::REPLICATED.contains(&e.kind.as_str()))
        .collect();
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
}

async fn pair() -> Pair {
    let dir = tempfile::tempdir().expect("tempdir");
    let cloud = Wms::open(&dir.path().join("cloud.db"), "cloud").expect("cloud");
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
        json!({"channel": "web", "external_ref": reference, "warehouse_id": p.warehouse.0,
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

#[tokio::test]
async fn unknown_and_malformed_events_are_rejected_not_fatal() {
    let p = pair().await;
    let bad = |kind: &str, payload: serde_json::Value| depot_protocol::event::Event {
        seq: 0,
        id: depot_protocol::EventId::new(),
        origin: "edge:x".into(),
        business_id: Some(p.caller.business_id),
        kind: kind.into(),
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
async fn warehouse_work_travels_whole_both_ways() {
    let mut p = pair().await;
    let b = p.caller.business_id;
    adjust(&p.cloud.wms, p.caller, p.warehouse, 10).await;
    // The cloud configures a printer and announces a delivery…
    let printer = p
        .cloud
        .wms
        .create_printer(
            b,
            serde_json::from_value(
                json!({"name": "Pack 1", "kind": "zpl", "connection": "tcp://10.0.0.5:9100"}),
            )
            .expect("printer"),
        )
        .await
        .expect("create printer");
    let inbound = p
        .cloud
        .wms
        .create_inbound(
            b,
            serde_json::from_value(json!({"warehouse_id": p.warehouse.0, "reference": "PO-1",
                "supplier": "Acme", "lines": [{"sku": "A", "quantity": 5}]}))
            .expect("inbound"),
        )
        .await
        .expect("create inbound");
    let r1 = confirmed(&mut p, "R1", 2).await;
    let r2 = confirmed(&mut p, "R2", 1).await;
    no_rejections(&exchange(&mut p.cloud, &p.edge).await);
    let at_edge = p.edge.wms.printers(b).await.expect("printers");
    assert_eq!(at_edge.len(), 1);
    assert_eq!(
        (at_edge[0].id, at_edge[0].connection.as_str()),
        (printer.id, "tcp://10.0.0.5:9100")
    );
    assert_eq!(
        p.edge
            .wms
            .inbound(b, inbound.id)
            .await
            .expect("inbound")
            .reference,
        "PO-1"
    );

    // …and the floor, at the edge, receives it, picks, packs and dispatches.
    let edge = p.edge.wms.clone();
    edge.receive(
        p.caller,
        serde_json::from_value(
            json!({"inbound_id": inbound.id, "lines": [{"code": "A", "quantity": 5}]}),
        )
        .expect("reception"),
    )
    .await
    .expect("receive");
    let wave = edge
        .create_wave(
            b,
            serde_json::from_value(json!({"warehouse_id": p.warehouse.0})).expect("wave"),
        )
        .await
        .expect("create wave");
    for (o, q) in [(r1, 2), (r2, 1)] {
        edge.pick_scan(
            p.caller,
            serde_json::from_value(
                json!({"wave_id": wave.id, "order_id": o, "code": "A", "quantity": q}),
            )
            .expect("scan"),
        )
        .await
        .expect("pick");
        edge.pack_order(
            p.caller,
            serde_json::from_value(
                json!({"order_id": o, "items": [{"code": "A", "quantity": q}],
                "packages": [{"weight_g": 800}]}),
            )
            .expect("pack"),
        )
        .await
        .expect("pack");
    }
    let (runs, _, _) = edge
        .dispatch_runs(b, Default::default(), Default::default())
        .await
        .expect("runs");
    assert_eq!(runs.len(), 1);
    let run = edge
        .close_dispatch_run(p.caller, runs[0].id)
        .await
        .expect("close");

    let at_cloud = exchange(&mut p.edge, &p.cloud).await;
    no_rejections(&at_cloud);
    let cloud = p.cloud.wms.clone();
    let received = cloud.inbound(b, inbound.id).await.expect("inbound");
    assert_eq!(
        (received.lines[0].accepted, received.status.as_str()),
        (5, "received")
    );
    let w = cloud.wave(b, wave.id).await.expect("wave in the cloud");
    assert_eq!((w.units_picked, w.status.as_str()), (3, "completed"));
    for o in [r1, r2] {
        assert_eq!(status(&cloud, &p, o).await, OrderStatus::Dispatched);
    }
    let (shipped, _, _) = cloud
        .list_shipments(b, Default::default(), Default::default())
        .await
        .expect("shipments");
    let (made, _, _) = edge
        .list_shipments(b, Default::default(), Default::default())
        .await
        .expect("shipments");
    assert_eq!(
        shipped, made,
        "the cloud shows the edge's shipments as made"
    );
    let (closed, _, _) = cloud
        .dispatch_runs(b, Default::default(), Default::default())
        .await
        .expect("runs");
    assert_eq!(closed, vec![run.clone()]);
    assert!(
        cloud
            .manifest(b, run.id)
            .await
            .expect("manifest")
            .starts_with(b"%PDF")
    );
    same_books(&p).await;
    assert_eq!(
        cloud.stock_level(p.item, p.warehouse).await.expect("level"),
        (10 + 5 - 3, 0)
    );

    // Delivered twice (a redelivery after a lost ack): nothing moves.
    p.edge.sent = 0;
    let again = exchange(&mut p.edge, &p.cloud).await;
    assert!(again.iter().all(|o| *o == Outcome::Duplicate), "{again:?}");
    same_books(&p).await;
    for node in [&p.cloud.wms, &p.edge.wms] {
        assert!(
            node.conflicts(None, 10)
                .await
                .expect("conflicts")
                .is_empty()
        );
    }
}

#[tokio::test]
async fn releases_and_translations_reach_every_edge_once() {
    use depot_protocol::release::{Note, Product, ReleaseCreate};
    use std::collections::BTreeMap;
    let mut p = pair().await;
    let b = p.caller.business_id;
    let today = chrono::Utc::now().date_naive();
    let publish = |product: &str, version: &str| {
        ReleaseCreate {
            product: product.into(),
            version: version.into(),
            date: Some("2025-03-01".into()),
            default_locale: None,
            notes: BTreeMap::from([(
                "en".into(),
                Note {
                    title: format!("Depot {version}"),
                    body: "- faster picking\n".into(),
                },
            )]),
        }
        .parse(today)
    };
    let r = p
        .cloud
        .wms
        .publish_release(publish("wms", "1.4.0").expect("valid"), None)
        .await
        .expect("publish");
    assert!(matches!(
        p.cloud
            .wms
            .publish_release(publish("wms", "1.4.0").expect("valid"), None)
            .await,
        Err(depot_wms::WmsError::Conflict { .. })
    ));
    assert!(publish("wms", "next").is_err());
    // The same version of another product is another release.
    p.cloud
        .wms
        .publish_release(publish("app", "1.4.0").expect("valid"), None)
        .await
        .expect("publish app");
    // A release names no business, and still is in every edge's feed.
    let edge_id = depot_protocol::sync::EdgeId::parse("mad-1").expect("edge id");
    p.cloud
        .wms
        .register_edge(b, edge_id.clone(), None)
        .await
        .expect("register");
    let page = p
        .cloud
        .wms
        .changes_for(b, edge_id, 0, 1000)
        .await
        .expect("page");
    assert!(
        page.changes
            .iter()
            .any(|c| c.kind == "release.published" && c.payload["version"] == "1.4.0"),
        "{page:?}"
    );
    no_rejections(&exchange(&mut p.cloud, &p.edge).await);
    let at_edge = p.edge.wms.releases(10).await.expect("releases");
    assert_eq!(at_edge.len(), 2);
    assert_eq!(at_edge.iter().find(|e| e.product == Product::Wms), Some(&r));

    // A translation follows the release it belongs to.
    let es = Note {
        title: "Depot 1.4.0".into(),
        body: "- recogida más rápida".into(),
    };
    let translated = p
        .cloud
        .wms
        .translate_release(
            Product::Wms,
            "1.4.0".into(),
            BTreeMap::from([("es".into(), es.clone())]),
        )
        .await
        .expect("translate");
    no_rejections(&exchange(&mut p.cloud, &p.edge).await);
    let at_edge = p.edge.wms.releases(10).await.expect("releases");
    let wms = at_edge
        .iter()
        .find(|e| e.product == Product::Wms)
        .expect("wms release");
    assert_eq!(wms.notes.get("es"), Some(&es));
    assert_eq!(wms, &translated);

    // Delivered again, nothing changes.
    p.cloud.sent = 0;
    exchange(&mut p.cloud, &p.edge).await;
    assert_eq!(p.edge.wms.releases(10).await.expect("releases"), at_edge);
}

#[tokio::test]
async fn a_release_event_from_before_locales_still_applies() {
    let p = pair().await;
    let legacy = depot_protocol::event::Event {
        seq: 1,
        id: depot_protocol::EventId::new(),
        origin: "cloud".into(),
        business_id: None,
        kind: "release.published".into(),
        payload: json!({"id": 9, "version": "1.2.0", "title": "Labels",
            "notes": "- ZPL", "published_at": "2024-03-02T09:00:00Z"}),
        at: chrono::Utc::now(),
    };
    no_rejections(&p.edge.wms.apply_remote(vec![legacy]).await.expect("apply"));
    let r = p.edge.wms.releases(10).await.expect("releases");
    assert_eq!(r.len(), 1);
    assert_eq!(
        (
            r[0].id,
            r[0].default_locale.as_str(),
            r[0].notes["en"].title.as_str()
        ),
        (9, "en", "Labels")
    );
}

#[tokio::test]
async fn print_jobs_reach_their_printer_and_report_back() {
    use depot_protocol::printing::{JobStatus, MAX_EDGE_JOB_BYTES};
    let mut p = pair().await;
    let b = p.caller.business_id;
    let printer = p
        .cloud
        .wms
        .create_printer(b, serde_json::from_value(json!({"name": "Pack 1", "kind": "zpl", "connection": "edge://mad-1", "station": "pack-1"})).expect("fields"))
        .await
        .expect("printer");
    let label = b"^XA^FO20,20^A0N,30,30^FDOrder 1001^FS^XZ".to_vec();
    let cloud_job = p
        .cloud
        .wms
        .submit_job(p.caller, printer.id, label.clone())
        .await
        .expect("job");
    // A job for a printer at an edge travels in one sync message: capped.
    let mut big = b"^XA".to_vec();
    big.resize(MAX_EDGE_JOB_BYTES + 1, b' ');
    assert!(matches!(
        p.cloud.wms.submit_job(p.caller, printer.id, big).await,
        Err(depot_wms::WmsError::Invalid { .. })
    ));
    no_rejections(&exchange(&mut p.cloud, &p.edge).await);

    // The edge has the job, with its bytes, under the cloud's id.
    let queued = p
        .edge
        .wms
        .queued_print_jobs(vec![printer.id], Default::default())
        .await
        .expect("queued");
    assert_eq!(queued.len(), 1);
    assert_eq!(queued[0].0.id, cloud_job.id);
    assert_eq!(queued[0].1, label);

    // The edge's printer prints it; a station there prints one of its own.
    p.edge
        .wms
        .print_job_update(cloud_job.id, JobStatus::Printed, None)
        .await
        .expect("printed");
    let local = p
        .edge
        .wms
        .submit_job(p.caller, printer.id, b"^XA^FDbin A-01^FS^XZ".to_vec())
        .await
        .expect("local job");
    p.edge
        .wms
        .print_job_update(local.id, JobStatus::Queued, Some("paper out".into()))
        .await
        .expect("waiting");
    assert_eq!(
        p.edge
            .wms
            .queued_print_jobs(vec![printer.id], Default::default())
            .await
            .expect("queued")
            .iter()
            .map(|(j, _)| j.id)
            .collect::<Vec<_>>(),
        vec![local.id]
    );
    no_rejections(&exchange(&mut p.edge, &p.cloud).await);

    // The cloud's job list follows the edge's printer.
    let jobs = p.cloud.wms.print_jobs(b, printer.id).await.expect("jobs");
    let by_id = |id: i64| jobs.iter().find(|j| j.id == id).expect("job listed");
    assert_eq!(by_id(cloud_job.id).status, JobStatus::Printed);
    assert_eq!(by_id(local.id).status, JobStatus::Queued);
    assert_eq!(by_id(local.id).error.as_deref(), Some("paper out"));
    assert_eq!(by_id(local.id).size, local.size);
    // The cloud does not print an edge's jobs.
    assert!(
        p.cloud
            .wms
            .queued_print_jobs(vec![printer.id], Default::default())
            .await
            .expect("queued")
            .iter()
            .all(|(j, data)| j.id != local.id || data.is_empty())
    );

    // Delivered twice: nothing changes.
    p.edge.sent = 0;
    exchange(&mut p.edge, &p.cloud).await;
    assert_eq!(
        p.cloud.wms.print_jobs(b, printer.id).await.expect("jobs"),
        jobs
    );
}
