//! The cloud on a disk that fills: writes are refused as such (507), the
//! metrics say so, and a server stopped on the full disk starts again on
//! the room it kept in reserve. Runs on a small filesystem of its own
//! (`DEPOT_TEST_SMALL_FS`, a tmpfs `.ci/run` mounts); skipped without one.

use crate::process;
use depot_testkit::http::Client;
use process::{serve, serve_one_business, terminate};
use serde_json::json;
use std::io::Write;
use std::path::Path;

/// Fills the filesystem under `dir` to the last block.
fn fill(dir: &Path) -> std::fs::File {
    let mut ballast = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("ballast"))
        .expect("ballast");
    let chunk = vec![0x5a_u8; 64 * 1024];
    while ballast.write_all(&chunk).is_ok() {}
    while ballast.write_all(&chunk[..512]).is_ok() {}
    let _ = ballast.sync_all();
    ballast
}

fn unfill(dir: &Path, ballast: std::fs::File) {
    drop(ballast);
    std::fs::remove_file(dir.join("ballast")).expect("free the space");
}

async fn receive(client: &Client) -> u16 {
    client
        .post(
            "/v1/inventory/1/adjust",
            json!({"warehouse_id": 1, "sku": "CR-1", "reason": "received", "quantity": 1}),
        )
        .await
        .status
}

async fn gauge(client: &Client, name: &str) -> f64 {
    let text = client.get("/metrics").await.text();
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in\n{text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cloud_on_a_full_disk_refuses_writes_and_starts_again() {
    let Ok(small) = std::env::var("DEPOT_TEST_SMALL_FS") else {
        eprintln!("DEPOT_TEST_SMALL_FS is not set: the real full disk is not tried");
        return;
    };
    let data = tempfile::tempdir_in(small).expect("a directory on the small filesystem");
    let dir = data.path();
    // No warning threshold: the 16 MiB filesystem has room for the reserve.
    let env = [("DEPOT_LOW_DISK_MIB", "0")];
    let (mut cloud, base, key) = serve_one_business(dir, &env).await;
    let client = Client::new(&base).with_key(key.as_str());
    let reserve = dir.join("space-reserve");
    assert_eq!(
        std::fs::metadata(&reserve).map(|m| m.len()).ok(),
        Some(8 * 1024 * 1024),
        "the server keeps room in reserve"
    );
    assert_eq!(receive(&client).await, 200);
    assert_eq!(gauge(&client, "depot_storage_low").await, 0.0);

    let ballast = fill(dir);
    let mut kept = 1;
    let mut refused = false;
    for _ in 0..100_000 {
        match receive(&client).await {
            200 => kept += 1,
            507 => {
                refused = true;
                break;
            }
            other => panic!("kept or refused as full, not {other}"),
        }
    }
    assert!(refused, "the disk never filled");
    assert_eq!(gauge(&client, "depot_writer_disk_full").await, 1.0);
    assert_eq!(gauge(&client, "depot_storage_low").await, 1.0);

    // Stopped with room to close cleanly, then the disk fills again: the
    // database cannot be opened without the room its log needs.
    unfill(dir, ballast);
    terminate(&mut cloud);
    assert!(
        !dir.join("cloud.db-wal").exists(),
        "a clean stop removes the log"
    );
    let ballast = fill(dir);
    assert!(
        depot_wms::Wms::open(&dir.join("cloud.db"), "cloud").is_err(),
        "on a full disk the database cannot be opened"
    );

    let (mut cloud, base) = serve(dir, &env);
    let client = client.with_base(base);
    assert!(!reserve.exists(), "the reserve was given back");
    assert_eq!(receive(&client).await, 200, "the reserve's room");
    kept += 1;
    let level = client.get("/v1/inventory/1/items/list?sku=CR-1").await.body;
    assert_eq!(
        level["data"][0]["on_hand"], kept,
        "every write answered 200 is kept, and no refused one: {level}"
    );
    // Once space is freed the server keeps its reserve again, without a
    // restart.
    unfill(dir, ballast);
    depot_testkit::eventually("the reserve to be made again while serving", || async {
        std::fs::metadata(&reserve).is_ok_and(|m| m.len() == 8 * 1024 * 1024)
    })
    .await;
    terminate(&mut cloud);
}
