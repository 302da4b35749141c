//! The key survives the process: `depot-cloud` killed with SIGKILL under
//! a load of keyed adjustments, then restarted on its data directory,
//! applies each of them once when the requests whose answer was lost are
//! sent again; a request answered before is answered the same. And a
//! process that exits right after a commit (the test hook
//! `DEPOT_FAULT_EXIT_AFTER_COMMIT`), before anyone was answered, answers
//! the retry with the answer stored in that commit.

use super::process::{serve, serve_one_business, terminate};
use super::{replayed, send};
use depot_testkit::http::{Client, Res};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A keyed adjustment of one unit, its `ref` the key.
fn one_unit(key: &str) -> Value {
    json!({"warehouse_id": 1, "sku": "CR-1", "reason": "received", "quantity": 1, "ref": key})
}

/// `None`: no answer (the process is gone).
async fn adjust(client: &Client, key: &str) -> Option<Res> {
    client
        .raw("POST", "/v1/inventory/1/adjust")
        .header("Idempotency-Key", key)
        .json(&one_unit(key))
        .timeout(Duration::from_secs(10))
        .try_send()
        .await
        .ok()
}

/// The movements of the stopped server's database, by `ref`; and whether
/// its books agree.
async fn movements_by_ref(dir: &Path) -> (HashMap<String, usize>, i64) {
    let wms = depot_wms::Wms::open(&dir.join("cloud.db"), "cloud").expect("reopen");
    let mut by_ref = HashMap::new();
    for e in wms.events_since(0, u32::MAX).await.expect("events") {
        if e.kind == "stock.moved" {
            if let Some(r) = e.payload["ref"].as_str() {
                *by_ref.entry(r.to_owned()).or_insert(0) += 1;
            }
        }
    }
    let (on_hand, _) = wms
        .stock_level(depot_protocol::ItemId(1), depot_protocol::WarehouseId(1))
        .await
        .expect("level");
    assert!(wms.check_ledger().await.expect("check").is_empty());
    wms.close().await.expect("close");
    (by_ref, on_hand)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killed_under_load_each_adjustment_is_applied_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut child, base, api_key) = serve_one_business(dir.path(), &[]).await;
    let client = Client::new(&base).with_key(api_key.as_str());
    let stop = Arc::new(AtomicBool::new(false));
    let (answered_tx, mut answered) = tokio::sync::watch::channel(0usize);
    let answered_tx = Arc::new(answered_tx);
    let mut writers = tokio::task::JoinSet::new();
    for w in 0..12 {
        let (client, stop, count) = (client.clone(), stop.clone(), answered_tx.clone());
        writers.spawn(async move {
            // Each request's key, and its answer (None: lost).
            let mut sent: Vec<(String, Option<Res>)> = Vec::new();
            for n in 0.. {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let key = format!("w{w}-{n}");
                let answer = adjust(&client, &key).await;
                let lost = answer.is_none();
                if let Some(a) = &answer {
                    assert_eq!(a.status, 200, "{:?}", a.body);
                    count.send_modify(|c| *c += 1);
                }
                sent.push((key, answer));
                if lost {
                    break;
                }
            }
            sent
        });
    }
    // Mid-load: once enough writes have been answered.
    answered
        .wait_for(|n| *n >= 150)
        .await
        .expect("the writers answer");
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    stop.store(true, Ordering::Relaxed);
    let mut sent = Vec::new();
    while let Some(done) = writers.join_next().await {
        sent.extend(done.expect("writer"));
    }
    let lost: Vec<&String> = sent
        .iter()
        .filter(|(_, a)| a.is_none())
        .map(|(k, _)| k)
        .collect();
    assert!(!lost.is_empty(), "the kill cut requests off");

    // The same data directory, a new process: every lost request again,
    // with its key, and every answered one too.
    let (mut child, base) = serve(dir.path(), &[]);
    let client = client.with_base(base);
    let mut replayed_lost = 0;
    for (key, first) in &sent {
        let again = adjust(&client, key)
            .await
            .expect("the restarted server answers");
        assert_eq!(again.status, 200, "{key}: {:?}", again.body);
        match first {
            Some(first) => {
                assert!(replayed(&again), "{key}: answered before, replayed now");
                assert_eq!(again.bytes, first.bytes, "{key}: the same answer");
            }
            // Committed before the kill (its answer stored with it), or
            // not: applied now.
            None => replayed_lost += usize::from(replayed(&again)),
        }
        let third = adjust(&client, key).await.expect("answer");
        assert!(replayed(&third) && third.bytes == again.bytes, "{key}");
    }
    terminate(&mut child);

    let (by_ref, on_hand) = movements_by_ref(dir.path()).await;
    for (key, _) in &sent {
        assert_eq!(by_ref.get(key), Some(&1), "{key}: applied exactly once");
    }
    assert_eq!(by_ref.len(), sent.len(), "nothing else was applied");
    assert_eq!(on_hand, sent.len() as i64, "each delta once");
    eprintln!(
        "{} requests, {} lost to the kill, {replayed_lost} of them committed before it",
        sent.len(),
        lost.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_gone_right_after_a_commit_answers_the_retry() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut child, base, api_key) =
        serve_one_business(dir.path(), &[("DEPOT_FAULT_EXIT_AFTER_COMMIT", "3")]).await;
    let client = Client::new(&base).with_key(api_key.as_str());
    let first = adjust(&client, "exit-1").await.expect("answer");
    let second = adjust(&client, "exit-2").await.expect("answer");
    assert_eq!((first.status, second.status), (200, 200));
    // The third commits, and the process exits before answering it.
    assert!(
        adjust(&client, "exit-3").await.is_none(),
        "answered although the process exits after the commit"
    );
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(70), "the hook's exit: {status}");

    let (mut child, base) = serve(dir.path(), &[]);
    let client = client.with_base(base);
    let retry = adjust(&client, "exit-3").await.expect("answer");
    assert_eq!(retry.status, 200, "{:?}", retry.body);
    assert!(replayed(&retry), "the answer stored in the commit");
    assert_eq!(retry.body["data"]["movements"][0]["ref"], "exit-3");
    assert_eq!(retry.body["data"]["levels"][0]["on_hand"], 3);
    let again = adjust(&client, "exit-1").await.expect("answer");
    assert!(replayed(&again));
    assert_eq!(again.bytes, first.bytes);
    // The same key with another body is still refused after the restart.
    let other = send(
        &client,
        "POST",
        "/v1/inventory/1/adjust",
        Some(&api_key),
        Some("exit-3"),
        Some(&json!({"warehouse_id": 1, "sku": "CR-1", "reason": "received", "quantity": 2})),
    )
    .await;
    assert_eq!(other.status, 422);
    terminate(&mut child);

    let (by_ref, on_hand) = movements_by_ref(dir.path()).await;
    for key in ["exit-1", "exit-2", "exit-3"] {
        assert_eq!(by_ref.get(key), Some(&1), "{key}");
    }
    assert_eq!(on_hand, 3);
}
