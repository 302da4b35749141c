//! Schema versions, on either database. SQLite counts them in its
//! `user_version` (as rusqlite_migration did before, so databases it
//! migrated carry on); PostgreSQL in a table of its own, `depot_schema`,
//! one row per version applied. Each version runs in its own transaction
//! with the code that must follow it (a backfill through the store's own
//! functions). On PostgreSQL the whole run holds a session advisory lock:
//! two instances starting on one database at once take turns, and the
//! second finds the work done; on SQLite one writer opens the file.

use crate::error::{Error, Result};
use crate::{Db, Dialect, params};

/// Code run inside a version's transaction, after its statements.
pub type Hook = fn(&Db) -> std::result::Result<(), String>;

/// One version: its number and the statements that bring a database to
/// it (plpgsql bodies and all, run as one batch).
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    pub version: u32,
    pub sql: &'static str,
    pub after: Option<Hook>,
}

impl Migration {
    pub const fn new(version: u32, sql: &'static str) -> Self {
        Self {
            version,
            sql,
            after: None,
        }
    }

    /// The same version, with `hook` run after its statements.
    pub const fn then(self, hook: Hook) -> Self {
        Self {
            after: Some(hook),
            ..self
        }
    }
}

/// The advisory lock migrations hold: a constant of our own, so no other
/// use of advisory locks in the same database meets it by chance.
pub const LOCK: i64 = 0x6465_706f_745f_6d67; // "depot_mg"

/// Brings `db` up to the last of `migrations` (in ascending order); the
/// version it is at afterwards. A database at a version this list does
/// not reach (written by a newer release) is refused.
pub fn run(db: &Db, migrations: &[Migration]) -> Result<u32> {
    run_to(db, migrations, u32::MAX)
}

/// As [`run`], stopping at version `target` (a test of a migration
/// starts from the version before it).
pub fn run_to(db: &Db, migrations: &[Migration], target: u32) -> Result<u32> {
    match db.dialect() {
        Dialect::Sqlite => run_locked(db, migrations, target),
        Dialect::Postgres => {
            db.execute("SELECT pg_advisory_lock(?1)", params![LOCK])?;
            let outcome = db
                .execute_batch(
                    "CREATE TABLE IF NOT EXISTS depot_schema (
                         version     BIGINT PRIMARY KEY,
                         applied_at  TIMESTAMPTZ NOT NULL DEFAULT now()
                     )",
                )
                .and_then(|()| run_locked(db, migrations, target));
            let unlocked = db.execute("SELECT pg_advisory_unlock(?1)", params![LOCK]);
            let version = outcome?;
            unlocked?;
            Ok(version)
        }
    }
}

/// The version `db` is at (0 before the first migration).
pub fn version(db: &Db) -> Result<u32> {
    let v: i64 = match db.dialect() {
        Dialect::Sqlite => db.query_value("PRAGMA user_version", params![])?,
        Dialect::Postgres => {
            let exists: bool = db.query_value(
                "SELECT EXISTS (SELECT 1 FROM information_schema.tables
                                 WHERE table_schema = current_schema() AND table_name = 'depot_schema')",
                params![],
            )?;
            if !exists {
                return Ok(0);
            }
            db.query_value(
                "SELECT COALESCE(MAX(version), 0) FROM depot_schema",
                params![],
            )?
        }
    };
    u32::try_from(v).map_err(|_| Error::conversion(0, format!("schema version {v}")))
}

/// Refuses a database at a version past the last of `migrations`: one a
/// newer release wrote, which this one must not read or write.
pub fn check_not_newer(db: &Db, migrations: &[Migration]) -> Result<u32> {
    let at = version(db)?;
    let newest = migrations.last().map_or(0, |m| m.version);
    if at > newest {
        return Err(Error::Schema(format!(
            "the database's schema is at version {at}, newer than this release knows ({newest}): \
             run the release that wrote it, or a later one"
        )));
    }
    Ok(at)
}

fn run_locked(db: &Db, migrations: &[Migration], target: u32) -> Result<u32> {
    let mut at = check_not_newer(db, migrations)?;
    let from = at;
    for m in migrations
        .iter()
        .filter(|m| m.version > from && m.version <= target)
    {
        db.begin_write()?;
        let applied = db
            .execute_batch(m.sql)
            .and_then(|()| match m.after {
                Some(hook) => hook(db).map_err(|e| {
                    Error::Schema(format!("migration {} could not finish: {e}", m.version))
                }),
                None => Ok(()),
            })
            .and_then(|()| record(db, m.version))
            .and_then(|()| db.execute_batch("COMMIT"));
        if let Err(e) = applied {
            // The batch may have failed half-way: nothing of it stays.
            let _ = db.execute_batch("ROLLBACK");
            tracing::error!(version = m.version, error = %e, "a schema migration failed");
            return Err(e);
        }
        tracing::debug!(version = m.version, "schema migrated");
        at = m.version;
    }
    if at != from {
        tracing::info!(from, to = at, "schema migrated");
    }
    Ok(at)
}

fn record(db: &Db, version: u32) -> Result<()> {
    match db.dialect() {
        // A pragma takes no parameters; the number is ours.
        Dialect::Sqlite => db.execute_batch(&format!("PRAGMA user_version = {version}")),
        Dialect::Postgres => db
            .execute(
                "INSERT INTO depot_schema (version) VALUES (?1)",
                params![version],
            )
            .map(|_| ()),
    }
}
