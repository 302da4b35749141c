//! The one writer. Every write of the engine runs here, on a dedicated
//! thread that owns the only writing connection. Jobs queued while a commit
//! is on its way are committed together (group commit): one fsync for many
//! writes, so throughput grows with load while every answer still waits for
//! its own data to be on disk (`synchronous=FULL`).
//!
//! Each job runs inside a savepoint, so a job that fails leaves nothing
//! behind and does not disturb the others of its group.

use crate::error::{Result, WmsError};
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use rusqlite::Connection;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;
use tokio::sync::{mpsc, oneshot, watch};

/// How many jobs one transaction takes at most: bounds the latency a job
/// can add to the others of its group.
const MAX_GROUP: usize = 256;
/// Jobs that may wait before callers are slowed down (backpressure).
const QUEUE: usize = 4096;

type Reply = Box<dyn FnOnce(Result<(), String>) + Send>;
/// A job runs against the open transaction, or, given `None` because no
/// transaction could be opened, answers the failure without running.
type Job = Box<dyn FnOnce(Option<&Connection>) -> Reply + Send>;

/// Upper bounds of the commit duration histogram, in seconds.
const COMMIT_BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// Counters a metrics endpoint or a benchmark can read.
#[derive(Debug)]
pub struct WriterStats {
    pub commits: AtomicU64,
    pub jobs: AtomicU64,
    /// Jobs per group commit: 1 when idle, up to [`MAX_GROUP`] under load.
    pub batch_sizes: Histogram,
    /// Seconds from `BEGIN` to the end of `COMMIT` (the fsync included).
    pub commit_seconds: Histogram,
}

impl Default for WriterStats {
    fn default() -> Self {
        Self {
            commits: AtomicU64::default(),
            jobs: AtomicU64::default(),
            // 1, 2, 4 ... 256: one bucket per doubling, up to MAX_GROUP.
            batch_sizes: Histogram::new(exponential_buckets(1.0, 2.0, 9)),
            // 100 µs (a commit the page cache absorbs) to seconds (a
            // stalled disk).
            commit_seconds: Histogram::new(COMMIT_BUCKETS),
        }
    }
}

/// Tables whose commits others wait for or cache against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watched {
    /// The key cache.
    ApiKeys = 0,
    /// The edge's print spooler.
    PrintJobs = 1,
    /// Readers following the event log (long polls).
    Events = 2,
    /// The edge's spoolers, waiting for their printer records.
    Printers = 3,
}

/// Table names, indexed by [`Watched`].
const WATCHED: [&str; 4] = ["api_keys", "print_jobs", "events", "printers"];

#[derive(Clone)]
pub struct Writer {
    tx: mpsc::Sender<Job>,
    stats: Arc<WriterStats>,
    /// One per [`Watched`] table, bumped after each commit (or rollback)
    /// that wrote to it.
    watches: Arc<[watch::Sender<u64>; 4]>,
}

impl Writer {
    /// Starts the writer thread on `conn`. The thread ends when every
    /// `Writer` handle is dropped, after finishing what was queued.
    pub fn start(conn: Connection) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel(QUEUE);
        let stats = Arc::new(WriterStats::default());
        let watches = Arc::new(WATCHED.map(|_| watch::Sender::new(0)));
        let touched = Arc::new(WATCHED.map(|_| AtomicBool::new(false)));
        let hook = touched.clone();
        conn.update_hook(Some(
            move |_: rusqlite::hooks::Action, _: &str, table: &str, _: i64| {
                if let Some(i) = WATCHED.iter().position(|t| *t == table) {
                    hook[i].store(true, Ordering::Relaxed);
                }
            },
        ));
        let thread_stats = stats.clone();
        let bump = watches.clone();
        std::thread::Builder::new()
            .name("depot-writer".into())
            .spawn(move || {
                run(conn, rx, &thread_stats, || {
                    for (flag, watch) in touched.iter().zip(bump.iter()) {
                        if flag.swap(false, Ordering::Relaxed) {
                            watch.send_modify(|n| *n += 1);
                        }
                    }
                })
            })?;
        Ok(Self { tx, stats, watches })
    }

    pub fn stats(&self) -> &WriterStats {
        &self.stats
    }

    /// Jobs queued and not yet taken into a group.
    pub fn queue_depth(&self) -> usize {
        self.tx.max_capacity() - self.tx.capacity()
    }

    /// Changes after every commit that wrote to the table.
    pub fn watch(&self, table: Watched) -> watch::Receiver<u64> {
        self.watches[table as usize].subscribe()
    }

    /// Runs `f` in the writer's transaction and answers once it is committed.
    pub async fn write<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let (otx, orx) = oneshot::channel();
        let job: Job = Box::new(move |conn| {
            let outcome = match conn {
                Some(conn) => savepoint(conn, f),
                None => Err(WmsError::Internal(
                    "no write transaction could be opened".into(),
                )),
            };
            Box::new(move |commit| {
                let answer = match commit {
                    Ok(()) => outcome,
                    Err(e) => Err(WmsError::Internal(format!("commit failed: {e}"))),
                };
                let _ = otx.send(answer);
            })
        });
        self.tx
            .send(job)
            .await
            .map_err(|_| WmsError::Internal("the writer has stopped".into()))?;
        orx.await
            .map_err(|_| WmsError::Internal("the writer dropped a job".into()))?
    }

    /// Makes the writer thread hang for good, as one stuck on a lock or a
    /// dead disk would: the jobs queued behind it are never answered. Only
    /// for tests of what notices a hung writer (the watchdog, `/readyz`).
    #[doc(hidden)]
    pub async fn hang_for_tests(&self) {
        let job: Job = Box::new(|_| {
            loop {
                std::thread::park();
            }
        });
        let _ = self.tx.send(job).await;
    }
}

/// Runs `f` in a savepoint (nested in the job's own, when called from a
/// job): an error undoes what `f` wrote and nothing else. The statements are
/// prepared once and cached: parsing them for every job cost more than some
/// jobs themselves.
pub fn savepoint<T>(conn: &Connection, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
    conn.prepare_cached("SAVEPOINT part")?.execute([])?;
    let result = f(conn);
    if result.is_err() {
        conn.prepare_cached("ROLLBACK TO part")?.execute([])?;
    }
    conn.prepare_cached("RELEASE part")?.execute([])?;
    result
}

/// `after_commit` runs once a group's transaction has ended and before any
/// of its callers is answered.
fn run(
    conn: Connection,
    mut rx: mpsc::Receiver<Job>,
    stats: &WriterStats,
    after_commit: impl Fn(),
) {
    let mut group: Vec<Job> = Vec::with_capacity(MAX_GROUP);
    while let Some(first) = rx.blocking_recv() {
        group.push(first);
        while group.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        let n = group.len() as u64;
        let started = Instant::now();
        let replies = commit_group(&conn, &mut group);
        // Before anyone is answered, so a caller that wrote sees its commit
        // counted.
        stats
            .commit_seconds
            .observe(started.elapsed().as_secs_f64());
        stats.batch_sizes.observe(n as f64);
        after_commit();
        stats.commits.fetch_add(1, Ordering::Relaxed);
        stats.jobs.fetch_add(n, Ordering::Relaxed);
        for (reply, outcome) in replies {
            reply(outcome);
        }
    }
}

/// Runs a group in one transaction. Answers are handed back only after the
/// commit, so nobody is told "done" for data that is not yet durable.
fn commit_group(conn: &Connection, group: &mut Vec<Job>) -> Vec<(Reply, Result<(), String>)> {
    if let Err(e) = conn.execute_batch("BEGIN IMMEDIATE") {
        tracing::error!(error = %e, "writer could not begin a transaction");
        let msg = e.to_string();
        return group
            .drain(..)
            .map(|job| (job(None), Err(msg.clone())))
            .collect();
    }
    let replies: Vec<Reply> = group.drain(..).map(|job| job(Some(conn))).collect();
    let outcome = match conn.execute_batch("COMMIT") {
        Ok(()) => Ok(()),
        Err(e) => {
            tracing::error!(error = %e, "group commit failed; rolling back");
            let _ = conn.execute_batch("ROLLBACK");
            Err(e.to_string())
        }
    };
    replies.into_iter().map(|r| (r, outcome.clone())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer() -> Writer {
        let conn = Connection::open_in_memory().expect("memory db");
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
                    .write(move |c| {
                        c.execute("INSERT INTO t (n) VALUES (?1)", [n])?;
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
        let stored: Vec<i64> = w
            .write(|c| {
                let mut s = c.prepare("SELECT n FROM t ORDER BY n")?;
                let rows = s
                    .query_map([], |r| r.get(0))?
                    .collect::<rusqlite::Result<Vec<i64>>>()?;
                Ok(rows)
            })
            .await
            .expect("read back");
        assert_eq!(stored, ok);
        let commits = w.stats().commits.load(Ordering::Relaxed);
        let jobs = w.stats().jobs.load(Ordering::Relaxed);
        assert_eq!(jobs, 201);
        assert!(commits <= jobs);
    }

    #[tokio::test]
    async fn a_storage_error_is_answered_not_panicked() {
        let w = writer();
        let r = w
            .write(|c| Ok(c.execute("INSERT INTO missing (x) VALUES (1)", [])?))
            .await;
        assert!(matches!(r, Err(WmsError::Storage(_))));
        let r = w
            .write(|c| Ok(c.execute("INSERT INTO t (n) VALUES (1)", [])?))
            .await;
        assert_eq!(r.ok(), Some(1));
    }
}
