//! What a write costs in round trips to PostgreSQL (DEPOT_TEST_DATABASE=
//! postgres; skipped otherwise): reads that do not wait for each other go
//! out together, writes whose answer no one reads go without waiting, so
//! an order's round trips do not grow with its lines, nor an
//! adjustment's with the channels that sell the item.

use depot_protocol::order::OrderStatus;
use depot_protocol::tenant::Caller;
use depot_testkit::{pg, seed};
use depot_wms::Wms;
use serde_json::{Value, json};
use std::sync::atomic::Ordering;

/// The fewest round trips the writer made for `write` in three tries
/// (a background job of the engine may share a try's count).
async fn fewest<F, Fut>(wms: &Wms, mut write: F) -> u64
where
    F: FnMut(u32) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut fewest = u64::MAX;
    for attempt in 0..3 {
        let before = wms.writer_stats().round_trips.load(Ordering::Relaxed);
        write(attempt).await;
        let after = wms.writer_stats().round_trips.load(Ordering::Relaxed);
        fewest = fewest.min(after - before);
    }
    fewest
}

async fn order(wms: &Wms, caller: Caller, reference: String, lines: Value) {
    let req = serde_json::from_value(json!({"channel": "ιστός", "external_ref": reference,
        "lines": lines, "buyer": {"name": "Ἀλέξανδρος", "email": "alex@example.gr"},
        "shipping_address": {"name": "王小明", "line1": "中山路 1号", "postal_code": "200000",
                             "city": "上海", "country": "CN"}}))
    .expect("order");
    let (_, created) = wms.create_order(caller, req).await.expect("created");
    assert!(created);
}

async fn adjust(wms: &Wms, caller: Caller, warehouse: i64, sku: &str) {
    let req = serde_json::from_value(json!({"warehouse_id": warehouse, "sku": sku,
        "reason": "received", "quantity": 5}))
    .expect("adjust");
    wms.adjust(caller, req).await.expect("adjusted");
}

async fn channel(wms: &Wms, b: depot_protocol::BusinessId, code: &str, warehouse: i64) {
    let fields = serde_json::from_value(json!({"code": code, "name": code, "kind": "storefront",
        "warehouse_ids": [warehouse], "buffer_units": 1}))
    .expect("fields");
    wms.create_channel(b, fields).await.expect("channel");
}

#[tokio::test]
async fn a_writes_round_trips_do_not_grow_with_its_lines_or_channels() {
    if !pg::engine_on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let (wms, _database) = pg::cloud_engine(dir.path());
    let skus = ["ΜΕΛΙ", "茶-1", "kaffee", "ç-4", "ж-5"];
    let mut seeded = seed::business("Ω");
    for sku in skus {
        seeded = seeded.item(sku);
    }
    let t = seeded.seed(&wms).await;
    let (b, w) = (t.business, t.warehouse.0);
    channel(&wms, b, "web", w).await;
    for sku in skus {
        adjust(&wms, t.caller, w, sku).await;
    }

    // An order of one line, of five, and of five lines on each item.
    let lines = |n: usize| -> Value {
        json!(
            (0..n)
                .map(|i| json!({"sku": skus[i % skus.len()], "quantity": 1}))
                .collect::<Vec<_>>()
        )
    };
    let mut per_order = Vec::new();
    for n in [1, 5, 25] {
        let lines = lines(n);
        per_order.push(
            fewest(&wms, |k| {
                order(&wms, t.caller, format!("{n}-{k}"), lines.clone())
            })
            .await,
        );
    }
    assert_eq!(
        per_order[0], per_order[1],
        "orders of 1, 5, 25 lines: {per_order:?}"
    );
    assert_eq!(
        per_order[1], per_order[2],
        "orders of 1, 5, 25 lines: {per_order:?}"
    );
    // A group of one job: its `BEGIN`, its reads (the buyer's among
    // them), its order row with the items' levels and the channels'
    // figures, the `COMMIT` (with the writes sent without waiting; a job
    // alone opens no savepoint to release).
    assert!(
        per_order[0] <= 4,
        "an order took {} round trips",
        per_order[0]
    );

    // An adjustment of an item one channel sells, then five.
    let one = fewest(&wms, |_| adjust(&wms, t.caller, w, "ΜΕΛΙ")).await;
    for code in ["shop", "pos", "b2b", "mkt"] {
        channel(&wms, b, code, w).await;
    }
    let five = fewest(&wms, |_| adjust(&wms, t.caller, w, "ΜΕΛΙ")).await;
    assert_eq!(one, five, "an adjustment with one channel, and five");
    // `BEGIN`, the item with the warehouses and their levels, the
    // movement's level, location and channels' figures, its bin, the
    // `COMMIT`.
    assert!(one <= 5, "an adjustment took {one} round trips");
}

/// A batch of `n` of an edge's movements, `first` the first's seq, over
/// the items in turn, each as its edge logs it.
fn movements(t: &seed::Tenant, first: i64, n: i64) -> Vec<depot_protocol::sync::SyncEvent> {
    (first..first + n)
        .map(|seq| {
            let item = t.items[seq as usize % t.items.len()];
            let m = json!({"id": depot_protocol::MovementId::new(), "business_id": t.business,
                "item_id": item, "warehouse_id": t.warehouse, "location": null, "delta": -1,
                "reason": "adjusted", "ref": null, "note": null, "actor": "σταθμός",
                "origin": "edge:athens-1", "at": depot_protocol::now()});
            depot_protocol::sync::SyncEvent {
                seq,
                id: depot_protocol::EventId::new(),
                kind: "stock.moved".into(),
                payload: serde_json::value::to_raw_value(&m).expect("raw"),
                at: depot_protocol::now(),
            }
        })
        .collect()
}

/// An edge's backlog arriving in the cloud: a batch of 8 movements and
/// one of 120 wait for the server as often (each run's reads go out
/// together, its rows in blocks), not once or more a movement.
#[tokio::test]
async fn a_batch_of_movements_waits_as_often_whatever_its_length() {
    if !pg::engine_on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let (wms, _database) = pg::cloud_engine(dir.path());
    let mut seeded = seed::business("Ω");
    for sku in ["ΜΕΛΙ", "茶-1", "kaffee"] {
        seeded = seeded.item(sku);
    }
    let t = seeded.seed(&wms).await;
    channel(&wms, t.business, "web", t.warehouse.0).await;
    let edge = depot_protocol::sync::EdgeId::parse("athens-1").expect("edge");
    wms.register_edge(t.business, edge.clone(), None)
        .await
        .expect("edge");
    let mut next = 1;
    let mut waits = Vec::new();
    for n in [8, 120] {
        let mut fewest = u64::MAX;
        for _ in 0..3 {
            let batch = movements(&t, next, n);
            next += n;
            let before = wms.writer_stats().round_trips.load(Ordering::Relaxed);
            let ack = wms
                .receive_batch(t.business, edge.clone(), batch)
                .await
                .expect("received");
            assert!(ack.rejected.is_empty(), "{:?}", ack.rejected);
            let after = wms.writer_stats().round_trips.load(Ordering::Relaxed);
            fewest = fewest.min(after - before);
        }
        waits.push(fewest);
    }
    assert_eq!(
        waits[0], waits[1],
        "batches of 8 and 120 movements: {waits:?}"
    );
    // 13 in all: `BEGIN`, the edge's record, the batch's savepoint, its
    // events logged, their records' owners, the levels and figures, the
    // movements' rows and bins, the writes settled, the savepoint's
    // release, the edge's cursor and presence, the `COMMIT`. One by one it
    // was about three a movement (37 for 8, 373 for 120).
    assert!(
        waits[0] <= 14,
        "a batch of movements took {} round trips",
        waits[0]
    );
}

#[tokio::test]
async fn a_pick_scan_finds_its_item_and_lines_in_one_round_trip() {
    if !pg::engine_on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let (wms, _database) = pg::cloud_engine(dir.path());
    let skus = ["ΜΕΛΙ", "茶-1"];
    let t = seed::business("Ω")
        .item(skus[0])
        .item(skus[1])
        .seed(&wms)
        .await;
    let (b, w) = (t.business, t.warehouse.0);
    for sku in skus.iter().chain(&skus) {
        adjust(&wms, t.caller, w, sku).await;
    }
    let mut orders = Vec::new();
    for n in 0..2 {
        let req =
            serde_json::from_value(json!({"channel": "ιστός", "external_ref": format!("p-{n}"),
            "lines": [{"sku": skus[0], "quantity": 4}, {"sku": skus[1], "quantity": 4}],
            "shipping_address": {"name": "Ἀλέξανδρος", "line1": "Οδός Ερμού 1",
                                 "postal_code": "105 63", "city": "Αθήνα", "country": "GR"}}))
            .expect("order");
        let (o, _) = wms.create_order(t.caller, req).await.expect("created");
        wms.set_order_status(t.caller, o.id, OrderStatus::Confirmed, None)
            .await
            .expect("confirmed");
        orders.push(o.id);
    }
    let wave = wms
        .create_wave(
            b,
            serde_json::from_value(json!({"warehouse_id": w})).expect("wave"),
        )
        .await
        .expect("wave");
    let scan = |order: Option<depot_protocol::OrderId>, sku: &str| {
        let req = json!({"wave_id": wave.id, "order_id": order, "code": sku});
        let req = serde_json::from_value(req).expect("scan");
        let wms = &wms;
        async move {
            wms.pick_scan(t.caller, req).await.expect("picked");
        }
    };
    let for_order = fewest(&wms, |_| scan(Some(orders[0]), skus[0])).await;
    let for_wave = fewest(&wms, |_| scan(None, skus[1])).await;
    // `BEGIN`; the wave, the code's item and the wave's lines of it; the
    // order's status and what is left with the line's pick; the `COMMIT`
    // (with the event, sent without waiting).
    assert!(
        for_order <= 4 && for_wave <= 4,
        "a pick scan took {for_order} round trips for an order, {for_wave} for the wave"
    );
}
