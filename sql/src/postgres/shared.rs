//! Reads that many tasks share a few connections for, run as async calls
//! on the caller's own runtime: [`SharedReads`].
//!
//! A [`super::PgConn`] blocks its caller for each call, so the engine runs
//! it on a pool thread: each read is then handed to that thread and its
//! answer handed back (two wake-ups of a sleeping thread), and the
//! connection's own runtime waits for the server in an `epoll_wait` of its
//! own. For a short read that is most of its cost. Here the connection's
//! bytes move on the caller's runtime instead, which waits for the server
//! with everything else it waits for; and tokio-postgres sends the calls
//! of all the tasks sharing a connection together, and reads their
//! answers together.

use super::link;
use super::values::{Param, refs};
use crate::db::Row;
use crate::error::{Error, Result};
use crate::value::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Prepared statements a connection keeps before it starts again.
const STATEMENT_CACHE: usize = 1024;

/// A few connections, shared by the tasks reading through them, each
/// connected on first use and again once lost.
pub struct SharedReads {
    config: tokio_postgres::Config,
    slots: Box<[Slot]>,
    /// Where the next read starts looking for the least busy slot, modulo
    /// their number: slots equally busy take turns.
    next: AtomicUsize,
}

impl std::fmt::Debug for SharedReads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedReads({} connections)", self.slots.len())
    }
}

#[derive(Default)]
struct Slot {
    live: Mutex<Option<Arc<Connection>>>,
    /// Reads sent on it and not yet answered. A connection answers in
    /// order, so a read behind a slow one (a count of a large result, a
    /// deep offset) waits for it: a read takes the slot with the fewest.
    in_flight: AtomicUsize,
    /// Held while connecting, so that the tasks finding the slot empty
    /// at once open one connection, not one each.
    connecting: tokio::sync::Mutex<()>,
}

struct Connection {
    client: tokio_postgres::Client,
    statements: Mutex<HashMap<Box<str>, tokio_postgres::Statement>>,
}

impl Slot {
    fn live(&self) -> Option<Arc<Connection>> {
        let live = self.live.lock().ok()?;
        live.as_ref()
            .filter(|c| !c.client.is_closed())
            .map(Arc::clone)
    }

    /// Lets `connection` go from the slot when `e` says it is gone, so
    /// that the next read connects again: its client may not know yet
    /// (its task ends a moment after the read's error is answered).
    fn noted(&self, connection: &Arc<Connection>, e: Error) -> Error {
        if !matches!(&e, Error::Postgres(pg) if super::gone(pg)) {
            return e;
        }
        if let Ok(mut live) = self.live.lock() {
            if live.as_ref().is_some_and(|c| Arc::ptr_eq(c, connection)) {
                live.take();
            }
        }
        e
    }
}

impl SharedReads {
    /// Up to `connections` connections to `url`, none opened yet.
    pub fn new(url: &str, connections: usize) -> Result<Self> {
        Ok(Self {
            config: url.parse()?,
            slots: (0..connections.max(1)).map(|_| Slot::default()).collect(),
            next: AtomicUsize::new(0),
        })
    }

    /// The least busy slot, counted busy by one more until the guard goes.
    fn least_busy(&self) -> Busy<'_> {
        let n = self.slots.len();
        let from = self.next.fetch_add(1, Ordering::Relaxed);
        let slot = (0..n)
            .map(|i| &self.slots[(from + i) % n])
            .min_by_key(|s| s.in_flight.load(Ordering::Relaxed))
            .unwrap_or(&self.slots[from % n]);
        slot.in_flight.fetch_add(1, Ordering::Relaxed);
        Busy(slot)
    }

    /// `slot`'s connection, opened first if it has none or lost it. A new
    /// connection's bytes move on a task of the caller's runtime, which
    /// must therefore keep running while the connection is used.
    async fn connection(&self, slot: &Slot) -> Result<Arc<Connection>> {
        if let Some(live) = slot.live() {
            return Ok(live);
        }
        let _one = slot.connecting.lock().await;
        if let Some(live) = slot.live() {
            return Ok(live);
        }
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| Error::Connect("shared reads need a tokio runtime".into()))?;
        let (client, moving) = link::open(&self.config).await?;
        runtime.spawn(async move {
            if let Err(e) = moving.await {
                tracing::warn!(error = %e, "a shared read connection to PostgreSQL ended");
            }
        });
        let fresh = Arc::new(Connection {
            client,
            statements: Mutex::new(HashMap::new()),
        });
        if let Ok(mut live) = slot.live.lock() {
            *live = Some(fresh.clone());
        }
        Ok(fresh)
    }

    /// Lets every connection go: each ends once the reads under way on it
    /// are answered (its client's last handle dropped, it says goodbye to
    /// the server). A read after this connects again.
    pub fn close(&self) {
        for slot in &self.slots {
            if let Ok(mut live) = slot.live.lock() {
                live.take();
            }
        }
    }

    /// Runs `sql` (parameters as SQLite numbers them, `?1`) with `params`
    /// and calls `f` on each row, in order, until the rows end or `f`
    /// fails.
    pub async fn query_each(
        &self,
        sql: &str,
        params: &[Value],
        mut f: impl FnMut(&Row<'_>) -> Result<()>,
    ) -> Result<()> {
        let busy = self.least_busy();
        let connection = self.connection(busy.0).await?;
        let values: Vec<Param<'_>> = params.iter().map(|v| Param(v.as_ref())).collect();
        let answered = async {
            let statement = connection.statement(sql).await?;
            Ok(connection.client.query(&statement, &refs(&values)).await?)
        };
        let rows = answered.await.map_err(|e| busy.0.noted(&connection, e))?;
        drop(busy);
        for row in &rows {
            f(&Row::postgres(row))?;
        }
        Ok(())
    }

    /// The first row, mapped by `f`; `None` when there is none.
    pub async fn query_opt<T>(
        &self,
        sql: &str,
        params: &[Value],
        f: impl FnOnce(&Row<'_>) -> Result<T>,
    ) -> Result<Option<T>> {
        let mut f = Some(f);
        let mut first = None;
        self.query_each(sql, params, |row| {
            if let Some(f) = f.take() {
                first = Some(f(row)?);
            }
            Ok(())
        })
        .await?;
        Ok(first)
    }
}

/// A slot counted busy with a read: by one less when dropped, answered or
/// not (a caller that gave up on its read).
struct Busy<'a>(&'a Slot);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Connection {
    /// `sql` as this connection prepared it: once, then from the cache.
    async fn statement(&self, sql: &str) -> Result<tokio_postgres::Statement> {
        if let Some(s) = self
            .statements
            .lock()
            .ok()
            .and_then(|s| s.get(sql).cloned())
        {
            return Ok(s);
        }
        let (text, _) = crate::placeholders::to_postgres(sql)?;
        let statement = self.client.prepare(&text).await?;
        if let Ok(mut cache) = self.statements.lock() {
            if cache.len() >= STATEMENT_CACHE {
                cache.clear();
            }
            cache.insert(sql.into(), statement.clone());
        }
        Ok(statement)
    }
}
