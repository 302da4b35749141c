//! Read connections: a fixed pool, used from blocking tasks so queries never
//! stall the async runtime. Readers see the last commit (WAL) and never wait
//! for the writer. At most `size` reads run at once; the rest queue for a
//! connection instead of opening new ones, so prepared statements stay
//! cached and the CPU is not oversubscribed.
//!
//! A read known to be short (a list's page of ids, [`Reader::read_brief`])
//! runs on the calling task's thread instead, within a time budget SQLite
//! enforces: handing it to a blocking thread and back cost more than the
//! read itself. A list's page ([`Reader::list`]) is such a read; on
//! PostgreSQL it is run by async calls on the request's own runtime, over
//! a few connections the requests share ([`depot_sql::SharedReads`]), for
//! the same reason.

use crate::error::{Result, WmsError};
use crate::store;
use depot_sql::Db;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// The longest a brief read holds the async thread that runs it: the upper
/// end of what tokio's guidance allows a task between two awaits. A read
/// still running at this point is interrupted and run again on the pool.
pub const BRIEF: Duration = Duration::from_micros(100);

/// SQLite's virtual machine instructions between two looks at the clock:
/// a few microseconds of work each.
const INSTRUCTIONS_BETWEEN_LOOKS: i32 = 200;

/// Where read connections are opened.
#[derive(Debug, Clone)]
pub enum Source {
    /// An SQLite file, opened read-only.
    File(PathBuf),
    /// A PostgreSQL database, by URL.
    #[cfg(feature = "postgres")]
    Postgres(String),
}

impl Source {
    fn open(&self) -> Result<Db> {
        match self {
            Source::File(path) => store::open_reader(path),
            #[cfg(feature = "postgres")]
            Source::Postgres(url) => Ok(Db::connect_postgres(url)?),
        }
    }
}

/// Runs `f` in one read transaction on SQLite: a list's total, its count
/// and its page then come from the same commit, and the WAL's read lock
/// (two `fcntl` calls) is taken once for the read rather than once per
/// statement. On PostgreSQL each statement stays its own transaction: one
/// more round trip each way would cost more than it saves.
fn in_one_snapshot<T>(conn: &Db, f: impl FnOnce(&Db) -> Result<T>) -> Result<T> {
    if conn.dialect() != depot_sql::Dialect::Sqlite {
        return f(conn);
    }
    conn.execute("BEGIN", depot_sql::params![])?;
    let result = f(conn);
    // A read-only transaction has nothing to undo: ending it releases the
    // snapshot whether `f` succeeded or not.
    let ended = conn.execute("COMMIT", depot_sql::params![]);
    let value = result?;
    ended?;
    Ok(value)
}

/// Has SQLite call `stop` every few instructions of a statement on `conn`
/// and interrupt it when `stop` says so; `None` removes it.
fn budget<F: FnMut() -> bool + Send + 'static>(conn: &Db, stop: Option<F>) {
    if let Some(conn) = conn.as_sqlite() {
        conn.progress_handler(INSTRUCTIONS_BETWEEN_LOOKS, stop);
    }
}

/// How brief reads went, for `/metrics`.
#[derive(Debug, Default)]
pub struct BriefStats {
    /// Answered on the caller's thread within the budget.
    pub answered: AtomicU64,
    /// Interrupted at the budget and run again on the pool.
    pub overran: AtomicU64,
}

#[derive(Clone)]
pub struct Reader {
    source: Arc<Source>,
    brief: Arc<BriefStats>,
    /// Large list counts, shared by the pool's connections.
    counts: Arc<depot_sql::CountMemo>,
    idle: Arc<Mutex<Vec<Db>>>,
    permits: Arc<Semaphore>,
    size: u32,
    /// On PostgreSQL, the connections lists' pages are read on.
    #[cfg(feature = "postgres")]
    shared: Option<Arc<depot_sql::SharedReads>>,
}

impl Reader {
    /// A pool of at most `size` connections to `source`; on PostgreSQL,
    /// also half as many for lists' pages, which many requests share.
    pub fn new(source: Source, size: usize) -> Result<Self> {
        #[cfg(feature = "postgres")]
        let shared = match &source {
            Source::Postgres(url) => Some(Arc::new(depot_sql::SharedReads::new(
                url,
                size.div_ceil(2),
            )?)),
            Source::File(_) => None,
        };
        Ok(Self {
            brief: Arc::default(),
            counts: Arc::new(depot_sql::CountMemo::new(store::COUNTS_FRESH_FOR)),
            idle: Arc::new(Mutex::new(Vec::with_capacity(size))),
            permits: Arc::new(Semaphore::new(size.max(1))),
            size: u32::try_from(size.max(1)).unwrap_or(u32::MAX),
            source: Arc::new(source),
            #[cfg(feature = "postgres")]
            shared,
        })
    }

    /// The database this pool reads.
    pub fn dialect(&self) -> depot_sql::Dialect {
        match *self.source {
            Source::File(_) => depot_sql::Dialect::Sqlite,
            #[cfg(feature = "postgres")]
            Source::Postgres(_) => depot_sql::Dialect::Postgres,
        }
    }

    /// A page of `listing`, each row read by `row`: a brief read on
    /// SQLite ([`Reader::read_brief`]); on PostgreSQL, calls made by this
    /// task itself over the shared connections, its statements sent
    /// together.
    pub async fn list<T, F>(
        &self,
        listing: store::Listing,
        page: depot_protocol::Page,
        row: F,
    ) -> Result<depot_protocol::Listed<T>>
    where
        T: Send + 'static,
        F: Fn(&depot_sql::Row<'_>) -> depot_sql::Result<T> + Send + Sync + 'static,
    {
        #[cfg(feature = "postgres")]
        if let Some(shared) = &self.shared {
            if self.permits.is_closed() {
                return Err(WmsError::Internal("the read pool is closed".into()));
            }
            let listed = listing.run_shared(shared, &self.counts, page, &row).await?;
            self.brief.answered.fetch_add(1, Ordering::Relaxed);
            return Ok(listed);
        }
        self.read_brief(move |conn| listing.clone().run(conn, page.clone(), &row))
            .await
    }

    /// Runs `f` on a read connection.
    pub async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Db) -> Result<T> + Send + 'static,
    {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| WmsError::Internal("the read pool is closed".into()))?;
        let this = self.clone();
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let conn = match this.idle.lock().ok().and_then(|mut idle| idle.pop()) {
                Some(conn) => conn,
                None => {
                    let mut conn = this.source.open()?;
                    conn.share_counts(this.counts.clone());
                    conn
                }
            };
            let result = in_one_snapshot(&conn, f);
            if let Ok(mut idle) = this.idle.lock() {
                idle.push(conn);
            }
            result
        })
        .await
        .map_err(|e| WmsError::Internal(format!("read task failed: {e}")))?
    }

    /// Runs `f` as [`Reader::read`] does, but on this thread when it can be
    /// brief: on SQLite, with a connection idle and a permit free at once,
    /// and only for as long as [`BRIEF`]. SQLite interrupts a statement
    /// still running past it, and `f` is then run again on the pool, so a
    /// read that turns out long (a deep offset, a cold cache) costs this
    /// thread at most the budget. `f` must do little besides its
    /// statements: only they are timed.
    pub async fn read_brief<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: Fn(&Db) -> Result<T> + Send + 'static,
    {
        self.read_within(BRIEF, f).await
    }

    /// [`Reader::read_brief`] with a budget of `within`.
    async fn read_within<T, F>(&self, within: Duration, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: Fn(&Db) -> Result<T> + Send + 'static,
    {
        let Some((permit, conn)) = self.idle_now() else {
            return self.read(f).await;
        };
        let overran = Arc::new(AtomicBool::new(false));
        let deadline = Instant::now() + within;
        let flag = overran.clone();
        // The budget covers `f` alone, inside the snapshot: neither the
        // transaction's start nor its end may be interrupted. SQLite looks
        // at the clock every so many instructions of a prepared statement,
        // counted over all its runs, so a cached `BEGIN` is looked at now
        // and then too; interrupted there, it left the budget on the
        // connection, and every read the pool ran on it after failed.
        let result = in_one_snapshot(&conn, |c| {
            budget(
                c,
                Some(move || {
                    let over = Instant::now() > deadline;
                    if over {
                        flag.store(true, Ordering::Relaxed);
                    }
                    over
                }),
            );
            let result = f(c);
            budget(c, None::<fn() -> bool>);
            result
        });
        if let Ok(mut idle) = self.idle.lock() {
            idle.push(conn);
        }
        drop(permit);
        if overran.load(Ordering::Relaxed) {
            self.brief.overran.fetch_add(1, Ordering::Relaxed);
            if result.is_err() {
                return self.read(f).await;
            }
        } else {
            self.brief.answered.fetch_add(1, Ordering::Relaxed);
        }
        result
    }

    /// How brief reads went since the pool opened.
    pub fn brief_stats(&self) -> &BriefStats {
        &self.brief
    }

    /// A permit and an open connection, if both are free now.
    fn idle_now(&self) -> Option<(tokio::sync::OwnedSemaphorePermit, Db)> {
        if !matches!(*self.source, Source::File(_)) {
            return None;
        }
        let permit = self.permits.clone().try_acquire_owned().ok()?;
        let conn = self.idle.lock().ok()?.pop()?;
        Some((permit, conn))
    }

    /// Waits for the reads under way, refuses those after, and closes the
    /// connections, so the writer's is the database's last.
    pub async fn close(&self) {
        if let Ok(all) = self.permits.acquire_many(self.size).await {
            self.permits.close();
            drop(all);
        }
        let idle = match self.idle.lock() {
            Ok(mut idle) => std::mem::take(&mut *idle),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        };
        for conn in idle {
            if let Err(e) = conn.close() {
                tracing::warn!(error = %e, "a read connection did not close cleanly");
            }
        }
        #[cfg(feature = "postgres")]
        if let Some(shared) = &self.shared {
            shared.close();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::thread::{self, ThreadId};

    /// Counts to `n` in SQL: a statement as long as its argument.
    const COUNT_TO: &str =
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
                            SELECT COUNT(*) FROM n";

    /// A reader of a new database, with one connection open and idle.
    async fn reader(dir: &tempfile::TempDir) -> (Db, Reader) {
        let path = dir.path().join("store.db");
        let writer = store::open_writer(&path).expect("writer");
        let reader = Reader::new(Source::File(path), 2).expect("reader");
        reader.read(|_| Ok(())).await.expect("first read");
        (writer, reader)
    }

    #[tokio::test]
    async fn a_brief_read_runs_on_the_callers_thread() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (_writer, reader) = reader(&dir).await;
        let here = thread::current().id();
        let there: ThreadId = reader
            .read_brief(|conn| {
                let n: i64 = conn.query_value(COUNT_TO, depot_sql::params![10])?;
                assert_eq!(n, 10);
                Ok(thread::current().id())
            })
            .await
            .expect("read");
        assert_eq!(there, here);
        assert_eq!(reader.brief_stats().answered.load(Ordering::Relaxed), 1);
        // The pool's own reads still go to a blocking thread.
        let pooled = reader
            .read(|_| Ok(thread::current().id()))
            .await
            .expect("read");
        assert_ne!(pooled, here);
    }

    #[tokio::test]
    async fn a_read_past_its_budget_is_run_again_on_the_pool() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (writer, reader) = reader(&dir).await;
        let here = thread::current().id();
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = runs.clone();
        let (n, there): (i64, ThreadId) = reader
            .read_brief(move |conn| {
                counted.fetch_add(1, Ordering::Relaxed);
                // Millions of instructions: far past the budget.
                let n = conn.query_value(COUNT_TO, depot_sql::params![2_000_000])?;
                Ok((n, thread::current().id()))
            })
            .await
            .expect("read");
        assert_eq!(n, 2_000_000);
        assert_ne!(there, here, "finished on the pool");
        assert_eq!(runs.load(Ordering::Relaxed), 2, "once here, once there");
        let stats = reader.brief_stats();
        assert_eq!(stats.overran.load(Ordering::Relaxed), 1);
        assert_eq!(stats.answered.load(Ordering::Relaxed), 0);

        // The connection came back without its budget or its snapshot: a
        // long read on it runs to the end, and sees a commit made since.
        writer
            .execute_batch("CREATE TABLE later (x INTEGER); INSERT INTO later VALUES (1)")
            .expect("write");
        let (n, later): (i64, i64) = reader
            .read(|conn| {
                Ok((
                    conn.query_value(COUNT_TO, depot_sql::params![2_000_000])?,
                    conn.query_value("SELECT COUNT(*) FROM later", depot_sql::params![])?,
                ))
            })
            .await
            .expect("read");
        assert_eq!((n, later), (2_000_000, 1));
    }

    /// Reads whose budget is spent before they start: `f` may be
    /// interrupted and run again on the pool, but the transaction around
    /// it never is, and no connection goes back to the pool with a budget.
    /// (Interrupted at its `BEGIN`, a read left its budget behind, and the
    /// pool's reads on that connection failed: 500s in CI's smoke run.)
    #[tokio::test]
    async fn a_spent_budget_never_outlives_its_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (_writer, reader) = reader(&dir).await;
        for i in 0..500 {
            let n = reader
                .read_within(Duration::ZERO, |conn| {
                    Ok(conn.query_value::<i64>("SELECT 1", depot_sql::params![])?)
                })
                .await;
            assert_eq!(n.ok(), Some(1), "read {i}");
            let n = reader
                .read(|conn| {
                    conn.query_value::<i64>(COUNT_TO, depot_sql::params![10_000])
                        .map_err(Into::into)
                })
                .await;
            assert_eq!(n.ok(), Some(10_000), "the pool's read after read {i}");
        }
    }

    #[tokio::test]
    async fn a_brief_read_that_fails_on_its_own_fails_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (_writer, reader) = reader(&dir).await;
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = runs.clone();
        let failed = reader
            .read_brief(move |conn| {
                counted.fetch_add(1, Ordering::Relaxed);
                let n: i64 =
                    conn.query_value("SELECT COUNT(*) FROM no_such_table", depot_sql::params![])?;
                Ok(n)
            })
            .await;
        assert!(failed.is_err());
        assert_eq!(runs.load(Ordering::Relaxed), 1, "not run again");
    }
}
