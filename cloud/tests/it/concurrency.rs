//! Concurrent writers never lose an update: many adjustments, ingestions and
//! confirmations at once, then the sums are checked against what was sent.

use depot_testkit::cloud::spawn_cloud;
use serde_json::json;
use std::collections::HashSet;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_adjustments_and_orders_add_up() {
    let app = spawn_cloud().await;
    let items = [app.item("C-1").await, app.item("C-2").await];
    let (w1, w2) = (app.a.warehouses[0].0, app.a.warehouses[1].0);
    let b = app.a.business;

    let mut tasks = tokio::task::JoinSet::new();
    // 400 adjustments: deltas of ±1..3 on both items in both warehouses.
    for i in 0..400i64 {
        let client = app.as_a();
        let item = items[(i % 2) as usize];
        let w = if i % 3 == 0 { w2 } else { w1 };
        let delta = if i % 5 == 0 { -(i % 3 + 1) } else { i % 3 + 1 };
        tasks.spawn(async move {
            let r = client.post(&format!("/v1/inventory/{b}/adjust"),
                json!({"warehouse_id": w, "item_id": item, "reason": "adjusted", "delta": delta})).await;
            assert_eq!(r.status, 200);
            ("adjust", item, w, delta, None::<i64>)
        });
    }
    // 150 order ingestions over 100 distinct references (50 duplicates).
    for i in 0..150i64 {
        let client = app.as_a();
        tasks.spawn(async move {
            let r = client.post(&format!("/v1/orders/{b}/create"),
                json!({"channel": "web", "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"}, "external_ref": format!("CC-{}", i % 100), "lines": [{"sku": "C-1", "quantity": 1}]})).await;
            assert_eq!(r.status, 200);
            ("order", 0, 0, 0, r.body["data"]["id"].as_i64())
        });
    }
    let mut expected = std::collections::HashMap::new();
    let mut orders = HashSet::new();
    while let Some(done) = tasks.join_next().await {
        let (kind, item, w, delta, order) = done.expect("task");
        match kind {
            "adjust" => *expected.entry((item, w)).or_insert(0i64) += delta,
            _ => {
                orders.insert(order.expect("order id"));
            }
        }
    }
    assert_eq!(orders.len(), 100, "duplicates collapsed into their order");

    for ((item, w), sum) in &expected {
        let r = app
            .get(&format!(
                "/v1/inventory/{b}/items/list?item_id={item}&warehouse_id={w}"
            ))
            .await;
        assert_eq!(
            r.body["data"][0]["on_hand"].as_i64(),
            Some(*sum),
            "item {item} warehouse {w}"
        );
    }

    // Stock up C-1 and confirm all 100 orders at once: each reserves 1.
    let r = app.post(&format!("/v1/inventory/{b}/adjust"), json!({"warehouse_id": w1, "item_id": items[0], "reason": "received", "quantity": 1000})).await;
    assert_eq!(r.status, 200);
    let mut confirms = tokio::task::JoinSet::new();
    for id in orders {
        let client = app.as_a();
        confirms.spawn(async move {
            client
                .put(
                    &format!("/v1/orders/{b}/{id}/status"),
                    json!({"status": "confirmed"}),
                )
                .await
                .status
        });
    }
    while let Some(s) = confirms.join_next().await {
        assert_eq!(s.expect("task"), 200);
    }
    let (on_hand, reserved, available) = app.stock(items[0]).await;
    assert_eq!(reserved, 100);
    assert_eq!(available, on_hand - 100);
    assert!(
        app.wms.check_ledger().await.expect("check").is_empty(),
        "levels disagree with the ledger"
    );
    let stats = app.wms.writer_stats();
    let (jobs, commits) = (
        stats.jobs.load(std::sync::atomic::Ordering::Relaxed),
        stats.commits.load(std::sync::atomic::Ordering::Relaxed),
    );
    assert!(jobs >= commits && commits > 0);
}
