use super::*;
use depot_sql::params;
use std::sync::atomic::Ordering;

fn writer() -> Writer {
    let conn = crate::store::memory(0).expect("memory db");
    conn.execute_batch("CREATE TABLE t (n INTEGER PRIMARY KEY)")
        .expect("schema");
    Writer::start(conn).expect("start")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failing_job_leaves_its_group_intact() {
    let w = writer();
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..200i64 {
        let w = w.clone();
        tasks.spawn(async move {
            let r = w
                .write(Lane::All, move |c| {
                    c.execute("INSERT INTO t (n) VALUES (?1)", params![n])?;
                    if n % 7 == 0 {
                        // Fails after writing: the savepoint must undo the insert.
                        return Err(WmsError::conflict("refused"));
                    }
                    Ok(n)
                })
                .await;
            (n, r.is_ok())
        });
    }
    let mut ok = Vec::new();
    while let Some(done) = tasks.join_next().await {
        let (n, succeeded) = done.expect("task");
        assert_eq!(succeeded, n % 7 != 0);
        if succeeded {
            ok.push(n);
        }
    }
    ok.sort_unstable();
    let stored = rows(&w).await;
    assert_eq!(stored, ok);
    let commits = w.stats().commits.load(Ordering::Relaxed);
    let jobs = w.stats().jobs.load(Ordering::Relaxed);
    assert_eq!(jobs, 201);
    assert!(commits <= jobs);
}

/// A job that swallows the error of a statement SQLite answered by
/// rolling the transaction back, and writes on: what it writes after
/// is not committed on its own, and the job is answered as failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_committed_outside_the_group_commit() {
    let w = writer();
    let kept = w
        .write(Lane::All, |c| {
            Ok(c.execute("INSERT INTO t (n) VALUES (1)", params![])?)
        })
        .await;
    assert!(kept.is_ok());
    // Told outside the job: a panic inside it would be caught and
    // answered as the job's failure, which this test expects anyway.
    let autocommitted = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = autocommitted.clone();
    let swallowed = w
        .write(Lane::All, move |c| {
            // What SQLite does on a full disk or an I/O error.
            c.execute_batch("ROLLBACK")?;
            let insert = c.execute("INSERT INTO t (n) VALUES (2)", params![]);
            seen.store(insert.is_ok(), Ordering::Relaxed);
            Ok(())
        })
        .await;
    assert!(
        !autocommitted.load(Ordering::Relaxed),
        "committed in autocommit"
    );
    assert!(swallowed.is_err(), "answered Ok for a lost transaction");
    let stored = rows(&w).await;
    assert_eq!(stored, [1]);
}

/// A writer on a file whose database may not grow by a page: a row
/// that needs one fails for a full disk, as it does when the disk
/// refuses the write.
fn writer_on_a_full_disk(dir: &std::path::Path) -> Writer {
    let conn = Db::sqlite(rusqlite::Connection::open(dir.join("full.db")).expect("open"));
    conn.execute_batch(
        "PRAGMA journal_mode = WAL;
         CREATE TABLE t (n INTEGER PRIMARY KEY, pad BLOB);",
    )
    .expect("schema");
    let pages: i64 = conn
        .query_row("PRAGMA page_count", params![], |r| r.get(0))
        .expect("page count");
    conn.query_row(
        &format!("PRAGMA max_page_count = {pages}"),
        params![],
        |_| Ok(()),
    )
    .expect("max page count");
    Writer::start(conn).expect("start")
}

fn insert(n: i64, pad: usize) -> impl FnOnce(&Db) -> Result<i64> {
    move |c| {
        c.execute(
            "INSERT INTO t (n, pad) VALUES (?1, ?2)",
            params![n, vec![0u8; pad]],
        )?;
        Ok(n)
    }
}

async fn rows(w: &Writer) -> Vec<i64> {
    w.write(Lane::All, |c| {
        let s = "SELECT n FROM t ORDER BY n";
        let rows = c.query_map(s, params![], |r| r.get(0))?;
        Ok(rows)
    })
    .await
    .expect("read back")
}

fn spawn_insert(w: &Writer, n: i64, pad: usize) -> tokio::task::JoinHandle<Result<i64>> {
    let w = w.clone();
    tokio::spawn(async move { w.write(Lane::All, insert(n, pad)).await })
}

/// SQLite answers a full disk by rolling back the whole transaction,
/// not just the statement: the jobs before in the group are lost with
/// it and must be told so, and those after must neither run outside a
/// transaction (committed one statement at a time, answered as failed)
/// nor share its fate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_what_it_rolled_back_and_nothing_else() {
    let dir = tempfile::tempdir().expect("tempdir");
    let w = writer_on_a_full_disk(dir.path());
    // Holds the writer so that the next three form one group.
    let (held, hold) = std::sync::mpsc::channel::<()>();
    let (holds, holding_now) = oneshot::channel::<()>();
    let holding = w.clone();
    let holder = tokio::spawn(async move {
        holding
            .write(Lane::All, move |_| {
                let _ = holds.send(());
                let _ = hold.recv_timeout(std::time::Duration::from_secs(10));
                Ok(())
            })
            .await
    });
    holding_now.await.expect("the writer runs the holding job");
    let before = spawn_insert(&w, 1, 10);
    while w.queue_depth() < 1 {
        tokio::task::yield_now().await;
    }
    let big = spawn_insert(&w, 2, 64 * 1024);
    while w.queue_depth() < 2 {
        tokio::task::yield_now().await;
    }
    let after = spawn_insert(&w, 3, 10);
    while w.queue_depth() < 3 {
        tokio::task::yield_now().await;
    }
    held.send(()).expect("release the writer");
    holder.await.expect("join").expect("held job");
    let before = before.await.expect("join");
    let big = big.await.expect("join");
    let after = after.await.expect("join");
    assert!(matches!(before, Err(WmsError::Full)), "{before:?}");
    assert!(matches!(big, Err(WmsError::Full)), "{big:?}");
    assert_eq!(after.ok(), Some(3));
    let rows = rows(&w).await;
    assert_eq!(rows, vec![3], "what was answered Ok, and only that");
    assert_eq!(w.stats().refused_full.load(Ordering::Relaxed), 2);
    assert!(w.stats().full_since().is_some());
    // A group that writes without a refusal: there is room again.
    assert_eq!(w.write(Lane::All, insert(4, 10)).await.ok(), Some(4));
    assert_eq!(w.stats().full_since(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn under_a_full_disk_every_answer_is_true_to_the_database() {
    let dir = tempfile::tempdir().expect("tempdir");
    let w = writer_on_a_full_disk(dir.path());
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..300i64 {
        // Most rows fit in the pages there are; every fifth needs more.
        let pad = if n % 5 == 0 { 8 * 1024 } else { 8 };
        let w = w.clone();
        tasks.spawn(async move { w.write(Lane::All, insert(n, pad)).await });
    }
    let (mut ok, mut full) = (Vec::new(), 0);
    while let Some(done) = tasks.join_next().await {
        match done.expect("task") {
            Ok(n) => ok.push(n),
            Err(WmsError::Full) => full += 1,
            Err(e) => panic!("only a full disk may refuse a write here: {e}"),
        }
    }
    ok.sort_unstable();
    let rows = rows(&w).await;
    assert_eq!(rows, ok, "every row answered Ok is there, and no other");
    assert!(full >= 60, "the rows that need a page are refused: {full}");
    assert_eq!(w.stats().refused_full.load(Ordering::Relaxed), full);
    // Which write the burst ended on is the scheduler's choice (a small
    // row still fits after a large one is refused, and clears the state):
    // one that needs a page, refused, sets it.
    assert!(matches!(
        w.write(Lane::All, insert(2000, 8 * 1024)).await,
        Err(WmsError::Full)
    ));
    assert!(w.stats().full_since().is_some());

    // Room again: the next write goes through and clears the state.
    w.write(Lane::All, |c| {
        c.query_row("PRAGMA max_page_count = 100000", params![], |_| Ok(()))?;
        Ok(())
    })
    .await
    .expect("room");
    assert_eq!(
        w.write(Lane::All, insert(1000, 64 * 1024)).await.ok(),
        Some(1000)
    );
    assert_eq!(w.stats().full_since(), None);
}

/// A job that panics after writing (a bug) is undone and answered as an
/// internal error; the jobs of its group around it commit, and the writer
/// takes the jobs after it, as it does a job that returned an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_that_panics_fails_alone_and_the_writer_goes_on() {
    let w = writer();
    // Queued before any is awaited, so they go in one group unless the
    // writer takes the first before the others are queued.
    let mut queued = Vec::new();
    for n in 1..=5i64 {
        queued.push(
            w.queue(Lane::All, move |c| {
                c.execute("INSERT INTO t (n) VALUES (?1)", params![n])?;
                assert_ne!(n, 3, "a bug in the third job");
                Ok(n)
            })
            .await
            .expect("queued"),
        );
    }
    let mut answers = Vec::new();
    for q in queued {
        answers.push(q.await);
    }
    for (n, answer) in (1..=5i64).zip(&answers) {
        match (n, answer) {
            (3, Err(WmsError::Internal(message))) => {
                assert!(message.contains("a bug in the third job"), "{message}");
            }
            (3, other) => panic!("the job that panicked was answered {other:?}"),
            (n, answer) => assert_eq!(answer.as_ref().ok(), Some(&n)),
        }
    }
    assert_eq!(rows(&w).await, [1, 2, 4, 5]);
    let after = w
        .write(Lane::All, |c| {
            Ok(c.execute("INSERT INTO t (n) VALUES (6)", params![])?)
        })
        .await;
    assert_eq!(after.ok(), Some(1));
    assert_eq!(rows(&w).await, [1, 2, 4, 5, 6]);
}

/// A job alone in its group runs without a savepoint (SQLite would copy
/// every page it changes into the statement journal first): when it
/// fails, after writing or by a panic, its transaction is rolled back, and
/// it is answered with its own error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_alone_runs_without_a_savepoint_and_fails_without_a_trace() {
    let w = writer();
    let no_savepoint = w
        .write(Lane::All, |c| {
            c.execute("INSERT INTO t (n) VALUES (1)", params![])?;
            Ok(c.execute_batch("ROLLBACK TO part").is_err())
        })
        .await;
    assert_eq!(no_savepoint.ok(), Some(true));
    let refused = w
        .write(Lane::All, |c| {
            c.execute("INSERT INTO t (n) VALUES (2)", params![])?;
            Err::<(), _>(WmsError::conflict("refused after writing"))
        })
        .await;
    assert!(
        matches!(refused, Err(WmsError::Conflict { .. })),
        "{refused:?}"
    );
    let panicked = w
        .write(Lane::All, |c| -> Result<()> {
            c.execute("INSERT INTO t (n) VALUES (3)", params![])?;
            panic!("a bug after writing");
        })
        .await;
    assert!(
        matches!(&panicked, Err(WmsError::Internal(m)) if m.contains("a bug after writing")),
        "{panicked:?}"
    );
    // A savepoint the job opens itself still undoes only what it wrote.
    let nested = w
        .write(Lane::All, |c| {
            c.execute("INSERT INTO t (n) VALUES (4)", params![])?;
            let inner = super::savepoint(c, |c| {
                c.execute("INSERT INTO t (n) VALUES (5)", params![])?;
                Err::<(), _>(WmsError::conflict("not this one"))
            });
            Ok(inner.is_err())
        })
        .await;
    assert_eq!(nested.ok(), Some(true));
    assert_eq!(rows(&w).await, [1, 4]);
    assert_eq!(w.stats().jobs.load(Ordering::Relaxed), 5);
}

#[tokio::test]
async fn a_storage_error_is_answered_not_panicked() {
    let w = writer();
    let r = w
        .write(Lane::All, |c| {
            Ok(c.execute("INSERT INTO missing (x) VALUES (1)", params![])?)
        })
        .await;
    assert!(matches!(r, Err(WmsError::Storage(_))));
    let r = w
        .write(Lane::All, |c| {
            Ok(c.execute("INSERT INTO t (n) VALUES (1)", params![])?)
        })
        .await;
    assert_eq!(r.ok(), Some(1));
}

/// A group of one business's jobs and another's locks both businesses,
/// sorted and once each, beside the shared lock; a job that may write
/// anything makes the whole group exclusive.
#[test]
fn a_group_locks_its_businesses_in_order_or_everything() {
    use super::group::{BUSINESS_LOCKS, Locks, WRITE_LOCK};
    let b = |n| Lane::Business(BusinessId(n));
    let l = Locks::of([b(9), b(2), b(9), b(5)].into_iter());
    assert_eq!(l.shared, [WRITE_LOCK]);
    assert_eq!(l.exclusive, [2, 5, 9].map(|n| BUSINESS_LOCKS + n));
    let l = Locks::of([b(9), Lane::All, b(2)].into_iter());
    assert!(l.shared.is_empty());
    assert_eq!(l.exclusive, [WRITE_LOCK]);
    // A name's lock is its own, below every business's.
    let l = Locks::of([b(1), Lane::Own("webhook deliveries"), b(1)].into_iter());
    assert_eq!(l.shared, [WRITE_LOCK]);
    assert_eq!(l.exclusive.len(), 2);
    assert!(l.exclusive[0] < BUSINESS_LOCKS && l.exclusive[0] >= super::group::OWN_LOCKS);
    assert_eq!(l.exclusive[1], BUSINESS_LOCKS + 1);
    assert_ne!(
        Locks::of([Lane::Own("a")].into_iter()),
        Locks::of([Lane::Own("b")].into_iter())
    );
}
