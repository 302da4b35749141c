//! The warehouse engine both sides run: catalog, stock ledger, orders and
//! tenants on SQLite, every write through one group-committing writer and
//! logged as an event in the same transaction. `http` serves it under `/v1`.
//! What only the cloud's office needs (CRM, pricing, OAuth, webhooks) is
//! built on it in `depot-office`, through [`Wms::read`], [`Wms::write`] and
//! [`sql`].

// The warehouse: what the floor and the API do, one module per part.
pub mod backorders;
pub mod buyers;
pub mod carriers;
pub mod catalog;
pub mod channels;
pub mod connectors;
pub mod counts;
pub mod dispatch;
pub mod documents;
pub mod inbound;
pub mod ledger;
pub mod locations;
pub mod orders;
pub mod packing;
pub mod picking;
pub mod printing;
pub mod putaway;
pub mod releases;
pub mod rendered;
pub mod replenish;
pub mod returns;
pub mod scan;
pub mod shipping;
pub mod sscc;
pub mod tenants;
mod tickets;

// Sync: what another node did applied here, and what this node knows of
// the others.
mod outbox;
pub mod presence;
pub mod recovery;
pub mod replica;
pub mod sync;

// Storage: the SQL (private), the one writer and the readers, the file.
pub mod database;
#[cfg(feature = "postgres")]
mod follower;
pub mod reader;
pub mod sql;
mod store;
pub mod writer;

// Serving and running: HTTP, idempotency, API keys, errors, metrics, the
// disk probe and systemd's notification protocol.
pub mod disk;
pub mod error;
pub mod housekeeping;
pub mod http;
pub mod idempotency;
pub mod keycache;
pub mod metrics;
pub mod sd_notify;

pub use error::{Result, WmsError};

use depot_protocol::BusinessId;
use depot_sql::Db;
use reader::Reader;
use std::path::{Path, PathBuf};
use std::sync::Arc;
pub use writer::Lane;
use writer::Writer;

/// Read connections: enough to keep every core busy while some reads wait
/// on I/O, few enough that each keeps its prepared statements warm.
const READERS: usize = 8;

/// What a daemon gives its database to close when it stops
/// ([`Wms::close_at_exit`]): well inside systemd's stop timeout (30 s in
/// the units).
pub const CLOSE_AT_EXIT_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// A handle on the engine; cheap to clone, shared by every request.
#[derive(Clone)]
pub struct Wms {
    inner: Arc<Inner>,
}

struct Inner {
    writer: Writer,
    keys: keycache::KeyCache,
    reader: Reader,
    origin: String,
    /// The data directory: the database file's and the documents' (on
    /// SQLite).
    dir: PathBuf,
    /// Documents' bytes are kept in the database (PostgreSQL, shared by
    /// every instance), not as files in `dir`.
    blobs_in_database: bool,
    /// Off only for a benchmark's baseline: see [`Wms::set_ownership_checks`].
    unchecked: std::sync::atomic::AtomicBool,
    /// What the own fleet's services take: see [`Wms::set_own_fleet`].
    own_fleet: std::sync::RwLock<carriers::OwnFleetSettings>,
    /// Calls to the event log waiting for an event: see [`Wms::long_poll`].
    long_polls: Arc<std::sync::atomic::AtomicI64>,
    /// The order list's orders as written, by version.
    rendered: Arc<rendered::Rendered>,
    /// On PostgreSQL, the event log's safe head (`follower.rs`), `None`
    /// until first known; on SQLite no reader needs one.
    #[cfg(feature = "postgres")]
    safe_head: Option<tokio::sync::watch::Receiver<Option<follower::Published>>>,
}

/// The longest a reader of the whole log waits for its safe head to be
/// first known (the follower connecting, a long transaction ending).
#[cfg(feature = "postgres")]
const SAFE_HEAD_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// One call to the event log waiting for an event, counted while it lives.
pub struct LongPoll(Arc<std::sync::atomic::AtomicI64>);

impl Drop for LongPoll {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Wms {
    /// Opens (creating and migrating if needed) the cloud's database at
    /// `path`: node 0. `origin` names it in movements and events.
    pub fn open(path: &Path, origin: &str) -> Result<Self> {
        Self::open_node(path, origin, 0)
    }

    /// Opens the database of node `node` (an edge's number; 0 is the
    /// cloud). A database keeps the node it was first opened as.
    pub fn open_node(path: &Path, origin: &str, node: u32) -> Result<Self> {
        let dir = path.parent().unwrap_or(Path::new("."));
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir)
                .map_err(|e| WmsError::Internal(format!("cannot create {}: {e}", dir.display())))?;
        }
        let conn = store::open_writer(path)?;
        Self::start(
            conn,
            reader::Source::File(path.to_owned()),
            dir,
            origin,
            node,
        )
    }

    /// Opens the cloud's database on PostgreSQL at `url`, bringing its
    /// schema up to date (two instances starting at once take turns);
    /// `dir` keeps what is not in the database (documents).
    #[cfg(feature = "postgres")]
    pub fn open_postgres(url: &str, dir: &Path, origin: &str) -> Result<Self> {
        std::fs::create_dir_all(dir)
            .map_err(|e| WmsError::Internal(format!("cannot create {}: {e}", dir.display())))?;
        // A `Db` on PostgreSQL drives a runtime of its own in each call,
        // which cannot start on a thread already driving one (a daemon's
        // start, a test): the setup runs on a thread of its own. The
        // connection then lives on the writer's thread.
        std::thread::scope(|s| {
            s.spawn(|| {
                let conn = depot_sql::Db::connect_postgres(url)?;
                store::migrate(&conn)?;
                Self::start(
                    conn,
                    reader::Source::Postgres(url.to_owned()),
                    dir,
                    origin,
                    0,
                )
            })
            .join()
            .unwrap_or_else(|_| Err(WmsError::Internal("opening PostgreSQL panicked".into())))
        })
    }

    fn start(
        conn: depot_sql::Db,
        source: reader::Source,
        dir: &Path,
        origin: &str,
        node: u32,
    ) -> Result<Self> {
        store::ids::claim(&conn, node, origin)?;
        let writer = Writer::start(conn)
            .map_err(|e| WmsError::Internal(format!("cannot start the writer: {e}")))?;
        #[cfg(feature = "postgres")]
        let safe_head = match &source {
            reader::Source::Postgres(url) => {
                let (tx, rx) = tokio::sync::watch::channel(None);
                writer.follow_events(url.clone(), tx);
                Some(rx)
            }
            _ => None,
        };
        let blobs_in_database = !matches!(source, reader::Source::File(_));
        Ok(Self {
            inner: Arc::new(Inner {
                keys: keycache::KeyCache::new(writer.watch(writer::Watched::ApiKeys)),
                writer,
                reader: Reader::new(source, READERS)?,
                origin: origin.to_owned(),
                dir: dir.to_owned(),
                blobs_in_database,
                unchecked: std::sync::atomic::AtomicBool::new(false),
                own_fleet: std::sync::RwLock::new(carriers::OwnFleetSettings::default()),
                long_polls: Arc::default(),
                rendered: Arc::default(),
                #[cfg(feature = "postgres")]
                safe_head,
            }),
        })
    }

    pub fn origin(&self) -> &str {
        &self.inner.origin
    }

    /// Sets what the own fleet's services take (the daemons' `[own_fleet]`
    /// settings); packing refuses a package beyond them.
    pub fn set_own_fleet(&self, settings: carriers::OwnFleetSettings) {
        if let Ok(mut s) = self.inner.own_fleet.write() {
            *s = settings;
        }
    }

    /// The own fleet's limits as set.
    pub fn own_fleet(&self) -> carriers::OwnFleetSettings {
        self.inner.own_fleet.read().map(|s| *s).unwrap_or_default()
    }

    /// Turns the ownership checks of the events edges send (see
    /// `replica::ownership`) off or on again. For one purpose only: the
    /// sync benchmark's baseline, which measures what the checks cost. Off,
    /// a box could write into another business: nothing else turns them
    /// off, and no setting does.
    pub fn set_ownership_checks(&self, on: bool) {
        self.inner
            .unchecked
            .store(!on, std::sync::atomic::Ordering::Relaxed);
    }

    pub(crate) fn ownership_checked(&self) -> bool {
        !self
            .inner
            .unchecked
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Counts a call waiting for the event log to grow, until the answer
    /// is dropped: `/metrics` shows how many wait.
    pub fn long_poll(&self) -> LongPoll {
        let count = self.inner.long_polls.clone();
        count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        LongPoll(count)
    }

    /// Calls waiting for the event log to grow, now.
    pub fn long_polls_waiting(&self) -> i64 {
        self.inner
            .long_polls
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The database's size when a server keeps it (PostgreSQL); `None`
    /// for a file in the data directory, measured there.
    pub async fn database_bytes_on_server(&self) -> Result<Option<u64>> {
        self.read(store::size_on_server).await
    }

    /// Has the database gather its planner's statistics now, as after a
    /// bulk load (both databases choose indexes by them).
    pub async fn gather_statistics(&self) -> Result<()> {
        if self.inner.blobs_in_database {
            self.read(store::gather_statistics).await
        } else {
            // SQLite keeps them in the database (`sqlite_stat1`): a write.
            self.write_unkeyed(store::gather_statistics).await
        }
    }

    /// Refreshes the planner's statistics of the tables that changed much
    /// since they were gathered (SQLite's `PRAGMA optimize`, which the
    /// SQLite documentation asks long-lived connections to run every few
    /// hours; PostgreSQL's autovacuum does it on its own).
    pub async fn optimize(&self) -> Result<()> {
        if self.inner.blobs_in_database {
            return Ok(());
        }
        self.write_unkeyed(|db| store::sqlite_statistics(db, "PRAGMA optimize"))
            .await
    }

    /// The data directory (documents; the database file on SQLite).
    pub fn data_dir(&self) -> &Path {
        &self.inner.dir
    }

    /// Changes after every commit that touched print jobs: a job submitted
    /// here, one that arrived by sync, or a status change.
    pub fn print_jobs_changed(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.writer.watch(writer::Watched::PrintJobs)
    }

    /// Changes after every commit that touched printers (one configured in
    /// the cloud arrives at an edge by sync).
    pub fn printers_changed(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.writer.watch(writer::Watched::Printers)
    }

    /// Changes after every commit that appended to the event log.
    pub fn events_changed(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.writer.watch(writer::Watched::Events)
    }

    /// Appends a `station.scanned` event: what a station did with a scan or
    /// a weighing, for the station screens (and, synced, the cloud's record).
    pub async fn station_event(
        &self,
        business: BusinessId,
        payload: serde_json::Value,
    ) -> Result<depot_protocol::event::Event> {
        let origin = self.origin().to_owned();
        self.write_for(business, move |conn| {
            let seq = store::events::append_numbered(
                conn,
                &origin,
                Some(business),
                depot_protocol::event::EventKind::StationScanned,
                &payload,
            )?;
            store::events::since(conn, seq - 1, seq, 1)?
                .into_iter()
                .next()
                .ok_or_else(|| WmsError::Internal("event vanished".into()))
        })
        .await
    }

    /// Appends a device's own event (`printer.state_changed`,
    /// `printer.seen`, `scale.weighed`). A printer's state also sets its
    /// record's status here, in the same transaction, as applying the event
    /// does in the cloud.
    pub async fn device_event(
        &self,
        business: BusinessId,
        kind: depot_protocol::event::EventKind,
        payload: serde_json::Value,
    ) -> Result<()> {
        use depot_protocol::event::EventKind;
        let origin = self.origin().to_owned();
        self.write(move |conn| {
            match kind {
                EventKind::PrinterStateChanged | EventKind::PrinterSeen => {
                    let state: replica::printing::StateChanged =
                        serde_json::from_value(payload.clone())
                            .map_err(|e| WmsError::Internal(format!("a printer's state: {e}")))?;
                    replica::printing::record_state(conn, &state)?;
                }
                EventKind::ScaleWeighed => {}
                other => {
                    return Err(WmsError::Internal(format!(
                        "{} is not a device's event",
                        other.as_str()
                    )));
                }
            }
            store::events::append(conn, &origin, Some(business), kind, &payload)?;
            Ok(())
        })
        .await
    }

    /// A round trip through the writer (an empty job, committed like any
    /// other) within `within`: the liveness check of the watchdog and of
    /// `/readyz`.
    pub async fn ping(&self, within: std::time::Duration) -> Result<()> {
        match tokio::time::timeout(within, self.write(|_| Ok(()))).await {
            // It answered: a full disk that took the empty job down with a
            // write of its group is told elsewhere, not by a restart.
            Ok(Err(WmsError::Full)) => Ok(()),
            Ok(answer) => answer,
            Err(_) => Err(WmsError::Internal(format!(
                "the writer did not answer within {} ms",
                within.as_millis()
            ))),
        }
    }

    /// Ready to serve: the schema is at the latest version and the writer
    /// answers a round trip within `within`.
    pub async fn readiness(&self, within: std::time::Duration) -> Result<()> {
        let pending = self.read(store::pending_migrations).await?;
        if pending != 0 {
            return Err(WmsError::Internal(format!(
                "{pending} schema migrations are not applied"
            )));
        }
        self.ping(within).await
    }

    /// Closes the database for a clean stop: the reads under way finish, the
    /// writes queued are committed, and the connections are closed, the
    /// writer's last so that SQLite folds its write-ahead log into the
    /// database. Reads and writes after it are refused. Every clone of this
    /// handle shares the one database, so it is called once, at the end.
    pub async fn close(&self) -> Result<()> {
        self.inner.reader.close().await;
        self.inner.writer.close().await
    }

    /// A daemon's last step: [`Wms::close`], given `within` before the
    /// process goes without it (a writer stuck on a dead disk must not hold
    /// up the stop), and logged either way.
    pub async fn close_at_exit(&self, within: std::time::Duration) {
        match tokio::time::timeout(within, self.close()).await {
            Ok(Ok(())) => tracing::debug!("database closed"),
            Ok(Err(e)) => tracing::error!(error = %e, "the database did not close cleanly"),
            Err(_) => tracing::error!(
                "the database did not close within {} s: its write-ahead log is left to the next start",
                within.as_secs()
            ),
        }
    }

    /// See [`Writer::hang_for_tests`]: for tests only.
    #[doc(hidden)]
    pub async fn hang_writer_for_tests(&self) {
        self.inner.writer.hang_for_tests().await;
    }

    pub fn writer_stats(&self) -> &writer::WriterStats {
        self.inner.writer.stats()
    }

    /// How the read pool's brief reads went ([`Reader::read_brief`]).
    pub fn brief_read_stats(&self) -> &reader::BriefStats {
        self.inner.reader.brief_stats()
    }

    /// Runs `f` in the writer's transaction; answers after the commit.
    /// Under a request with an `Idempotency-Key` ([`idempotency`]), the
    /// key is recorded in the same transaction. `f` may write anything:
    /// on PostgreSQL no other writer runs beside it (see [`Lane`]).
    pub async fn write<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Db) -> Result<T> + Send + 'static,
    {
        self.write_in(Lane::All, f).await
    }

    /// [`Wms::write`] for a job that writes only `business`'s rows (see
    /// [`Lane::Business`] for what that allows): on PostgreSQL, writes of
    /// other businesses run beside it, on this instance's other groups and
    /// on other instances.
    pub async fn write_for<T, F>(&self, business: BusinessId, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Db) -> Result<T> + Send + 'static,
    {
        self.write_in(Lane::Business(business), f).await
    }

    /// [`Wms::write_for`], answering once the job is queued with what
    /// answers once it is committed: jobs queued one after another run in
    /// that order (see [`writer::Writer::queue`]). For jobs no request
    /// makes: nothing is recorded under an `Idempotency-Key`.
    pub(crate) async fn queue_for<T, F>(
        &self,
        business: BusinessId,
        f: F,
    ) -> Result<writer::Queued<T>>
    where
        T: Send + 'static,
        F: FnOnce(&Db) -> Result<T> + Send + 'static,
    {
        self.inner.writer.queue(Lane::Business(business), f).await
    }

    /// [`Wms::write`] in a lane of the caller's choosing: see [`Lane`].
    pub async fn write_in<T, F>(&self, lane: Lane, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Db) -> Result<T> + Send + 'static,
    {
        match idempotency::Context::current() {
            Some(ctx) => self.write_keyed(ctx, lane, f).await,
            None => self.inner.writer.write(lane, f).await,
        }
    }

    /// `write`, never recording a key: the idempotency keys' own writes.
    pub async fn write_unkeyed<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Db) -> Result<T> + Send + 'static,
    {
        self.inner.writer.write(Lane::All, f).await
    }

    /// Runs `f` on a read connection.
    pub async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Db) -> Result<T> + Send + 'static,
    {
        self.inner.reader.read(f).await
    }

    /// The last sequence number of the log (0 when it is empty) that a
    /// reader of the whole log may read up to: on PostgreSQL its safe head
    /// (see `follower.rs`), below which no event can still appear.
    pub async fn events_head(&self) -> Result<i64> {
        match self.safe_head().await? {
            Some(head) => Ok(head),
            None => self.read(store::events::head).await,
        }
    }

    /// Events of the log after `after_seq`, oldest first, up to the head
    /// [`Wms::events_head`] answers: a cursor moved to the last of them
    /// never passes an event still to commit.
    pub async fn events_since(
        &self,
        after_seq: i64,
        limit: u32,
    ) -> Result<Vec<depot_protocol::event::Event>> {
        let upto = self.safe_head().await?.unwrap_or(i64::MAX);
        self.read(move |c| store::events::since(c, after_seq, upto, limit))
            .await
    }

    /// The safe head on PostgreSQL, once it covers every commit of this
    /// instance that wrote events before the call (so a caller reads its
    /// own writes); `None` on SQLite, where events commit in the order they
    /// are numbered.
    #[cfg(feature = "postgres")]
    async fn safe_head(&self) -> Result<Option<i64>> {
        let Some(rx) = &self.inner.safe_head else {
            return Ok(None);
        };
        let written = self.inner.writer.events_written();
        let covers = move |p: &Option<follower::Published>| p.is_some_and(|p| p.covers >= written);
        let now = *rx.borrow();
        if let Some(p) = now.filter(|p| p.covers >= written) {
            return Ok(Some(p.head));
        }
        let mut rx = rx.clone();
        match tokio::time::timeout(SAFE_HEAD_WAIT, rx.wait_for(covers)).await {
            Ok(Ok(p)) => Ok(p.map(|p| p.head)),
            Ok(Err(_)) => Err(WmsError::Internal(
                "the event log's follower has stopped".into(),
            )),
            Err(_) => Err(WmsError::Internal(format!(
                "the event log's safe head is not known after {SAFE_HEAD_WAIT:?}: \
                 PostgreSQL unreachable, or a transaction held open on it"
            ))),
        }
    }

    #[cfg(not(feature = "postgres"))]
    async fn safe_head(&self) -> Result<Option<i64>> {
        Ok(None)
    }

    /// Stock levels that disagree with their ledger or with open orders'
    /// reservations. Empty when the books are right.
    pub async fn check_ledger(&self) -> Result<Vec<ledger::Inconsistency>> {
        self.read(store::ledger::inconsistencies).await
    }
}
