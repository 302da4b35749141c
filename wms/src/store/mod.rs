//! All of the engine's SQL: the schema (versioned migrations), connection
//! setup, and one module of queries per part of the engine.

pub mod catalog;
pub mod events;
pub mod ledger;
pub mod orders;
pub mod tenants;

use crate::error::{Result, WmsError};
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use rusqlite_migration::{M, Migrations};
use std::path::Path;

/// The schema, one entry per version. Entries are only ever appended.
pub fn migrations() -> Migrations<'static> {
    Migrations::new(vec![M::up(include_str!("schema/001_foundation.sql"))])
}

/// Pragmas every connection gets. `synchronous=FULL` makes a commit durable
/// before it returns, which is what lets the writer answer "done".
fn configure(conn: &Connection) -> Result<()> {
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL;")?;
    Ok(())
}

/// Opens the database for writing, switching it to WAL and bringing the
/// schema up to date.
pub fn open_writer(path: &Path) -> Result<Connection> {
    let mut conn = Connection::open(path)?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(WmsError::Internal(format!(
            "could not switch {} to WAL (got {mode})",
            path.display()
        )));
    }
    configure(&conn)?;
    migrations().to_latest(&mut conn)?;
    Ok(conn)
}

/// Opens a read-only connection; it sees the last committed state.
pub fn open_reader(path: &Path) -> Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI,
    )?;
    configure(&conn)?;
    Ok(conn)
}

/// `query_row` that turns "no row" into `None`.
pub(crate) fn maybe<T>(r: rusqlite::Result<T>) -> Result<Option<T>> {
    Ok(r.optional()?)
}

/// Timestamps are stored as the spec writes them, so text order is time order.
pub(crate) fn ts(t: &depot_protocol::Timestamp) -> String {
    depot_protocol::format_ts(t)
}

pub(crate) fn parse_ts(s: &str) -> rusqlite::Result<depot_protocol::Timestamp> {
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|d| d.with_timezone(&chrono::Utc))
        .map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
        })
}

pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(s: &str) -> rusqlite::Result<T> {
    serde_json::from_str(s).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_valid() {
        assert!(migrations().validate().is_ok());
    }

    #[test]
    fn opens_in_wal_with_full_sync() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| WmsError::Internal(e.to_string()))?;
        let conn = open_writer(&dir.path().join("t.db"))?;
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
        let sync: i64 = conn.query_row("PRAGMA synchronous", [], |r| r.get(0))?;
        assert_eq!((mode.as_str(), sync), ("wal", 2));
        Ok(())
    }
}
