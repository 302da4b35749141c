//! The group-commit writer on a real PostgreSQL (DEPOT_TEST_PG_URL;
//! skipped without it), where a statement that fails aborts the whole
//! transaction until it is rolled back to a savepoint.

use depot_sql::{Db, params};
use depot_testkit::pg;
use depot_wms::error::WmsError;
use depot_wms::writer::{Lane, Writer};
use std::time::Duration;

/// A job that swallows the error of one of its statements and answers
/// success, between two jobs that write, in one group: PostgreSQL refuses
/// everything after that statement and would answer the group's `COMMIT`
/// with a rollback. The job is answered as failed, and the others of its
/// group are committed and answered as such.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_that_swallows_an_error_fails_alone() {
    let Some(database) = pg::migrated(&[]) else {
        return;
    };
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
    let w = Writer::start(conn).expect("start");
    let insert = |n: i64| move |c: &Db| Ok(c.execute("INSERT INTO t (n) VALUES (?1)", params![n])?);

    // Keeps the writer busy while the three are queued behind it, so that
    // they make one group, in this order.
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
    let queued = |depth: usize| {
        let w = w.clone();
        async move {
            while w.queue_depth() < depth {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let before = tokio::spawn({
        let w = w.clone();
        async move { w.write(Lane::All, insert(1)).await }
    });
    queued(1).await;
    let swallowing = tokio::spawn({
        let w = w.clone();
        async move {
            w.write(Lane::All, |c| {
                // The key is taken: the statement fails, the job goes on.
                let _ = c.execute("INSERT INTO t (n) VALUES (1)", params![]);
                Ok(())
            })
            .await
        }
    });
    queued(2).await;
    let after = tokio::spawn({
        let w = w.clone();
        async move { w.write(Lane::All, insert(3)).await }
    });
    queued(3).await;

    busy.await.expect("task").expect("the busy job");
    let before = before.await.expect("task");
    let swallowing = swallowing.await.expect("task");
    let after = after.await.expect("task");
    assert!(before.is_ok(), "{before:?}");
    assert!(
        matches!(&swallowing, Err(WmsError::Internal(_))),
        "{swallowing:?}"
    );
    assert!(after.is_ok(), "{after:?}");
    let stored = w
        .write(Lane::All, |c| {
            Ok(c.query_map("SELECT n FROM t ORDER BY n", params![], |r| r.get::<i64>(0))?)
        })
        .await
        .expect("read");
    assert_eq!(stored, [1, 3]);
}
