//! PostgreSQL's schema versions. SQLite's are counted in its
//! `user_version` (rusqlite_migration); PostgreSQL's in a table of their
//! own, `depot_schema`, one row per version applied. Each version runs in
//! its own transaction, and the whole run holds a session advisory lock:
//! two instances starting on one database at once take turns, and the
//! second finds the work done.

use crate::error::{Error, Result};
use crate::{Db, params};

/// One version: its number and the statements that bring a database to
/// it (plpgsql bodies and all, run as one batch).
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    pub version: u32,
    pub sql: &'static str,
}

/// The advisory lock migrations hold: a constant of our own, so no other
/// use of advisory locks in the same database meets it by chance.
pub const LOCK: i64 = 0x6465_706f_745f_6d67; // "depot_mg"

/// Brings `db` up to the last of `migrations` (in ascending order); the
/// version it is at afterwards. A database at a version this list does
/// not reach (written by a newer release) is refused.
pub fn run(db: &Db, migrations: &[Migration]) -> Result<u32> {
    db.execute("SELECT pg_advisory_lock(?1)", params![LOCK])?;
    let outcome = run_locked(db, migrations);
    let unlocked = db.execute("SELECT pg_advisory_unlock(?1)", params![LOCK]);
    let version = outcome?;
    unlocked?;
    Ok(version)
}

/// The version `db` is at (0 before the first migration).
pub fn version(db: &Db) -> Result<u32> {
    let exists: bool = db.query_value(
        "SELECT EXISTS (SELECT 1 FROM information_schema.tables
                         WHERE table_schema = current_schema() AND table_name = 'depot_schema')",
        params![],
    )?;
    if !exists {
        return Ok(0);
    }
    let v: i64 = db.query_value(
        "SELECT COALESCE(MAX(version), 0) FROM depot_schema",
        params![],
    )?;
    u32::try_from(v).map_err(|_| Error::conversion(0, format!("schema version {v}")))
}

fn run_locked(db: &Db, migrations: &[Migration]) -> Result<u32> {
    db.execute_batch(
        "CREATE TABLE IF NOT EXISTS depot_schema (
             version     BIGINT PRIMARY KEY,
             applied_at  TIMESTAMPTZ NOT NULL DEFAULT now()
         )",
    )?;
    let mut at = version(db)?;
    let newest = migrations.last().map_or(0, |m| m.version);
    if at > newest {
        return Err(Error::Schema(format!(
            "the database's schema is at version {at}, newer than this release knows ({newest}): \
             run the release that wrote it, or a later one"
        )));
    }
    let from = at;
    for m in migrations.iter().filter(|m| m.version > from) {
        db.execute_batch("BEGIN")?;
        let applied = db
            .execute_batch(m.sql)
            .and_then(|()| {
                db.execute(
                    "INSERT INTO depot_schema (version) VALUES (?1)",
                    params![m.version],
                )
            })
            .and_then(|_| db.execute_batch("COMMIT"));
        if let Err(e) = applied {
            // The batch may have failed half-way: nothing of it stays.
            let _ = db.execute_batch("ROLLBACK");
            tracing::error!(version = m.version, error = %e, "a schema migration failed");
            return Err(e);
        }
        tracing::info!(version = m.version, "schema migrated");
        at = m.version;
    }
    Ok(at)
}
