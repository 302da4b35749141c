//! Translation sync jobs: their state and progress, kept so that a job can
//! be followed from any instance and across restarts.

use super::{parse_json, parse_ts, ts};
use crate::error::Result;
use depot_protocol::Timestamp;
use depot_protocol::release::{JobError, JobStatus, MAX_JOB_ERRORS, TranslationJob};
use depot_sql::{Db, Row, params};

const COLS: &str =
    "id, status, total, done, filled, skipped, failed, errors, message, requested_by,
                    started_at, updated_at, finished_at";

fn row(r: &Row) -> depot_sql::Result<TranslationJob> {
    let status: String = r.get(1)?;
    let count = |i: usize| -> depot_sql::Result<u64> { Ok(r.get::<i64>(i)?.max(0) as u64) };
    Ok(TranslationJob {
        job_id: r.get(0)?,
        status: JobStatus::parse(&status)
            .ok_or_else(|| depot_sql::Error::conversion(1, format!("job status {status}")))?,
        total: count(2)?,
        done: count(3)?,
        filled: count(4)?,
        skipped: count(5)?,
        failed: count(6)?,
        errors: parse_json(&r.get::<String>(7)?)?,
        message: r.get(8)?,
        requested_by: r.get(9)?,
        started_at: parse_ts(&r.get::<String>(10)?)?,
        updated_at: parse_ts(&r.get::<String>(11)?)?,
        finished_at: r
            .get::<Option<String>>(12)?
            .map(|t| parse_ts(&t))
            .transpose()?,
    })
}

pub fn get(conn: &Db, id: i64) -> Result<Option<TranslationJob>> {
    Ok(conn.query_opt(
        &format!("SELECT {COLS} FROM translation_jobs WHERE id = ?1"),
        params![id],
        row,
    )?)
}

pub fn running(conn: &Db) -> Result<Option<TranslationJob>> {
    Ok(conn.query_opt(
        &format!("SELECT {COLS} FROM translation_jobs WHERE status = 'running'"),
        params![],
        row,
    )?)
}

/// Fails the running job if it has not moved since `before`.
pub fn fail_stale(conn: &Db, before: &Timestamp, message: &str, at: &Timestamp) -> Result<()> {
    conn.execute(
        "UPDATE translation_jobs SET status = 'failed', message = ?2, finished_at = ?3
         WHERE status = 'running' AND updated_at < ?1",
        params![ts(before), message, ts(at)],
    )?;
    Ok(())
}

pub fn insert(conn: &Db, requested_by: Option<&str>, at: &Timestamp) -> Result<i64> {
    let inserted: i64 = conn.query_value(
        "INSERT INTO translation_jobs (status, requested_by, started_at, updated_at)
         VALUES ('running', ?1, ?2, ?2) RETURNING id",
        params![requested_by, ts(at)],
    )?;
    Ok(inserted)
}

pub fn is_running(conn: &Db, id: i64) -> Result<bool> {
    Ok(conn
        .query_opt(
            "SELECT 1 FROM translation_jobs WHERE id = ?1 AND status = 'running'",
            params![id],
            |_| Ok(()),
        )?
        .is_some())
}

/// Sets how many translations the job will look at; false if the job is
/// no longer running.
pub fn set_total(conn: &Db, id: i64, total: u64, at: &Timestamp) -> Result<bool> {
    let n = conn.execute(
        "UPDATE translation_jobs SET total = ?2, updated_at = ?3
             WHERE id = ?1 AND status = 'running'",
        params![id, total as i64, ts(at)],
    )?;
    Ok(n == 1)
}

/// Counts a step of a running job: translations filled, skipped and
/// failed (the failures kept up to [`MAX_JOB_ERRORS`]).
pub fn record(
    conn: &Db,
    id: i64,
    filled: u64,
    skipped: u64,
    errors: &[JobError],
    at: &Timestamp,
) -> Result<()> {
    let mut kept: Vec<JobError> = parse_json(&conn.query_row(
        "SELECT errors FROM translation_jobs WHERE id = ?1",
        params![id],
        |r| r.get::<String>(0),
    )?)?;
    let room = MAX_JOB_ERRORS.saturating_sub(kept.len());
    kept.extend(errors.iter().take(room).cloned());
    let failed = errors.len() as i64;
    conn.execute(
        "UPDATE translation_jobs SET filled = filled + ?2, skipped = skipped + ?3,
             failed = failed + ?4, done = done + ?2 + ?3 + ?4, errors = ?5, updated_at = ?6
         WHERE id = ?1",
        params![
            id,
            filled as i64,
            skipped as i64,
            failed,
            serde_json::to_string(&kept)?,
            ts(at)
        ],
    )?;
    Ok(())
}

/// Ends a running job; false if it had already ended.
pub fn finish(
    conn: &Db,
    id: i64,
    status: JobStatus,
    message: Option<&str>,
    at: &Timestamp,
) -> Result<bool> {
    let n = conn.execute(
        "UPDATE translation_jobs SET status = ?2, message = ?3, updated_at = ?4, finished_at = ?4
             WHERE id = ?1 AND status = 'running'",
        params![id, status.as_str(), message, ts(at)],
    )?;
    Ok(n == 1)
}
