//! All of the engine's SQL: the schema (versioned migrations), connection
//! setup, and one module of queries per part of the engine.

pub mod backup;
pub mod buyers;
pub mod catalog;
pub mod channels;
pub mod connectors;
#[cfg(feature = "postgres")]
pub mod copy;
pub mod counts;
pub mod documents;
pub mod events;
pub mod idempotency;
pub mod ids;
pub mod inbound;
pub mod ledger;
mod list;
pub mod locations;
pub mod orders;
pub mod owners;
pub mod picking;
pub mod printing;
pub mod putaway;
pub mod releases;
pub mod replenish;
pub mod replica;
pub mod returns;
pub mod rows;
pub mod shipping;
pub mod sscc;
pub mod sync;
pub mod tenants;
pub mod tickets;
pub mod translation_jobs;

pub use list::{COUNTS_FRESH_FOR, EXACT_COUNT, Key, ListQuery, Listing, Order};

use crate::error::{Result, WmsError};
use depot_sql::migrate::Migration;
use depot_sql::{Db, params};
use rusqlite::{Connection, OpenFlags, config::DbConfig};
use std::path::Path;

/// The schema on SQLite, one entry per version. Entries are only ever
/// appended.
pub const MIGRATIONS: &[Migration] = &[
    Migration::new(1, include_str!("schema/001_foundation.sql")),
    Migration::new(2, include_str!("schema/002_row_counts.sql")),
    Migration::new(3, include_str!("schema/003_operations.sql")),
    Migration::new(4, include_str!("schema/004_node.sql")),
    Migration::new(5, include_str!("schema/005_outbound_numbering.sql")),
    Migration::new(6, include_str!("schema/006_sync.sql")),
    Migration::new(7, include_str!("schema/007_link_state.sql")),
    Migration::new(8, include_str!("schema/008_releases.sql")),
    Migration::new(9, include_str!("schema/009_edge_backlog.sql")),
    Migration::new(10, include_str!("schema/010_pick_lines_by_item.sql")),
    Migration::new(11, include_str!("schema/011_last_applied.sql")),
    Migration::new(12, include_str!("schema/012_queued_print_jobs.sql")),
    Migration::new(13, include_str!("schema/013_pricing.sql")),
    // Buyers are also built from the orders already stored.
    Migration::new(14, include_str!("schema/014_crm.sql"))
        .then(|db| buyers::backfill(db).map_err(|e| e.to_string())),
    Migration::new(15, include_str!("schema/015_release_notes.sql")),
    Migration::new(16, include_str!("schema/016_oauth.sql")),
    Migration::new(17, include_str!("schema/017_webhooks.sql")),
    Migration::new(18, include_str!("schema/018_pick_counters.sql")),
    Migration::new(19, include_str!("schema/019_webhook_secret_overlap.sql")),
    Migration::new(20, include_str!("schema/020_webhook_retention.sql")),
    Migration::new(21, include_str!("schema/021_order_left_from_lines.sql")),
    Migration::new(22, include_str!("schema/022_own_log_recovery.sql")),
    Migration::new(23, include_str!("schema/023_id_floors.sql")),
    Migration::new(24, include_str!("schema/024_recovery_stalled.sql")),
    Migration::new(25, include_str!("schema/025_edge_taking_back.sql")),
    Migration::new(26, include_str!("schema/026_link_error.sql")),
    Migration::new(27, include_str!("schema/027_buyer_terms_folded.sql"))
        .then(|db| buyers::reindex(db).map_err(|e| e.to_string())),
    Migration::new(28, include_str!("schema/028_idempotency_keys.sql")),
    Migration::new(29, include_str!("schema/029_sync_trust.sql")),
    Migration::new(30, include_str!("schema/030_sscc.sql")),
    Migration::new(31, include_str!("schema/031_printer_bindings.sql")),
    Migration::new(32, include_str!("schema/032_document_blobs.sql")),
    Migration::new(33, include_str!("schema/033_downlink_owner.sql")),
    Migration::new(34, include_str!("schema/034_live_tickets.sql")),
    Migration::new(35, include_str!("schema/035_node_id_sequences.sql")),
    Migration::new(36, include_str!("schema/036_locations.sql")),
    Migration::new(37, include_str!("schema/037_putaway.sql")),
    Migration::new(38, include_str!("schema/038_counts.sql")),
    Migration::new(39, include_str!("schema/039_replenishment.sql")),
    Migration::new(40, include_str!("schema/040_returns.sql")),
    Migration::new(41, include_str!("schema/041_channels.sql")),
    Migration::new(42, include_str!("schema/042_backorders.sql")),
    Migration::new(43, include_str!("schema/043_connectors.sql")),
    Migration::new(44, include_str!("schema/044_order_versions.sql")),
    Migration::new(45, include_str!("schema/045_order_indexes_partial.sql")),
    Migration::new(46, include_str!("schema/046_conflicts_counted.sql")),
    Migration::new(47, include_str!("schema/047_ledger_keys_unchecked.sql")),
    Migration::new(48, include_str!("schema/048_order_versions_indexed.sql")),
];

/// The schema on PostgreSQL: SQLite's migrations up to 031 as one
/// baseline, then one file per migration after it, numbered as SQLite's.
pub const POSTGRES_MIGRATIONS: &[Migration] = &[
    Migration::new(31, include_str!("schema/postgres/031_baseline.sql")),
    Migration::new(32, include_str!("schema/postgres/032_document_blobs.sql")),
    Migration::new(33, include_str!("schema/postgres/033_downlink_owner.sql")),
    Migration::new(34, include_str!("schema/postgres/034_live_tickets.sql")),
    Migration::new(
        35,
        include_str!("schema/postgres/035_node_id_sequences.sql"),
    ),
    Migration::new(36, include_str!("schema/postgres/036_locations.sql")),
    Migration::new(37, include_str!("schema/postgres/037_putaway.sql")),
    Migration::new(38, include_str!("schema/postgres/038_counts.sql")),
    Migration::new(39, include_str!("schema/postgres/039_replenishment.sql")),
    Migration::new(40, include_str!("schema/postgres/040_returns.sql")),
    Migration::new(41, include_str!("schema/postgres/041_channels.sql")),
    Migration::new(42, include_str!("schema/postgres/042_backorders.sql")),
    Migration::new(43, include_str!("schema/postgres/043_connectors.sql")),
    Migration::new(44, include_str!("schema/postgres/044_order_versions.sql")),
    Migration::new(
        45,
        include_str!("schema/postgres/045_order_indexes_partial.sql"),
    ),
    Migration::new(
        46,
        include_str!("schema/postgres/046_conflicts_counted.sql"),
    ),
    Migration::new(
        47,
        include_str!("schema/postgres/047_ledger_keys_unchecked.sql"),
    ),
    Migration::new(
        48,
        include_str!("schema/postgres/048_order_versions_indexed.sql"),
    ),
];

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
    // A plan that does not depend on the values bound. Without this, a
    // statement with `status = ?` on a table with a partial index `WHERE
    // status = 'confirmed'` has SQLite compare the bound value with the
    // index's: it marks the parameter, and every new binding of it throws
    // the prepared plan away, so a cached statement is parsed and planned
    // again on every run (the order list's page, 15 % of its server's
    // time). The partial indexes' own queries name their values literally.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL;")?;
    Ok(())
}

/// Opens the database for writing, switching it to WAL and bringing the
/// schema up to date.
pub fn open_writer(path: &Path) -> Result<Db> {
    let conn = Connection::open(path)?;
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
    let db = Db::sqlite(conn);
    migrate(&db)?;
    // As SQLite's documentation asks of a long-lived connection: its
    // planner's statistics brought up to date where they are missing or
    // stale (cheaply: the analysis is bounded), then by `Wms::optimize`
    // every few hours.
    sqlite_statistics(&db, "PRAGMA optimize = 0x10002")?;
    Ok(db)
}

/// Brings `db` to the schema this release writes, on either database.
pub fn migrate(db: &Db) -> Result<u32> {
    Ok(depot_sql::migrate::run(db, migrations_for(db))?)
}

/// How many of this release's migrations `db` lacks.
pub fn pending_migrations(db: &Db) -> Result<usize> {
    let at = depot_sql::migrate::version(db)?;
    Ok(migrations_for(db).iter().filter(|m| m.version > at).count())
}

fn migrations_for(db: &Db) -> &'static [Migration] {
    match db.dialect() {
        depot_sql::Dialect::Sqlite => MIGRATIONS,
        depot_sql::Dialect::Postgres => POSTGRES_MIGRATIONS,
    }
}

/// Opens a read-only connection; it sees the last committed state.
pub fn open_reader(path: &Path) -> Result<Db> {
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
    Ok(Db::sqlite(conn))
}

/// A database in memory, configured as a file's and migrated to
/// `version` (`u32::MAX`: the latest), for tests.
#[cfg(test)]
pub(crate) fn memory(version: u32) -> Result<Db> {
    let conn = Connection::open_in_memory()?;
    configure(&conn)?;
    let db = Db::sqlite(conn);
    depot_sql::migrate::run_to(&db, MIGRATIONS, version)?;
    Ok(db)
}

/// A database in memory at the latest version holding businesses 1 and 2,
/// for tests of what one business may see of the other's.
#[cfg(test)]
pub(crate) fn two_businesses() -> Result<Db> {
    let conn = memory(u32::MAX)?;
    conn.execute_batch(
        "INSERT INTO businesses (id, name, currency, timezone, created_at)
         VALUES (1, 'a', 'EUR', 'UTC', 'x'), (2, 'b', 'EUR', 'UTC', 'x')",
    )?;
    Ok(conn)
}

/// The size of a database kept on a server (PostgreSQL), as the server
/// counts it; `None` for a file, which is measured on its disk.
pub fn size_on_server(db: &Db) -> Result<Option<u64>> {
    match db.dialect() {
        depot_sql::Dialect::Sqlite => Ok(None),
        depot_sql::Dialect::Postgres => {
            let bytes: i64 =
                db.query_value("SELECT pg_database_size(current_database())", params![])?;
            Ok(Some(u64::try_from(bytes).unwrap_or(0)))
        }
    }
}

/// Has the database gather the statistics its planner reads (`ANALYZE`:
/// PostgreSQL's autovacuum runs it on its own after enough writes; SQLite
/// has them refreshed by `PRAGMA optimize`, see `open_writer`). Without
/// them SQLite can take the wrong index: a status filter with a cursor
/// was read through the date index, every status's rows, until it had
/// them.
///
/// On PostgreSQL it vacuums too, as autovacuum does after a load of new
/// rows: until a page is marked all-visible, an index-only scan (a list's
/// page of ids) reads every row it passes in the table as well, to see
/// whether it is visible (an offset page of the bench: 496 of them, 1.2 ms
/// instead of 0.24).
pub fn gather_statistics(db: &Db) -> Result<()> {
    match db.dialect() {
        depot_sql::Dialect::Postgres => Ok(db.execute_batch("VACUUM (ANALYZE)")?),
        depot_sql::Dialect::Sqlite => sqlite_statistics(db, "ANALYZE"),
    }
}

/// Runs `analysis` (`ANALYZE`, `PRAGMA optimize`) keeping only the
/// per-index statistics (`sqlite_stat1`). The bundled SQLite is built with
/// STAT4, whose samples make it plan a statement again whenever a value
/// bound in a range changes: every list page and most writes, measured at
/// a tenth of a list's cost. The per-index figures are what choose the
/// right index; the samples go, and the planner reloads what is left.
/// (Every connection now also plans without the values bound, see
/// `configure`, so samples could no longer be matched against them.)
pub fn sqlite_statistics(db: &Db, analysis: &str) -> Result<()> {
    db.execute_batch(analysis)?;
    let samples: i64 = db.query_value(
        "SELECT COUNT(*) FROM sqlite_master WHERE name = 'sqlite_stat4'",
        params![],
    )?;
    if samples > 0 {
        db.execute_batch("DELETE FROM sqlite_stat4; ANALYZE sqlite_schema;")?;
    }
    Ok(())
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
pub fn maybe<T>(r: depot_sql::Result<T>) -> Result<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(depot_sql::Error::NoRows) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Timestamps are stored as the spec writes them, so text order is time order.
pub fn ts(t: &depot_protocol::Timestamp) -> String {
    depot_protocol::format_ts(t)
}

pub fn parse_ts(s: &str) -> depot_sql::Result<depot_protocol::Timestamp> {
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|d| d.with_timezone(&chrono::Utc))
        .map_err(|e| depot_sql::Error::conversion(0, e.to_string()))
}

/// A stored `YYYY-MM-DD` date, if any.
pub(crate) fn parse_date(s: Option<String>) -> depot_sql::Result<Option<chrono::NaiveDate>> {
    s.map(|s| {
        s.parse()
            .map_err(|e: chrono::ParseError| depot_sql::Error::conversion(0, e.to_string()))
    })
    .transpose()
}

pub fn parse_json<T: serde::de::DeserializeOwned>(s: &str) -> depot_sql::Result<T> {
    serde_json::from_str(s).map_err(|e| depot_sql::Error::conversion(0, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_count_up_from_one_without_a_gap() {
        // SQLite's user_version counts migrations: version n is entry n.
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version as usize, i + 1, "entry {i}");
        }
        let last = POSTGRES_MIGRATIONS.last().map(|m| m.version);
        assert_eq!(last, MIGRATIONS.last().map(|m| m.version));
    }

    #[test]
    fn row_counts_are_backfilled_and_kept() -> Result<()> {
        let conn = memory(1)?;
        conn.execute_batch(
            "INSERT INTO businesses VALUES (1, 'a', 'EUR', 'UTC', 'x'), (2, 'b', 'EUR', 'UTC', 'x');
             INSERT INTO items (business_id, sku, name, created_at, updated_at)
             VALUES (1, 'A', 'a', 'x', 'x'), (1, 'B', 'b', 'x', 'x'), (2, 'A', 'a', 'x', 'x');",
        )?;
        migrate(&conn)?;
        conn.execute_batch("INSERT INTO items (business_id, sku, name, created_at, updated_at) VALUES (2, 'B', 'b', 'x', 'x')")?;
        let count = |b: i64| -> Result<i64> {
            Ok(conn.query_value(
                "SELECT n FROM row_counts WHERE business_id = ?1 AND tbl = 'items'",
                params![b],
            )?)
        };
        assert_eq!((count(1)?, count(2)?), (2, 2));
        Ok(())
    }

    #[test]
    fn opens_in_wal_with_full_sync() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| WmsError::Internal(e.to_string()))?;
        let conn = open_writer(&dir.path().join("t.db"))?;
        let mode: String = conn.query_value("PRAGMA journal_mode", params![])?;
        let sync: i64 = conn.query_value("PRAGMA synchronous", params![])?;
        assert_eq!((mode.as_str(), sync), ("wal", 2));
        Ok(())
    }

    #[test]
    fn a_cached_statement_is_not_planned_again_for_new_values() -> Result<()> {
        // `orders` and `print_jobs` have partial indexes on a status
        // literal; a statement binding the status must keep its plan
        // whatever value it is given, on the writer's and a reader's
        // connections alike.
        let dir = tempfile::tempdir().map_err(|e| WmsError::Internal(e.to_string()))?;
        let path = dir.path().join("t.db");
        let writer = open_writer(&path)?;
        let reader = open_reader(&path)?;
        for db in [&writer, &reader] {
            let conn = db.as_sqlite().expect("sqlite");
            for sql in [
                "SELECT id FROM orders WHERE business_id = ?1 AND status = ?2 ORDER BY created_at DESC LIMIT ?3",
                "SELECT id FROM print_jobs WHERE printer_id = ?1 AND status = ?2 ORDER BY created_at LIMIT ?3",
            ] {
                for (i, status) in ["confirmed", "Επιβεβαιωμένη", "queued", "confirmed"]
                    .into_iter()
                    .enumerate()
                {
                    let mut stmt = conn.prepare_cached(sql)?;
                    let _ = stmt
                        .query_map(rusqlite::params![1, status, 50], |r| r.get::<_, i64>(0))?
                        .count();
                    let planned_again = stmt.get_status(rusqlite::StatementStatus::RePrepare);
                    assert_eq!(planned_again, 0, "{sql} after {} runs", i + 1);
                }
            }
        }
        Ok(())
    }
}
