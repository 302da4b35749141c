//! The one writer. Every write of the engine runs here, on a dedicated
//! thread that owns the only writing connection. Jobs queued while a commit
//! is on its way are committed together (group commit): one fsync for many
//! writes, so throughput grows with load while every answer still waits for
//! its own data to be on disk (`synchronous=FULL`).
//!
//! Each job runs inside a savepoint, so a job that fails leaves nothing
//! behind and does not disturb the others of its group. A job alone in its
//! group (most of them, at a quiet hour) needs none: when it fails, the
//! group's transaction is rolled back instead. A job that panics fails as
//! one that returned an error.
//!
//! Here the handle callers hold (`Writer`) and what it sends the thread;
//! `group.rs` the thread's loop, a group's transaction and the savepoint
//! around each job; `stats.rs` the counters it keeps.

mod group;
mod stats;
#[cfg(test)]
mod tests;

pub use group::savepoint;
pub use stats::WriterStats;

use group::{COMMITTING, job, run};

use crate::error::{Result, WmsError};
use depot_protocol::BusinessId;
use depot_sql::Db;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use tokio::sync::{mpsc, oneshot, watch};

/// How many jobs one transaction takes at most: bounds the latency a job
/// can add to the others of its group.
const MAX_GROUP: usize = 256;
/// The same on PostgreSQL, lower: a job's savepoint that writes is a
/// subtransaction with an id of its own, and a transaction lists at most 64
/// of those where other sessions' snapshots find them cheaply. Past that,
/// every snapshot on the server takes the slow path (`pg_subtrans`) for as
/// long as the group runs. Well under, so savepoints inside jobs (one per
/// batch of an edge's burst) still fit.
const MAX_GROUP_POSTGRES: usize = 32;
/// Jobs that may wait before callers are slowed down (backpressure).
const QUEUE: usize = 4096;

type Reply = Box<dyn FnOnce(Result<(), Failed>) + Send>;
/// A job runs against the open transaction, or, given `None` because no
/// transaction could be opened, answers the failure without running. It
/// hands back its reply and whether it failed for a full disk.
type Run = Box<dyn FnOnce(Option<&Db>) -> (Reply, bool) + Send>;

/// A job and what it may write.
struct Job {
    lane: Lane,
    run: Run,
}

/// What a job may write, so that writers on several connections to one
/// PostgreSQL database (several instances of the cloud) take turns only
/// where they must. On SQLite one transaction writes the file at a time
/// anyway, and lanes change nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lane {
    /// Anything in the database: the job's transaction runs with no other
    /// writer's beside it. What the engine keeps true by writing alone
    /// (ids one past the largest, cursors read then written) holds.
    All,
    /// Only the rows of one business, and what no other job reads then
    /// writes (its own events, rows numbered by sequences, counters kept
    /// per business). Jobs of different businesses run side by side;
    /// those of one business one after the other, so its events are
    /// numbered in the order they commit.
    Business(BusinessId),
    /// Rows of the whole database that only jobs of this name read then
    /// write (a cursor, a queue), reading the event log only up to its safe
    /// head: one such job at a time, beside businesses' jobs.
    Own(&'static str),
}

/// A queued job's answer, once its group has committed (or failed).
#[must_use = "a queued job's answer says whether it was committed"]
pub struct Queued<T>(oneshot::Receiver<Result<T>>);

impl<T> Future for Queued<T> {
    type Output = Result<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T>> {
        Pin::new(&mut self.0).poll(cx).map(|answer| {
            answer.unwrap_or_else(|_| Err(WmsError::Internal("the writer dropped a job".into())))
        })
    }
}

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
    /// Commits (and rollbacks) that wrote events, counted after each ends:
    /// what a reader of the log here has a right to see.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    events_written: Arc<AtomicU64>,
    /// Told after each of those, for the follower of the log's safe head
    /// (PostgreSQL) to take when it starts.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    wrote_events: Arc<std::sync::Mutex<Option<std::sync::mpsc::Receiver<()>>>>,
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
        // One waiting word is enough: the follower reads the head once for
        // all the commits made while it was busy.
        let (wrote, wrote_events) = std::sync::mpsc::sync_channel(1);
        let events_written = Arc::new(AtomicU64::new(0));
        let written = events_written.clone();
        std::thread::Builder::new()
            .name("depot-writer".into())
            .spawn(move || {
                run(conn, rx, &thread_stats, |conn| {
                    for table in conn.take_written() {
                        if let Some(i) = WATCHED.iter().position(|t| *t == table) {
                            bump[i].send_modify(|n| *n += 1);
                            if i == Watched::Events as usize {
                                written.fetch_add(1, Ordering::Release);
                                let _ = wrote.try_send(());
                            }
                        }
                    }
                })
            })?;
        Ok(Self {
            tx,
            stats,
            watches,
            events_written,
            wrote_events: Arc::new(std::sync::Mutex::new(Some(wrote_events))),
        })
    }

    pub fn stats(&self) -> &WriterStats {
        &self.stats
    }

    /// Jobs queued and not yet taken into a group.
    pub fn queue_depth(&self) -> usize {
        self.tx.max_capacity() - self.tx.capacity()
    }

    /// Commits of this writer that wrote events so far (see
    /// `follower::Published::covers`).
    #[cfg(feature = "postgres")]
    pub(crate) fn events_written(&self) -> u64 {
        self.events_written.load(Ordering::Acquire)
    }

    /// Follows the event log `url` holds: its safe head, published on
    /// `safe`, and the events another instance commits wake what waits
    /// here (see `follower.rs`). Once per writer.
    #[cfg(feature = "postgres")]
    pub(crate) fn follow_events(
        &self,
        url: String,
        safe: watch::Sender<Option<crate::follower::Published>>,
    ) {
        let taken = self
            .wrote_events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(commits) = taken {
            crate::follower::start(
                url,
                safe,
                Arc::downgrade(&self.watches),
                Watched::Events as usize,
                crate::follower::Commits {
                    counted: self.events_written.clone(),
                    told: commits,
                },
            );
        }
    }

    /// Changes after every commit that wrote to the table.
    pub fn watch(&self, table: Watched) -> watch::Receiver<u64> {
        self.watches[table as usize].subscribe()
    }

    /// Runs `f` in the writer's transaction and answers once it is
    /// committed. `lane`: what `f` may write.
    pub async fn write<T, F>(&self, lane: Lane, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Db) -> Result<T> + Send + 'static,
    {
        self.queue(lane, f).await?.await
    }

    /// Queues `f` and answers once it is queued, with what answers once it
    /// is committed. Jobs one task queues one after another run in that
    /// order. Futures that each queue a job and are polled together (as
    /// `join_all` polls them) do not keep theirs: past tokio's cooperative
    /// budget some wait for the next turn while later ones go first.
    pub async fn queue<T, F>(&self, lane: Lane, f: F) -> Result<Queued<T>>
    where
        T: Send + 'static,
        F: FnOnce(&Db) -> Result<T> + Send + 'static,
    {
        let (otx, orx) = oneshot::channel();
        let run: Run = Box::new(move |conn| {
            let outcome = match conn {
                Some(conn) => job(conn, f),
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
            .send(Msg::Job(Job { lane, run }))
            .await
            .map_err(|_| WmsError::Internal("the writer has stopped".into()))?;
        Ok(Queued(orx))
    }

    /// Makes the writer thread hang for good, as one stuck on a lock or a
    /// dead disk would: the jobs queued behind it are never answered. Only
    /// for tests of what notices a hung writer (the watchdog, `/readyz`).
    #[doc(hidden)]
    pub async fn hang_for_tests(&self) {
        let run: Run = Box::new(|_| {
            loop {
                std::thread::park();
            }
        });
        let job = Job {
            lane: Lane::All,
            run,
        };
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
