//! Copies of a database: taken from the live file while the writer keeps
//! committing, and examined before one is trusted to replace it.

use super::maybe;
use crate::error::{Result, WmsError};
use depot_sql::{Db, params};
use rusqlite::backup::{Backup, StepResult};
use rusqlite::{Connection, ErrorCode};
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a step may keep answering busy before the copy gives up. The
/// source is read under one snapshot, so busy can only come from something
/// else holding the destination.
const BUSY_LIMIT: Duration = Duration::from_secs(30);

/// Copies the database at `src` into `dst`, which must not exist yet,
/// `pages_per_step` pages at a time with `pause` between steps.
/// `progress(copied, total)` is called after each step.
///
/// The copy is the state of one moment: a read transaction is held on the
/// source from the first step to the last. Without it SQLite restarts an
/// online backup whenever another connection commits, and under a steady
/// stream of writes a copy that takes more than one step would never finish.
/// The writer is not held up (WAL readers do not block it); the WAL only
/// cannot be checkpointed past that moment until the copy is done.
pub fn copy_live(
    src: &Path,
    dst: &Path,
    pages_per_step: u32,
    pause: Duration,
    mut progress: impl FnMut(u64, u64),
) -> Result<()> {
    let source = super::open_reader(src)?;
    source.execute_batch("BEGIN")?;
    // A deferred transaction takes its snapshot at the first read.
    let _: i64 = source.query_value("SELECT COUNT(*) FROM sqlite_schema", params![])?;
    let mut target = Connection::open(dst)?;
    {
        let sqlite = source
            .as_sqlite()
            .ok_or_else(|| WmsError::Internal("a backup copies SQLite".into()))?;
        let backup = Backup::new(sqlite, &mut target)?;
        let step = i32::try_from(pages_per_step.max(1)).unwrap_or(i32::MAX);
        let mut busy_since: Option<Instant> = None;
        loop {
            let result = backup.step(step)?;
            let p = backup.progress();
            let total = u64::try_from(p.pagecount).unwrap_or(0);
            let left = u64::try_from(p.remaining).unwrap_or(0);
            progress(total.saturating_sub(left), total);
            match result {
                StepResult::Done => break,
                StepResult::More => busy_since = None,
                // Busy, Locked, and whatever later versions add: wait and retry.
                _ => {
                    let since = *busy_since.get_or_insert_with(Instant::now);
                    if since.elapsed() > BUSY_LIMIT {
                        return Err(WmsError::Internal(format!(
                            "the copy stayed locked for {}s",
                            BUSY_LIMIT.as_secs()
                        )));
                    }
                }
            }
            std::thread::sleep(pause);
        }
    }
    source.execute_batch("COMMIT")?;
    Ok(())
}

/// Makes a copy this process owns a single self-contained file: rollback
/// journal instead of WAL, so that no `-wal` or `-shm` belongs with it. The
/// daemon switches it back to WAL when it opens it.
pub fn settle(path: &Path) -> Result<()> {
    let conn = Connection::open(path)?;
    let mode: String = conn.query_row("PRAGMA journal_mode = DELETE", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("delete") {
        return Err(WmsError::Internal(format!(
            "could not take {} out of WAL mode (got {mode})",
            path.display()
        )));
    }
    Ok(())
}

/// Brings a restored copy (nobody else has it open) to the current schema
/// and marks its log as certain only through its own newest event
/// ([`crate::recovery`]). Answers that seq.
pub fn mark_restored(path: &Path) -> Result<i64> {
    let conn = Db::sqlite(Connection::open(path)?);
    super::migrate(&conn)?;
    crate::recovery::mark_restored(&conn)
}

/// Checkpoints a database nobody else has open, so that its `-wal` holds
/// nothing the main file lacks. Answers whether the checkpoint was complete.
pub fn checkpoint(path: &Path) -> Result<bool> {
    let conn = Connection::open(path)?;
    let busy: i64 = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))?;
    Ok(busy == 0)
}

/// How far a database's event log goes, and how much of it the cloud has
/// acknowledged: `(newest seq, acknowledged seq)`. Read-only.
pub fn log_position(path: &Path) -> Result<(i64, i64)> {
    log_position_in(&super::open_reader(path)?)
}

/// [`log_position`] on an open connection.
pub fn log_position_in(conn: &Db) -> Result<(i64, i64)> {
    let head = conn.query_value("SELECT COALESCE(MAX(seq), 0) FROM events", params![])?;
    let acked = maybe(conn.query_value(
        "SELECT acked FROM sync_state WHERE singleton = 1",
        params![],
    ))?;
    Ok((head, acked.unwrap_or(0)))
}

/// Whether the file starts with SQLite's header.
pub fn looks_like_sqlite(path: &Path) -> std::io::Result<bool> {
    let mut head = [0u8; 16];
    let mut file = std::fs::File::open(path)?;
    let mut read = 0;
    while read < head.len() {
        match file.read(&mut head[read..])? {
            0 => return Ok(false),
            n => read += n,
        }
    }
    Ok(&head == b"SQLite format 3\0")
}

/// What a database file holds, as far as deciding whether to trust it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspection {
    /// What `PRAGMA integrity_check` found (or why it could not run);
    /// empty when it said ok.
    pub problems: Vec<String>,
    /// The node it belongs to (`node` table): number and origin.
    pub node: Option<(u32, String)>,
    /// The businesses it holds rows of.
    pub businesses: Vec<i64>,
    /// The newest sequence number in its event log (0 if none).
    pub last_seq: i64,
    /// Its schema version, and whether this build knows it.
    pub schema_version: usize,
    pub schema_known: bool,
    pub pages: u64,
    pub page_size: u64,
}

impl Inspection {
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Examines a database file read-only: its integrity first, then, if that
/// holds, whose it is and how far its log goes. A file SQLite finds corrupt
/// or not a database at all is an answer (`problems`), not an error.
pub fn inspect(path: &Path) -> Result<Inspection> {
    let mut out = Inspection {
        problems: Vec::new(),
        node: None,
        businesses: Vec::new(),
        last_seq: 0,
        schema_version: 0,
        schema_known: true,
        pages: 0,
        page_size: 0,
    };
    let conn = match super::open_reader(path) {
        Ok(conn) => conn,
        Err(WmsError::Storage(e)) => match damage(&e) {
            Some(problem) => {
                out.problems.push(problem);
                return Ok(out);
            }
            None => return Err(e.into()),
        },
        Err(e) => return Err(e),
    };
    match integrity(&conn) {
        Ok(problems) => out.problems = problems,
        Err(e) => match damage(&e) {
            Some(problem) => {
                out.problems.push(problem);
                return Ok(out);
            }
            None => return Err(e.into()),
        },
    }
    if !out.is_ok() {
        return Ok(out);
    }
    out.pages = conn.query_value("PRAGMA page_count", params![])?;
    out.page_size = conn.query_value("PRAGMA page_size", params![])?;
    out.schema_version = conn.query_value("PRAGMA user_version", params![])?;
    out.schema_known = depot_sql::migrate::check_not_newer(&conn, super::MIGRATIONS).is_ok();
    let has = |table: &str| -> Result<bool> {
        Ok(conn.exists(
            "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1",
            params![table],
        )?)
    };
    if has("node")? {
        out.node = maybe(conn.query_row(
            "SELECT number, origin FROM node WHERE singleton = 1",
            params![],
            |r| Ok((r.get(0)?, r.get(1)?)),
        ))?;
    }
    if has("businesses")? {
        out.businesses =
            conn.query_map("SELECT id FROM businesses ORDER BY id", params![], |r| {
                r.get(0)
            })?;
    }
    if has("events")? {
        out.last_seq = conn.query_value("SELECT COALESCE(MAX(seq), 0) FROM events", params![])?;
    }
    Ok(out)
}

/// `PRAGMA integrity_check`'s findings, at most 10; empty when it said ok.
fn integrity(conn: &Db) -> depot_sql::Result<Vec<String>> {
    let rows = conn.query_map("PRAGMA integrity_check(10)", params![], |r| {
        r.get::<String>(0)
    })?;
    Ok(match rows.as_slice() {
        [ok] if ok == "ok" => Vec::new(),
        _ => rows,
    })
}

/// The description of an error that means the file is damaged or not a
/// database, rather than that it could not be read.
fn damage(e: &depot_sql::Error) -> Option<String> {
    let depot_sql::Error::Sqlite(sqlite) = e else {
        return None;
    };
    match sqlite.sqlite_error_code() {
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => Some(e.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_of_a_live_database_is_whole_and_says_whose_it_is() {
        let dir = tempfile::tempdir().expect("tempdir");
        let live = dir.path().join("live.db");
        let writer = super::super::open_writer(&live).expect("writer");
        super::super::ids::claim(&writer, 3, "edge:x").expect("claim");
        writer
            .execute_batch(
                "INSERT INTO events (id, origin, kind, payload, at) VALUES ('a', 'edge:x', 'k', '{}', 't');
                 INSERT INTO events (id, origin, kind, payload, at) VALUES ('b', 'edge:x', 'k', '{}', 't');",
            )
            .expect("events");
        let copy = dir.path().join("copy.db");
        let mut calls = 0;
        copy_live(&live, &copy, 2, Duration::ZERO, |done, total| {
            calls += 1;
            assert!(done <= total);
        })
        .expect("copy");
        assert!(calls > 1, "copied in one step");
        settle(&copy).expect("settle");
        let seen = inspect(&copy).expect("inspect");
        assert!(seen.is_ok(), "{:?}", seen.problems);
        assert_eq!(seen.node, Some((3, "edge:x".into())));
        assert_eq!(seen.last_seq, 2);
        assert_eq!(log_position(&copy).expect("position"), (2, 0));
        assert!(seen.schema_known);
        assert!(!dir.path().join("copy.db-wal").exists());
        assert!(looks_like_sqlite(&copy).expect("read"));
    }

    #[test]
    fn damage_is_an_answer_not_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let text = dir.path().join("notes.txt");
        std::fs::write(&text, "not a database at all, just some text").expect("write");
        assert!(!looks_like_sqlite(&text).expect("read"));
        let seen = inspect(&text).expect("inspect");
        assert!(!seen.is_ok());
    }
}
