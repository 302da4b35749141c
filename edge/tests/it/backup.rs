//! `depot-edge backup` and `restore`, with the real processes: a backup
//! taken while stations keep writing restores to a whole database that
//! holds every write answered before the backup started; and a restore
//! that cannot be trusted (daemon running, file corrupt, not a database,
//! another edge's) is refused with a message that says why, leaving the
//! live database as it was.

use crate::common;
use common::process::{BIN, spawn};
use depot_testkit::events::movement_ids;
use depot_testkit::http::Client;
use depot_testkit::{eventually, rig::Rig};
use depot_wms::Wms;
use serde_json::json;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Runs a one-shot `depot-edge` command to completion.
fn command(env: &[(&str, String)], args: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.args(args)
        .env("DEPOT_LOG", "warn")
        // The message, not a backtrace, is what an operator reads.
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

async fn run(env: &[(&str, String)], args: &[&str]) -> Output {
    command(env, args).output().await.expect("run depot-edge")
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A refusal: a non-zero exit whose message says `why`.
async fn refused(env: &[(&str, String)], args: &[&str], why: &str) {
    let out = run(env, args).await;
    let all = text(&out);
    assert!(!out.status.success(), "{args:?} succeeded: {all}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(why),
        "{args:?}: the message does not say {why:?}: {all}"
    );
}

/// One stock adjustment; the movement's id if it was answered 200.
async fn adjust(client: &Client, base: &str, key: &str, b: i64, w: i64) -> Option<String> {
    let resp = client
        .with_base(base)
        .with_key(key)
        .raw("POST", &format!("/v1/inventory/{b}/adjust"))
        .json(&json!({"warehouse_id": w, "sku": "K", "reason": "received", "quantity": 1}))
        .timeout(Duration::from_secs(5))
        .try_send()
        .await
        .ok()?;
    if resp.status != 200 {
        return None;
    }
    resp.body["data"]["movements"][0]["id"]
        .as_str()
        .map(str::to_owned)
}

/// The files in a data directory and their contents, but for the lock
/// file (which names whoever took the lock last).
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").path())
        .filter(|path| !path.ends_with("edge.lock"))
        .map(|path| {
            let bytes = std::fs::read(&path).expect("read file");
            (path, bytes)
        })
        .collect();
    files.sort();
    files
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_backup_under_load_restores_every_write_answered_before_it() {
    let edge_id = format!("bk{}", std::process::id());
    let rig = Rig::start(&edge_id, false).await;
    let (b, w, key) = (rig.business.0, rig.warehouse.0, rig.key.clone());
    rig.item("K").await;
    let data = rig.dir.path().join("edge");
    let env = vec![
        ("DEPOT_BUSINESS_ID", b.to_string()),
        ("DEPOT_EDGE_ID", edge_id.clone()),
        ("DEPOT_NODE", rig.node.to_string()),
        ("DEPOT_DATA_DIR", data.display().to_string()),
        ("DEPOT_LISTEN", "127.0.0.1:0".into()),
        ("DEPOT_BROKER__URL", rig.broker_url.clone()),
    ];
    let client = Client::new("");
    let edge = spawn(&env);
    // The key, the warehouse and the item arrive from the cloud.
    let answered: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
    eventually("the edge to take a write", || {
        let (client, base, key, answered) = (
            client.clone(),
            edge.base.clone(),
            key.clone(),
            answered.clone(),
        );
        async move {
            match adjust(&client, &base, &key, b, w).await {
                Some(id) => {
                    answered.lock().expect("lock").push((id, Instant::now()));
                    true
                }
                None => false,
            }
        }
    })
    .await;

    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = tokio::task::JoinSet::new();
    for _ in 0..4 {
        let (client, base, key, answered, stop) = (
            client.clone(),
            edge.base.clone(),
            key.clone(),
            answered.clone(),
            stop.clone(),
        );
        writers.spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let Some(id) = adjust(&client, &base, &key, b, w).await else {
                    break;
                };
                // Taken after the answer arrived: the write was committed.
                answered.lock().expect("lock").push((id, Instant::now()));
            }
        });
    }
    let count = || answered.lock().expect("lock").len();
    eventually("some load to build up", || async { count() >= 300 }).await;

    let target = rig.dir.path().join("backups").join("edge.db");
    std::fs::create_dir_all(target.parent().expect("parent")).expect("mkdir");
    let target_arg = target.display().to_string();
    let started = Instant::now();
    // Small steps, so that the copy spans many commits of the daemon.
    let out = run(&env, &["backup", &target_arg, "--pages-per-step", "8"]).await;
    let ended = Instant::now();
    assert!(out.status.success(), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    eprintln!("backup: {}", said.trim());
    assert!(
        said.contains(&target_arg) && said.contains("through seq"),
        "{said}"
    );
    let more = count() + 20;
    eventually("writes after the backup", || async { count() >= more }).await;
    stop.store(true, Ordering::Relaxed);
    while let Some(done) = writers.join_next().await {
        done.expect("writer");
    }

    let answered = answered.lock().expect("lock").clone();
    let before: Vec<&String> = answered
        .iter()
        .filter(|(_, at)| *at < started)
        .map(|(id, _)| id)
        .collect();
    let during = answered
        .iter()
        .filter(|(_, at)| *at >= started && *at < ended)
        .count();
    let after: HashSet<&String> = answered
        .iter()
        .filter(|(_, at)| *at >= ended)
        .map(|(id, _)| id)
        .collect();
    eprintln!(
        "answered {} before the backup, {during} while it ran ({:?}), {} after",
        before.len(),
        ended - started,
        after.len()
    );
    assert!(
        during > 0,
        "no write was answered while the backup ran: it did not run under load"
    );
    // Nothing but the backup in its directory: no partial file left over.
    let names: Vec<_> = std::fs::read_dir(target.parent().expect("parent"))
        .expect("read dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, [target.file_name().expect("name")], "{names:?}");

    edge.kill();
    // The cloud may have some of the writes made after the backup: the
    // daemon takes them back once it connects (see
    // writes_after_restoring_an_older_backup_reach_the_cloud), so what the
    // backup held is looked at before it starts.
    let out = run(&env, &["restore", &target_arg]).await;
    assert!(out.status.success(), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    eprintln!("restore: {}", said.trim());
    assert!(said.contains("made after this backup"), "{said}");
    let db = data.join("edge.db");
    for side in ["edge.db-wal", "edge.db-shm", "edge.db.restoring"] {
        assert!(!data.join(side).exists(), "{side} left behind");
    }

    let seen = depot_wms::database::inspect(&db).expect("inspect");
    assert!(seen.is_ok(), "integrity_check: {:?}", seen.problems);
    let wms = Wms::open_node(&db, &format!("edge:{edge_id}"), rig.node).expect("edge db");
    let held = movement_ids(&wms).await;
    drop(wms);
    let edge = spawn(&env);
    for id in &before {
        assert_eq!(
            held.get(*id),
            Some(&1),
            "movement {id}, answered before the backup"
        );
    }
    assert!(
        after.iter().any(|id| !held.contains_key(*id)),
        "every write made after the backup is still there: the database was not replaced"
    );
    // The restored box serves.
    let resp = client
        .with_base(&edge.base)
        .with_key(key.as_str())
        .get("/v1/edge/status")
        .await;
    assert_eq!(resp.status, 200);
    edge.kill();
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restore_it_cannot_trust_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    // A broker nobody listens on: the box works offline.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let broker = format!("mqtt://{}", closed.local_addr().expect("addr"));
    drop(closed);
    let key = "station-key-0123456789abcdef";
    let env = vec![
        ("DEPOT_BUSINESS_ID", "1".to_owned()),
        ("DEPOT_EDGE_ID", "refuse-1".to_owned()),
        ("DEPOT_NODE", "1".to_owned()),
        ("DEPOT_DATA_DIR", data.display().to_string()),
        ("DEPOT_LISTEN", "127.0.0.1:0".to_owned()),
        ("DEPOT_BROKER__URL", broker),
        ("DEPOT_LOCAL_KEYS", format!("[\"{key}\"]")),
    ];
    let files = dir.path().join("files");
    std::fs::create_dir_all(&files).expect("mkdir");
    let good = files.join("good.db");
    let good_arg = good.display().to_string();
    let edge = spawn(&env);

    let out = run(&env, &["backup", &good_arg]).await;
    assert!(out.status.success(), "{}", text(&out));
    let nowhere = dir.path().join("nowhere").join("edge.db");
    refused(
        &env,
        &["backup", &nowhere.display().to_string()],
        "does not exist",
    )
    .await;
    assert!(!dir.path().join("nowhere").exists());

    // A good backup of this very edge, refused only because the daemon runs.
    refused(&env, &["restore", &good_arg], "daemon").await;
    let client = Client::new("");
    let resp = client
        .with_base(&edge.base)
        .with_key(key)
        .get("/v1/edge/status")
        .await;
    assert_eq!(resp.status, 200, "the daemon stopped serving");
    edge.kill();

    let corrupt = files.join("corrupt.db");
    let mut bytes = std::fs::read(&good).expect("read backup");
    assert!(bytes.len() > 16 * 4096, "a backup of {} bytes", bytes.len());
    // Pages 2 to 8 (the first tables' roots) overwritten; the header stays.
    bytes[4096..9 * 4096].fill(0x5a);
    std::fs::write(&corrupt, bytes).expect("write");
    let text_file = files.join("notes.db");
    std::fs::write(&text_file, "pick list for tuesday\n").expect("write");
    let missing = files.join("missing.db");
    let mut other = env.clone();
    for (k, v) in &mut other {
        if *k == "DEPOT_EDGE_ID" {
            *v = "refuse-2".into();
        }
    }

    let before = snapshot(&data);
    refused(
        &env,
        &["restore", &corrupt.display().to_string()],
        "corrupt",
    )
    .await;
    refused(
        &env,
        &["restore", &text_file.display().to_string()],
        "not an SQLite database",
    )
    .await;
    refused(
        &env,
        &["restore", &missing.display().to_string()],
        "no backup at",
    )
    .await;
    refused(&other, &["restore", &good_arg], "edge:refuse-1").await;
    assert!(
        snapshot(&data) == before,
        "a refused restore changed the data directory"
    );

    // And the good one goes in once the daemon is stopped.
    let out = run(&env, &["restore", &good_arg]).await;
    assert!(out.status.success(), "{}", text(&out));
}

/// Waits until the cloud has acknowledged everything the edge logged.
async fn drained(db: &Path, origin: &str, node: u32) {
    let wms = Wms::open_node(db, origin, node).expect("edge db");
    eventually("the outbox to drain", || async {
        wms.sync_snapshot()
            .await
            .is_ok_and(|s| s.depth == 0 && s.acked > 0)
    })
    .await;
}

/// An edge synced to the cloud, a backup of it, and ten more writes the
/// cloud acknowledged after the backup; the daemon is stopped.
struct Older {
    rig: Rig,
    env: Vec<(&'static str, String)>,
    data: PathBuf,
    target: String,
    /// Movement ids, in the order written: the first in the backup.
    written: Vec<String>,
}

/// `name` tells the edge ids of tests apart: on a shared broker
/// (`DEPOT_TEST_MQTT_URL`) the same id would mix their topics.
async fn older_backup(name: &str, through_link: bool, after: usize) -> Older {
    let edge_id = format!("{name}{}", std::process::id());
    let rig = Rig::start(&edge_id, through_link).await;
    let (b, w, key) = (rig.business.0, rig.warehouse.0, rig.key.clone());
    rig.item("K").await;
    let data = rig.dir.path().join("edge");
    let db = data.join("edge.db");
    let origin = format!("edge:{edge_id}");
    let env = vec![
        ("DEPOT_BUSINESS_ID", b.to_string()),
        ("DEPOT_EDGE_ID", edge_id.clone()),
        ("DEPOT_NODE", rig.node.to_string()),
        ("DEPOT_DATA_DIR", data.display().to_string()),
        ("DEPOT_LISTEN", "127.0.0.1:0".into()),
        ("DEPOT_BROKER__URL", rig.broker_url.clone()),
    ];
    let client = Client::new("");
    let edge = spawn(&env);
    let mut written = vec![first_write(&client, &edge.base, &rig).await];
    drained(&db, &origin, rig.node).await;
    let target = rig.dir.path().join("older.db").display().to_string();
    let out = run(&env, &["backup", &target]).await;
    assert!(out.status.success(), "{}", text(&out));
    // `after` writes the backup lacks, 16 at a time as stations would send
    // them; the cloud has them all before the box is restored.
    let mut set = tokio::task::JoinSet::new();
    for i in 0..after {
        if set.len() >= 16 {
            written.push(set.join_next().await.expect("a write").expect("joined"));
        }
        let (client, base, key) = (client.clone(), edge.base.clone(), key.clone());
        set.spawn(async move {
            adjust(&client, &base, &key, b, w)
                .await
                .unwrap_or_else(|| panic!("write {i} after the backup"))
        });
    }
    while let Some(id) = set.join_next().await {
        written.push(id.expect("joined"));
    }
    drained(&db, &origin, rig.node).await;
    edge.kill();
    Older {
        rig,
        env,
        data,
        target,
        written,
    }
}

/// Waits until the cloud and the edge's database each hold every one of
/// `ids` exactly once, and no other movement.
async fn converged(o: &Older, ids: &[String]) {
    let db = o.data.join("edge.db");
    let origin = format!("edge:{}", o.rig.edge_id);
    let edge = Wms::open_node(&db, &origin, o.rig.node).expect("edge db");
    let want: std::collections::HashMap<String, usize> =
        ids.iter().map(|id| (id.clone(), 1)).collect();
    assert_eq!(want.len(), ids.len(), "movement ids repeat");
    // A thousand durable writes each way: on a machine busy writing
    // something else (a build beside the tests) fsyncs take long, so this
    // waits longer than `eventually` and says what differs if it gives up.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let (cloud, local) = (movement_ids(&o.rig.cloud).await, movement_ids(&edge).await);
        if cloud == want && local == want {
            break;
        }
        if tokio::time::Instant::now() > deadline {
            let differs = |got: &std::collections::HashMap<String, usize>| {
                let missing = want.keys().filter(|k| !got.contains_key(*k)).count();
                let foreign = got.keys().filter(|k| !want.contains_key(*k)).count();
                let doubled = got.values().filter(|n| **n > 1).count();
                format!("{missing} missing, {foreign} unknown, {doubled} more than once")
            };
            let log = std::fs::read_to_string(o.data.join("daemon.log")).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(60).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            panic!(
                "movements never converged: cloud {}, edge {}\nthe box's log, last lines:\n{}",
                differs(&cloud),
                differs(&local),
                tail.join("\n")
            );
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    eventually("the edge's outbox to drain", || async {
        edge.sync_snapshot()
            .await
            .is_ok_and(|s| s.depth == 0 && s.acked >= ids.len() as i64)
    })
    .await;
}

/// The movement id of a write the daemon at `base` takes once it can:
/// a daemon just started may not serve yet, or (a new box) not yet have
/// the key, which comes down from the cloud.
async fn first_write(client: &Client, base: &str, rig: &Rig) -> String {
    let (b, w, key) = (rig.business.0, rig.warehouse.0, rig.key.clone());
    let taken = Arc::new(Mutex::new(None));
    eventually("the edge to take a write", || {
        let (client, base, key, taken) =
            (client.clone(), base.to_owned(), key.clone(), taken.clone());
        async move {
            let id = adjust(&client, &base, &key, b, w).await;
            let ok = id.is_some();
            *taken.lock().expect("lock") = id;
            ok
        }
    })
    .await;
    let id = taken.lock().expect("lock").take();
    id.expect("a write taken")
}

/// Restores the older backup, starts the daemon (`offline`: with its link
/// to the broker cut until it has taken five writes), takes five writes,
/// and waits until the cloud and the box hold all sixteen once each.
async fn restore_then_write(offline: bool, after: usize) {
    let name = if offline {
        "restored-offline-"
    } else {
        "restored-"
    };
    let mut o = older_backup(name, offline, after).await;
    let (b, w, key) = (o.rig.business.0, o.rig.warehouse.0, o.rig.key.clone());
    let out = run(&o.env, &["restore", &o.target]).await;
    assert!(out.status.success(), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        said.contains(&format!("takes the other {after} back")),
        "{said}"
    );
    if offline {
        o.rig.link().cut();
    }
    // Nothing waits in the outbox, yet the box is not in sync until the
    // cloud has handed its events back.
    refused(
        &o.env,
        &["sync", "--wait", "--timeout", "1"],
        "still taking its own events back from the cloud",
    )
    .await;
    let out = run(&o.env, &["doctor"]).await;
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("the rest is being taken back from the cloud"),
        "{}",
        text(&out)
    );
    let client = Client::new("");
    let edge = spawn(&o.env);
    o.written
        .push(first_write(&client, &edge.base, &o.rig).await);
    for _ in 0..4 {
        o.written.push(
            adjust(&client, &edge.base, &key, b, w)
                .await
                .expect("a write after the restore"),
        );
    }
    if offline {
        // The cloud has not answered: the box says it is waiting for its
        // own events, on its route and in `status`.
        let recovery = &edge_status(&client, &edge.base, &key).await["recovery"];
        assert!(recovery.is_object(), "{recovery}");
        assert_eq!(recovery["certain_through"], recovery["taken_back_through"]);
        let out = run(&o.env, &["status"]).await;
        assert!(out.status.success(), "{}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout)
                .contains("recovery      taking this box's own events back"),
            "{}",
            text(&out)
        );
        o.rig.link().restore();
    }
    let ids = o.written.clone();
    converged(&o, &ids).await;
    let status = edge_status(&client, &edge.base, &key).await;
    assert!(status["recovery"].is_null(), "{status}");
    edge.kill();
    o.rig.stop().await;
}

/// `GET /v1/edge/status`'s data.
async fn edge_status(client: &Client, base: &str, key: &str) -> serde_json::Value {
    let mut resp = client
        .with_base(base)
        .with_key(key)
        .get("/v1/edge/status")
        .await;
    assert_eq!(resp.status, 200);
    resp.body["data"].take()
}

/// A box restored from a backup older than what the cloud has: the
/// daemon takes the ten later writes back from the cloud before sending
/// its own, and numbers the box's new writes after them, so none is
/// taken for one the cloud has.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn restoring_an_older_backup_takes_the_later_writes_back_and_loses_none() {
    // A thousand: more than one page of them comes back, and more than one
    // message's worth of bytes.
    restore_then_write(false, 1000).await;
}

/// The same, with the box offline after the restore: what it takes while
/// offline is numbered from the backup, then moved past the cloud's events
/// once they come back.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writes_taken_offline_after_a_restore_go_up_after_the_cloud_has_given_back_its_own() {
    restore_then_write(true, 10).await;
}

/// A new box (an empty data directory) taking over a dead one's edge id
/// gets the old box's writes back from the cloud, and its own go up after
/// them.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_new_box_taking_over_an_edge_gets_its_writes_back() {
    let mut o = older_backup("new-box-", false, 10).await;
    std::fs::remove_dir_all(&o.data).expect("the old box's data");
    let client = Client::new("");
    let edge = spawn(&o.env);
    o.written
        .push(first_write(&client, &edge.base, &o.rig).await);
    let ids = o.written.clone();
    converged(&o, &ids).await;
    edge.kill();
    o.rig.stop().await;
}
