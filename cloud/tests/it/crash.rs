//! A crashed process loses no answered write: the server is killed (SIGKILL)
//! while writes are in flight, and every write it answered is found on disk;
//! stopped (SIGTERM), it also leaves its database closed.

use crate::process;
use depot_protocol::{ItemId, WarehouseId};
use depot_testkit::http::Client;
use process::{serve_one_business, terminate};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Writers hammer until `stop`; each answers the movements it was answered
/// for.
fn hammer(base: &str, key: &str, stop: &Arc<AtomicBool>) -> tokio::task::JoinSet<Vec<String>> {
    let client = Client::new(base).with_key(key);
    let mut writers = tokio::task::JoinSet::new();
    for _ in 0..16 {
        let (client, stop) = (client.clone(), stop.clone());
        writers.spawn(async move {
            let mut answered = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let sent = client.raw("POST", "/v1/inventory/1/adjust")
                    .json(&json!({"warehouse_id": 1, "sku": "CR-1", "reason": "received", "quantity": 1}))
                    .timeout(Duration::from_secs(5)).try_send().await;
                let Ok(resp) = sent else { break };
                if resp.status != 200 {
                    break;
                }
                // A body cut off by the stop is no answer.
                if !resp.body.is_object() {
                    break;
                }
                if let Some(id) = resp.body["data"]["movements"][0]["id"].as_str() {
                    answered.push(id.to_owned());
                }
            }
            answered
        });
    }
    writers
}

/// Every movement in `answered` is in the database, once, and the books
/// agree.
async fn check_kept(dir: &std::path::Path, answered: &[String]) {
    assert!(
        answered.len() > 10,
        "the load was too light to mean anything: {}",
        answered.len()
    );
    let wms = depot_wms::Wms::open(&dir.join("cloud.db"), "cloud").expect("reopen");
    let (on_hand, _) = wms
        .stock_level(ItemId(1), WarehouseId(1))
        .await
        .expect("level");
    let events = wms.events_since(0, u32::MAX).await.expect("events");
    let stored: std::collections::HashSet<String> = events
        .iter()
        .filter(|e| e.kind == "stock.moved")
        .filter_map(|e| e.payload["id"].as_str().map(str::to_owned))
        .collect();
    for id in answered {
        assert!(
            stored.contains(id),
            "answered movement {id} is missing after the stop"
        );
    }
    assert_eq!(on_hand as usize, stored.len(), "level and ledger disagree");
    assert!(on_hand as usize >= answered.len());
    assert!(wms.check_ledger().await.expect("check").is_empty());
    wms.close().await.expect("close");
}

async fn gather(mut writers: tokio::task::JoinSet<Vec<String>>) -> Vec<String> {
    let mut answered = Vec::new();
    while let Some(done) = writers.join_next().await {
        answered.extend(done.expect("writer"));
    }
    answered
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn answered_writes_survive_a_kill() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut child, base, key) = serve_one_business(dir.path(), &[]).await;
    let stop = Arc::new(AtomicBool::new(false));
    let writers = hammer(&base, &key, &stop);
    tokio::time::sleep(Duration::from_millis(700)).await;
    child.kill().expect("kill");
    let _ = child.wait();
    stop.store(true, Ordering::Relaxed);
    check_kept(dir.path(), &gather(writers).await).await;
}

/// SIGTERM under load: the server stops cleanly, keeps every write it
/// answered, and leaves its database as one file, the log folded in.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stop_under_load_keeps_every_answered_write_and_closes_the_database() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut child, base, key) = serve_one_business(dir.path(), &[]).await;
    let stop = Arc::new(AtomicBool::new(false));
    let writers = hammer(&base, &key, &stop);
    tokio::time::sleep(Duration::from_millis(700)).await;
    terminate(&mut child);
    stop.store(true, Ordering::Relaxed);
    for side in ["cloud.db-wal", "cloud.db-shm"] {
        assert!(
            !dir.path().join(side).exists(),
            "{side} outlived the stop on SIGTERM"
        );
    }
    check_kept(dir.path(), &gather(writers).await).await;
}
