//! The writer's thread: it takes the jobs queued, runs them in one
//! transaction (each in a savepoint of its own), commits, and only then
//! answers them.

use super::{Answer, Failed, Job, Lane, MAX_GROUP, MAX_GROUP_POSTGRES, Msg, WriterStats};
use crate::error::{Result, WmsError};
use depot_sql::{Db, params};
use std::cell::{Cell, RefCell};
use std::sync::atomic::Ordering;
use std::time::Instant;
use tokio::sync::mpsc;

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
    within(conn, false, f)
}

/// A job's own savepoint, as [`savepoint`]. On PostgreSQL, where each
/// statement is a round trip to the server, the savepoint of the job after
/// it in the group (if one follows) is opened in the same round trip as
/// this one is released, and that job does not open its own: one round
/// trip a job less.
///
/// A job alone in its group runs in the group's transaction with no
/// savepoint (see [`alone`]).
pub(super) fn job<T>(conn: &Db, f: impl FnOnce(&Db) -> Result<T>) -> Result<T> {
    if ALONE.get() {
        return alone(conn, f);
    }
    if !OPENED.replace(false) {
        conn.execute("SAVEPOINT part", params![])?;
    }
    let next = FOLLOWS.get() && conn.dialect() == depot_sql::Dialect::Postgres;
    within(conn, next, f)
}

/// A job with its group's transaction to itself: what it wrote is undone
/// by rolling that back when it fails ([`UNDO`]), so it needs no savepoint.
/// A savepoint has SQLite copy every page the job changes into the
/// statement journal first, and costs PostgreSQL a subtransaction and the
/// round trip that releases it: a group of one is what a quiet hour is
/// made of. On PostgreSQL the job's writes sent without waiting go with
/// the `COMMIT`: one of them failing fails the commit, and the job is
/// answered as an internal error naming the write's. With a savepoint it
/// was the write's own storage error: a 500 either way, since such an
/// error names no constraint a caller could act on.
fn alone<T>(conn: &Db, f: impl FnOnce(&Db) -> Result<T>) -> Result<T> {
    let result = run_caught(conn, f);
    if is_autocommit(conn) {
        return Err(lost_under(result));
    }
    if result.is_err() {
        UNDO.set(true);
    }
    result
}

/// Why a job failed whose transaction SQLite rolled back under it (a
/// full disk, an I/O error): the transaction is lost to its group
/// ([`lose`]), and the job fails with its own error, or this one.
const ROLLED_BACK: &str = "SQLite rolled the transaction back under a write";

/// The answer of a job SQLite rolled the transaction back under, once
/// its group is told the transaction is lost.
fn lost_under<T>(result: Result<T>) -> WmsError {
    lose(match &result {
        Err(e) => Failed {
            message: e.to_string(),
            full: matches!(e, WmsError::Full),
        },
        Ok(_) => Failed {
            message: ROLLED_BACK.into(),
            full: false,
        },
    });
    result
        .err()
        .unwrap_or_else(|| WmsError::Internal(ROLLED_BACK.into()))
}

/// `f`, with a panic (a bug) turned into its error.
fn run_caught<T>(conn: &Db, f: impl FnOnce(&Db) -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(conn))).unwrap_or_else(|panic| {
        let what = crate::error::panic_text(panic.as_ref());
        tracing::error!(panic = what, "a write panicked: it is undone and refused");
        Err(WmsError::Internal(format!("a write panicked: {what}")))
    })
}

/// `f` in the savepoint `part` just opened; released after it, with the
/// next job's opened in the same round trip when `next`.
///
/// A job that panics (a bug) is a job that failed: what it wrote is undone
/// and it is answered as an internal error, while the rest of its group
/// commits and the writer goes on. Unwound, the panic would end the
/// writer's thread, and every write after it would fail until a restart.
fn within<T>(conn: &Db, next: bool, f: impl FnOnce(&Db) -> Result<T>) -> Result<T> {
    let result = run_caught(conn, f);
    if is_autocommit(conn) {
        let failed = lost_under(result);
        conn.begin_write()?;
        return Err(failed);
    }
    if result.is_err() {
        undo(conn)?;
    }
    let released = if next {
        conn.execute_batch("RELEASE part; SAVEPOINT part")
    } else {
        conn.execute("RELEASE part", params![]).map(drop)
    };
    match released {
        Ok(()) => {
            OPENED.set(next);
            result
        }
        Err(refused) => {
            // On PostgreSQL a statement that failed aborts the transaction,
            // and everything after it is refused until it is rolled back to
            // a savepoint: `f` went on after an error it did not pass on.
            // Rolled back to its own savepoint, it fails alone and the rest
            // of the group goes on. (A refused `RELEASE` skips the
            // `SAVEPOINT` sent with it.)
            undo(conn)?;
            conn.execute("RELEASE part", params![])
                .map_err(|e| lose_on(&e))?;
            Err(match (result, refused) {
                (Err(e), _) => e,
                // A write `f` sent without waiting for its answer
                // (`Db::execute_later`) failed: that is `f`'s error.
                (Ok(_), refused @ depot_sql::Error::Earlier(_)) => WmsError::from(refused),
                (Ok(_), refused) => WmsError::Internal(format!(
                    "a statement failed and the write went on without it: {refused}"
                )),
            })
        }
    }
}

/// Rolls back to the savepoint `part`. Should that fail, what the job
/// wrote can no longer be told from the rest of the transaction: the
/// whole group is refused (see [`lost_transaction`]).
fn undo(conn: &Db) -> Result<()> {
    conn.execute("ROLLBACK TO part", params![])
        .map(drop)
        .map_err(|e| lose_on(&e))
}

fn lose_on(e: &depot_sql::Error) -> WmsError {
    lose(Failed::new(e));
    WmsError::Internal(format!("could not undo a failed write: {e}"))
}

fn lose(failed: Failed) {
    LOST.with(|lost| {
        lost.borrow_mut().get_or_insert(failed);
    });
}

thread_local! {
    /// Set on the writer's thread when the open transaction is lost to
    /// its group (SQLite rolled it back under a job, or a job's savepoint
    /// could not be undone): why.
    static LOST: RefCell<Option<Failed>> = const { RefCell::new(None) };
    /// Set on the writer's thread while it commits a group: the one commit
    /// its connection allows.
    pub(super) static COMMITTING: Cell<bool> = const { Cell::new(false) };
    /// Set by the group while it runs a job that another follows in the
    /// same transaction.
    static FOLLOWS: Cell<bool> = const { Cell::new(false) };
    /// Set when the job before (or the group's `BEGIN`) opened the next
    /// job's savepoint.
    static OPENED: Cell<bool> = const { Cell::new(false) };
    /// Set by the group while it runs its only job, in a transaction
    /// opened without a savepoint.
    static ALONE: Cell<bool> = const { Cell::new(false) };
    /// Set by that job when it failed: its transaction is rolled back, not
    /// committed.
    static UNDO: Cell<bool> = const { Cell::new(false) };
}

/// Whether the transaction the last job ran in is gone (SQLite rolled it
/// back), and why. `full`: the job itself failed for a full disk.
fn lost_transaction(conn: &Db, full: bool) -> Option<Failed> {
    let lost = LOST.with(|lost| lost.borrow_mut().take());
    if lost.is_none() && !is_autocommit(conn) {
        return None;
    }
    Some(lost.unwrap_or(Failed {
        message: ROLLED_BACK.into(),
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
pub(super) fn run(
    conn: Db,
    mut rx: mpsc::Receiver<Msg>,
    stats: &WriterStats,
    after_commit: impl Fn(&Db),
) {
    let max_group = match conn.dialect() {
        depot_sql::Dialect::Sqlite => MAX_GROUP,
        depot_sql::Dialect::Postgres => MAX_GROUP_POSTGRES,
    };
    let mut group: Vec<Job> = Vec::with_capacity(max_group);
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
        while group.len() < max_group {
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
        let round_trips = conn.round_trips();
        let (replies, refused_full) = commit_group(&conn, &mut group);
        stats.round_trips.fetch_add(
            conn.round_trips().wrapping_sub(round_trips),
            Ordering::Relaxed,
        );
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
    let locks = Locks::of(group.iter().map(|j| j.lane));
    let alone = group.len() == 1;
    let mut jobs = group.drain(..).peekable();
    while jobs.peek().is_some() {
        if let Err(e) = begin_group(conn, &locks, alone) {
            tracing::error!(error = %e, "writer could not begin a transaction");
            let failed = Failed::new(&e);
            for job in jobs.by_ref() {
                refused_full += u64::from(failed.full);
                answered.push(((job.run)(None).0, Err(failed.clone())));
            }
            break;
        }
        let mut open = Vec::new();
        let mut full_jobs = 0;
        let mut lost = None;
        ALONE.set(alone);
        while let Some(job) = jobs.next() {
            FOLLOWS.set(jobs.peek().is_some());
            let (reply, full) = (job.run)(Some(conn));
            full_jobs += u64::from(full);
            open.push(reply);
            lost = lost_transaction(conn, full);
            if lost.is_some() {
                break;
            }
        }
        FOLLOWS.set(false);
        OPENED.set(false);
        ALONE.set(false);
        let undo = UNDO.replace(false);
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
            // The job answers its own error once its writes are undone.
            None if undo => conn.execute_batch("ROLLBACK").map_err(|e| {
                tracing::error!(error = %e, "could not roll back a failed write");
                Failed::new(&e)
            }),
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

/// The advisory lock every group's transaction holds on PostgreSQL until
/// it ends: exclusively when a job of the group may write anything
/// ([`Lane::All`]), one group at a time across every instance on the
/// database, as SQLite's write lock makes it on a file; shared otherwise,
/// beside the lock of each business the group writes.
pub(super) const WRITE_LOCK: i64 = 0x6465_706f_745f_7772; // "depot_wr"
/// Where the locks of businesses start: business ids stay below 2^53, so
/// theirs never reach [`WRITE_LOCK`] or the migrations' lock.
pub(super) const BUSINESS_LOCKS: i64 = 1 << 61;
/// Where the locks of [`Lane::Own`] names start, below businesses'.
pub(super) const OWN_LOCKS: i64 = 1 << 60;
const _: () = assert!(BUSINESS_LOCKS + depot_protocol::MAX_ID < WRITE_LOCK);
const _: () = assert!(BUSINESS_LOCKS + depot_protocol::MAX_ID < depot_sql::migrate::LOCK);
const _: () = assert!(OWN_LOCKS + (u32::MAX as i64) < BUSINESS_LOCKS);

/// The locks a group takes, sorted: two groups on two instances that
/// share businesses wait for each other in one order, never in a circle.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Locks {
    pub(super) shared: Vec<i64>,
    pub(super) exclusive: Vec<i64>,
}

impl Locks {
    pub(super) fn of(lanes: impl Iterator<Item = Lane>) -> Self {
        let mut keys = Vec::new();
        for lane in lanes {
            match lane {
                Lane::All => {
                    return Self {
                        shared: Vec::new(),
                        exclusive: vec![WRITE_LOCK],
                    };
                }
                Lane::Business(b) => keys.push(BUSINESS_LOCKS + b.0),
                Lane::Own(name) => keys.push(OWN_LOCKS + own_key(name)),
            }
        }
        keys.sort_unstable();
        keys.dedup();
        Self {
            shared: vec![WRITE_LOCK],
            exclusive: keys,
        }
    }
}

/// A name's lock, the same in every instance and every release: 32 bits
/// of FNV-1a, so names stay below businesses' locks.
pub(super) fn own_key(name: &str) -> i64 {
    let hash = name.bytes().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    i64::from(hash)
}

/// Begins a group's transaction with its locks and, unless its one job
/// is `alone`, the first job's savepoint open (on PostgreSQL in one round
/// trip).
fn begin_group(conn: &Db, locks: &Locks, alone: bool) -> depot_sql::Result<()> {
    let savepoint = (!alone).then_some("part");
    if let Err(e) = conn.begin_locked(&locks.shared, &locks.exclusive, savepoint) {
        let _ = conn.execute_batch("ROLLBACK");
        return Err(e);
    }
    OPENED.set(!alone);
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
