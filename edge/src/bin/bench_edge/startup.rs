//! The start-to-ready and idle-memory scenario: the real `depot-edge serve`
//! process on a database with a long history, against the same binary on a
//! database with only what the cloud sent it (business, warehouse, key and
//! catalog), both measured in the same run.

use crate::seed::Cloud;
use anyhow::{Context, bail};
use depot_bench::{load, sku};
use depot_protocol::stock::{AdjustRequest, MovementReason};
use depot_protocol::tenant::Caller;
use depot_wms::Wms;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};

/// Items the history's adjustments are spread over.
const HISTORY_ITEMS: usize = 100;
/// Adjustments in flight while building the history: enough to fill the
/// writer's groups (256 jobs per commit).
const HISTORY_PARALLEL: usize = 1024;
/// What the bench keeps beside an edge database to use it again.
const IDENTITY: &str = "bench-edge.json";
/// Files of ours in a data directory (cleared before a rebuild).
const OURS: [&str; 7] = [
    IDENTITY,
    "edge.db",
    "edge.db-wal",
    "edge.db-shm",
    "cloud.db",
    "cloud.db-wal",
    "cloud.db-shm",
];
/// How long a start may take before the bench gives up.
const START_LIMIT: Duration = Duration::from_secs(120);

/// An edge database ready to be served: who it is and the key to ask with.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EdgeDb {
    #[serde(skip)]
    pub dir: PathBuf,
    pub business_id: i64,
    pub edge_id: String,
    pub node: u32,
    pub key: String,
    /// Events in its log.
    #[serde(default)]
    pub events: i64,
    /// Of which this edge made (its outbox head).
    #[serde(default)]
    pub own: i64,
}

/// Events in the log of the database in `dir` and this edge's own (0, 0
/// when there is none).
fn count(dir: &Path) -> anyhow::Result<(i64, i64)> {
    let path = dir.join("edge.db");
    if !path.exists() {
        return Ok((0, 0));
    }
    Ok(depot_wms::database::log_heads(&path)?)
}

/// The database in `dir` if it has at least `events` events and the bench's
/// identity file beside it.
fn reusable(dir: &Path, events: i64) -> Option<EdgeDb> {
    let text = std::fs::read_to_string(dir.join(IDENTITY)).ok()?;
    let mut db: EdgeDb = serde_json::from_str(&text).ok()?;
    let (n, own) = count(dir).ok()?;
    if n < events {
        return None;
    }
    db.dir = dir.to_owned();
    db.events = n;
    db.own = own;
    Some(db)
}

/// Waits for the last connection to the database in `dir` to close: it
/// checkpoints the write-ahead log and removes it, so the process measured
/// next does not start by reading the bench's leftovers.
async fn settled(dir: &Path) {
    let wal = dir.join("edge.db-wal");
    let until = Instant::now() + Duration::from_secs(60);
    while wal.exists() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Builds (or, with at least `events` events already, reuses) the edge
/// database in `dir`: the cloud's business, key and catalog applied from
/// its feed, then `events` stock adjustments made at the edge, all
/// acknowledged, as on a box that has been in sync for a long time.
pub async fn prepare(dir: &Path, events: usize) -> anyhow::Result<EdgeDb> {
    if let Some(db) = reusable(dir, events as i64) {
        eprintln!(
            "using the edge database in {} ({} events)",
            dir.display(),
            db.events
        );
        // Opened once by the engine first: a database made by an older
        // build is migrated now, not during the first measured start.
        let origin = format!("edge:{}", db.edge_id);
        drop(Wms::open_node(&dir.join("edge.db"), &origin, db.node)?);
        settled(dir).await;
        return Ok(db);
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for f in OURS {
        let _ = std::fs::remove_file(dir.join(f));
    }
    eprintln!(
        "building an edge database with {events} events in {}",
        dir.display()
    );
    let cloud = Cloud::create(&dir.join("cloud.db"), HISTORY_ITEMS, "bench-edge").await?;
    let settings = cloud.edge_settings(dir, "mqtt://127.0.0.1:1");
    let edge = depot_edge::open(&settings)?;
    cloud.replicate_to(&edge).await?;
    let caller = Caller {
        key_id: cloud.caller.key_id,
        business_id: cloud.business,
    };
    let warehouse = cloud.warehouse;
    let started = Instant::now();
    load("stock adjustments (edge)", events, HISTORY_PARALLEL, |i| {
        let edge = edge.clone();
        let req = AdjustRequest {
            warehouse_id: warehouse,
            item_id: None,
            sku: Some(sku((i % HISTORY_ITEMS) as u64)),
            reason: if i % 3 == 0 {
                MovementReason::Received
            } else {
                MovementReason::Adjusted
            },
            quantity: (i % 3 == 0).then_some(2),
            delta: (i % 3 != 0).then_some(-1),
            counted: None,
            to_warehouse_id: None,
            to_location: None,
            location: None,
            reference: None,
            note: None,
        };
        async move {
            edge.adjust(caller, req).await?;
            Ok(())
        }
    })
    .await?;
    let secs = started.elapsed().as_secs_f64();
    // Acknowledged: the cloud has all of it, the outbox is empty.
    let head = edge.outgoing_head().await?;
    edge.record_ack(head).await?;
    let db = EdgeDb {
        dir: dir.to_owned(),
        business_id: cloud.business.0,
        edge_id: cloud.edge_id.clone(),
        node: cloud.node,
        key: cloud.key.clone(),
        events: 0,
        own: 0,
    };
    drop(edge);
    drop(cloud);
    settled(dir).await;
    for f in &OURS[4..] {
        let _ = std::fs::remove_file(dir.join(f));
    }
    let (n, own) = count(dir)?;
    std::fs::write(dir.join(IDENTITY), serde_json::to_vec_pretty(&db)?)?;
    eprintln!(
        "  {events} adjustments in {secs:.1} s ({:.0}/s); the log holds {n} events",
        events as f64 / secs
    );
    Ok(EdgeDb {
        events: n,
        own,
        ..db
    })
}

/// The baseline database: only what the cloud sent (business, warehouse,
/// key, the same catalog).
pub async fn prepare_empty(dir: &Path) -> anyhow::Result<EdgeDb> {
    std::fs::create_dir_all(dir)?;
    let cloud = Cloud::create(&dir.join("cloud.db"), HISTORY_ITEMS, "bench-edge").await?;
    let edge = depot_edge::open(&cloud.edge_settings(dir, "mqtt://127.0.0.1:1"))?;
    cloud.replicate_to(&edge).await?;
    let db = EdgeDb {
        dir: dir.to_owned(),
        business_id: cloud.business.0,
        edge_id: cloud.edge_id.clone(),
        node: cloud.node,
        key: cloud.key.clone(),
        events: 0,
        own: 0,
    };
    drop(edge);
    drop(cloud);
    settled(dir).await;
    let (n, own) = count(dir)?;
    Ok(EdgeDb {
        events: n,
        own,
        ..db
    })
}

/// One start of the daemon.
#[derive(Debug, Clone, Copy, Default)]
pub struct Start {
    /// Spawn until it printed its address (database open, port bound).
    pub listening: Duration,
    /// Spawn until `GET /v1/edge/status` answered 200.
    pub ready: Duration,
    /// From `/proc/<pid>/status` after the idle wait, in KiB.
    pub rss_kib: u64,
    pub anon_kib: u64,
    pub file_kib: u64,
    pub peak_kib: u64,
}

/// A port nothing listens on: bound, then let go.
fn closed_port() -> anyhow::Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

fn proc_status(pid: u32) -> anyhow::Result<Start> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let field = |name: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    Ok(Start {
        rss_kib: field("VmRSS:"),
        anon_kib: field("RssAnon:"),
        file_kib: field("RssFile:"),
        peak_kib: field("VmHWM:"),
        ..Start::default()
    })
}

/// Starts `exe serve` on `db` with a broker URL nobody answers, times it to
/// ready, lets it idle for `idle`, samples its memory and stops it with
/// SIGTERM.
pub async fn start(exe: &Path, db: &EdgeDb, idle: Duration) -> anyhow::Result<Start> {
    let config = db.dir.join("bench-edge.toml");
    let toml = format!(
        "business_id = {}\nedge_id = {:?}\nnode = {}\nlisten = \"127.0.0.1:0\"\ndata_dir = {:?}\nlog = \"warn\"\n\n[broker]\nurl = \"mqtt://127.0.0.1:{}\"\n",
        db.business_id,
        db.edge_id,
        db.node,
        db.dir.display().to_string(),
        closed_port()?
    );
    std::fs::write(&config, toml)?;
    let mut cmd = tokio::process::Command::new(exe);
    cmd.arg("--config")
        .arg(&config)
        .arg("serve")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    // Only the file configures it: settings in the bench's environment
    // would override the file.
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("DEPOT_") {
            cmd.env_remove(k);
        }
    }
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()?;
    let spawned = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", exe.display()))?;
    let pid = child.id().context("the edge exited at once")?;
    let stdout = child.stdout.take().context("no stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let line = tokio::time::timeout(START_LIMIT, lines.next_line())
        .await
        .context("the edge did not say where it listens")??
        .context("the edge exited before listening")?;
    let listening = spawned.elapsed();
    let addr = line
        .rsplit_once("http://")
        .map(|(_, a)| a.trim().to_owned())
        .with_context(|| format!("unexpected first line {line:?}"))?;
    let url = format!("http://{addr}/v1/edge/status");
    let answer: serde_json::Value = loop {
        match client.get(&url).header("x-api-key", &db.key).send().await {
            Ok(r) if r.status().is_success() => break r.json().await?,
            Ok(r) => bail!("status answered {}: {:.300}", r.status(), r.text().await?),
            Err(e) if e.is_connect() && spawned.elapsed() < START_LIMIT => {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            Err(e) => return Err(e.into()),
        }
    };
    let ready = spawned.elapsed();
    let head = answer["data"]["head"].as_i64().unwrap_or(-1);
    if head != db.own {
        bail!(
            "the edge reports {head} events of its own, the database holds {}",
            db.own
        );
    }
    tokio::time::sleep(idle).await;
    let mem = proc_status(pid)?;
    let _ = tokio::process::Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status()
        .await;
    match tokio::time::timeout(Duration::from_secs(15), child.wait()).await {
        Ok(status) => {
            let status = status?;
            if !status.success() {
                eprintln!("!! depot-edge exited with {status} after SIGTERM");
            }
        }
        Err(_) => {
            eprintln!("!! depot-edge did not stop on SIGTERM within 15 s: killed");
            child.kill().await?;
        }
    }
    Ok(Start {
        listening,
        ready,
        ..mem
    })
}
