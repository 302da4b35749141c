//! A week-sized backlog: 200,000 events made at the edge while the link is
//! down drain after it comes back, the edge keeps answering stations
//! meanwhile, and the cloud's live changes reach the edge during the drain
//! instead of waiting behind it. `DEPOT_TEST_BACKLOG` sets another size.

use crate::common;
use common::RunningEdge;
use depot_edge::faults::Faults;
use depot_testkit::http::Client;
use depot_testkit::{eventually, rig::Rig};
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_long_outage_drains_without_stopping_the_floor() {
    let backlog: i64 = std::env::var("DEPOT_TEST_BACKLOG")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000);
    let rig = Rig::start("long-1", true).await;
    let (b, w, caller, cloud) = (rig.business, rig.warehouse, rig.caller, rig.cloud.clone());
    let floor = rig.item("FLOOR").await;
    let office = rig.item("OFFICE").await;
    let running = RunningEdge::start(rig.edge_settings(), Faults::default()).await;
    let (edge, base) = (running.wms.clone(), running.base.clone());
    eventually("the catalog at the edge", || async {
        edge.item(b, office).await.is_ok()
    })
    .await;

    // The week offline: the backlog piles up at the edge.
    rig.link().cut();
    eventually("the edge to notice", || async {
        edge.sync_snapshot().await.is_ok_and(|s| !s.connected)
    })
    .await;
    let started = Instant::now();
    let mut writers = tokio::task::JoinSet::new();
    let per = backlog / 32;
    for _ in 0..32 {
        let edge = edge.clone();
        writers.spawn(async move {
            for _ in 0..per {
                let req = serde_json::from_value(
                    json!({"warehouse_id": w.0, "sku": "FLOOR", "reason": "adjusted", "delta": 1}),
                )
                .expect("adj");
                edge.adjust(caller, req).await.expect("adjust");
            }
        });
    }
    while writers.join_next().await.is_some() {}
    let made = per * 32;
    let pile = started.elapsed();
    assert!(edge.sync_snapshot().await.expect("snapshot").depth >= made);

    // Back online: the drain starts; stations keep working and the cloud's
    // own change comes down while the backlog still goes up.
    rig.link().restore();
    let drain = Instant::now();
    cloud
        .adjust(
            caller,
            serde_json::from_value(
                json!({"warehouse_id": w.0, "sku": "OFFICE", "reason": "received", "quantity": 9}),
            )
            .expect("adj"),
        )
        .await
        .expect("office");
    let client = Client::new(&base);
    let mut slowest = Duration::ZERO;
    let mut live_arrived_with_backlog = None;
    loop {
        let t = Instant::now();
        let r = client
            .raw("POST", &format!("/v1/inventory/{b}/adjust"))
            .header("X-API-KEY", &rig.key)
            .json(&json!({"warehouse_id": w.0, "sku": "FLOOR", "reason": "adjusted", "delta": 1}))
            .send()
            .await;
        assert_eq!(r.status, 200, "the edge refused a station during the drain");
        slowest = slowest.max(t.elapsed());
        let s = edge.sync_snapshot().await.expect("snapshot");
        if live_arrived_with_backlog.is_none()
            && edge.stock_level(office, w).await.expect("level").0 == 9
        {
            live_arrived_with_backlog = Some(s.depth);
        }
        // The outage's backlog is what the edge made first (out_seq 1 to
        // `made`); the stations' writes meanwhile keep a little more coming.
        if s.connected && s.acked >= made {
            break;
        }
        assert!(
            drain.elapsed() < Duration::from_secs(600),
            "the backlog did not drain: {} left",
            s.depth
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let drained = drain.elapsed();
    eventually("the cloud to match the edge", || async {
        cloud.stock_level(floor, w).await.ok() == edge.stock_level(floor, w).await.ok()
    })
    .await;
    let waiting = live_arrived_with_backlog.expect("the cloud's change reached the edge");
    assert!(
        waiting > 0 || made < 10_000,
        "the cloud's change waited behind the whole backlog"
    );
    println!(
        "backlog of {made} events made in {:.1}s, drained in {:.1}s ({:.0} events/s); slowest station answer during the drain {:.0} ms; \
         the cloud's change arrived with {waiting} events still to go up",
        pile.as_secs_f64(),
        drained.as_secs_f64(),
        made as f64 / drained.as_secs_f64(),
        slowest.as_secs_f64() * 1000.0
    );
    assert!(cloud.check_ledger().await.expect("check").is_empty());

    running.stop().await;
    rig.stop().await;
}
