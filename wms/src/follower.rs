//! On PostgreSQL several writers fill one event log at once: the groups of
//! other instances, and on each instance groups of different businesses
//! (see `writer::Lane`). A sequence numbers events as they are written, not
//! as they commit, so an event may become visible after a later one: a
//! reader that moved its cursor past the later one would skip it for good.
//!
//! A thread per instance follows the log on a connection of its own and
//! keeps the **safe head**: a position below which every transaction that
//! could still add an event has ended. Readers of the whole log (the live
//! feed, the sync service's scan) read only up to it; a business's own
//! readers need not, since one business's writes take turns. When the safe
//! head moves, the thread wakes what waits for events, whichever instance
//! wrote them. A read of one index's end and the snapshot, on each local
//! commit and four times a second; no `NOTIFY` per write.
//!
//! How: a snapshot lists the transactions in progress, all with ids below
//! its `xmax`. A head `h` read with a snapshot is safe once the oldest
//! transaction still running (`xmin`) is at or past that `xmax`: every
//! event numbered up to `h` was then either visible already or written by
//! one of those transactions, which have all ended. A writer's transaction
//! takes its id before it takes a number (`Db::lock_transaction`), so one
//! that numbers an event after the snapshot was taken numbers it above `h`.
//! A long transaction anywhere on the server (another database's included)
//! holds the safe head back while it runs: readers of the whole log wait,
//! nothing is skipped.

use crate::store;
use depot_sql::Db;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::watch;

/// How often the head is read without a local commit: the longest another
/// instance's event waits before a waiter here learns of it.
pub const EVERY: Duration = Duration::from_millis(250);
/// How soon it is read again while a head waits for transactions to end:
/// they are a group's, a few milliseconds long.
const SOON: Duration = Duration::from_millis(5);
/// Heads waiting for their snapshot's transactions to end. Past it, newer
/// heads wait to be read again.
const PENDING: usize = 4096;

/// The safe head, and how many of this instance's commits that wrote
/// events it covers: a reader here that counted `n` such commits before
/// reading waits for `covers >= n`, and so sees its own writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Published {
    pub head: i64,
    pub covers: u64,
}

/// Heads read and not yet safe, oldest first, and the newest safe one.
#[derive(Debug, Default)]
pub struct SafeHead {
    /// (head, the snapshot's xmax, local commits counted before the read)
    pending: VecDeque<(i64, u64, u64)>,
    safe: Option<Published>,
}

impl SafeHead {
    /// Takes a read of the log's `head` with its snapshot's `xmin` and
    /// `xmax`, made after this instance had counted `covers` commits that
    /// wrote events; answers what to publish when it moved.
    pub fn read(&mut self, head: i64, xmin: u64, xmax: u64, covers: u64) -> Option<Published> {
        let full = self.pending.len() >= PENDING;
        match self.pending.back_mut() {
            // The same head, read later: it covers what was counted since.
            Some(back) if back.0 == head => back.2 = back.2.max(covers),
            _ if !full => self.pending.push_back((head, xmax, covers)),
            _ => {}
        }
        let before = self.safe;
        while let Some(&(head, x, covers)) = self.pending.front() {
            if x > xmin {
                break;
            }
            self.safe = Some(Published { head, covers });
            self.pending.pop_front();
        }
        (self.safe != before).then_some(self.safe).flatten()
    }

    /// Whether a head read waits for transactions to end.
    pub fn waiting(&self) -> bool {
        !self.pending.is_empty()
    }
}

/// This instance's commits that wrote events: counted, and told as they
/// happen (one word waiting at most).
pub struct Commits {
    pub counted: Arc<AtomicU64>,
    pub told: Receiver<()>,
}

/// Follows the log `url` holds, publishing its safe head on `safe` and
/// bumping `events` when it moves, until the writer that owns `events` is
/// gone. Reads again at once when this instance commits events.
pub fn start(
    url: String,
    safe: watch::Sender<Option<Published>>,
    events: Weak<[watch::Sender<u64>; 4]>,
    index: usize,
    commits: Commits,
) {
    let spawned = std::thread::Builder::new()
        .name("depot-head".into())
        .spawn(move || {
            let mut db: Option<Db> = None;
            let mut head = SafeHead::default();
            while let Some(watches) = events.upgrade() {
                if db.is_none() {
                    db = Db::connect_postgres(&url)
                        .inspect_err(|e| tracing::warn!(error = %e, "cannot follow the event log"))
                        .ok();
                }
                if let Some(conn) = &db {
                    // Counted before the read: those commits are in it.
                    let covers = commits.counted.load(Ordering::Acquire);
                    match store::events::head_in_snapshot(conn) {
                        Ok((h, xmin, xmax)) => {
                            if let Some(moved) = head.read(h, xmin, xmax, covers) {
                                safe.send_replace(Some(moved));
                                watches[index].send_modify(|n| *n += 1);
                            }
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "cannot read the event log's head");
                            db = None;
                        }
                    }
                }
                drop(watches);
                let wait = if head.waiting() { SOON } else { EVERY };
                if let Err(RecvTimeoutError::Disconnected) = commits.told.recv_timeout(wait) {
                    // The writer is gone: so is what this thread serves.
                    break;
                }
            }
        });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "cannot start following the event log");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_is_safe_once_its_snapshots_transactions_have_ended() {
        let mut h = SafeHead::default();
        let at = |head, covers| Some(Published { head, covers });
        // Nothing running: safe at once.
        assert_eq!(h.read(10, 100, 100, 1), at(10, 1));
        // Transactions 100..105 running: 20 waits.
        assert_eq!(h.read(20, 100, 105, 2), None);
        assert!(h.waiting());
        assert_eq!(h.read(30, 101, 107, 3), None, "100 still runs");
        // 100..104 ended, 105 and 106 began after the first read.
        assert_eq!(h.read(30, 105, 108, 3), at(20, 2));
        assert_eq!(h.read(31, 108, 108, 4), at(31, 4));
        assert!(!h.waiting());
        assert_eq!(h.read(31, 108, 108, 4), None, "not moved");
        // The same head read after a commit that wrote nothing new (a
        // rollback) covers it.
        assert_eq!(h.read(31, 110, 111, 5), None);
        assert_eq!(h.read(31, 111, 111, 5), at(31, 5));
    }

    #[test]
    fn the_safe_head_never_goes_back() {
        let mut h = SafeHead::default();
        let mut last = 0;
        for (i, (head, xmin, xmax)) in [(5, 1, 3), (9, 2, 6), (9, 3, 6), (12, 6, 9), (15, 9, 9)]
            .into_iter()
            .enumerate()
        {
            if let Some(s) = h.read(head, xmin, xmax, i as u64) {
                assert!(s.head >= last, "read {i}: {} after {last}", s.head);
                last = s.head;
            }
        }
        assert_eq!(last, 15);
    }
}
