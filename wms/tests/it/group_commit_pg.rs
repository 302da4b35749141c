//! The group-commit writer on a real PostgreSQL (DEPOT_TEST_PG_URL;
//! skipped without it), where a statement that fails aborts the whole
//! transaction until it is rolled back to a savepoint.

use depot_sql::{Db, params};
use depot_testkit::pg;
use depot_wms::error::WmsError;
use depot_wms::writer::{Lane, Writer};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// A job that swallows the error of one of its statements and answers
/// success, between two jobs that write, in one group: PostgreSQL refuses
/// everything after that statement and would answer the group's `COMMIT`
/// with a rollback. The job is answered as failed, and the others of its
/// group are committed and answered as such.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_that_swallows_an_error_fails_alone() {
    let Some((w, _database)) = writer_on_a_table().await else {
        return;
    };
    let insert = |n: i64| -> Step {
        Box::new(move |c: &Db| {
            c.execute("INSERT INTO t (n) VALUES (?1)", params![n])?;
            Ok(())
        })
    };
    let swallowing: Step = Box::new(|c: &Db| {
        // The key is taken: the statement fails, the job goes on.
        let _ = c.execute("INSERT INTO t (n) VALUES (1)", params![]);
        Ok(())
    });
    let outcomes = in_one_group(&w, vec![insert(1), swallowing, insert(3)]).await;
    assert!(outcomes[0].is_ok(), "{:?}", outcomes[0]);
    assert!(
        matches!(&outcomes[1], Err(WmsError::Internal(_))),
        "{:?}",
        outcomes[1]
    );
    assert!(outcomes[2].is_ok(), "{:?}", outcomes[2]);
    assert_eq!(stored(&w).await, [1, 3]);
}

type Step = Box<dyn FnOnce(&Db) -> depot_wms::Result<()> + Send>;

/// A writer on a database of its own holding the table `t (n)`; `None`
/// (the test is skipped) without a server.
async fn writer_on_a_table() -> Option<(Writer, pg::PgDatabase)> {
    let database = pg::migrated(&[])?;
    let conn = tokio::task::spawn_blocking({
        let url = database.url.clone();
        move || {
            let conn = Db::connect_postgres(&url).expect("connect");
            conn.execute_batch("CREATE TABLE t (n BIGINT PRIMARY KEY)")
                .expect("schema");
            conn
        }
    })
    .await
    .expect("connect");
    Some((Writer::start(conn).expect("start"), database))
}

/// What the table `t` holds, in order.
async fn stored(w: &Writer) -> Vec<i64> {
    w.write(Lane::All, |c| {
        Ok(c.query_map("SELECT n FROM t ORDER BY n", params![], |r| r.get::<i64>(0))?)
    })
    .await
    .expect("read")
}

/// Runs `jobs` in one group, in the order given (queued behind a job that
/// keeps the writer busy), and answers their outcomes in that order.
async fn in_one_group(w: &Writer, jobs: Vec<Step>) -> Vec<depot_wms::Result<()>> {
    let busy = tokio::spawn({
        let w = w.clone();
        async move {
            w.write(Lane::All, |_| {
                std::thread::sleep(Duration::from_millis(300));
                Ok(())
            })
            .await
        }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut tasks = Vec::new();
    for (i, job) in jobs.into_iter().enumerate() {
        let queued = w.clone();
        tasks.push(tokio::spawn({
            let w = w.clone();
            async move { w.write(Lane::All, job).await }
        }));
        while queued.queue_depth() < i + 1 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    busy.await.expect("task").expect("the busy job");
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.expect("task"));
    }
    outcomes
}

/// Writes sent without waiting for their answers (`Db::execute_later`)
/// that fail: the job that sent them fails alone, with the write's own
/// error, whether a job follows it in the group or it is the last; the
/// others' writes, sent the same way, are committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_whose_write_sent_later_fails_fails_alone_with_its_error() {
    let Some((w, _database)) = writer_on_a_table().await else {
        return;
    };
    let later = |ns: &'static [i64]| -> Step {
        Box::new(move |c: &Db| {
            for n in ns {
                c.execute_later("INSERT INTO t (n) VALUES (?1)", params![n])?;
            }
            Ok(())
        })
    };
    let outcomes = in_one_group(
        &w,
        vec![later(&[1]), later(&[2, 1]), later(&[3]), later(&[4, 3])],
    )
    .await;
    assert!(outcomes[0].is_ok(), "{:?}", outcomes[0]);
    assert!(outcomes[2].is_ok(), "{:?}", outcomes[2]);
    for failed in [&outcomes[1], &outcomes[3]] {
        match failed {
            Err(WmsError::Storage(e @ depot_sql::Error::Earlier(inner))) => {
                assert_eq!(
                    inner.constraint(),
                    Some(depot_sql::Constraint::Unique),
                    "{e}"
                );
                assert!(e.to_string().contains("duplicate key"), "{e}");
            }
            other => panic!("the write's own error, not {other:?}"),
        }
    }
    assert_eq!(stored(&w).await, [1, 3]);
}

/// A job alone in its group runs without a savepoint: when it fails, its
/// transaction is rolled back instead. A write sent without waiting that
/// fails fails the commit it went with; a statement's error it swallowed
/// refuses it; an error it returns is its answer. None leaves a row, and
/// the connection writes the next job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_alone_that_fails_leaves_nothing_and_answers_its_error() {
    let Some((w, _database)) = writer_on_a_table().await else {
        return;
    };
    w.write(Lane::All, |c| {
        c.execute_later("INSERT INTO t (n) VALUES (1)", params![])?;
        Ok(())
    })
    .await
    .expect("the first row");
    // Alone, with no savepoint to open or release: its `BEGIN` with the
    // locks, its statement and its `COMMIT` are all the round trips (the
    // second time, when the statement is prepared already).
    let mut trips = Vec::new();
    for _ in 0..2 {
        let before = w.stats().round_trips.load(Ordering::Relaxed);
        w.write(Lane::All, |c| {
            c.execute("UPDATE t SET n = n WHERE n = 1", params![])?;
            Ok(())
        })
        .await
        .expect("an update");
        trips.push(w.stats().round_trips.load(Ordering::Relaxed) - before);
    }
    assert_eq!(trips[1], 3, "{trips:?}");
    let later = w
        .write(Lane::All, |c| {
            c.execute_later("INSERT INTO t (n) VALUES (2)", params![])?;
            c.execute_later("INSERT INTO t (n) VALUES (1)", params![])?;
            Ok(())
        })
        .await;
    // Sent with the `COMMIT`, whose failure names it.
    match later {
        Err(WmsError::Internal(e)) => assert!(e.contains("duplicate key"), "{e}"),
        other => panic!("the commit's failure, not {other:?}"),
    }
    let swallowed = w
        .write(Lane::All, |c| {
            c.execute("INSERT INTO t (n) VALUES (3)", params![])?;
            let _ = c.execute("INSERT INTO t (n) VALUES (1)", params![]);
            Ok(())
        })
        .await;
    assert!(
        matches!(&swallowed, Err(WmsError::Internal(_))),
        "{swallowed:?}"
    );
    let refused = w
        .write(Lane::All, |c| {
            c.execute("INSERT INTO t (n) VALUES (4)", params![])?;
            Err::<(), _>(WmsError::conflict("refused after writing"))
        })
        .await;
    assert!(
        matches!(refused, Err(WmsError::Conflict { .. })),
        "{refused:?}"
    );
    w.write(Lane::All, |c| {
        c.execute("INSERT INTO t (n) VALUES (5)", params![])?;
        Ok(())
    })
    .await
    .expect("a write after them");
    assert_eq!(stored(&w).await, [1, 5]);
}
