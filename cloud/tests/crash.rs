//! A crashed process loses no answered write: the server is killed (SIGKILL)
//! while writes are in flight, and every write it answered is found on disk;
//! stopped (SIGTERM), it also leaves its database closed.

use depot_protocol::{ItemId, WarehouseId};
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_depot-cloud");

fn admin(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .env("DEPOT_LOG", "warn")
        .output()
        .expect("run admin");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A business, a warehouse, an item and a key, made with the admin
/// commands; then `depot-cloud serve`. Answers the server, its address and
/// the key.
async fn serve_one_business(dir: &std::path::Path) -> (std::process::Child, String, String) {
    admin(dir, &["business", "create", "--name", "Crash"]);
    admin(
        dir,
        &[
            "warehouse",
            "create",
            "--business",
            "1",
            "--code",
            "W1",
            "--name",
            "Main",
        ],
    );
    let key = admin(dir, &["key", "create", "--business", "1"]);
    assert!(key.starts_with("dpk_"), "{key}");
    // Each admin command closes the database behind it.
    assert!(
        !dir.join("cloud.db-wal").exists(),
        "an admin command left its log"
    );

    let mut child = Command::new(BIN)
        .arg("--data-dir")
        .arg(dir)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("DEPOT_LOG", "warn")
        .env("DEPOT_RATE_LIMIT__PER_SECOND", "100000")
        .env("DEPOT_RATE_LIMIT__BURST", "100000")
        .env("DEPOT_BROKER__EMBEDDED_LISTEN", "127.0.0.1:0")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read address");
    let base = line.trim().rsplit(' ').next().expect("address").to_owned();
    assert!(base.starts_with("http://127.0.0.1:"), "{line}");

    let r = reqwest::Client::new()
        .post(format!("{base}/v1/items/1/create"))
        .header("X-API-KEY", &key)
        .json(&json!({"sku": "CR-1", "name": "Crash test"}))
        .send()
        .await
        .expect("item");
    assert_eq!(r.status(), 200);
    (child, base, key)
}

/// Writers hammer until `stop`; each answers the movements it was answered
/// for.
fn hammer(base: &str, key: &str, stop: &Arc<AtomicBool>) -> tokio::task::JoinSet<Vec<String>> {
    let client = reqwest::Client::new();
    let mut writers = tokio::task::JoinSet::new();
    for _ in 0..16 {
        let (client, base, key, stop) = (
            client.clone(),
            base.to_owned(),
            key.to_owned(),
            stop.clone(),
        );
        writers.spawn(async move {
            let mut answered = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let sent = client.post(format!("{base}/v1/inventory/1/adjust")).header("X-API-KEY", &key)
                    .json(&json!({"warehouse_id": 1, "sku": "CR-1", "reason": "received", "quantity": 1}))
                    .timeout(Duration::from_secs(5)).send().await;
                let Ok(resp) = sent else { break };
                if resp.status() != 200 {
                    break;
                }
                let Ok(body) = resp.json::<serde_json::Value>().await else { break };
                if let Some(id) = body["data"]["movements"][0]["id"].as_str() {
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
    let (mut child, base, key) = serve_one_business(dir.path()).await;
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
    let (mut child, base, key) = serve_one_business(dir.path()).await;
    let stop = Arc::new(AtomicBool::new(false));
    let writers = hammer(&base, &key, &stop);
    tokio::time::sleep(Duration::from_millis(700)).await;
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill -TERM");
    assert!(sent.success());
    let status = child.wait().expect("wait");
    stop.store(true, Ordering::Relaxed);
    assert!(status.success(), "a clean stop: {status}");
    for side in ["cloud.db-wal", "cloud.db-shm"] {
        assert!(
            !dir.path().join(side).exists(),
            "{side} outlived the stop on SIGTERM"
        );
    }
    check_kept(dir.path(), &gather(writers).await).await;
}
