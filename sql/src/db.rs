//! A connection to either database, and the calls the store makes on it.
//! Each call names its statement as text: on SQLite it is prepared once
//! and cached by rusqlite; on PostgreSQL it is rewritten (`?N` as `$N`),
//! prepared once and cached here.

use crate::error::{Error, Result};
use crate::value::{FromSql, ToSql, ValueRef};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// Which database a [`Db`] speaks to, for the few statements written
/// twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// One connection: SQLite's or PostgreSQL's.
pub struct Db {
    inner: Inner,
    /// On SQLite, the tables written since last taken, filled by the
    /// update hook once [`Db::track_writes`] installs it.
    written: Arc<Mutex<BTreeSet<Box<str>>>>,
    /// Counts shared by the connections of this database, when attached.
    counts: Option<Arc<crate::CountMemo>>,
}

enum Inner {
    Sqlite(rusqlite::Connection),
    #[cfg(feature = "postgres")]
    Postgres(Box<crate::postgres::PgConn>),
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Db({:?})", self.dialect())
    }
}

/// A row being read: its columns by position.
pub struct Row<'r> {
    inner: RowInner<'r>,
}

enum RowInner<'r> {
    Sqlite(&'r rusqlite::Row<'r>),
    /// A row read earlier and kept ([`Db::query_later`] on SQLite).
    Kept(&'r [crate::Value]),
    #[cfg(feature = "postgres")]
    Postgres(&'r ::tokio_postgres::Row),
}

impl<'r> Row<'r> {
    #[cfg(feature = "postgres")]
    pub(crate) fn postgres(row: &'r ::tokio_postgres::Row) -> Self {
        Row {
            inner: RowInner::Postgres(row),
        }
    }

    /// Column `idx` (from 0) as `T`.
    pub fn get<T: FromSql>(&self, idx: usize) -> Result<T> {
        let value = self.get_ref(idx)?;
        T::from_sql(value).map_err(|e| Error::conversion(idx, e.0))
    }

    /// How many columns the row has.
    pub fn column_count(&self) -> usize {
        match &self.inner {
            RowInner::Sqlite(r) => r.as_ref().column_count(),
            RowInner::Kept(r) => r.len(),
            #[cfg(feature = "postgres")]
            RowInner::Postgres(r) => r.len(),
        }
    }

    /// Column `idx` as it is stored.
    pub fn get_ref(&self, idx: usize) -> Result<ValueRef<'_>> {
        match &self.inner {
            RowInner::Sqlite(r) => Ok(from_sqlite(r.get_ref(idx)?)),
            RowInner::Kept(r) => r
                .get(idx)
                .map(crate::Value::as_ref)
                .ok_or_else(|| Error::conversion(idx, "no such column")),
            #[cfg(feature = "postgres")]
            RowInner::Postgres(r) => crate::postgres::column(r, idx),
        }
    }
}

fn from_sqlite(v: rusqlite::types::ValueRef<'_>) -> ValueRef<'_> {
    use rusqlite::types::ValueRef as V;
    match v {
        V::Null => ValueRef::Null,
        V::Integer(i) => ValueRef::Integer(i),
        V::Real(f) => ValueRef::Real(f),
        // SQLite hands back what was stored; text the engine wrote is
        // UTF-8, and text that is not reads as its bytes.
        V::Text(t) => std::str::from_utf8(t).map_or(ValueRef::Blob(t), ValueRef::Text),
        V::Blob(b) => ValueRef::Blob(b),
    }
}

/// A parameter as rusqlite binds it.
struct SqliteParam<'a>(&'a dyn ToSql);

impl rusqlite::ToSql for SqliteParam<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef as V};
        Ok(ToSqlOutput::Borrowed(match self.0.to_sql() {
            ValueRef::Null => V::Null,
            ValueRef::Integer(i) => V::Integer(i),
            ValueRef::Real(f) => V::Real(f),
            ValueRef::Text(s) => V::Text(s.as_bytes()),
            ValueRef::Blob(b) => V::Blob(b),
        }))
    }
}

fn sqlite_params<'a>(params: &'a [&'a dyn ToSql]) -> impl rusqlite::Params + 'a {
    rusqlite::params_from_iter(params.iter().map(|p| SqliteParam(*p)))
}

impl Db {
    /// SQLite, on a connection opened and configured by the caller.
    pub fn sqlite(conn: rusqlite::Connection) -> Db {
        Db {
            inner: Inner::Sqlite(conn),
            written: Arc::default(),
            counts: None,
        }
    }

    /// PostgreSQL at `url` (`postgres://user:password@host:port/db`).
    #[cfg(feature = "postgres")]
    pub fn connect_postgres(url: &str) -> Result<Db> {
        Ok(Db {
            inner: Inner::Postgres(Box::new(crate::postgres::connect(url)?)),
            written: Arc::default(),
            counts: None,
        })
    }

    pub fn dialect(&self) -> Dialect {
        match &self.inner {
            Inner::Sqlite(_) => Dialect::Sqlite,
            #[cfg(feature = "postgres")]
            Inner::Postgres(_) => Dialect::Postgres,
        }
    }

    /// The SQLite connection beneath, for what only SQLite has (backups,
    /// pragmas, hooks); `None` on PostgreSQL.
    pub fn as_sqlite(&self) -> Option<&rusqlite::Connection> {
        match &self.inner {
            Inner::Sqlite(c) => Some(c),
            #[cfg(feature = "postgres")]
            Inner::Postgres(_) => None,
        }
    }

    /// Shares `memo` with this connection: the connections of one
    /// database given the same memo reuse each other's counts.
    pub fn share_counts(&mut self, memo: Arc<crate::CountMemo>) {
        self.counts = Some(memo);
    }

    /// The counts this connection shares, if it was given some.
    pub fn counts(&self) -> Option<&crate::CountMemo> {
        self.counts.as_deref()
    }

    /// Starts noting which tables this connection writes, for
    /// [`Db::take_written`]: on SQLite by its update hook (row by row,
    /// triggers' writes included), on PostgreSQL from each statement's
    /// text (always on: read once, when the statement is prepared).
    pub fn track_writes(&self) {
        match &self.inner {
            Inner::Sqlite(c) => {
                let written = self.written.clone();
                c.update_hook(Some(
                    move |_: rusqlite::hooks::Action, _: &str, table: &str, _: i64| {
                        if let Ok(mut w) = written.lock() {
                            if !w.contains(table) {
                                w.insert(table.into());
                            }
                        }
                    },
                ));
            }
            #[cfg(feature = "postgres")]
            Inner::Postgres(_) => {}
        }
    }

    /// The tables written since the last call (statements rolled back
    /// included: a spurious wake-up, never a missed one).
    pub fn take_written(&self) -> Vec<String> {
        match &self.inner {
            Inner::Sqlite(_) => self
                .written
                .lock()
                .map(|mut w| std::mem::take(&mut *w))
                .unwrap_or_default()
                .into_iter()
                .map(String::from)
                .collect(),
            #[cfg(feature = "postgres")]
            Inner::Postgres(c) => c.take_written(),
        }
    }

    /// Rows changed by this connection's statements since it opened.
    pub fn total_changes(&self) -> u64 {
        match &self.inner {
            Inner::Sqlite(c) => c.total_changes(),
            #[cfg(feature = "postgres")]
            Inner::Postgres(c) => c.total_changes(),
        }
    }

    /// Times this connection waited for the server's answer since it
    /// opened: what a job costs in round trips, sent together or not. Always
    /// 0 on SQLite, where no statement is a round trip.
    pub fn round_trips(&self) -> u64 {
        match &self.inner {
            Inner::Sqlite(_) => 0,
            #[cfg(feature = "postgres")]
            Inner::Postgres(c) => c.round_trips(),
        }
    }

    /// Opens a transaction to write in: on SQLite it takes the write lock
    /// at once (`BEGIN IMMEDIATE`), so a busy database fails here and not
    /// half-way through; on PostgreSQL, rows are locked as they are
    /// written.
    pub fn begin_write(&self) -> Result<()> {
        self.execute_batch(match self.dialect() {
            Dialect::Sqlite => "BEGIN IMMEDIATE",
            Dialect::Postgres => "BEGIN",
        })
    }

    /// Waits for and takes the locks named `shared` (in shared mode: any
    /// number of holders, excluding only an exclusive holder of the key)
    /// then those named `exclusive`, in the order given, each held until
    /// the open transaction ends: writers on several connections to one
    /// PostgreSQL database take turns. Callers that take several give them
    /// sorted, so that two transactions never each wait for a lock the
    /// other holds. A no-op on SQLite, whose write transaction already
    /// excludes every other writer of the file.
    ///
    /// On PostgreSQL the transaction is then given its id, before it
    /// writes anything: every snapshot taken from then on lists it as in
    /// progress until it ends, even one taken between a sequence handing
    /// it a number and its first row (which is when PostgreSQL would
    /// otherwise give it one). Readers rely on this to tell which numbers
    /// may still appear (the engine's safe head of its event log).
    pub fn lock_transaction(&self, shared: &[i64], exclusive: &[i64]) -> Result<()> {
        if self.dialect() == Dialect::Sqlite {
            return Ok(());
        }
        self.execute_batch(&locks(shared, exclusive))
    }

    /// [`Db::begin_write`], [`Db::lock_transaction`], then the savepoint
    /// `savepoint` opened when one is named: on PostgreSQL in one round
    /// trip instead of three.
    /// After an error the caller rolls back, as after either of the two.
    pub fn begin_locked(
        &self,
        shared: &[i64],
        exclusive: &[i64],
        savepoint: Option<&str>,
    ) -> Result<()> {
        if let Some(name) = savepoint
            && (name.is_empty() || !name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
        {
            return Err(Error::Unportable(format!(
                "{name:?} is not a savepoint's name"
            )));
        }
        match self.dialect() {
            Dialect::Sqlite => {
                self.begin_write()?;
                match savepoint {
                    Some(name) => self.execute(&format!("SAVEPOINT {name}"), &[]).map(drop),
                    None => Ok(()),
                }
            }
            Dialect::Postgres => self.execute_batch(&match savepoint {
                Some(name) => format!("BEGIN; {}; SAVEPOINT {name}", locks(shared, exclusive)),
                None => format!("BEGIN; {}", locks(shared, exclusive)),
            }),
        }
    }

    /// Closes the connection, saying whether it closed cleanly (SQLite
    /// checkpoints its write-ahead log when the last one closes).
    pub fn close(self) -> Result<()> {
        match self.inner {
            Inner::Sqlite(c) => c.close().map_err(|(_, e)| Error::from(e)),
            #[cfg(feature = "postgres")]
            Inner::Postgres(c) => (*c).close(),
        }
    }

    /// Runs one statement; the number of rows it changed.
    pub fn execute(&self, sql: &str, params: &[&dyn ToSql]) -> Result<usize> {
        match &self.inner {
            Inner::Sqlite(c) => Ok(c.prepare_cached(sql)?.execute(sqlite_params(params))?),
            #[cfg(feature = "postgres")]
            Inner::Postgres(c) => c.execute(sql, params),
        }
    }

    /// Runs a write whose answer the caller does not read (an insert into
    /// a log, an upsert it will not count): on SQLite at once, as
    /// [`Db::execute`]; on PostgreSQL, within a transaction, it is sent
    /// and the call returns without waiting for the server, whose answer
    /// is read with the next statement's, so a job's writes share round
    /// trips. Its failure is then that next call's error
    /// ([`Error::Earlier`]), which names no constraint: use it only for
    /// writes whose failure fails the whole job, never for one whose
    /// error a caller turns into an answer. Rows it answers (`RETURNING`)
    /// are not read.
    pub fn execute_later(&self, sql: &str, params: &[&dyn ToSql]) -> Result<()> {
        match &self.inner {
            Inner::Sqlite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                let mut rows = stmt.query(sqlite_params(params))?;
                while rows.next()?.is_some() {}
                Ok(())
            }
            #[cfg(feature = "postgres")]
            Inner::Postgres(c) => c.execute_later(sql, params),
        }
    }

    /// Reads the answers of the writes [`Db::execute_later`] sent: their
    /// first error ([`Error::Earlier`]) if one failed, before the caller
    /// moves on to what must not count them (a savepoint released, an
    /// event judged applied). Nothing to do on SQLite.
    pub fn settle(&self) -> Result<()> {
        match &self.inner {
            Inner::Sqlite(_) => Ok(()),
            #[cfg(feature = "postgres")]
            Inner::Postgres(c) => c.settle(),
        }
    }

    /// Sends a read whose rows the caller takes later ([`Later::first`],
    /// [`Later::all`]), each mapped by `map`: on PostgreSQL it goes out
    /// with the next call and is answered with it, so reads that do not
    /// depend on each other's answers, sent one after another, cost one
    /// round trip together. On SQLite it runs here and its rows are kept.
    /// A write answering rows (`INSERT … RETURNING`) may be sent this way
    /// too; its error is then its own, when its rows are taken.
    pub fn query_later<T>(
        &self,
        sql: &str,
        params: &[&dyn ToSql],
        map: fn(&Row<'_>) -> Result<T>,
    ) -> Result<Later<T>> {
        let sent = match &self.inner {
            Inner::Sqlite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                let columns = stmt.column_count();
                let mut rows = stmt.query(sqlite_params(params))?;
                let mut kept = Vec::new();
                while let Some(r) = rows.next()? {
                    let mut row = Vec::with_capacity(columns);
                    for i in 0..columns {
                        row.push(from_sqlite(r.get_ref(i)?).to_owned());
                    }
                    kept.push(row);
                }
                Sent::Kept(kept)
            }
            #[cfg(feature = "postgres")]
            Inner::Postgres(c) => Sent::Ticket(c.query_later(sql, params)?),
        };
        Ok(Later { sent, map })
    }

    /// Statements without parameters, separated by `;` (setup, a
    /// transaction's `BEGIN`, a savepoint).
    pub fn execute_batch(&self, sql: &str) -> Result<()> {
        match &self.inner {
            Inner::Sqlite(c) => Ok(c.execute_batch(sql)?),
            #[cfg(feature = "postgres")]
            Inner::Postgres(c) => c.batch(sql),
        }
    }

    /// Calls `f` on each row, in order, until the rows end or `f` fails.
    pub fn query_each(
        &self,
        sql: &str,
        params: &[&dyn ToSql],
        mut f: impl FnMut(&Row<'_>) -> Result<()>,
    ) -> Result<()> {
        match &self.inner {
            Inner::Sqlite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                let mut rows = stmt.query(sqlite_params(params))?;
                while let Some(r) = rows.next()? {
                    f(&Row {
                        inner: RowInner::Sqlite(r),
                    })?;
                }
                Ok(())
            }
            #[cfg(feature = "postgres")]
            Inner::Postgres(c) => {
                for r in &c.query(sql, params)? {
                    f(&Row {
                        inner: RowInner::Postgres(r),
                    })?;
                }
                Ok(())
            }
        }
    }

    /// Every row, each mapped by `f`.
    pub fn query_map<T>(
        &self,
        sql: &str,
        params: &[&dyn ToSql],
        mut f: impl FnMut(&Row<'_>) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut out = Vec::new();
        self.query_each(sql, params, |r| {
            out.push(f(r)?);
            Ok(())
        })?;
        Ok(out)
    }

    /// The first row, mapped by `f`; `None` when there is none.
    pub fn query_opt<T>(
        &self,
        sql: &str,
        params: &[&dyn ToSql],
        f: impl FnOnce(&Row<'_>) -> Result<T>,
    ) -> Result<Option<T>> {
        match &self.inner {
            Inner::Sqlite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                let mut rows = stmt.query(sqlite_params(params))?;
                match rows.next()? {
                    Some(r) => Ok(Some(f(&Row {
                        inner: RowInner::Sqlite(r),
                    })?)),
                    None => Ok(None),
                }
            }
            #[cfg(feature = "postgres")]
            Inner::Postgres(c) => match c.query(sql, params)?.first() {
                Some(r) => Ok(Some(f(&Row {
                    inner: RowInner::Postgres(r),
                })?)),
                None => Ok(None),
            },
        }
    }

    /// The first row, mapped by `f`; [`Error::NoRows`] when there is none.
    pub fn query_row<T>(
        &self,
        sql: &str,
        params: &[&dyn ToSql],
        f: impl FnOnce(&Row<'_>) -> Result<T>,
    ) -> Result<T> {
        self.query_opt(sql, params, f)?.ok_or(Error::NoRows)
    }

    /// Whether the statement returns any row.
    pub fn exists(&self, sql: &str, params: &[&dyn ToSql]) -> Result<bool> {
        Ok(self.query_opt(sql, params, |_| Ok(()))?.is_some())
    }

    /// The first column of the first row.
    pub fn query_value<T: FromSql>(&self, sql: &str, params: &[&dyn ToSql]) -> Result<T> {
        self.query_row(sql, params, |r| r.get(0))
    }

    /// Prepares `sql` without running it: whether the database accepts it
    /// as written (its names, its types, its syntax).
    pub fn prepare(&self, sql: &str) -> Result<()> {
        match &self.inner {
            Inner::Sqlite(c) => c.prepare_cached(sql).map(|_| ()).map_err(Error::from),
            #[cfg(feature = "postgres")]
            Inner::Postgres(c) => c.prepare(sql),
        }
    }
}

/// A read sent by [`Db::query_later`], its rows not taken yet.
#[must_use = "a read sent later is taken with `first` or `all`"]
pub struct Later<T> {
    sent: Sent,
    map: fn(&Row<'_>) -> Result<T>,
}

enum Sent {
    Kept(Vec<Vec<crate::Value>>),
    #[cfg(feature = "postgres")]
    Ticket(u64),
}

impl<T> Later<T> {
    /// Every row, mapped, from `db` (the connection that sent it).
    pub fn all(self, db: &Db) -> Result<Vec<T>> {
        let mut out = Vec::new();
        self.each(db, |t| {
            out.push(t);
            false
        })?;
        Ok(out)
    }

    /// The first row, mapped; `None` when there is none.
    pub fn first(self, db: &Db) -> Result<Option<T>> {
        let mut out = None;
        self.each(db, |t| {
            out = Some(t);
            true
        })?;
        Ok(out)
    }

    /// Calls `f` on each row mapped, until it answers `true` (enough).
    /// (`db` is read only on PostgreSQL: SQLite's rows are kept here.)
    #[cfg_attr(not(feature = "postgres"), allow(unused_variables))]
    fn each(self, db: &Db, mut f: impl FnMut(T) -> bool) -> Result<()> {
        let map = self.map;
        match self.sent {
            Sent::Kept(rows) => {
                for r in &rows {
                    if f(map(&Row {
                        inner: RowInner::Kept(r),
                    })?) {
                        break;
                    }
                }
            }
            #[cfg(feature = "postgres")]
            Sent::Ticket(ticket) => {
                let Inner::Postgres(c) = &db.inner else {
                    return Err(Error::Unportable(
                        "a read sent on PostgreSQL taken from another database".into(),
                    ));
                };
                for r in &c.rows(ticket)? {
                    if f(map(&Row {
                        inner: RowInner::Postgres(r),
                    })?) {
                        break;
                    }
                }
            }
        }
        Ok(())
    }
}

/// The statement that takes a transaction's locks and gives it its id
/// (see [`Db::lock_transaction`]). Integers of our own making, in one
/// simple-protocol statement: a prepared one per combination of keys would
/// only fill the cache. Evaluated left to right: the locks in order, then
/// the id, so a transaction waiting for its turn holds no reader back.
fn locks(shared: &[i64], exclusive: &[i64]) -> String {
    let calls: Vec<String> = shared
        .iter()
        .map(|k| format!("pg_advisory_xact_lock_shared({k})"))
        .chain(
            exclusive
                .iter()
                .map(|k| format!("pg_advisory_xact_lock({k})")),
        )
        .chain(std::iter::once("pg_current_xact_id()".to_owned()))
        .collect();
    format!("SELECT {}", calls.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params;

    fn memory() -> Db {
        Db::sqlite(rusqlite::Connection::open_in_memory().expect("memory"))
    }

    #[test]
    fn statements_run_and_rows_read_back_on_sqlite() -> Result<()> {
        let db = memory();
        db.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, n INTEGER, b BLOB)")?;
        let id: i64 = db.query_value(
            "INSERT INTO t (name, n, b) VALUES (?1, ?2, ?3) RETURNING id",
            params!["Ωμέγα", 7_i32, vec![0_u8, 255]],
        )?;
        assert_eq!(id, 1);
        assert_eq!(
            db.execute("UPDATE t SET n = n + ?2 WHERE id = ?1", params![id, 1])?,
            1
        );
        let rows = db.query_map("SELECT name, n, b FROM t", params![], |r| {
            Ok((r.get::<String>(0)?, r.get::<i64>(1)?, r.get::<Vec<u8>>(2)?))
        })?;
        assert_eq!(rows, vec![("Ωμέγα".to_owned(), 8, vec![0, 255])]);
        assert!(matches!(
            db.query_row("SELECT id FROM t WHERE id = 99", params![], |r| r
                .get::<i64>(0)),
            Err(Error::NoRows)
        ));
        assert_eq!(
            db.query_opt("SELECT id FROM t WHERE id = 99", params![], |r| r
                .get::<i64>(0))?,
            None
        );
        // A value of the wrong class says which column.
        let e = db
            .query_row("SELECT name FROM t", params![], |r| r.get::<i64>(0))
            .expect_err("text is not an integer");
        assert!(e.to_string().contains("column 0"), "{e}");
        Ok(())
    }

    #[test]
    fn reads_sent_later_are_kept_on_sqlite() -> Result<()> {
        let db = memory();
        db.execute_batch(
            "CREATE TABLE t (n INTEGER, name TEXT); INSERT INTO t VALUES (1, 'ένα'), (2, NULL)",
        )?;
        let later = db.query_later("SELECT n, name FROM t ORDER BY n", params![], |r| {
            Ok((r.get::<i64>(0)?, r.get::<Option<String>>(1)?))
        })?;
        // Run already: a write after it is not in its rows.
        db.execute("INSERT INTO t VALUES (3, 'drei')", params![])?;
        assert_eq!(later.all(&db)?, [(1, Some("ένα".to_owned())), (2, None)]);
        let none = db.query_later("SELECT n FROM t WHERE n > 9", params![], |r| {
            r.get::<i64>(0)
        })?;
        assert_eq!(none.first(&db)?, None);
        let past = db.query_later("SELECT n FROM t", params![], |r| r.get::<i64>(5))?;
        assert!(past.first(&db).is_err());
        Ok(())
    }

    #[test]
    fn a_broken_rule_is_named_the_same_way() -> Result<()> {
        let db = memory();
        db.execute_batch(
            "PRAGMA foreign_keys = ON;
             CREATE TABLE p (id INTEGER PRIMARY KEY, code TEXT UNIQUE, n INTEGER CHECK (n > 0));
             CREATE TABLE c (p INTEGER REFERENCES p (id));",
        )?;
        db.execute("INSERT INTO p (code, n) VALUES ('a', 1)", params![])?;
        let again = db.execute("INSERT INTO p (code, n) VALUES ('a', 1)", params![]);
        assert_eq!(
            again.err().and_then(|e| e.constraint()),
            Some(crate::Constraint::Unique)
        );
        let check = db.execute("INSERT INTO p (code, n) VALUES ('b', 0)", params![]);
        assert_eq!(
            check.err().and_then(|e| e.constraint()),
            Some(crate::Constraint::Check)
        );
        let fk = db.execute("INSERT INTO c (p) VALUES (42)", params![]);
        assert_eq!(
            fk.err().and_then(|e| e.constraint()),
            Some(crate::Constraint::ForeignKey)
        );
        Ok(())
    }
}
