//! All of the engine's SQL: the schema (versioned migrations), connection
//! setup, and one module of queries per part of the engine.

pub mod backup;
pub mod buyers;
pub mod catalog;
pub mod documents;
pub mod events;
pub mod idempotency;
pub mod ids;
pub mod inbound;
pub mod ledger;
pub mod orders;
pub mod owners;
pub mod picking;
pub mod printing;
pub mod releases;
pub mod replica;
pub mod shipping;
pub mod sscc;
pub mod sync;
pub mod tenants;
pub mod translation_jobs;

use crate::error::{Result, WmsError};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use rusqlite_migration::{M, Migrations};
use std::path::Path;

/// The schema, one entry per version. Entries are only ever appended.
pub fn migrations() -> Migrations<'static> {
    Migrations::new(vec![
        M::up(include_str!("schema/001_foundation.sql")),
        M::up(include_str!("schema/002_row_counts.sql")),
        M::up(include_str!("schema/003_operations.sql")),
        M::up(include_str!("schema/004_node.sql")),
        M::up(include_str!("schema/005_outbound_numbering.sql")),
        M::up(include_str!("schema/006_sync.sql")),
        M::up(include_str!("schema/007_link_state.sql")),
        M::up(include_str!("schema/008_releases.sql")),
        M::up(include_str!("schema/009_edge_backlog.sql")),
        M::up(include_str!("schema/010_pick_lines_by_item.sql")),
        M::up(include_str!("schema/011_last_applied.sql")),
        M::up(include_str!("schema/012_queued_print_jobs.sql")),
        M::up(include_str!("schema/013_pricing.sql")),
        // Buyers are also built from the orders already stored.
        M::up_with_hook(
            include_str!("schema/014_crm.sql"),
            |tx: &rusqlite::Transaction| {
                buyers::backfill(tx).map_err(|e| rusqlite_migration::HookError::Hook(e.to_string()))
            },
        ),
        M::up(include_str!("schema/015_release_notes.sql")),
        M::up(include_str!("schema/016_oauth.sql")),
        M::up(include_str!("schema/017_webhooks.sql")),
        M::up(include_str!("schema/018_pick_counters.sql")),
        M::up(include_str!("schema/019_webhook_secret_overlap.sql")),
        M::up(include_str!("schema/020_webhook_retention.sql")),
        M::up(include_str!("schema/021_order_left_from_lines.sql")),
        M::up(include_str!("schema/022_own_log_recovery.sql")),
        M::up(include_str!("schema/023_id_floors.sql")),
        M::up(include_str!("schema/024_recovery_stalled.sql")),
        M::up(include_str!("schema/025_edge_taking_back.sql")),
        M::up(include_str!("schema/026_link_error.sql")),
        M::up_with_hook(
            include_str!("schema/027_buyer_terms_folded.sql"),
            |tx: &rusqlite::Transaction| {
                buyers::reindex(tx).map_err(|e| rusqlite_migration::HookError::Hook(e.to_string()))
            },
        ),
        M::up(include_str!("schema/028_idempotency_keys.sql")),
        M::up(include_str!("schema/029_sync_trust.sql")),
        M::up(include_str!("schema/030_sscc.sql")),
        M::up(include_str!("schema/031_printer_bindings.sql")),
    ])
}

/// The schema on PostgreSQL: SQLite's migrations up to 031 as one
/// baseline, then one file per migration after it, numbered as SQLite's.
pub const POSTGRES_MIGRATIONS: &[depot_sql::migrate::Migration] =
    &[depot_sql::migrate::Migration {
        version: 31,
        sql: include_str!("schema/postgres/031_baseline.sql"),
    }];

/// Prepared statements each connection keeps.
const STATEMENT_CACHE: usize = 256;

/// Pragmas every connection gets. `synchronous=FULL` makes a commit durable
/// before it returns, which is what lets the writer answer "done".
fn configure(conn: &Connection) -> Result<()> {
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    // The engine has a few hundred statements; rusqlite keeps 16 by default,
    // so a writer mixing scans, packing and replication would parse again
    // what it had just evicted.
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
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
    // Every job runs in a savepoint, so pages it changes are first copied
    // to a statement journal: in memory, not a temporary file written
    // through a syscall per page. A larger cache keeps the indexes a busy
    // writer touches.
    conn.execute_batch("PRAGMA temp_store = MEMORY; PRAGMA cache_size = -16384;")?;
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
    // Lists scan index pages: map the file instead of copying each page
    // through read(), and keep a larger cache per connection.
    conn.execute_batch("PRAGMA mmap_size = 268435456; PRAGMA cache_size = -16384;")?;
    Ok(conn)
}

/// A filtered, paged list: `FROM … WHERE business_id = ?` grown one filter
/// at a time, answered with the page and the DataTables counts.
pub struct ListQuery {
    from: String,
    args: Vec<rusqlite::types::Value>,
    business: depot_protocol::BusinessId,
    filtered: bool,
}

impl ListQuery {
    /// `from_where` ends with the business condition, `… WHERE x.business_id = ?`.
    pub fn new(from_where: &str, business: depot_protocol::BusinessId) -> Self {
        Self {
            from: format!(" {from_where}"),
            args: vec![business.0.into()],
            business,
            filtered: false,
        }
    }

    /// Adds ` AND {clause}`, whose `?`s take `args` in order.
    pub fn and<const N: usize>(&mut self, clause: &str, args: [rusqlite::types::Value; N]) {
        self.filtered = true;
        self.from.push_str(" AND ");
        self.from.push_str(clause);
        self.args.extend(args);
    }

    /// Reads the page, with the business's rows of `table` (from
    /// `row_counts`) and the rows the filters match.
    pub fn run<T>(
        mut self,
        conn: &Connection,
        table: &str,
        select: &str,
        order_by: &str,
        page: depot_protocol::Page,
        row: impl FnMut(&rusqlite::Row) -> rusqlite::Result<T>,
    ) -> Result<(Vec<T>, u64, u64)> {
        use rusqlite::params_from_iter;
        let total: i64 = maybe(
            conn.prepare_cached("SELECT n FROM row_counts WHERE business_id = ?1 AND tbl = ?2")?
                .query_row(params![self.business.0, table], |r| r.get(0)),
        )?
        .unwrap_or(0);
        let filtered: i64 = if !self.filtered {
            total
        } else {
            conn.prepare_cached(&format!("SELECT COUNT(*){}", self.from))?
                .query_row(params_from_iter(self.args.iter()), |r| r.get(0))?
        };
        self.args.push((page.length as i64).into());
        self.args.push((page.start as i64).into());
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {select}{} ORDER BY {order_by} LIMIT ? OFFSET ?",
            self.from
        ))?;
        let rows = stmt
            .query_map(params_from_iter(self.args.iter()), row)?
            .collect::<rusqlite::Result<Vec<T>>>()?;
        Ok((rows, total as u64, filtered as u64))
    }
}

/// Refuses a count outside `0..=MAX_ON_HAND` before it is stored: a 422
/// naming `field`. The store's last line against numbers that would make
/// its sums (SQL `SUM`s, the counters its triggers keep: SQLite turns an
/// overflowing `+` into a REAL) leave the `i64` range, whichever node or
/// route they come from. Requests are checked against tighter ranges long
/// before.
pub(crate) fn count_within(field: &str, value: i64) -> Result<()> {
    let max = depot_protocol::stock::MAX_ON_HAND;
    if (0..=max).contains(&value) {
        Ok(())
    } else {
        Err(WmsError::invalid(vec![depot_protocol::FieldError::new(
            field,
            format!("{value} is not between 0 and {max}"),
        )]))
    }
}

/// `query_row` that turns "no row" into `None`.
pub fn maybe<T>(r: rusqlite::Result<T>) -> Result<Option<T>> {
    Ok(r.optional()?)
}

/// Timestamps are stored as the spec writes them, so text order is time order.
pub fn ts(t: &depot_protocol::Timestamp) -> String {
    depot_protocol::format_ts(t)
}

pub fn parse_ts(s: &str) -> rusqlite::Result<depot_protocol::Timestamp> {
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|d| d.with_timezone(&chrono::Utc))
        .map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
        })
}

/// A stored `YYYY-MM-DD` date, if any.
pub(crate) fn parse_date(s: Option<String>) -> rusqlite::Result<Option<chrono::NaiveDate>> {
    s.map(|s| {
        s.parse().map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
        })
    })
    .transpose()
}

pub fn parse_json<T: serde::de::DeserializeOwned>(s: &str) -> rusqlite::Result<T> {
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
    fn row_counts_are_backfilled_and_kept() -> Result<()> {
        let mut conn = Connection::open_in_memory()?;
        migrations().to_version(&mut conn, 1)?;
        conn.execute_batch(
            "INSERT INTO businesses VALUES (1, 'a', 'EUR', 'UTC', 'x'), (2, 'b', 'EUR', 'UTC', 'x');
             INSERT INTO items (business_id, sku, name, created_at, updated_at)
             VALUES (1, 'A', 'a', 'x', 'x'), (1, 'B', 'b', 'x', 'x'), (2, 'A', 'a', 'x', 'x');",
        )?;
        migrations().to_latest(&mut conn)?;
        conn.execute_batch("INSERT INTO items (business_id, sku, name, created_at, updated_at) VALUES (2, 'B', 'b', 'x', 'x')")?;
        let count = |b: i64| -> Result<i64> {
            Ok(conn.query_row(
                "SELECT n FROM row_counts WHERE business_id = ?1 AND tbl = 'items'",
                [b],
                |r| r.get(0),
            )?)
        };
        assert_eq!((count(1)?, count(2)?), (2, 2));
        Ok(())
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
