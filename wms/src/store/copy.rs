//! A whole SQLite database copied into an empty PostgreSQL one at the
//! same schema version, keeping every id, sequence number and cursor, so a
//! cloud moves to PostgreSQL and its edges carry on without a resync.
//!
//! The copy is one PostgreSQL transaction: it lands whole or not at all.
//! Rows go in foreign-key order, many to a statement, with the triggers
//! that keep derived rows (row counts, what waves have left) switched off,
//! since those rows are copied as they stand; identity sequences are then
//! set past the largest id of their table.

use crate::error::{Result, WmsError};
use depot_sql::{Db, Dialect, Value, params};
use std::collections::{BTreeMap, BTreeSet};

/// PostgreSQL takes at most this many parameters in one statement.
const MAX_PARAMS: usize = 65_535;
/// Rows one INSERT carries at most.
const ROWS_PER_INSERT: usize = 500;

/// What was copied: rows per table.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Copied {
    pub tables: BTreeMap<String, u64>,
}

impl Copied {
    pub fn rows(&self) -> u64 {
        self.tables.values().sum()
    }
}

/// The tables of a SQLite database (not SQLite's own), parents before the
/// tables whose foreign keys name them.
fn tables_in_order(from: &Db) -> Result<Vec<String>> {
    let names: Vec<String> = from.query_map(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        params![],
        |r| r.get(0),
    )?;
    let mut parents: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for t in &names {
        let refs: Vec<String> = from.query_map(
            "SELECT \"table\" FROM pragma_foreign_key_list(?1)",
            params![t],
            |r| r.get(0),
        )?;
        parents.insert(
            t.clone(),
            refs.into_iter()
                .filter(|p| p != t && names.contains(p))
                .collect(),
        );
    }
    let mut ordered: Vec<String> = Vec::with_capacity(names.len());
    while ordered.len() < names.len() {
        let ready: Vec<String> = names
            .iter()
            .filter(|t| !ordered.contains(t))
            .filter(|t| parents[*t].iter().all(|p| ordered.contains(p)))
            .cloned()
            .collect();
        if ready.is_empty() {
            return Err(WmsError::Internal(
                "the tables' foreign keys go round in a circle".into(),
            ));
        }
        ordered.extend(ready);
    }
    Ok(ordered)
}

fn columns(from: &Db, table: &str) -> Result<Vec<String>> {
    Ok(from.query_map(
        "SELECT name FROM pragma_table_info(?1) ORDER BY cid",
        params![table],
        |r| r.get(0),
    )?)
}

/// The rows of `to` that are not the ones its migrations seed: a database
/// with any is not empty, and is not copied into.
fn rows_beyond_seeds(to: &Db, tables: &[String]) -> Result<Option<String>> {
    for t in tables {
        let n: i64 = to.query_value(&format!("SELECT COUNT(*) FROM {t}"), params![])?;
        let seeded = matches!(t.as_str(), "sync_state" | "webhook_cursor");
        if n > i64::from(seeded) {
            return Ok(Some(t.clone()));
        }
    }
    Ok(None)
}

/// Copies everything in `from` (SQLite, at this release's schema) into
/// `to` (PostgreSQL, migrated to the same version and empty), the bytes of
/// its documents (files beside it, read by `blob(sha256)`) into the
/// database, calling `progress(table, copied, of)` as rows go.
pub fn sqlite_to_postgres(
    from: &Db,
    to: &Db,
    mut blob: impl FnMut(&str) -> Result<Vec<u8>>,
    mut progress: impl FnMut(&str, u64, u64),
) -> Result<Copied> {
    if from.dialect() != Dialect::Sqlite || to.dialect() != Dialect::Postgres {
        return Err(WmsError::Internal(
            "a copy goes from SQLite to PostgreSQL".into(),
        ));
    }
    let (from_version, to_version) = (
        depot_sql::migrate::version(from)?,
        depot_sql::migrate::version(to)?,
    );
    if from_version != to_version {
        return Err(WmsError::Internal(format!(
            "the schemas differ: SQLite at version {from_version}, PostgreSQL at {to_version}"
        )));
    }
    let tables = tables_in_order(from)?;
    // One snapshot of the source, whatever else reads it meanwhile.
    from.execute_batch("BEGIN")?;
    let copied = (|| {
        if let Some(t) = rows_beyond_seeds(to, &tables)? {
            return Err(WmsError::Internal(format!(
                "the PostgreSQL database is not empty ({t} has rows): copy into a new one"
            )));
        }
        to.begin_write()?;
        let done = copy_all(from, to, &tables, &mut progress)
            .and_then(|copied| copy_blobs(from, to, &mut blob, &mut progress, copied))
            .and_then(|copied| {
                to.execute_batch("COMMIT")?;
                Ok(copied)
            });
        if done.is_err() {
            let _ = to.execute_batch("ROLLBACK");
        }
        done
    })();
    let _ = from.execute_batch("COMMIT");
    copied
}

/// The documents' bytes, from the files beside the SQLite database into
/// `document_blobs`.
fn copy_blobs(
    from: &Db,
    to: &Db,
    blob: &mut impl FnMut(&str) -> Result<Vec<u8>>,
    progress: &mut impl FnMut(&str, u64, u64),
    mut copied: Copied,
) -> Result<Copied> {
    let hashes = super::documents::hashes(from)?;
    let total = hashes.len() as u64;
    progress("document_blobs", 0, total);
    for (n, sha) in hashes.iter().enumerate() {
        super::documents::put_blob(to, sha, &blob(sha)?)?;
        progress("document_blobs", n as u64 + 1, total);
    }
    copied.tables.insert("document_blobs".into(), total);
    Ok(copied)
}

fn copy_all(
    from: &Db,
    to: &Db,
    tables: &[String],
    progress: &mut impl FnMut(&str, u64, u64),
) -> Result<Copied> {
    // The seeded rows give way to the copied ones; children first.
    for t in tables.iter().rev() {
        to.execute_batch(&format!(
            "ALTER TABLE {t} DISABLE TRIGGER USER; DELETE FROM {t}"
        ))?;
    }
    let mut copied = Copied::default();
    for t in tables {
        let cols = columns(from, t)?;
        let total: i64 = from.query_value(&format!("SELECT COUNT(*) FROM {t}"), params![])?;
        let total = u64::try_from(total).unwrap_or(0);
        let per_insert = ROWS_PER_INSERT.min(MAX_PARAMS / cols.len().max(1)).max(1);
        let list = cols.join(", ");
        let mut batch: Vec<Value> = Vec::with_capacity(per_insert * cols.len());
        let mut done = 0_u64;
        progress(t, 0, total);
        let mut flush = |batch: &mut Vec<Value>, done: &mut u64| -> Result<()> {
            let rows = batch.len() / cols.len();
            if rows == 0 {
                return Ok(());
            }
            let values = (0..rows)
                .map(|r| {
                    let marks = (1..=cols.len())
                        .map(|c| format!("?{}", r * cols.len() + c))
                        .collect::<Vec<_>>();
                    format!("({})", marks.join(", "))
                })
                .collect::<Vec<_>>()
                .join(", ");
            let args: Vec<&dyn depot_sql::ToSql> =
                batch.iter().map(|v| v as &dyn depot_sql::ToSql).collect();
            to.execute(&format!("INSERT INTO {t} ({list}) VALUES {values}"), &args)?;
            *done += rows as u64;
            batch.clear();
            progress(t, *done, total);
            Ok(())
        };
        let mut failed = None;
        from.query_each(&format!("SELECT {list} FROM {t}"), params![], |r| {
            for c in 0..cols.len() {
                batch.push(r.get_ref(c)?.to_owned());
            }
            if batch.len() >= per_insert * cols.len() {
                if let Err(e) = flush(&mut batch, &mut done) {
                    failed = Some(e);
                    return Err(depot_sql::Error::Schema(format!("copying {t} stopped")));
                }
            }
            Ok(())
        })
        .map_err(|e| failed.take().unwrap_or_else(|| e.into()))?;
        flush(&mut batch, &mut done)?;
        to.execute_batch(&format!("ALTER TABLE {t} ENABLE TRIGGER USER"))?;
        copied.tables.insert(t.clone(), done);
    }
    // New rows number on from the largest id copied.
    let identities: Vec<(String, String)> = to.query_map(
        "SELECT table_name, column_name FROM information_schema.columns
         WHERE table_schema = current_schema() AND is_identity = 'YES'",
        params![],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    for (table, column) in identities {
        to.query_value::<i64>(
            &format!(
                "SELECT setval(pg_get_serial_sequence('{table}', '{column}'),
                               COALESCE(MAX({column}), 0) + 1, false) FROM {table}"
            ),
            params![],
        )?;
    }
    super::ids::reset_sequences(to)?;
    // Every table as many rows as the source: checked before the commit.
    for (t, n) in &copied.tables {
        let there: i64 = to.query_value(&format!("SELECT COUNT(*) FROM {t}"), params![])?;
        if u64::try_from(there).ok() != Some(*n) {
            return Err(WmsError::Internal(format!(
                "{t}: {n} rows copied but {there} found after"
            )));
        }
    }
    Ok(copied)
}
