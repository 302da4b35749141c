//! The one writer. Every write of the engine runs here, on a dedicated
//! thread that owns the only writing connection. Jobs queued while a commit
//! is on its way are committed together (group commit): one fsync for many
//! writes, so throughput grows with load while every answer still waits for
//! its own data to be on disk (`synchronous=FULL`).
//!
//! Each job runs inside a savepoint, so a job that fails leaves nothing
//! behind and does not disturb the others of its group.

use crate::error::{Result, WmsError};
use depot_protocol::Timestamp;
use depot_sql::{Db, params};
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::{mpsc, oneshot, watch};

/// How many jobs one transaction takes at most: bounds the latency a job
/// can add to the others of its group.
const MAX_GROUP: usize = 256;
/// Jobs that may wait before callers are slowed down (backpressure).
const QUEUE: usize = 4096;

type Reply = Box<dyn FnOnce(Result<(), Failed>) + Send>;
/// A job runs against the open transaction, or, given `None` because no
/// transaction could be opened, answers the failure without running. It
/// hands back its reply and whether it failed for a full disk.
type Job = Box<dyn FnOnce(Option<&Db>) -> (Reply, bool) + Send>;

/// What the writer thread is sent: a job, or the word to finish what is
/// queued and close its connection (told how that went).
enum Msg {
    Job(Job),
    Close(oneshot::Sender<Result<()>>),
}

/// A job's reply with how its transaction ended.
type Answer = (Reply, Result<(), Failed>);

/// Why a group's transaction did not commit, told to each of its jobs.
#[derive(Debug, Clone)]
struct Failed {
    message: String,
    full: bool,
}

impl Failed {
    fn new(e: &depot_sql::Error) -> Self {
        Self {
            message: e.to_string(),
            full: e.is_disk_full(),
        }
    }

    fn answer(&self) -> WmsError {
        if self.full {
            WmsError::Full
        } else {
            WmsError::Internal(format!("commit failed: {}", self.message))
        }
    }
}

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
    /// Writes refused because the disk was full.
    pub refused_full: AtomicU64,
    /// Since when writes are refused for a full disk: set by the first
    /// refusal, cleared by the first group that writes without one.
    full_since: Mutex<Option<Timestamp>>,
}

impl WriterStats {
    /// Since when writes are refused for a full disk, if they are.
    pub fn full_since(&self) -> Option<Timestamp> {
        self.full_since.lock().map(|f| *f).unwrap_or(None)
    }

    fn group_done(&self, refused_full: u64, wrote: bool) {
        if refused_full > 0 {
            self.refused_full.fetch_add(refused_full, Ordering::Relaxed);
        }
        if refused_full == 0 && !wrote {
            return;
        }
        if let Ok(mut since) = self.full_since.lock() {
            match (refused_full, *since) {
                (0, Some(_)) => {
                    *since = None;
                    tracing::info!("the disk has room again: writes are accepted");
                }
                (n, None) if n > 0 => {
                    *since = Some(depot_protocol::now());
                    tracing::error!("the disk is full: writes are refused until space is freed");
                }
                _ => {}
            }
        }
    }
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
            refused_full: AtomicU64::default(),
            full_since: Mutex::new(None),
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
    tx: mpsc::Sender<Msg>,
    stats: Arc<WriterStats>,
    /// One per [`Watched`] table, bumped after each commit (or rollback)
    /// that wrote to it.
    watches: Arc<[watch::Sender<u64>; 4]>,
}

impl Writer {
    /// Starts the writer thread on `conn`. The thread ends when every
    /// `Writer` handle is dropped or [`Writer::close`] is called, after
    /// finishing what was queued.
    pub fn start(conn: Db) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel(QUEUE);
        let stats = Arc::new(WriterStats::default());
        let watches = Arc::new(WATCHED.map(|_| watch::Sender::new(0)));
        conn.track_writes();
        if let Some(sqlite) = conn.as_sqlite() {
            // Only a group's own COMMIT commits. Any other commit is a
            // statement of a job running in autocommit after SQLite rolled
            // the group's transaction back under it, an error the job
            // swallowed: it would be kept while its job is answered as
            // failed. Returning true turns that commit into a rollback, and
            // the statement fails.
            sqlite.commit_hook(Some(|| !COMMITTING.get()));
        }
        let thread_stats = stats.clone();
        let bump = watches.clone();
        std::thread::Builder::new()
            .name("depot-writer".into())
            .spawn(move || {
                run(conn, rx, &thread_stats, |conn| {
                    for table in conn.take_written() {
                        if let Some(i) = WATCHED.iter().position(|t| *t == table) {
                            bump[i].send_modify(|n| *n += 1);
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

    /// Follows the head of the event log `url` holds, so that events
    /// another instance commits wake what waits here (see `follower.rs`).
    #[cfg(feature = "postgres")]
    pub(crate) fn follow_events(&self, url: String, head: i64) {
        crate::follower::start(
            url,
            head,
            Arc::downgrade(&self.watches),
            Watched::Events as usize,
        );
    }

    /// Changes after every commit that wrote to the table.
    pub fn watch(&self, table: Watched) -> watch::Receiver<u64> {
        self.watches[table as usize].subscribe()
    }

    /// Runs `f` in the writer's transaction and answers once it is committed.
    pub async fn write<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Db) -> Result<T> + Send + 'static,
    {
        let (otx, orx) = oneshot::channel();
        let job: Job = Box::new(move |conn| {
            let outcome = match conn {
                Some(conn) => savepoint(conn, f),
                None => Err(WmsError::Internal(
                    "no write transaction could be opened".into(),
                )),
            };
            let full = matches!(outcome, Err(WmsError::Full));
            let reply: Reply = Box::new(move |commit| {
                let answer = match commit {
                    Ok(()) => outcome,
                    Err(e) => Err(e.answer()),
                };
                let _ = otx.send(answer);
            });
            (reply, full)
        });
        self.tx
            .send(Msg::Job(job))
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
        let _ = self.tx.send(Msg::Job(job)).await;
    }

    /// Commits what is queued, refuses what comes after, and closes the
    /// connection. When it is the database's last, SQLite checkpoints the
    /// write-ahead log into the database and removes it: the clean stop a
    /// restart, a backup or a copy of the data directory expects. Closing a
    /// writer already closed is not an error.
    pub async fn close(&self) -> Result<()> {
        let (done, closed) = oneshot::channel();
        if self.tx.send(Msg::Close(done)).await.is_err() {
            return Ok(());
        }
        // The thread is gone without answering only if an earlier close
        // took it down.
        closed.await.unwrap_or(Ok(()))
    }
}

/// Runs `f` in a savepoint (nested in the job's own, when called from a
/// job): an error undoes what `f` wrote and nothing else. The statements are
/// prepared once and cached: parsing them for every job cost more than some
/// jobs themselves.
///
/// Some errors (a full disk, an I/O error) make SQLite roll back the whole
/// transaction, the group's other jobs included, not just the statement.
/// What runs after that must not go on in autocommit, each statement
/// committed on its own: a new transaction is opened at once and the
/// writer rolls it back (see [`lost_transaction`]).
pub fn savepoint<T>(conn: &Db, f: impl FnOnce(&Db) -> Result<T>) -> Result<T> {
    conn.execute("SAVEPOINT part", params![])?;
    let result = f(conn);
    if is_autocommit(conn) {
        let failed = match &result {
            Err(e) => Failed {
                message: e.to_string(),
                full: matches!(e, WmsError::Full),
            },
            Ok(_) => Failed {
                message: "SQLite rolled the transaction back under a write".into(),
                full: false,
            },
        };
        LOST.with(|lost| {
            lost.borrow_mut().get_or_insert(failed);
        });
        conn.begin_write()?;
        return Err(result.err().unwrap_or(WmsError::Internal(
            "SQLite rolled the transaction back under a write".into(),
        )));
    }
    if result.is_err() {
        conn.execute("ROLLBACK TO part", params![])?;
    }
    conn.execute("RELEASE part", params![])?;
    result
}

thread_local! {
    /// Set on the writer's thread when SQLite rolled back the open
    /// transaction under a job: why.
    static LOST: RefCell<Option<Failed>> = const { RefCell::new(None) };
    /// Set on the writer's thread while it commits a group: the one commit
    /// its connection allows.
    static COMMITTING: Cell<bool> = const { Cell::new(false) };
}

/// Whether the transaction the last job ran in is gone (SQLite rolled it
/// back), and why. `full`: the job itself failed for a full disk.
fn lost_transaction(conn: &Db, full: bool) -> Option<Failed> {
    let lost = LOST.with(|lost| lost.borrow_mut().take());
    if lost.is_none() && !is_autocommit(conn) {
        return None;
    }
    Some(lost.unwrap_or(Failed {
        message: "SQLite rolled the transaction back under a write".into(),
        full,
    }))
}

/// Whether no transaction is open: SQLite rolled the job's back under it.
fn is_autocommit(conn: &Db) -> bool {
    conn.as_sqlite()
        .is_some_and(rusqlite::Connection::is_autocommit)
}

/// `after_commit` runs once a group's transaction has ended and before any
/// of its callers is answered.
fn run(conn: Db, mut rx: mpsc::Receiver<Msg>, stats: &WriterStats, after_commit: impl Fn(&Db)) {
    let mut group: Vec<Job> = Vec::with_capacity(MAX_GROUP);
    let mut closing = Vec::new();
    let mut take = |msg, group: &mut Vec<Job>, rx: &mut mpsc::Receiver<Msg>| match msg {
        Msg::Job(job) => group.push(job),
        Msg::Close(done) => {
            // What is already queued is still taken; nothing more is.
            rx.close();
            closing.push(done);
        }
    };
    while let Some(first) = rx.blocking_recv() {
        take(first, &mut group, &mut rx);
        while group.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(msg) => take(msg, &mut group, &mut rx),
                Err(_) => break,
            }
        }
        if group.is_empty() {
            continue;
        }
        let n = group.len() as u64;
        let started = Instant::now();
        let changes = conn.total_changes();
        let (replies, refused_full) = commit_group(&conn, &mut group);
        // Before anyone is answered, so a caller that wrote sees its commit
        // counted.
        stats
            .commit_seconds
            .observe(started.elapsed().as_secs_f64());
        stats.batch_sizes.observe(n as f64);
        stats.group_done(refused_full, conn.total_changes() != changes);
        after_commit(&conn);
        stats.commits.fetch_add(1, Ordering::Relaxed);
        stats.jobs.fetch_add(n, Ordering::Relaxed);
        for (reply, outcome) in replies {
            reply(outcome);
        }
    }
    let closed = conn.close().map_err(|e| {
        tracing::error!(error = %e, "the writer's connection did not close cleanly");
        format!("the writer's connection did not close cleanly: {e}")
    });
    for done in closing {
        let _ = done.send(closed.clone().map_err(WmsError::Internal));
    }
}

/// Runs a group in one transaction. Answers are handed back only after the
/// commit, so nobody is told "done" for data that is not yet durable. Also
/// counts the jobs answered "the disk is full".
///
/// A transaction SQLite rolled back under a job takes the jobs that ran in
/// it down with it; those after it run in a new one.
fn commit_group(conn: &Db, group: &mut Vec<Job>) -> (Vec<Answer>, u64) {
    let mut answered = Vec::with_capacity(group.len());
    let mut refused_full = 0;
    let mut jobs = group.drain(..).peekable();
    while jobs.peek().is_some() {
        if let Err(e) = begin_group(conn) {
            tracing::error!(error = %e, "writer could not begin a transaction");
            let failed = Failed::new(&e);
            for job in jobs.by_ref() {
                refused_full += u64::from(failed.full);
                answered.push((job(None).0, Err(failed.clone())));
            }
            break;
        }
        let mut open = Vec::new();
        let mut full_jobs = 0;
        let mut lost = None;
        for job in jobs.by_ref() {
            let (reply, full) = job(Some(conn));
            full_jobs += u64::from(full);
            open.push(reply);
            lost = lost_transaction(conn, full);
            if lost.is_some() {
                break;
            }
        }
        let outcome = match lost {
            Some(failed) => {
                tracing::warn!(
                    error = failed.message,
                    jobs = open.len(),
                    "SQLite rolled back the transaction under a write: its jobs are refused"
                );
                if !is_autocommit(conn) {
                    let _ = conn.execute_batch("ROLLBACK");
                }
                Err(failed)
            }
            None => commit(conn),
        };
        refused_full += match &outcome {
            Ok(()) => full_jobs,
            Err(f) if f.full => open.len() as u64,
            Err(_) => 0,
        };
        answered.extend(open.into_iter().map(|r| (r, outcome.clone())));
    }
    (answered, refused_full)
}

/// The advisory lock a group's transaction holds on PostgreSQL until it
/// ends: one group at a time across every instance on the database, as
/// SQLite's write lock makes it on a file. What the engine keeps true by
/// writing alone (events numbered in commit order, ids one past the
/// largest, cursors read then written) then holds across instances.
const WRITE_LOCK: i64 = 0x6465_706f_745f_7772; // "depot_wr"

fn begin_group(conn: &Db) -> depot_sql::Result<()> {
    conn.begin_write()?;
    if let Err(e) = conn.lock_transaction(WRITE_LOCK) {
        let _ = conn.execute_batch("ROLLBACK");
        return Err(e);
    }
    Ok(())
}

fn commit(conn: &Db) -> Result<(), Failed> {
    COMMITTING.set(true);
    let committed = conn.execute_batch("COMMIT");
    COMMITTING.set(false);
    committed.map_err(|e| {
        let failed = Failed::new(&e);
        if failed.full {
            tracing::warn!(error = %e, "group commit refused: the disk is full; rolling back");
        } else {
            tracing::error!(error = %e, "group commit failed; rolling back");
        }
        let _ = conn.execute_batch("ROLLBACK");
        failed
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
                    .write(move |c| {
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
            .write(|c| Ok(c.execute("INSERT INTO t (n) VALUES (1)", params![])?))
            .await;
        assert!(kept.is_ok());
        let swallowed = w
            .write(|c| {
                // What SQLite does on a full disk or an I/O error.
                c.execute_batch("ROLLBACK")?;
                let autocommitted = c.execute("INSERT INTO t (n) VALUES (2)", params![]);
                assert!(autocommitted.is_err(), "committed in autocommit");
                Ok(())
            })
            .await;
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
        w.write(|c| {
            let s = "SELECT n FROM t ORDER BY n";
            let rows = c.query_map(s, params![], |r| r.get(0))?;
            Ok(rows)
        })
        .await
        .expect("read back")
    }

    fn spawn_insert(w: &Writer, n: i64, pad: usize) -> tokio::task::JoinHandle<Result<i64>> {
        let w = w.clone();
        tokio::spawn(async move { w.write(insert(n, pad)).await })
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
                .write(move |_| {
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
        assert_eq!(w.write(insert(4, 10)).await.ok(), Some(4));
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
            tasks.spawn(async move { w.write(insert(n, pad)).await });
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
        assert!(w.stats().full_since().is_some());

        // Room again: the next write goes through and clears the state.
        w.write(|c| {
            c.query_row("PRAGMA max_page_count = 100000", params![], |_| Ok(()))?;
            Ok(())
        })
        .await
        .expect("room");
        assert_eq!(w.write(insert(1000, 64 * 1024)).await.ok(), Some(1000));
        assert_eq!(w.stats().full_since(), None);
    }

    #[tokio::test]
    async fn a_storage_error_is_answered_not_panicked() {
        let w = writer();
        let r = w
            .write(|c| Ok(c.execute("INSERT INTO missing (x) VALUES (1)", params![])?))
            .await;
        assert!(matches!(r, Err(WmsError::Storage(_))));
        let r = w
            .write(|c| Ok(c.execute("INSERT INTO t (n) VALUES (1)", params![])?))
            .await;
        assert_eq!(r.ok(), Some(1));
    }
}
