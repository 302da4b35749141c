//! An order coming in: its duplicate check, its business's defaults, each
//! line's item and its channel are read together (on PostgreSQL in one
//! round trip); what each read finds still decides, line by line.

use depot_protocol::tenant::Caller;
use depot_testkit::seed;
use depot_wms::Wms;
use depot_wms::error::WmsError;
use serde_json::{Value, json};

async fn create(
    wms: &Wms,
    caller: Caller,
    r: &str,
    lines: Value,
) -> depot_wms::Result<(depot_protocol::order::Order, bool)> {
    let req = serde_json::from_value(
        json!({"channel": "ιστός", "external_ref": r, "lines": lines,
        "shipping_address": {"name": "王小明", "line1": "中山路 1号", "postal_code": "200000",
                             "city": "上海", "country": "CN"}}),
    )
    .expect("order");
    wms.create_order(caller, req).await
}

async fn order_count(wms: &Wms) -> usize {
    let (_, events) = depot_testkit::events::own_since(wms, 0).await;
    events.iter().filter(|e| e.kind == "order.created").count()
}

/// An engine (on PostgreSQL when the tests run there) with a business
/// selling three items.
async fn engine(
    dir: &tempfile::TempDir,
) -> (Wms, Option<depot_testkit::pg::PgDatabase>, seed::Tenant) {
    let (wms, database) = depot_testkit::pg::cloud_engine(dir.path());
    let t = seed::business("Ω")
        .item("ΜΕΛΙ")
        .item("茶-1")
        .item("kaffee")
        .seed(&wms)
        .await;
    (wms, database, t)
}

#[tokio::test]
async fn an_orders_reads_sent_together_still_decide_line_by_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (wms, _database, t) = engine(&dir).await;

    // Two unknown SKUs among three lines: each named, nothing written.
    let refused = create(
        &wms,
        t.caller,
        "1",
        json!([{"sku": "ΧΧΧ", "quantity": 1}, {"sku": "茶-1", "quantity": 2}, {"sku": "nope", "quantity": 1}]),
    )
    .await;
    match refused {
        Err(WmsError::Invalid { errors, .. }) => {
            let fields: Vec<&str> = errors.iter().map(|e| e.name.as_str()).collect();
            assert_eq!(fields, ["lines[0].sku", "lines[2].sku"]);
            assert!(errors[0].status.contains("ΧΧΧ"), "{}", errors[0].status);
        }
        other => panic!("the unknown SKUs named, not {other:?}"),
    }
    assert_eq!(order_count(&wms).await, 0);

    // Every line its own item, in order.
    let (first, created) = create(
        &wms,
        t.caller,
        "1",
        json!([{"sku": "kaffee", "quantity": 1, "unit_price": "2.50"},
               {"sku": "ΜΕΛΙ", "quantity": 3},
               {"sku": "茶-1", "quantity": 2}]),
    )
    .await
    .expect("created");
    assert!(created);
    let skus: Vec<&str> = first.lines.iter().map(|l| l.sku.as_str()).collect();
    assert_eq!(skus, ["kaffee", "ΜΕΛΙ", "茶-1"]);
    assert_eq!(first.warehouse_id, t.warehouse);

    // The same reference again, with other lines: the first order, as it
    // was, and nothing new written.
    let (again, created) = create(&wms, t.caller, "1", json!([{"sku": "茶-1", "quantity": 9}]))
        .await
        .expect("the first order");
    assert!(!created);
    assert_eq!(again.id, first.id);
    assert_eq!(again.lines.len(), 3);
    assert_eq!(order_count(&wms).await, 1);

    // As many lines as an order may have: a read for each, all sent
    // before the first is taken.
    let skus = ["kaffee", "ΜΕΛΙ", "茶-1"];
    let many: Vec<Value> = (0..depot_protocol::order_request::MAX_LINES)
        .map(|i| json!({"sku": skus[i % 3], "quantity": i + 1}))
        .collect();
    let (big, created) = create(&wms, t.caller, "2", json!(many))
        .await
        .expect("the largest order");
    assert!(created);
    assert_eq!(big.lines.len(), depot_protocol::order_request::MAX_LINES);
    for (i, l) in big.lines.iter().enumerate() {
        assert_eq!((l.sku.as_str(), l.quantity), (skus[i % 3], i as i64 + 1));
    }
}

/// Each channel's figure of each item, by SKU, from its change feed.
async fn figures(
    wms: &Wms,
    business: depot_protocol::BusinessId,
    code: &str,
) -> std::collections::BTreeMap<String, i64> {
    let page = wms
        .channel_changes(business, code.into(), 0, 1000)
        .await
        .expect("changes");
    page.data
        .into_iter()
        .map(|a| (a.sku, a.available))
        .collect()
}

#[tokio::test]
async fn an_orders_lines_move_every_channels_figures_read_together() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (wms, _database, t) = engine(&dir).await;
    let b = t.business;
    for (sku, n) in [("ΜΕΛΙ", 50), ("茶-1", 7), ("kaffee", 3)] {
        let req = serde_json::from_value(json!({"warehouse_id": t.warehouse.0, "sku": sku,
            "reason": "received", "quantity": n}))
        .expect("adjust");
        wms.adjust(t.caller, req).await.expect("received");
    }
    let mut channels = Vec::new();
    for rules in [
        json!({"code": "web", "name": "Ιστός", "kind": "storefront", "buffer_units": 2}),
        json!({"code": "shop", "name": "商店", "kind": "marketplace", "cap_percent": 50}),
    ] {
        let mut fields = rules;
        fields["warehouse_ids"] = json!([t.warehouse.0]);
        let fields = serde_json::from_value(fields).expect("fields");
        channels.push(wms.create_channel(b, fields).await.expect("channel"));
    }

    // Three items, one of them on two lines: every item's levels are read
    // together, and every figure written with numbers of one block.
    create(
        &wms,
        t.caller,
        "1",
        json!([{"sku": "ΜΕΛΙ", "quantity": 3}, {"sku": "茶-1", "quantity": 1},
               {"sku": "ΜΕΛΙ", "quantity": 2}, {"sku": "kaffee", "quantity": 4}]),
    )
    .await
    .expect("created");
    let free = [("kaffee", 3 - 4), ("ΜΕΛΙ", 50 - 5), ("茶-1", 7 - 1)];
    for item in &t.items {
        let (_, reserved) = wms.stock_level(*item, t.warehouse).await.expect("level");
        assert_eq!(reserved, 0, "a pending order reserves nothing");
    }
    for c in &channels {
        let expected: std::collections::BTreeMap<String, i64> = free
            .iter()
            .map(|(sku, n)| {
                let pool = (*n).max(0);
                (
                    sku.to_string(),
                    depot_protocol::channel::available(pool, &c.allocation()),
                )
            })
            .collect();
        assert_eq!(
            figures(&wms, b, &c.code).await,
            expected,
            "channel {}",
            c.code
        );
    }
    // Every figure has a number of its own, the feed's last the largest.
    let (seqs, head): (Vec<i64>, i64) = wms
        .write_for(b, move |conn| {
            let seqs = conn.query_map(
                "SELECT seq FROM channel_availability WHERE business_id = ?1 ORDER BY seq",
                depot_sql::params![b.0],
                |r| r.get(0),
            )?;
            let head = conn.query_value(
                "SELECT seq FROM channel_feed WHERE business_id = ?1",
                depot_sql::params![b.0],
            )?;
            Ok((seqs, head))
        })
        .await
        .expect("numbers");
    let mut distinct = seqs.clone();
    distinct.dedup();
    assert_eq!(distinct, seqs, "no two figures share a number");
    assert_eq!(seqs.len(), 6);
    assert_eq!(seqs.last().copied(), Some(head));
}
