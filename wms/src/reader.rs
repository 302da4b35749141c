//! Read connections: a fixed pool, used from blocking tasks so queries never
//! stall the async runtime. Readers see the last commit (WAL) and never wait
//! for the writer. At most `size` reads run at once; the rest queue for a
//! connection instead of opening new ones, so prepared statements stay
//! cached and the CPU is not oversubscribed.

use crate::error::{Result, WmsError};
use crate::store;
use depot_sql::Db;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::Semaphore;

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

#[derive(Clone)]
pub struct Reader {
    source: Arc<Source>,
    /// Large list counts, shared by the pool's connections.
    counts: Arc<depot_sql::CountMemo>,
    idle: Arc<Mutex<Vec<Db>>>,
    permits: Arc<Semaphore>,
    size: u32,
}

impl Reader {
    pub fn new(source: Source, size: usize) -> Self {
        Self {
            source: Arc::new(source),
            counts: Arc::new(depot_sql::CountMemo::new(store::COUNTS_FRESH_FOR)),
            idle: Arc::new(Mutex::new(Vec::with_capacity(size))),
            permits: Arc::new(Semaphore::new(size.max(1))),
            size: u32::try_from(size.max(1)).unwrap_or(u32::MAX),
        }
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
    }
}
