//! A clean stop: `Wms::close` commits what was queued, closes every
//! connection, and leaves the database whole in one file, its write-ahead
//! log folded in and removed.

use depot_wms::{Wms, WmsError};
use std::path::Path;

fn wal_of(path: &Path) -> std::path::PathBuf {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    wal.into()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn close_commits_what_was_queued_and_removes_the_write_ahead_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("close.db");
    let wms = Wms::open(&path, "cloud").expect("open");
    let b = wms
        .create_business("B", "EUR", "UTC")
        .await
        .expect("business");
    let before = keys_in(&wms).await;
    // Reads under way and writes queued when the stop comes.
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..200 {
        let w = wms.clone();
        tasks.spawn(async move {
            if i % 2 == 0 {
                (true, w.create_key(b.id, None).await.map(|_| ()))
            } else {
                (false, keys_in_result(&w).await.map(|_| ()))
            }
        });
    }
    tokio::task::yield_now().await;
    assert!(wal_of(&path).exists(), "a live database has its log");
    wms.close().await.expect("close");

    let mut kept = 0;
    while let Some(done) = tasks.join_next().await {
        match done.expect("task") {
            (true, Ok(())) => kept += 1,
            (false, Ok(())) => {}
            (_, Err(WmsError::Internal(m))) => assert!(
                m.contains("stopped") || m.contains("closed"),
                "refused for another reason than the stop: {m}"
            ),
            (_, Err(e)) => panic!("unexpected error: {e}"),
        }
    }
    assert!(
        !wal_of(&path).exists(),
        "the write-ahead log outlived a clean stop"
    );

    // After the stop, nothing is served, and closing again is harmless.
    assert!(matches!(
        wms.create_key(b.id, None).await,
        Err(WmsError::Internal(m)) if m.contains("the writer has stopped")
    ));
    assert!(matches!(
        wms.read(|_| Ok(())).await,
        Err(WmsError::Internal(m)) if m.contains("the read pool is closed")
    ));
    wms.close().await.expect("a second close");

    // Every write answered Ok was kept, and no other: the database opens
    // again on the one file.
    let again = Wms::open(&path, "cloud").expect("reopen");
    assert_eq!(keys_in(&again).await, before + kept);
    again.close().await.expect("close again");
}

async fn keys_in_result(wms: &Wms) -> depot_wms::Result<i64> {
    wms.read(|c| Ok(c.query_value("SELECT count(*) FROM api_keys", &[])?))
        .await
}

async fn keys_in(wms: &Wms) -> i64 {
    keys_in_result(wms).await.expect("count keys")
}

/// A writer stuck on a dead disk does not hold up the stop: the close gives
/// up after its time and the process goes on to exit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_writer_does_not_hold_up_the_stop() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wms = Wms::open(&dir.path().join("hung.db"), "cloud").expect("open");
    wms.hang_writer_for_tests().await;
    let gave_up = wms.close_at_exit(std::time::Duration::from_millis(200));
    tokio::time::timeout(std::time::Duration::from_secs(60), gave_up)
        .await
        .expect("the close waited on the hung writer");
}
