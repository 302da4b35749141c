//! The writer's statements are planned once on PostgreSQL, not on every
//! call (DEPOT_TEST_DATABASE=postgres; skipped otherwise).
//!
//! A prepared statement is planned for its values five times; then
//! PostgreSQL keeps one generic plan if it costs no more than those, and
//! otherwise plans again on every call. A form like `(x = $3 OR $3 IS
//! NULL)` has no generic plan as cheap, and planning a pick scan's lines
//! cost six times what running them did. The writer's connection lists
//! what it has prepared, with how often each was planned which way
//! (`pg_prepared_statements`).

use depot_protocol::order::OrderStatus;
use depot_testkit::{pg, seed};
use serde_json::json;

/// Calls after which a statement planned for its values every time is
/// taken for one PostgreSQL plans again on every call.
const CALLS: i64 = 12;
/// Orders in the wave scanned.
const ORDERS: i64 = 200;

#[tokio::test]
async fn the_writers_hot_statements_are_planned_once_not_on_every_call() {
    if !pg::engine_on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let (wms, _database) = pg::cloud_engine(dir.path());
    let skus = ["ΜΕΛΙ", "茶-1", "ç-3"];
    let mut seeded = seed::business("Ω");
    for sku in skus {
        seeded = seeded.item(sku);
    }
    let t = seeded.seed(&wms).await;
    let (caller, w) = (t.caller, t.warehouse.0);
    let adjust = |sku: &str| {
        serde_json::from_value(
            json!({"warehouse_id": w, "sku": sku, "reason": "received", "quantity": 500}),
        )
        .expect("adjust")
    };
    for sku in skus {
        wms.adjust(caller, adjust(sku)).await.expect("received");
    }

    // Orders of a line of each item, confirmed, in one wave: enough of
    // them that PostgreSQL reads tables by their indexes, as in a business.
    let mut orders = Vec::new();
    for n in 0..ORDERS {
        let lines: Vec<_> = skus
            .iter()
            .map(|s| json!({"sku": s, "quantity": 1}))
            .collect();
        let mut req = json!({"channel": "ιστός", "external_ref": format!("Ω-{n}"),
            "lines": lines, "buyer": {"name": "Ἀλέξανδρος", "email": format!("a{n}@example.gr")},
            "shipping_address": {"name": "王小明", "line1": "中山路 1号", "postal_code": "200000", "region": "上海市",
                                 "city": "上海", "country": "CN"}});
        // Half of them name their warehouse, as a merchant with several does.
        if n % 2 == 0 {
            req["warehouse_id"] = json!(w);
        }
        let req = serde_json::from_value(req).expect("order");
        let (o, created) = wms.create_order(caller, req).await.expect("created");
        assert!(created);
        wms.set_order_status(caller, o.id, OrderStatus::Confirmed, None)
            .await
            .expect("confirmed");
        orders.push(o.id);
    }
    let wave = wms
        .create_wave(
            t.business,
            serde_json::from_value(json!({"warehouse_id": w, "max_orders": 200})).expect("wave"),
        )
        .await
        .expect("wave");
    // Statistics, as autovacuum gathers them within a minute of a load:
    // the costs PostgreSQL weighs its plans by come from them.
    wms.write_unkeyed(|db| Ok(db.execute_batch("ANALYZE")?))
        .await
        .expect("analyzed");

    // Scans for one order (a station working an order), then for the wave.
    for o in orders.iter().take(CALLS as usize) {
        let scan = json!({"wave_id": wave.id, "order_id": o, "code": skus[0]});
        wms.pick_scan(caller, serde_json::from_value(scan).expect("scan"))
            .await
            .expect("picked for the order");
    }
    for _ in 0..CALLS {
        let scan = json!({"wave_id": wave.id, "code": skus[1]});
        wms.pick_scan(caller, serde_json::from_value(scan).expect("scan"))
            .await
            .expect("picked for the wave");
    }
    for _ in 0..CALLS {
        wms.adjust(caller, adjust(skus[2])).await.expect("adjusted");
    }

    let prepared = wms
        .write_unkeyed(|db| {
            Ok(db.query_map(
                "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements",
                &[],
                |r| Ok((r.get::<String>(0)?, r.get::<i64>(1)?, r.get::<i64>(2)?)),
            )?)
        })
        .await
        .expect("the writer's prepared statements");
    let called = |&(_, generic, custom): &&(String, i64, i64)| generic + custom >= CALLS;
    assert!(
        prepared.iter().filter(called).count() >= 10,
        "the writer prepared {} statements: {prepared:?}",
        prepared.len()
    );
    let replanned: Vec<_> = prepared
        .iter()
        .filter(called)
        // More than half its calls planned for their values (a few more
        // than five: `ANALYZE` has PostgreSQL plan again what it had).
        .filter(|(_, generic, custom)| custom > generic)
        .collect();
    assert!(
        replanned.is_empty(),
        "planned for their values on every call: {replanned:#?}"
    );
}
