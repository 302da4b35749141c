//! On PostgreSQL several instances write one event log, and each one's
//! writer only sees its own commits. What waits for new events (long
//! polls, the live feed, the webhook dispatcher) must wake whichever
//! instance wrote them: a thread per instance follows the log's head on a
//! connection of its own and wakes the waiters when it moves. A read of
//! one index's end, four times a second; no `NOTIFY` per write.

use crate::store;
use depot_sql::Db;
use std::sync::Weak;
use std::time::Duration;
use tokio::sync::watch;

/// How often the head is read: the longest another instance's event
/// waits before a waiter here learns of it.
pub const EVERY: Duration = Duration::from_millis(250);

/// Follows the head of the log `url` holds, bumping `events` when it
/// moves past `head` (read as the instance opened, so an event committed
/// while this thread connects still wakes), until the writer that owns
/// `events` is gone.
pub fn start(url: String, head: i64, events: Weak<[watch::Sender<u64>; 4]>, index: usize) {
    let spawned = std::thread::Builder::new()
        .name("depot-head".into())
        .spawn(move || {
            let mut db: Option<Db> = None;
            let mut seen = head;
            while let Some(watches) = events.upgrade() {
                if db.is_none() {
                    db = Db::connect_postgres(&url)
                        .inspect_err(|e| tracing::warn!(error = %e, "cannot follow the event log"))
                        .ok();
                }
                if let Some(conn) = &db {
                    match store::events::head(conn) {
                        Ok(head) => {
                            if seen != head {
                                watches[index].send_modify(|n| *n += 1);
                            }
                            seen = head;
                        }
                        Err(e) => tracing::warn!(error = %e, "cannot read the event log's head"),
                    }
                }
                drop(watches);
                std::thread::sleep(EVERY);
            }
        });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "cannot start following the event log");
    }
}
