//! PostgreSQL beneath the seam: tokio-postgres, on a runtime of the
//! connection's own driven by the caller's thread (each call blocks, as
//! rusqlite's do); statements prepared once per connection; values
//! converted as SQLite would take them (an integer bound where the server
//! infers `int4`, a `numeric` sum read as an integer, JSON read as text).
//!
//! Every statement is a round trip to the server, and a round trip costs
//! the machine far more than most statements do (a `SELECT 1` about 50 µs
//! of CPU over loopback, an insert sent behind others about 8). A write
//! whose answer the caller does not read ([`PgConn::execute_later`]) is
//! sent at once and its answer read with the next statement's: a job's
//! inserts travel together. Reads that do not wait for each other's
//! answers go out together the same way ([`PgConn::query_later`]).
//!
//! - `mod.rs`: [`PgConn`], its statements and what is sent and unanswered;
//! - `link.rs`: the client, its connection and the runtime polling them;
//! - `shared.rs`: [`SharedReads`], reads run on the caller's runtime over
//!   connections many tasks share;
//! - `values.rs`: parameters and columns as SQLite's storage classes.

mod link;
mod shared;
mod values;

pub use shared::SharedReads;

pub(crate) use values::column;

use crate::error::{Error, Result};
use crate::placeholders;
use crate::value::{ToSql, Value};
use link::Link;
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use values::{Param, bind, refs};

/// Prepared statements one connection keeps before it starts again: the
/// store has a few hundred, plus lists built for a number of ids.
const STATEMENT_CACHE: usize = 2048;

/// Writes sent and not yet answered, at most: past it, their answers are
/// read before the next is sent (a bound on what is held, no job comes
/// near it).
const UNANSWERED: usize = 256;

/// Reads answered and not yet taken, at most: an order of 500 lines
/// sends a read for each before it takes the first.
const KEPT: usize = 1 << 16;

pub(crate) type PgError = tokio_postgres::Error;

/// A call on the client, answered once polled to its end.
type Call<T> = Pin<Box<dyn Future<Output = Result<T, PgError>> + Send>>;

/// The answer to a write sent, once read: the rows it changed.
type Answer = Call<u64>;

/// The answer to a read sent, once read: its rows.
type Reading = Call<Vec<tokio_postgres::Row>>;

/// What [`PgConn::queue`] made of a call.
enum Queued<T> {
    /// Sent: its answer comes with the next call's.
    Sent(Call<T>),
    /// Answered before it was sent (refused while encoded: a value its
    /// column cannot take; a closed connection).
    Done(Result<T, PgError>),
}

/// A call sent and not yet answered.
enum Unanswered {
    /// A write: its statement, for the table it writes.
    Write(Answer, Prepared),
    /// A read, by its ticket ([`PgConn::query_later`]); whether it writes
    /// (`INSERT … RETURNING`): its rows are then the rows it changed.
    Read(u64, Reading, bool),
}
pub(crate) struct PgConn {
    /// Always `Some` but while dropped: see the `Drop`.
    link: RefCell<Option<Link>>,
    statements: RefCell<HashMap<Box<str>, Prepared>>,
    /// Writes and reads sent by [`PgConn::execute_later`] and
    /// [`PgConn::query_later`] whose answers are not read yet, in the
    /// order sent.
    unanswered: RefCell<VecDeque<Unanswered>>,
    /// The rows of reads sent later, answered and not yet taken, by ticket.
    read: RefCell<std::collections::BTreeMap<u64, Result<Vec<tokio_postgres::Row>, PgError>>>,
    /// The next read's ticket.
    tickets: Cell<u64>,
    /// Rows this connection's statements changed, as SQLite counts them.
    changes: Cell<u64>,
    /// Times this connection waited for the server ([`PgConn::behind`]).
    round_trips: Cell<u64>,
    /// Tables written since last taken ([`crate::Db::take_written`]).
    written: RefCell<std::collections::BTreeSet<Box<str>>>,
    /// What to connect to again when the server has gone away.
    url: String,
    /// Inside `BEGIN` … `COMMIT`/`ROLLBACK`: a connection lost then takes
    /// the transaction with it, and is not replaced until it ends.
    in_transaction: Cell<bool>,
    /// A call failed with no answer from the server (a reset, a closed
    /// socket): the client may not know yet that its connection is gone.
    lost: Cell<bool>,
}

/// A statement as the server prepared it, and the table it writes.
#[derive(Clone)]
struct Prepared {
    statement: tokio_postgres::Statement,
    writes: Option<Arc<str>>,
}
/// Connects to `url`: see [`Link::connect`].
pub(crate) fn connect(url: &str) -> Result<PgConn> {
    Ok(PgConn {
        link: RefCell::new(Some(Link::connect(url)?)),
        statements: RefCell::new(HashMap::new()),
        unanswered: RefCell::new(VecDeque::new()),
        read: RefCell::new(std::collections::BTreeMap::new()),
        tickets: Cell::new(0),
        changes: Cell::new(0),
        round_trips: Cell::new(0),
        written: RefCell::new(std::collections::BTreeSet::new()),
        url: url.to_owned(),
        in_transaction: Cell::new(false),
        lost: Cell::new(false),
    })
}

/// The runtime may not be shut down on a thread that drives another (an
/// async task dropping the last handle on a pool): the link is let go on a
/// thread of its own.
impl Drop for PgConn {
    fn drop(&mut self) {
        self.unanswered.get_mut().clear();
        if let Some(link) = self.link.get_mut().take() {
            let _ = std::thread::Builder::new()
                .name("depot-pg-close".into())
                .spawn(move || drop(link.close()));
        }
    }
}
/// Whether `e` says the connection is gone: no answer from the server (a
/// reset, a closed socket), or a fatal one (the server ending the
/// session: a shutdown, `pg_terminate_backend`). The client learns of it
/// only when its connection does, which may be after the next call has
/// been sent on the dead socket.
fn gone(e: &PgError) -> bool {
    let fatal = e
        .as_db_error()
        .is_some_and(|d| matches!(d.severity(), "FATAL" | "PANIC"));
    fatal || e.is_closed() || (e.code().is_none() && e.as_db_error().is_none())
}

/// Whether `sql` rolls back (a transaction or to a savepoint): what was
/// sent before it no longer matters, failed or not.
fn rolls_back(sql: &str) -> bool {
    sql.trim_start()
        .get(..8)
        .is_some_and(|w| w.eq_ignore_ascii_case("ROLLBACK"))
}

impl PgConn {
    fn statement(&self, sql: &str) -> Result<Prepared> {
        if let Some(s) = self.statements.borrow().get(sql) {
            return Ok(s.clone());
        }
        let (text, _) = placeholders::to_postgres(sql)?;
        let client = self.client()?;
        // Behind the writes unanswered: in a transaction one of them
        // aborted, the server would refuse to prepare it, and say why
        // only for theirs.
        let statement = self.behind(client.prepare(&text), false)?;
        let prepared = Prepared {
            statement,
            writes: crate::written::table(sql).map(Arc::from),
        };
        let mut cache = self.statements.borrow_mut();
        if cache.len() >= STATEMENT_CACHE {
            cache.clear();
        }
        cache.insert(sql.into(), prepared.clone());
        Ok(prepared)
    }

    /// Notes the table `prepared` writes, if any.
    fn writes(&self, prepared: &Prepared) {
        if let Some(table) = &prepared.writes {
            let mut written = self.written.borrow_mut();
            if !written.contains(&**table) {
                written.insert(Box::from(&**table));
            }
        }
    }

    fn wrote(&self, prepared: &Prepared, rows: u64) {
        if prepared.writes.is_some() {
            self.changes.set(self.changes.get().saturating_add(rows));
            self.writes(prepared);
        }
    }

    pub(crate) fn execute(&self, sql: &str, params: &[&dyn ToSql]) -> Result<usize> {
        let prepared = self.statement(sql)?;
        let values = bind(params);
        let refs = refs(&values);
        let client = self.client()?;
        let n = self.behind(client.execute(&prepared.statement, &refs), rolls_back(sql))?;
        self.wrote(&prepared, n);
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    /// Sends a write whose answer the caller does not read, and returns
    /// before the server answers: its answer is read with the next
    /// statement's (or a savepoint's, or the commit's). Should it fail,
    /// that next call fails with [`Error::Earlier`], the transaction
    /// aborted; a rollback after it forgets it. Outside a transaction,
    /// where no next call need come, it runs as [`PgConn::execute`] does.
    pub(crate) fn execute_later(&self, sql: &str, params: &[&dyn ToSql]) -> Result<()> {
        if !self.in_transaction.get() {
            return self.execute(sql, params).map(drop);
        }
        let (queued, prepared) = self.queue(sql, params, |client, statement, values| {
            Box::pin(async move {
                let params: Vec<Param<'_>> = values.iter().map(|v| Param(v.as_ref())).collect();
                client.execute(&statement, &refs(&params)).await
            })
        })?;
        match queued {
            Queued::Done(done) => {
                let n = self.noted(done)?;
                self.wrote(&prepared, n);
            }
            Queued::Sent(answer) => {
                self.writes(&prepared);
                self.unanswered
                    .borrow_mut()
                    .push_back(Unanswered::Write(answer, prepared));
            }
        }
        Ok(())
    }

    /// Sends a read and returns before the server answers: a ticket for
    /// its rows ([`PgConn::rows`]), which are read with the next call's
    /// answer. Reads the caller needs together, none depending on
    /// another's answer, thus cost one round trip.
    pub(crate) fn query_later(&self, sql: &str, params: &[&dyn ToSql]) -> Result<u64> {
        let (queued, prepared) = self.queue(sql, params, |client, statement, values| {
            Box::pin(async move {
                let params: Vec<Param<'_>> = values.iter().map(|v| Param(v.as_ref())).collect();
                client.query(&statement, &refs(&params)).await
            })
        })?;
        let ticket = self.tickets.get();
        self.tickets.set(ticket.wrapping_add(1));
        let writes = prepared.writes.is_some();
        self.writes(&prepared);
        match queued {
            Queued::Done(done) => self.keep(ticket, done, writes),
            Queued::Sent(reading) => self
                .unanswered
                .borrow_mut()
                .push_back(Unanswered::Read(ticket, reading, writes)),
        }
        Ok(ticket)
    }

    /// Prepares `sql`, takes `params` as owned values and makes the call
    /// `call` builds of them, polled once: the first poll encodes it and
    /// queues it on the client, and the connection sends it with whatever
    /// call comes next.
    fn queue<T>(
        &self,
        sql: &str,
        params: &[&dyn ToSql],
        call: impl FnOnce(Arc<tokio_postgres::Client>, tokio_postgres::Statement, Vec<Value>) -> Call<T>,
    ) -> Result<(Queued<T>, Prepared)> {
        if self.unanswered.borrow().len() >= UNANSWERED {
            self.settle()?;
        }
        let prepared = self.statement(sql)?;
        let values: Vec<Value> = params.iter().map(|p| p.to_sql().to_owned()).collect();
        let mut call = call(self.client()?, prepared.statement.clone(), values);
        let queued = match call.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(done) => Queued::Done(done),
            Poll::Pending => Queued::Sent(call),
        };
        Ok((queued, prepared))
    }

    /// Keeps a read's rows until they are taken, or the transaction they
    /// were read in ends; the oldest go past a bound far beyond what one
    /// job reads (a connection that reads outside transactions and leaves
    /// reads untaken).
    fn keep(&self, ticket: u64, rows: Result<Vec<tokio_postgres::Row>, PgError>, writes: bool) {
        if let (true, Ok(rows)) = (writes, &rows) {
            self.changes
                .set(self.changes.get().saturating_add(rows.len() as u64));
        }
        let mut read = self.read.borrow_mut();
        read.insert(ticket, rows);
        while read.len() > KEPT {
            read.pop_first();
        }
    }

    /// The rows of the read `ticket` names: waited for if not answered yet.
    pub(crate) fn rows(&self, ticket: u64) -> Result<Vec<tokio_postgres::Row>> {
        let answered = self.read.borrow_mut().remove(&ticket);
        let answered = match answered {
            Some(answered) => answered,
            None => {
                self.settle()?;
                self.read.borrow_mut().remove(&ticket).ok_or_else(|| {
                    Error::Connect("the connection was lost before a read was answered".into())
                })?
            }
        };
        self.noted(answered)
    }

    /// Reads the answers of the writes sent and not yet answered.
    pub(crate) fn settle(&self) -> Result<()> {
        if self.unanswered.borrow().is_empty() {
            return Ok(());
        }
        self.behind(std::future::ready(Ok(())), false)
    }

    /// Runs `work` (a call on the client, not yet polled) behind the
    /// calls still unanswered: its request is queued after theirs, so
    /// the connection sends them together, then their answers are read,
    /// then its own. If one of theirs failed, that is the error (`work`
    /// then failed too, in the transaction it aborted), unless `work`
    /// rolls back, which makes their answers moot.
    fn behind<T>(
        &self,
        work: impl Future<Output = Result<T, PgError>>,
        rolling_back: bool,
    ) -> Result<T> {
        let unanswered = std::mem::take(&mut *self.unanswered.borrow_mut());
        self.round_trips.set(self.round_trips.get().wrapping_add(1));
        let mut link = self.link()?;
        let outcome = link.block_on(async move {
            let mut work = pin!(work);
            let first = poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await;
            let mut answers = Vec::with_capacity(unanswered.len());
            let mut reads = Vec::new();
            for sent in unanswered {
                match sent {
                    Unanswered::Write(answer, prepared) => answers.push((answer.await, prepared)),
                    Unanswered::Read(ticket, reading, writes) => {
                        reads.push((ticket, reading.await, writes));
                    }
                }
            }
            let outcome = match first {
                Poll::Ready(done) => done,
                Poll::Pending => work.await,
            };
            Ok((answers, reads, outcome))
        });
        drop(link);
        let (answers, reads, outcome) = self.noted(outcome)?;
        // A read's error is its own caller's, when it takes its rows.
        for (ticket, rows, writes) in reads {
            self.keep(ticket, rows, writes);
        }
        let mut earlier = None;
        for (answer, prepared) in answers {
            match answer {
                Ok(n) => self.wrote(&prepared, n),
                Err(e) => {
                    let e = self.noted::<()>(Err(e)).err();
                    if earlier.is_none() {
                        earlier = e;
                    }
                }
            }
        }
        match earlier {
            Some(e) if !rolling_back => Err(Error::Earlier(Box::new(e))),
            _ => self.noted(outcome),
        }
    }

    pub(crate) fn query(
        &self,
        sql: &str,
        params: &[&dyn ToSql],
    ) -> Result<Vec<tokio_postgres::Row>> {
        let prepared = self.statement(sql)?;
        let values = bind(params);
        let refs = refs(&values);
        let client = self.client()?;
        let rows = self.behind(client.query(&prepared.statement, &refs), false)?;
        // A write answering with its rows (`RETURNING`).
        self.wrote(&prepared, rows.len() as u64);
        Ok(rows)
    }

    pub(crate) fn total_changes(&self) -> u64 {
        self.changes.get()
    }

    pub(crate) fn round_trips(&self) -> u64 {
        self.round_trips.get()
    }

    pub(crate) fn take_written(&self) -> Vec<String> {
        std::mem::take(&mut *self.written.borrow_mut())
            .into_iter()
            .map(String::from)
            .collect()
    }

    /// Statements without parameters, several at once (a migration).
    pub(crate) fn batch(&self, sql: &str) -> Result<()> {
        let mut words = sql
            .split(|c: char| c.is_whitespace() || c == ';')
            .filter(|w| !w.is_empty())
            .map(str::to_ascii_uppercase);
        let (first, second) = (words.next().unwrap_or_default(), words.next());
        if first == "BEGIN" {
            self.in_transaction.set(true);
        } else if first == "COMMIT" || (first == "ROLLBACK" && second.as_deref() != Some("TO")) {
            // Over even if it fails: the server ends the transaction.
            self.in_transaction.set(false);
        }
        if first == "COMMIT" && second.is_none() {
            return self.commit();
        }
        let client = self.client()?;
        let done = self.behind(client.batch_execute(sql), first == "ROLLBACK");
        if !self.in_transaction.get() {
            // Reads sent in the transaction and never taken.
            self.read.borrow_mut().clear();
        }
        done
    }

    /// PostgreSQL answers `COMMIT` of a transaction that a failed statement
    /// aborted with `ROLLBACK`, and no error: a caller that swallowed the
    /// statement's error would take a rollback for a commit. A statement
    /// sent in the same message first fails in such a transaction (and
    /// the `COMMIT` after it is skipped), at no extra round trip; the
    /// transaction is then rolled back here, so it is over either way.
    fn commit(&self) -> Result<()> {
        let client = self.client()?;
        let committed = self.behind(client.batch_execute("SELECT 1; COMMIT"), false);
        self.read.borrow_mut().clear();
        let aborted = match &committed {
            Err(Error::Earlier(_)) => true,
            Err(Error::Postgres(e)) => {
                e.code() == Some(&tokio_postgres::error::SqlState::IN_FAILED_SQL_TRANSACTION)
            }
            _ => false,
        };
        if !aborted {
            return committed;
        }
        let client = self.client()?;
        self.behind(client.batch_execute("ROLLBACK"), true)?;
        match committed {
            Err(Error::Earlier(e)) => Err(Error::RolledBack(format!("a write of it failed: {e}"))),
            _ => Err(Error::RolledBack(
                "a statement of it failed earlier and its error was not passed on".into(),
            )),
        }
    }

    /// Closes the connection, on a thread of its own (see the `Drop`).
    pub(crate) fn close(self) -> Result<()> {
        self.unanswered.borrow_mut().clear();
        self.read.borrow_mut().clear();
        let Some(link) = self.link.borrow_mut().take() else {
            return Ok(());
        };
        match std::thread::scope(|s| s.spawn(|| link.close()).join()) {
            Ok(closed) => Ok(closed?),
            Err(_) => Err(Error::Connect("closing the connection panicked".into())),
        }
    }

    /// The link, connected again first if the server went away (a
    /// restart, a failover) between transactions: the statements prepared
    /// on the old connection go with it. Within a transaction the lost
    /// connection's error stands, so that nothing of the transaction runs
    /// on a new one outside it.
    fn link(&self) -> Result<std::cell::RefMut<'_, Link>> {
        let mut slot = self.link.borrow_mut();
        let gone = self.lost.get() || slot.as_ref().is_some_and(Link::is_closed);
        if gone && !self.in_transaction.get() {
            self.lost.set(false);
            let fresh = Link::connect(&self.url)?;
            tracing::warn!("the connection to PostgreSQL was lost: connected again");
            self.statements.borrow_mut().clear();
            self.unanswered.borrow_mut().clear();
            self.read.borrow_mut().clear();
            if let Some(old) = slot.replace(fresh) {
                // Its runtime is let go on a thread of its own (see the `Drop`).
                let _ = std::thread::Builder::new()
                    .name("depot-pg-close".into())
                    .spawn(move || drop(old));
            }
        }
        std::cell::RefMut::filter_map(slot, Option::as_mut)
            .map_err(|_| Error::Connect("the connection is closed".into()))
    }

    /// The client, for a call `behind` runs: connected again first if need be.
    fn client(&self) -> Result<Arc<tokio_postgres::Client>> {
        Ok(self.link()?.client.clone())
    }

    /// Notes a call whose connection is gone: no answer from the server
    /// (a reset, a closed socket), or a fatal one (the server ending the
    /// session: a shutdown, `pg_terminate_backend`). The client learns of
    /// it only when its connection does, which may be after the next
    /// call has been sent on the dead socket.
    fn noted<T>(&self, r: std::result::Result<T, PgError>) -> Result<T> {
        r.map_err(|e| {
            if gone(&e) {
                self.lost.set(true);
            }
            e.into()
        })
    }

    /// Prepares `sql` without running it: whether PostgreSQL accepts it.
    pub(crate) fn prepare(&self, sql: &str) -> Result<()> {
        self.statement(sql).map(|_| ())
    }
}
