//! A crashed process loses no answered write: the server is killed (SIGKILL)
//! while writes are in flight, and every write it answered is found on disk.

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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn answered_writes_survive_a_kill() {
    let dir = tempfile::tempdir().expect("tempdir");
    admin(dir.path(), &["business", "create", "--name", "Crash"]);
    admin(
        dir.path(),
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
    let key = admin(dir.path(), &["key", "create", "--business", "1"]);
    assert!(key.starts_with("dpk_"), "{key}");

    let mut child = Command::new(BIN)
        .arg("--data-dir")
        .arg(dir.path())
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

    let client = reqwest::Client::new();
    let r = client
        .post(format!("{base}/v1/items/1/create"))
        .header("X-API-KEY", &key)
        .json(&json!({"sku": "CR-1", "name": "Crash test"}))
        .send()
        .await
        .expect("item");
    assert_eq!(r.status(), 200);

    // Writers hammer until the kill; each remembers the movements it was
    // answered for.
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = tokio::task::JoinSet::new();
    for _ in 0..16 {
        let (client, base, key, stop) = (client.clone(), base.clone(), key.clone(), stop.clone());
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
    tokio::time::sleep(Duration::from_millis(700)).await;
    child.kill().expect("kill");
    let _ = child.wait();
    stop.store(true, Ordering::Relaxed);
    let mut answered = Vec::new();
    while let Some(done) = writers.join_next().await {
        answered.extend(done.expect("writer"));
    }
    assert!(
        answered.len() > 10,
        "the load was too light to mean anything: {}",
        answered.len()
    );

    let wms = depot_wms::Wms::open(&dir.path().join("cloud.db"), "cloud").expect("reopen");
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
    for id in &answered {
        assert!(
            stored.contains(id),
            "answered movement {id} is missing after the crash"
        );
    }
    assert_eq!(on_hand as usize, stored.len(), "level and ledger disagree");
    assert!(on_hand as usize >= answered.len());
    assert!(wms.check_ledger().await.expect("check").is_empty());
}
