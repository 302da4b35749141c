//! A full disk under the edge's database: every write is refused with a
//! 507 that says so, nothing of a refused request is kept, the box says it
//! is full (status route, metrics, CLI, doctor), and writes resume once
//! space is freed, without a restart.
//!
//! The first test runs everywhere: the database is held to the pages it has
//! (`max_page_count`), which SQLite answers as it answers a full disk. The
//! second fills a real small filesystem (`DEPOT_TEST_SMALL_FS`, a directory
//! on one: `.ci/run` mounts a tmpfs when it may), so the refusal comes from
//! the kernel, at commit.

use crate::common;
use common::RunningEdge;
use common::process::run;
use depot_edge::faults::Faults;
use depot_edge::settings::Settings;
use depot_protocol::BusinessId;
use depot_testkit::http::Client;
use depot_wms::metrics::exposition::{parse, value};
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;

struct Floor {
    edge: RunningEdge,
    settings: Settings,
    business: BusinessId,
    warehouse: i64,
    /// The edge, with the key.
    client: Client,
}

/// An edge with a business, a warehouse, a key and item `A`, as the cloud
/// sent them, its data directory in `data_dir`, its broker unreachable.
async fn floor(cloud_dir: &Path, data_dir: &Path) -> Floor {
    let (settings, business, warehouse, key) = bootstrap(cloud_dir, data_dir).await;
    let edge = RunningEdge::start(settings.clone(), Faults::default()).await;
    Floor {
        client: Client::new(&edge.base).with_key(key.as_str()),
        edge,
        settings,
        business,
        warehouse,
    }
}

/// The edge's database in `data_dir` with what the cloud sent it, closed,
/// and the settings to serve it with (only a full disk counts here,
/// however little this machine has): the business, the warehouse and the
/// key.
async fn bootstrap(cloud_dir: &Path, data_dir: &Path) -> (Settings, BusinessId, i64, String) {
    let (mut edge, wms) = common::offline::bootstrap(cloud_dir, data_dir, "full-1").await;
    drop(wms);
    edge.settings.low_disk_mib = 0;
    (edge.settings, edge.business, edge.warehouse, edge.key)
}

impl Floor {
    /// Receives one unit of `A`: the status and the body.
    async fn receive(&self) -> (u16, Value) {
        let r = self
            .client
            .post(
                &format!("/v1/inventory/{}/adjust", self.business),
                json!({"warehouse_id": self.warehouse, "sku": "A", "reason": "received", "quantity": 1}),
            )
            .await;
        assert!(!r.body.is_string(), "a JSON body: {:?}", r.body);
        (r.status, r.body)
    }

    /// Receives until the disk refuses one: how many were kept, and the
    /// refusal. Every answer is one or the other.
    async fn receive_until_refused(&self, at_most: usize) -> (i64, Value) {
        let mut kept = 0;
        for _ in 0..at_most {
            match self.receive().await {
                (200, _) => kept += 1,
                (507, body) => return (kept, body),
                (status, body) => panic!("a write is kept or refused as full, not {status} {body}"),
            }
        }
        panic!("{at_most} writes and the disk never filled");
    }

    /// Receives `n` times: each kept, or refused as full. How many were
    /// kept.
    async fn receive_kept_or_refused(&self, n: usize) -> i64 {
        let mut kept = 0;
        for _ in 0..n {
            match self.receive().await {
                (200, _) => kept += 1,
                (_, body) => refused_as_full(&body),
            }
        }
        kept
    }

    async fn status(&self) -> Value {
        let r = self.client.get("/v1/edge/status").await;
        assert_eq!(r.status, 200, "the status is read, not written");
        r.body["data"]["storage"].clone()
    }

    async fn on_hand(&self) -> i64 {
        let r = self
            .client
            .get(&format!("/v1/inventory/{}/items/list", self.business))
            .await
            .body;
        r["data"][0]["on_hand"].as_i64().unwrap_or(0)
    }

    async fn metric(&self, name: &str) -> Option<f64> {
        let text = self.client.with_key(None).get("/metrics").await.text();
        value(&parse(&text).expect("exposition"), name, &[])
    }

    fn env(&self) -> Vec<(&'static str, String)> {
        env(&self.settings)
    }

    /// What was refused left nothing: the stock is what was answered 200.
    async fn check_kept(&self, kept: i64) {
        assert_eq!(self.on_hand().await, kept, "only what was answered 200");
        assert!(
            self.edge
                .wms
                .check_ledger()
                .await
                .expect("ledger")
                .is_empty(),
            "the books agree with the stock"
        );
    }
}

/// What `depot-edge` is run with for `settings`.
fn env(settings: &Settings) -> Vec<(&'static str, String)> {
    let mut env = common::process::env_of(settings);
    env.push(("DEPOT_LOW_DISK_MIB", "0".into()));
    env
}

fn refused_as_full(body: &Value) {
    assert_eq!(body["error"], 1, "{body}");
    assert_eq!(body["code"], 507, "{body}");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("disk is full") && message.contains("nothing of this request was saved"),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_database_refuses_writes_says_so_and_resumes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let floor = floor(dir.path(), &dir.path().join("edge")).await;
    let (first, _) = floor.receive().await;
    assert_eq!(first, 200);
    let mut answered_200 = 1;
    let storage = floor.status().await;
    assert_eq!(storage["state"], "ok", "{storage}");
    assert!(
        storage["database_bytes"].as_u64().unwrap_or(0) > 0,
        "{storage}"
    );
    assert_eq!(floor.metric("depot_writer_disk_full").await, Some(0.0));
    let openapi = floor
        .client
        .with_key(None)
        .get("/v1/openapi.json")
        .await
        .body;
    let schemas = &openapi["components"]["schemas"];
    for name in ["EdgeStatus", "Storage", "StorageState"] {
        assert!(schemas[name].is_object(), "{name} not described");
    }

    // No page more than the database has.
    floor
        .edge
        .wms
        .write(|c| {
            let pages: i64 = c.query_value("PRAGMA page_count", &[])?;
            c.query_row(&format!("PRAGMA max_page_count = {pages}"), &[], |_| Ok(()))?;
            Ok(())
        })
        .await
        .expect("hold the database to its pages");
    let (kept, refusal) = floor.receive_until_refused(5000).await;
    answered_200 += kept;
    refused_as_full(&refusal);
    let storage = floor.status().await;
    assert_eq!(storage["state"], "full", "{storage}");
    assert!(storage["full_since"].is_string(), "{storage}");
    assert_eq!(floor.metric("depot_writer_disk_full").await, Some(1.0));
    assert!(floor.metric("depot_writer_refused_full_total").await >= Some(1.0));
    assert!(floor.metric("depot_storage_free_bytes").await > Some(0.0));
    // Kept or refused, whole: what fits in the pages there are may go on.
    answered_200 += floor.receive_kept_or_refused(20).await;

    floor
        .edge
        .wms
        .write(|c| {
            c.query_row("PRAGMA max_page_count = 1073741823", &[], |_| Ok(()))?;
            Ok(())
        })
        .await
        .expect("room again");
    assert_eq!(floor.receive().await.0, 200, "writes resume at once");
    answered_200 += 1;
    assert_eq!(floor.status().await["state"], "ok");
    assert_eq!(floor.metric("depot_writer_disk_full").await, Some(0.0));
    floor.check_kept(answered_200).await;
    floor.edge.stop().await;
}

/// The tests that fill the small filesystem take turns: one's ballast
/// would fill it for the other.
static SMALL_FS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A directory on a small filesystem of its own, if the run has one, and
/// this test's turn on it.
async fn small_fs() -> Option<(std::path::PathBuf, tokio::sync::MutexGuard<'static, ()>)> {
    match std::env::var("DEPOT_TEST_SMALL_FS") {
        Ok(dir) if !dir.is_empty() => Some((dir.into(), SMALL_FS.lock().await)),
        _ => {
            eprintln!("DEPOT_TEST_SMALL_FS is not set: the real full disk is not tried");
            None
        }
    }
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_filesystem_refuses_writes_says_so_and_resumes() {
    let Some((small, _turn)) = small_fs().await else {
        return;
    };
    let cloud_dir = tempfile::tempdir().expect("tempdir");
    let data = tempfile::tempdir_in(&small).expect("a directory on the small filesystem");
    let floor = floor(cloud_dir.path(), &data.path().join("edge")).await;
    assert_eq!(floor.receive().await.0, 200);

    let ballast = fill(data.path());
    let (kept, refusal) = floor.receive_until_refused(100_000).await;
    let mut answered_200 = 1 + kept;
    refused_as_full(&refusal);
    let storage = floor.status().await;
    assert_eq!(storage["state"], "full", "{storage}");
    assert!(
        storage["free_bytes"].as_u64() < Some(1024 * 1024),
        "{storage}"
    );
    assert_eq!(floor.metric("depot_storage_low").await, Some(1.0));

    // The CLI and the doctor, from the disk alone.
    let (_, said) = run(&floor.env(), &["status"]).await;
    assert!(
        said.lines()
            .any(|l| l.starts_with("disk ") && l.contains("FULL: every write is refused")),
        "{said}"
    );
    let (ok, said) = run(&floor.env(), &["doctor"]).await;
    assert!(!ok, "{said}");
    assert!(
        said.lines()
            .any(|l| l.contains("disk") && l.contains("FAIL") && l.contains("FULL")),
        "{said}"
    );
    answered_200 += floor.receive_kept_or_refused(20).await;

    drop(ballast);
    std::fs::remove_file(data.path().join("ballast")).expect("free the space");
    assert_eq!(floor.receive().await.0, 200, "writes resume at once");
    answered_200 += 1;
    assert_eq!(floor.status().await["state"], "ok");
    floor.check_kept(answered_200).await;
    floor.edge.stop().await;
}

/// After a clean stop SQLite has removed its `-wal` and `-shm` files, and on
/// a full disk could not make them again: the daemon gives back the room it
/// kept in reserve, and the box comes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_box_stopped_on_a_full_disk_starts_again() {
    let Some((small, _turn)) = small_fs().await else {
        return;
    };
    let cloud_dir = tempfile::tempdir().expect("tempdir");
    let data = tempfile::tempdir_in(&small).expect("a directory on the small filesystem");
    let (settings, business, warehouse, key) =
        bootstrap(cloud_dir.path(), &data.path().join("edge")).await;
    let client = Client::new("").with_key(key.as_str());
    let receive = |base: String| {
        let client = client.with_base(base);
        async move {
            client
                .post(
                    &format!("/v1/inventory/{business}/adjust"),
                    json!({"warehouse_id": warehouse, "sku": "A", "reason": "received", "quantity": 1}),
                )
                .await
                .status
        }
    };
    let reserve = settings.data_dir.join("space-reserve");

    let edge = common::process::spawn(&env(&settings));
    assert_eq!(receive(edge.base.clone()).await, 200);
    assert_eq!(
        std::fs::metadata(&reserve).map(|m| m.len()).ok(),
        Some(depot_edge::disk::RESERVE_BYTES),
        "the daemon keeps room in reserve"
    );
    let ballast = fill(data.path());
    let mut refused = false;
    for _ in 0..100_000 {
        match receive(edge.base.clone()).await {
            200 => {}
            507 => {
                refused = true;
                break;
            }
            other => panic!("kept or refused as full, not {other}"),
        }
    }
    assert!(refused, "the disk never filled");
    // A clean stop with room to checkpoint removes the write-ahead log and
    // its index (on a full disk the checkpoint fails and they stay, which
    // a start can live with); then the disk fills again.
    drop(ballast);
    std::fs::remove_file(data.path().join("ballast")).expect("room to stop");
    edge.terminate();
    assert!(
        !settings.data_dir.join("edge.db-wal").exists(),
        "a clean stop removes the write-ahead log"
    );
    let ballast = fill(data.path());
    assert!(
        depot_wms::Wms::open_node(&settings.database(), &settings.origin(), settings.node).is_err(),
        "on a full disk the database cannot be opened"
    );

    let edge = common::process::spawn(&env(&settings));
    let r = client.with_base(&edge.base).get("/v1/edge/status").await;
    assert_eq!(r.status, 200);
    assert!(!reserve.exists(), "the reserve was given back");
    assert_eq!(receive(edge.base.clone()).await, 200, "the reserve's room");
    // Once space is freed the box keeps its reserve again, without a
    // restart.
    drop(ballast);
    std::fs::remove_file(data.path().join("ballast")).expect("free the space");
    depot_testkit::eventually("the reserve to be made again while serving", || async {
        std::fs::metadata(&reserve).is_ok_and(|m| m.len() == depot_edge::disk::RESERVE_BYTES)
    })
    .await;
    edge.terminate();
}

/// A backup that would fill the data directory's disk, or leave the floor
/// less than `low_disk_mib`, does not start: the floor's writes come first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_that_would_fill_the_disk_does_not_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut settings, ..) = bootstrap(dir.path(), &dir.path().join("edge")).await;
    settings.low_disk_mib = u64::MAX;
    let target = dir.path().join("edge-backup.db");
    let refused = depot_edge::backup::backup(&settings, &target, 64)
        .expect_err("no disk leaves the floor that much");
    let said = format!("{refused:#}");
    assert!(
        said.contains("the data directory's own disk") && said.contains("(low_disk_mib)"),
        "{said}"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .filter(|n| n.to_string_lossy().contains("backup"))
        .collect();
    assert!(left.is_empty(), "nothing written: {left:?}");
    settings.low_disk_mib = 0;
    depot_edge::backup::backup(&settings, &target, 64).expect("room for it");

    let Some((small, _turn)) = small_fs().await else {
        return;
    };
    let full = tempfile::tempdir_in(&small).expect("a directory on the small filesystem");
    let ballast = fill(full.path());
    let refused = depot_edge::backup::backup(&settings, &full.path().join("b.db"), 64)
        .expect_err("no room for the copy");
    let said = format!("{refused:#}");
    assert!(said.contains("free and the copy needs about"), "{said}");
    let left = std::fs::read_dir(full.path()).expect("dir").count();
    assert_eq!(left, 1, "only the ballast");
    drop(ballast);
}
