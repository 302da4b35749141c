//! PostgreSQL beneath the seam: the blocking `postgres` client on the
//! caller's thread, statements prepared once per connection, and values
//! converted as SQLite would take them (an integer bound where the server
//! infers `int4`, a `numeric` sum read as an integer, JSON read as text).

use crate::error::{Error, Result};
use crate::numeric::{self, Number};
use crate::placeholders;
use crate::value::{ToSql, ValueRef};
use bytes::BufMut;
use postgres::types::{FromSql, IsNull, Type, to_sql_checked};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// Prepared statements one connection keeps before it starts again: the
/// store has a few hundred, plus lists built for a number of ids.
const STATEMENT_CACHE: usize = 2048;

pub(crate) struct PgConn {
    /// Always `Some` but while dropped: see the `Drop`.
    client: RefCell<Option<postgres::Client>>,
    statements: RefCell<HashMap<Box<str>, Prepared>>,
    /// Rows this connection's statements changed, as SQLite counts them.
    changes: std::cell::Cell<u64>,
    /// Tables written since last taken ([`crate::Db::take_written`]).
    written: RefCell<std::collections::BTreeSet<Box<str>>>,
    /// What to connect to again when the server has gone away.
    url: String,
    /// Inside `BEGIN` … `COMMIT`/`ROLLBACK`: a connection lost then takes
    /// the transaction with it, and is not replaced until it ends.
    in_transaction: std::cell::Cell<bool>,
    /// A call failed with no answer from the server (a reset, a closed
    /// socket): the client may not know yet that its connection is gone.
    lost: std::cell::Cell<bool>,
}

/// A statement as the server prepared it, and the table it writes.
#[derive(Clone)]
struct Prepared {
    statement: postgres::Statement,
    writes: Option<Arc<str>>,
}

/// Connects to `url` (`postgres://user:password@host:port/db?sslmode=…`):
/// TLS by rustls with the Mozilla roots when the server offers it
/// (`sslmode=prefer`, the default) or must (`require`).
pub(crate) fn connect(url: &str) -> Result<PgConn> {
    Ok(PgConn {
        client: RefCell::new(Some(client(url)?)),
        statements: RefCell::new(HashMap::new()),
        changes: std::cell::Cell::new(0),
        written: RefCell::new(std::collections::BTreeSet::new()),
        url: url.to_owned(),
        in_transaction: std::cell::Cell::new(false),
        lost: std::cell::Cell::new(false),
    })
}

/// The blocking client runs a runtime of its own, which may not be shut
/// down on a thread that drives another (an async task dropping the last
/// handle on a pool): it is let go on a thread of its own.
impl Drop for PgConn {
    fn drop(&mut self) {
        if let Some(client) = self.client.get_mut().take() {
            let _ = std::thread::Builder::new()
                .name("depot-pg-close".into())
                .spawn(move || drop(client));
        }
    }
}

fn client(url: &str) -> Result<postgres::Client> {
    let config: postgres::Config = url.parse()?;
    Ok(match config.get_ssl_mode() {
        postgres::config::SslMode::Disable => config.connect(postgres::NoTls)?,
        _ => config.connect(tls()?)?,
    })
}

fn tls() -> Result<tokio_postgres_rustls::MakeRustlsConnect> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Connect(format!("TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

impl PgConn {
    fn statement(&self, sql: &str) -> Result<Prepared> {
        if let Some(s) = self.statements.borrow().get(sql) {
            return Ok(s.clone());
        }
        let (text, _) = placeholders::to_postgres(sql)?;
        let prepared = Prepared {
            statement: self.noted(self.client()?.prepare(&text))?,
            writes: crate::written::table(sql).map(Arc::from),
        };
        let mut cache = self.statements.borrow_mut();
        if cache.len() >= STATEMENT_CACHE {
            cache.clear();
        }
        cache.insert(sql.into(), prepared.clone());
        Ok(prepared)
    }

    fn wrote(&self, prepared: &Prepared, rows: u64) {
        if let Some(table) = &prepared.writes {
            self.changes.set(self.changes.get().saturating_add(rows));
            let mut written = self.written.borrow_mut();
            if !written.contains(&**table) {
                written.insert(Box::from(&**table));
            }
        }
    }

    pub(crate) fn execute(&self, sql: &str, params: &[&dyn ToSql]) -> Result<usize> {
        let prepared = self.statement(sql)?;
        let values = bind(params);
        let refs = refs(&values);
        let n = self.noted(self.client()?.execute(&prepared.statement, &refs))?;
        self.wrote(&prepared, n);
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    pub(crate) fn query(&self, sql: &str, params: &[&dyn ToSql]) -> Result<Vec<postgres::Row>> {
        let prepared = self.statement(sql)?;
        let values = bind(params);
        let refs = refs(&values);
        let rows = self.noted(self.client()?.query(&prepared.statement, &refs))?;
        // A write answering with its rows (`RETURNING`).
        self.wrote(&prepared, rows.len() as u64);
        Ok(rows)
    }

    pub(crate) fn total_changes(&self) -> u64 {
        self.changes.get()
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
        self.noted(self.client()?.batch_execute(sql))
    }

    /// PostgreSQL answers `COMMIT` of a transaction that a failed statement
    /// aborted with `ROLLBACK`, and no error: a caller that swallowed the
    /// statement's error would take a rollback for a commit. A statement
    /// sent in the same message first fails in such a transaction (and
    /// the `COMMIT` after it is skipped), at no extra round trip; the
    /// transaction is then rolled back here, so it is over either way.
    fn commit(&self) -> Result<()> {
        let committed = self.client()?.batch_execute("SELECT 1; COMMIT");
        match self.noted(committed) {
            Err(Error::Postgres(e))
                if e.code() == Some(&postgres::error::SqlState::IN_FAILED_SQL_TRANSACTION) =>
            {
                self.noted(self.client()?.batch_execute("ROLLBACK"))?;
                Err(Error::RolledBack(
                    "a statement of it failed earlier and its error was not passed on".into(),
                ))
            }
            other => other,
        }
    }

    /// Closes the connection, on a thread of its own (see the `Drop`).
    pub(crate) fn close(self) -> Result<()> {
        let Some(client) = self.client.borrow_mut().take() else {
            return Ok(());
        };
        match std::thread::scope(|s| s.spawn(|| client.close()).join()) {
            Ok(closed) => Ok(closed?),
            Err(_) => Err(Error::Connect("closing the connection panicked".into())),
        }
    }

    /// The client, connected again first if the server went away (a
    /// restart, a failover) between transactions: the statements prepared
    /// on the old connection go with it. Within a transaction the lost
    /// connection's error stands, so that nothing of the transaction runs
    /// on a new one outside it.
    fn client(&self) -> Result<std::cell::RefMut<'_, postgres::Client>> {
        let mut slot = self.client.borrow_mut();
        let gone = self.lost.get() || slot.as_ref().is_some_and(postgres::Client::is_closed);
        if gone && !self.in_transaction.get() {
            self.lost.set(false);
            let fresh = client(&self.url)?;
            tracing::warn!("the connection to PostgreSQL was lost: connected again");
            self.statements.borrow_mut().clear();
            *slot = Some(fresh);
        }
        std::cell::RefMut::filter_map(slot, Option::as_mut)
            .map_err(|_| Error::Connect("the connection is closed".into()))
    }

    /// Notes a call whose connection is gone: no answer from the server
    /// (a reset, a closed socket), or a fatal one (the server ending the
    /// session: a shutdown, `pg_terminate_backend`). The client learns of
    /// it only when its background task does, which may be after the next
    /// call has been sent on the dead socket.
    fn noted<T>(&self, r: std::result::Result<T, postgres::Error>) -> Result<T> {
        r.map_err(|e| {
            let fatal = e
                .as_db_error()
                .is_some_and(|d| matches!(d.severity(), "FATAL" | "PANIC"));
            if fatal || e.is_closed() || (e.code().is_none() && e.as_db_error().is_none()) {
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

fn bind<'a>(params: &'a [&'a dyn ToSql]) -> Vec<Param<'a>> {
    params.iter().map(|p| Param(p.to_sql())).collect()
}

fn refs<'a>(values: &'a [Param<'a>]) -> Vec<&'a (dyn postgres::types::ToSql + Sync)> {
    values
        .iter()
        .map(|v| v as &(dyn postgres::types::ToSql + Sync))
        .collect()
}

/// A parameter written as the type the server inferred for its place.
#[derive(Debug)]
struct Param<'a>(ValueRef<'a>);

type BoxError = Box<dyn std::error::Error + Sync + Send>;

fn cannot(value: ValueRef<'_>, ty: &Type) -> BoxError {
    format!("cannot bind {} as {ty}", value.kind()).into()
}

impl postgres::types::ToSql for Param<'_> {
    fn to_sql(&self, ty: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, BoxError> {
        let value = self.0;
        match value {
            ValueRef::Null => return Ok(IsNull::Yes),
            ValueRef::Integer(i) => match *ty {
                Type::INT8 => out.put_i64(i),
                Type::INT4 => out.put_i32(i32::try_from(i)?),
                Type::INT2 => out.put_i16(i16::try_from(i)?),
                #[allow(clippy::cast_precision_loss)]
                Type::FLOAT8 => out.put_f64(i as f64),
                #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
                Type::FLOAT4 => out.put_f32(i as f32),
                Type::BOOL => out.put_u8(u8::from(i != 0)),
                Type::OID => out.put_u32(u32::try_from(i)?),
                Type::NUMERIC => {
                    let mut buf = Vec::new();
                    numeric::encode(&i.to_string(), &mut buf)?;
                    out.put_slice(&buf);
                }
                Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
                    out.put_slice(i.to_string().as_bytes());
                }
                _ => return Err(cannot(value, ty)),
            },
            ValueRef::Real(f) => match *ty {
                Type::FLOAT8 => out.put_f64(f),
                #[allow(clippy::cast_possible_truncation)]
                Type::FLOAT4 => out.put_f32(f as f32),
                Type::NUMERIC => {
                    let mut buf = Vec::new();
                    if f.is_finite() {
                        numeric::encode(&f.to_string(), &mut buf)?;
                    } else {
                        numeric::encode_special(f, &mut buf);
                    }
                    out.put_slice(&buf);
                }
                Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::UNKNOWN => {
                    out.put_slice(f.to_string().as_bytes());
                }
                _ => return Err(cannot(value, ty)),
            },
            ValueRef::Text(s) => match *ty {
                Type::TEXT
                | Type::VARCHAR
                | Type::BPCHAR
                | Type::NAME
                | Type::UNKNOWN
                | Type::JSON => out.put_slice(s.as_bytes()),
                Type::JSONB => {
                    out.put_u8(1);
                    out.put_slice(s.as_bytes());
                }
                _ => return Err(cannot(value, ty)),
            },
            ValueRef::Blob(b) => match *ty {
                Type::BYTEA => out.put_slice(b),
                _ => return Err(cannot(value, ty)),
            },
        }
        Ok(IsNull::No)
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// A column read as one of SQLite's storage classes.
pub(crate) struct Column<'a>(pub(crate) ValueRef<'a>);

impl<'a> FromSql<'a> for Column<'a> {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let be = |n: usize| -> Result<&'a [u8], BoxError> {
            raw.get(..n)
                .filter(|_| raw.len() == n)
                .ok_or_else(|| format!("{ty} of {} bytes", raw.len()).into())
        };
        let value = match *ty {
            Type::INT8 => ValueRef::Integer(i64::from_be_bytes(be(8)?.try_into()?)),
            Type::INT4 => ValueRef::Integer(i64::from(i32::from_be_bytes(be(4)?.try_into()?))),
            Type::INT2 => ValueRef::Integer(i64::from(i16::from_be_bytes(be(2)?.try_into()?))),
            Type::OID => ValueRef::Integer(i64::from(u32::from_be_bytes(be(4)?.try_into()?))),
            Type::BOOL => ValueRef::Integer(i64::from(be(1)?[0] != 0)),
            Type::FLOAT8 => ValueRef::Real(f64::from_be_bytes(be(8)?.try_into()?)),
            Type::FLOAT4 => ValueRef::Real(f64::from(f32::from_be_bytes(be(4)?.try_into()?))),
            Type::NUMERIC => match numeric::decode(raw)? {
                Number::Integer(i) => ValueRef::Integer(i),
                Number::Real(f) => ValueRef::Real(f),
            },
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN | Type::JSON => {
                ValueRef::Text(std::str::from_utf8(raw)?)
            }
            Type::JSONB => match raw.split_first() {
                Some((1, text)) => ValueRef::Text(std::str::from_utf8(text)?),
                _ => return Err("a jsonb of an unknown version".into()),
            },
            Type::BYTEA => ValueRef::Blob(raw),
            Type::VOID => ValueRef::Null,
            _ => {
                return Err(format!("a column of type {ty}, which the store does not read").into());
            }
        };
        Ok(Column(value))
    }

    fn from_sql_null(_: &Type) -> Result<Self, BoxError> {
        Ok(Column(ValueRef::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// Column `idx` of `row` as a storage class.
pub(crate) fn column(row: &postgres::Row, idx: usize) -> Result<ValueRef<'_>> {
    row.try_get::<usize, Column<'_>>(idx)
        .map(|c| c.0)
        .map_err(|e| Error::conversion(idx, e.to_string()))
}
