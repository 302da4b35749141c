//! Printers and their jobs.

use super::{maybe, parse_ts, ts};
use crate::error::Result;
use depot_protocol::printing::{CheckedPrinter, JobStatus, PrintJob, Printer, PrinterKind};
use depot_protocol::{BusinessId, PrintJobId, PrinterId, Timestamp};
use rusqlite::{Connection, Row, params};

/// The business a printer belongs to.
pub fn printer_business(conn: &Connection, printer: PrinterId) -> Result<Option<BusinessId>> {
    maybe(
        conn.prepare_cached("SELECT business_id FROM printers WHERE id = ?1")?
            .query_row([printer.0], |r| Ok(BusinessId(r.get(0)?))),
    )
}

pub fn name_owner(
    conn: &Connection,
    business: BusinessId,
    name: &str,
) -> Result<Option<PrinterId>> {
    maybe(
        conn.prepare_cached("SELECT id FROM printers WHERE business_id = ?1 AND name = ?2")?
            .query_row(params![business.0, name], |r| Ok(PrinterId(r.get(0)?))),
    )
}

/// The printer record a configured device was bound to.
pub fn binding(conn: &Connection, business: BusinessId, device: &str) -> Result<Option<PrinterId>> {
    maybe(
        conn.prepare_cached(
            "SELECT printer_id FROM printer_bindings WHERE device = ?1 AND business_id = ?2",
        )?
        .query_row(params![device, business.0], |r| Ok(PrinterId(r.get(0)?))),
    )
}

/// Binds a configured device to a printer record (again, if it was bound
/// to another).
pub fn bind(
    conn: &Connection,
    business: BusinessId,
    device: &str,
    printer: PrinterId,
    at: &Timestamp,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO printer_bindings (device, business_id, printer_id, bound_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (device) DO UPDATE SET business_id = excluded.business_id,
                                            printer_id = excluded.printer_id, bound_at = excluded.bound_at",
    )?
    .execute(params![device, business.0, printer.0, ts(at)])?;
    Ok(())
}

pub fn insert(
    conn: &Connection,
    business: BusinessId,
    p: &CheckedPrinter,
    at: &Timestamp,
) -> Result<PrinterId> {
    conn.prepare_cached(
        "INSERT INTO printers (business_id, name, kind, connection, station, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
    )?
    .execute(params![business.0, p.name, p.kind.as_str(), p.connection, p.station, ts(at)])?;
    Ok(PrinterId(conn.last_insert_rowid()))
}

pub fn update(conn: &Connection, id: PrinterId, p: &CheckedPrinter, at: &Timestamp) -> Result<()> {
    conn.prepare_cached("UPDATE printers SET name = ?2, kind = ?3, connection = ?4, station = ?5, updated_at = ?6 WHERE id = ?1")?
        .execute(params![id.0, p.name, p.kind.as_str(), p.connection, p.station, ts(at)])?;
    Ok(())
}

const COLS: &str =
    "id, business_id, name, kind, connection, station, status, last_seen, created_at, updated_at";

fn kind(s: String, col: usize) -> rusqlite::Result<PrinterKind> {
    PrinterKind::parse(&s)
        .ok_or_else(|| rusqlite::Error::InvalidColumnType(col, s, rusqlite::types::Type::Text))
}

fn row(r: &Row) -> rusqlite::Result<Printer> {
    Ok(Printer {
        id: PrinterId(r.get(0)?),
        business_id: BusinessId(r.get(1)?),
        name: r.get(2)?,
        kind: kind(r.get(3)?, 3)?,
        connection: r.get(4)?,
        station: r.get(5)?,
        status: r.get(6)?,
        last_seen: r
            .get::<_, Option<String>>(7)?
            .map(|s| parse_ts(&s))
            .transpose()?,
        created_at: parse_ts(&r.get::<_, String>(8)?)?,
        updated_at: parse_ts(&r.get::<_, String>(9)?)?,
    })
}

pub fn printer(conn: &Connection, business: BusinessId, id: PrinterId) -> Result<Option<Printer>> {
    maybe(
        conn.prepare_cached(&format!(
            "SELECT {COLS} FROM printers WHERE business_id = ?1 AND id = ?2"
        ))?
        .query_row(params![business.0, id.0], row),
    )
}

pub fn list(conn: &Connection, business: BusinessId) -> Result<Vec<Printer>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLS} FROM printers WHERE business_id = ?1 ORDER BY id"
    ))?;
    let rows = stmt.query_map([business.0], row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub fn insert_job(
    conn: &Connection,
    business: BusinessId,
    printer: PrinterId,
    format: PrinterKind,
    data: &[u8],
    actor: &str,
    at: &Timestamp,
) -> Result<PrintJobId> {
    let id = super::ids::allocate(conn, "print_jobs")?;
    conn.prepare_cached(
        "INSERT INTO print_jobs (id, business_id, printer_id, format, data, size, status, actor, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'queued', ?7, ?8, ?8)",
    )?
    .execute(params![id, business.0, printer.0, format.as_str(), data, data.len() as i64, actor, ts(at)])?;
    Ok(PrintJobId(id))
}

/// A job made on another node, with its id; its bytes only where this node
/// is to print it (empty otherwise). Already here: nothing done.
pub fn insert_job_replica(
    conn: &Connection,
    business: BusinessId,
    job: &PrintJob,
    data: &[u8],
    actor: &str,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO print_jobs (id, business_id, printer_id, format, data, size, status, error, actor, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) ON CONFLICT (id) DO NOTHING",
    )?
    .execute(params![
        job.id.0,
        business.0,
        job.printer_id.0,
        job.format.as_str(),
        data,
        job.size,
        job.status.as_str(),
        job.error,
        actor,
        ts(&job.created_at),
        ts(&job.updated_at)
    ])?;
    Ok(())
}

/// Sets a job's status; false when there is no such job.
pub fn set_job_status(
    conn: &Connection,
    id: PrintJobId,
    status: JobStatus,
    error: Option<&str>,
    at: &Timestamp,
) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "UPDATE print_jobs SET status = ?2, error = ?3, updated_at = ?4 WHERE id = ?1",
        )?
        .execute(params![id.0, status.as_str(), error, ts(at)])?
        > 0)
}

/// Queued jobs of some printers, oldest first (by creation: ids of
/// different nodes do not sort by time).
pub fn queued_job_ids(conn: &Connection, printers: &[PrinterId]) -> Result<Vec<PrintJobId>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, created_at FROM print_jobs WHERE printer_id = ?1 AND status = 'queued'",
    )?;
    let mut out: Vec<(String, PrintJobId)> = Vec::new();
    for printer in printers {
        let rows = stmt.query_map([printer.0], |r| Ok((r.get(1)?, PrintJobId(r.get(0)?))))?;
        out.extend(rows.collect::<rusqlite::Result<Vec<_>>>()?);
    }
    out.sort();
    Ok(out.into_iter().map(|(_, id)| id).collect())
}

/// A job with its bytes.
pub fn job_with_data(conn: &Connection, id: PrintJobId) -> Result<Option<(PrintJob, Vec<u8>)>> {
    maybe(
        conn.prepare_cached(&format!(
            "SELECT {JOB_COLS}, data FROM print_jobs WHERE id = ?1"
        ))?
        .query_row([id.0], |r| Ok((job_row(r)?, r.get::<_, Vec<u8>>(8)?))),
    )
}

const JOB_COLS: &str = "id, printer_id, format, size, status, error, created_at, updated_at";

fn job_row(r: &Row) -> rusqlite::Result<PrintJob> {
    let status: String = r.get(4)?;
    Ok(PrintJob {
        id: PrintJobId(r.get(0)?),
        printer_id: PrinterId(r.get(1)?),
        format: kind(r.get(2)?, 2)?,
        size: r.get(3)?,
        status: JobStatus::parse(&status).ok_or_else(|| {
            rusqlite::Error::InvalidColumnType(4, status, rusqlite::types::Type::Text)
        })?,
        error: r.get(5)?,
        created_at: parse_ts(&r.get::<_, String>(6)?)?,
        updated_at: parse_ts(&r.get::<_, String>(7)?)?,
    })
}

pub fn job(conn: &Connection, id: PrintJobId) -> Result<Option<PrintJob>> {
    maybe(
        conn.prepare_cached(&format!("SELECT {JOB_COLS} FROM print_jobs WHERE id = ?1"))?
            .query_row([id.0], job_row),
    )
}

/// The newest jobs of a printer first.
pub fn jobs(conn: &Connection, printer: PrinterId, limit: u32) -> Result<Vec<PrintJob>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {JOB_COLS} FROM print_jobs WHERE printer_id = ?1 ORDER BY id DESC LIMIT ?2"
    ))?;
    let rows = stmt.query_map(params![printer.0, limit], job_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// A printer as the cloud configured it. The device state (status, last
/// seen) is this node's own observation and is kept.
pub fn upsert_replica(conn: &Connection, p: &Printer) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO printers (id, business_id, name, kind, connection, station, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (id) DO UPDATE SET name = excluded.name, kind = excluded.kind, connection = excluded.connection,
             station = excluded.station, updated_at = excluded.updated_at
         WHERE excluded.updated_at >= printers.updated_at",
    )?
    .execute(params![
        p.id.0,
        p.business_id.0,
        p.name,
        p.kind.as_str(),
        p.connection,
        p.station,
        ts(&p.created_at),
        ts(&p.updated_at)
    ])?;
    Ok(())
}

/// Sets a printer record's status as its device reports it, and moves
/// `last_seen` forward to `seen` (never back). Answers whether the record
/// was there.
pub fn set_printer_status(
    conn: &Connection,
    id: PrinterId,
    business: BusinessId,
    status: &str,
    seen: Option<&str>,
) -> Result<bool> {
    let changed = conn
        .prepare_cached(
            "UPDATE printers SET status = ?3,
                 last_seen = CASE WHEN last_seen IS NULL OR last_seen < ?4 THEN COALESCE(?4, last_seen)
                                  ELSE last_seen END
             WHERE id = ?1 AND business_id = ?2",
        )?
        .execute(params![id.0, business.0, status, seen])?;
    Ok(changed > 0)
}
