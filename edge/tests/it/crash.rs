//! `depot-edge`, a real process, SIGKILLed again and again in the middle of
//! a stream of station writes: after each restart every write it had
//! answered is there exactly once, and once the link drains, exactly once
//! in the cloud too.

use crate::common;
use common::process::spawn;
use depot_testkit::events::movement_ids;
use depot_testkit::http::Client;
use depot_testkit::{eventually, rig::Rig};
use depot_wms::Wms;
use serde_json::json;
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn answered_writes_survive_kills_and_reach_the_cloud_once() {
    let edge_id = format!("crash{}", std::process::id());
    let rig = Rig::start(&edge_id, false).await;
    let (b, w, cloud, key, node) = (
        rig.business,
        rig.warehouse,
        rig.cloud.clone(),
        rig.key.clone(),
        rig.node,
    );
    let item = rig.item("K").await;
    let dir = rig.dir.path().to_owned();
    let env = vec![
        ("DEPOT_BUSINESS_ID", b.0.to_string()),
        ("DEPOT_EDGE_ID", edge_id.clone()),
        ("DEPOT_NODE", node.to_string()),
        ("DEPOT_DATA_DIR", dir.join("edge").display().to_string()),
        ("DEPOT_LISTEN", "127.0.0.1:0".into()),
        ("DEPOT_BROKER__URL", rig.broker_url.clone()),
    ];
    let client = Client::new("");
    let mut answered: Vec<String> = Vec::new();
    for round in 0..5 {
        let mut edge = spawn(&env);
        // The key arrives from the cloud in the first round; later rounds
        // start from what the edge kept on disk.
        let client = client.with_base(&edge.base);
        let k = key.clone();
        eventually("the edge to accept the key", || {
            let (client, k) = (client.clone(), k.clone());
            async move {
                client
                    .raw("GET", "/v1/edge/status")
                    .header("X-API-KEY", k)
                    .try_send()
                    .await
                    .is_ok_and(|r| r.status == 200)
            }
        })
        .await;
        let stop_writing = Arc::new(AtomicBool::new(false));
        let mut writers = tokio::task::JoinSet::new();
        for _ in 0..6 {
            let (client, k, stop_writing) = (client.clone(), key.clone(), stop_writing.clone());
            let (bid, wid) = (b.0, w.0);
            writers.spawn(async move {
                let mut ids = Vec::new();
                while !stop_writing.load(Ordering::Relaxed) {
                    let sent = client.raw("POST", &format!("/v1/inventory/{bid}/adjust"))
                        .header("X-API-KEY", &k)
                        .json(&json!({"warehouse_id": wid, "sku": "K", "reason": "received", "quantity": 1}))
                        .timeout(Duration::from_secs(5))
                        .try_send()
                        .await;
                    let Ok(resp) = sent else { break };
                    if resp.status != 200 {
                        break;
                    }
                    // A body cut off by the kill is no answer.
                    if !resp.body.is_object() {
                        break;
                    }
                    if let Some(id) = resp.body["data"]["movements"][0]["id"].as_str() {
                        ids.push(id.to_owned());
                    }
                }
                ids
            });
        }
        tokio::time::sleep(Duration::from_millis(150 + 70 * round)).await;
        edge.child.kill().expect("SIGKILL");
        let _ = edge.child.wait();
        stop_writing.store(true, Ordering::Relaxed);
        while let Some(ids) = writers.join_next().await {
            answered.extend(ids.expect("writer"));
        }
    }
    assert!(
        answered.len() > 20,
        "too few writes to mean anything: {}",
        answered.len()
    );
    let unique: HashSet<&String> = answered.iter().collect();
    assert_eq!(unique.len(), answered.len(), "an answer was given twice");

    // One last run drains the outbox.
    let mut edge = spawn(&env);
    let edge_db = Wms::open_node(
        &dir.join("edge").join("edge.db"),
        &format!("edge:{edge_id}"),
        node,
    )
    .expect("edge db");
    eventually("the outbox to drain", || async {
        edge_db
            .sync_snapshot()
            .await
            .is_ok_and(|s| s.depth == 0 && s.acked > 0)
    })
    .await;
    let at_edge = movement_ids(&edge_db).await;
    let at_cloud = movement_ids(&cloud).await;
    for id in &answered {
        assert_eq!(at_edge.get(id), Some(&1), "movement {id} at the edge");
        assert_eq!(at_cloud.get(id), Some(&1), "movement {id} in the cloud");
    }
    assert!(
        at_cloud.values().all(|n| *n == 1),
        "something was applied twice in the cloud"
    );
    let (edge_level, cloud_level) = (
        edge_db.stock_level(item, w).await.expect("level"),
        cloud.stock_level(item, w).await.expect("level"),
    );
    assert_eq!(edge_level, cloud_level);
    assert!(edge_level.0 as usize >= answered.len());
    assert!(cloud.check_ledger().await.expect("check").is_empty());
    edge.child.kill().expect("kill");
    let _ = edge.child.wait();
    rig.stop().await;
}
