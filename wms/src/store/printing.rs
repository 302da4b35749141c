//! Printers and their jobs.

use super::{maybe, parse_ts, ts};
use crate::error::Result;
use depot_protocol::printing::{CheckedPrinter, JobStatus, PrintJob, Printer, PrinterKind};
use depot_protocol::{BusinessId, PrintJobId, PrinterId, Timestamp};
use depot_sql::{Db, Row, params};

/// The business a printer belongs to.
pub fn printer_business(conn: &Db, printer: PrinterId) -> Result<Option<BusinessId>> {
    maybe(conn.query_row(
        "SELECT business_id FROM printers WHERE id = ?1",
        params![printer.0],
        |r| Ok(BusinessId(r.get(0)?)),
    ))
}

pub fn name_owner(conn: &Db, business: BusinessId, name: &str) -> Result<Option<PrinterId>> {
    maybe(conn.query_row(
        "SELECT id FROM printers WHERE business_id = ?1 AND name = ?2",
        params![business.0, name],
        |r| Ok(PrinterId(r.get(0)?)),
    ))
}

/// The printer record a configured device was bound to.
pub fn binding(conn: &Db, business: BusinessId, device: &str) -> Result<Option<PrinterId>> {
    maybe(conn.query_row(
        "SELECT printer_id FROM printer_bindings WHERE device = ?1 AND business_id = ?2",
        params![device, business.0],
        |r| Ok(PrinterId(r.get(0)?)),
    ))
}

/// Binds a configured device to a printer record (again, if it was bound
/// to another).
pub fn bind(
    conn: &Db,
    business: BusinessId,
    device: &str,
    printer: PrinterId,
    at: &Timestamp,
) -> Result<()> {
    conn.execute("INSERT INTO printer_bindings (device, business_id, printer_id, bound_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (device) DO UPDATE SET business_id = excluded.business_id,
                                            printer_id = excluded.printer_id, bound_at = excluded.bound_at", params![device, business.0, printer.0, ts(at)])?;
    Ok(())
}

pub fn insert(
    conn: &Db,
    business: BusinessId,
    p: &CheckedPrinter,
    at: &Timestamp,
) -> Result<PrinterId> {
    let inserted: i64 = conn.query_value("INSERT INTO printers (business_id, name, kind, connection, station, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6) RETURNING id", params![business.0, p.name, p.kind.as_str(), p.connection, p.station, ts(at)])?;
    Ok(PrinterId(inserted))
}

pub fn update(conn: &Db, id: PrinterId, p: &CheckedPrinter, at: &Timestamp) -> Result<()> {
    conn.execute("UPDATE printers SET name = ?2, kind = ?3, connection = ?4, station = ?5, updated_at = ?6 WHERE id = ?1", params![id.0, p.name, p.kind.as_str(), p.connection, p.station, ts(at)])?;
    Ok(())
}

const COLS: &str =
    "id, business_id, name, kind, connection, station, status, last_seen, created_at, updated_at";

fn kind(s: String, col: usize) -> depot_sql::Result<PrinterKind> {
    PrinterKind::parse(&s).ok_or_else(|| {
        depot_sql::Error::conversion(col, format!("not a value this release knows: {s}"))
    })
}

fn row(r: &Row) -> depot_sql::Result<Printer> {
    Ok(Printer {
        id: PrinterId(r.get(0)?),
        business_id: BusinessId(r.get(1)?),
        name: r.get(2)?,
        kind: kind(r.get(3)?, 3)?,
        connection: r.get(4)?,
        station: r.get(5)?,
        status: r.get(6)?,
        last_seen: r
            .get::<Option<String>>(7)?
            .map(|s| parse_ts(&s))
            .transpose()?,
        created_at: parse_ts(&r.get::<String>(8)?)?,
        updated_at: parse_ts(&r.get::<String>(9)?)?,
    })
}

pub fn printer(conn: &Db, business: BusinessId, id: PrinterId) -> Result<Option<Printer>> {
    maybe(conn.query_row(
        &format!("SELECT {COLS} FROM printers WHERE business_id = ?1 AND id = ?2"),
        params![business.0, id.0],
        row,
    ))
}

pub fn list(conn: &Db, business: BusinessId) -> Result<Vec<Printer>> {
    let stmt = &format!("SELECT {COLS} FROM printers WHERE business_id = ?1 ORDER BY id");
    let rows = conn.query_map(stmt, params![business.0], row)?;
    Ok(rows)
}

pub fn insert_job(
    conn: &Db,
    business: BusinessId,
    printer: PrinterId,
    format: PrinterKind,
    data: &[u8],
    actor: &str,
    at: &Timestamp,
) -> Result<PrintJobId> {
    let id = super::ids::allocate(conn, "print_jobs")?;
    conn.execute("INSERT INTO print_jobs (id, business_id, printer_id, format, data, size, status, actor, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'queued', ?7, ?8, ?8)", params![id, business.0, printer.0, format.as_str(), data, data.len() as i64, actor, ts(at)])?;
    Ok(PrintJobId(id))
}

/// A job made on another node, with its id; its bytes only where this node
/// is to print it (empty otherwise). Already here: nothing done.
pub fn insert_job_replica(
    conn: &Db,
    business: BusinessId,
    job: &PrintJob,
    data: &[u8],
    actor: &str,
) -> Result<()> {
    conn.execute("INSERT INTO print_jobs (id, business_id, printer_id, format, data, size, status, error, actor, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) ON CONFLICT (id) DO NOTHING", params![
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
    conn: &Db,
    id: PrintJobId,
    status: JobStatus,
    error: Option<&str>,
    at: &Timestamp,
) -> Result<bool> {
    Ok(conn.execute(
        "UPDATE print_jobs SET status = ?2, error = ?3, updated_at = ?4 WHERE id = ?1",
        params![id.0, status.as_str(), error, ts(at)],
    )? > 0)
}

/// Queued jobs of some printers, oldest first (by creation: ids of
/// different nodes do not sort by time).
pub fn queued_job_ids(conn: &Db, printers: &[PrinterId]) -> Result<Vec<PrintJobId>> {
    let stmt = "SELECT id, created_at FROM print_jobs WHERE printer_id = ?1 AND status = 'queued'";
    let mut out: Vec<(String, PrintJobId)> = Vec::new();
    for printer in printers {
        let rows = conn.query_map(stmt, params![printer.0], |r| {
            Ok((r.get(1)?, PrintJobId(r.get(0)?)))
        })?;
        out.extend(rows);
    }
    out.sort();
    Ok(out.into_iter().map(|(_, id)| id).collect())
}

/// A job with its bytes.
pub fn job_with_data(conn: &Db, id: PrintJobId) -> Result<Option<(PrintJob, Vec<u8>)>> {
    maybe(conn.query_row(
        &format!("SELECT {JOB_COLS}, data FROM print_jobs WHERE id = ?1"),
        params![id.0],
        |r| Ok((job_row(r)?, r.get::<Vec<u8>>(8)?)),
    ))
}

const JOB_COLS: &str = "id, printer_id, format, size, status, error, created_at, updated_at";

fn job_row(r: &Row) -> depot_sql::Result<PrintJob> {
    let status: String = r.get(4)?;
    Ok(PrintJob {
        id: PrintJobId(r.get(0)?),
        printer_id: PrinterId(r.get(1)?),
        format: kind(r.get(2)?, 2)?,
        size: r.get(3)?,
        status: JobStatus::parse(&status).ok_or_else(|| {
            depot_sql::Error::conversion(4, format!("not a value this release knows: {status}"))
        })?,
        error: r.get(5)?,
        created_at: parse_ts(&r.get::<String>(6)?)?,
        updated_at: parse_ts(&r.get::<String>(7)?)?,
    })
}

pub fn job(conn: &Db, id: PrintJobId) -> Result<Option<PrintJob>> {
    maybe(conn.query_row(
        &format!("SELECT {JOB_COLS} FROM print_jobs WHERE id = ?1"),
        params![id.0],
        job_row,
    ))
}

/// The newest jobs of a printer first.
pub fn jobs(conn: &Db, printer: PrinterId, limit: u32) -> Result<Vec<PrintJob>> {
    let stmt = &format!(
        "SELECT {JOB_COLS} FROM print_jobs WHERE printer_id = ?1 ORDER BY id DESC LIMIT ?2"
    );
    let rows = conn.query_map(stmt, params![printer.0, limit], job_row)?;
    Ok(rows)
}

/// A printer as the cloud configured it. The device state (status, last
/// seen) is this node's own observation and is kept.
pub fn upsert_replica(conn: &Db, p: &Printer) -> Result<()> {
    conn.execute("INSERT INTO printers (id, business_id, name, kind, connection, station, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (id) DO UPDATE SET name = excluded.name, kind = excluded.kind, connection = excluded.connection,
             station = excluded.station, updated_at = excluded.updated_at
         WHERE excluded.updated_at >= printers.updated_at", params![
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
    conn: &Db,
    id: PrinterId,
    business: BusinessId,
    status: &str,
    seen: Option<&str>,
) -> Result<bool> {
    let changed = conn
        .execute("UPDATE printers SET status = ?3,
                 last_seen = CASE WHEN last_seen IS NULL OR last_seen < ?4 THEN COALESCE(?4, last_seen)
                                  ELSE last_seen END
             WHERE id = ?1 AND business_id = ?2", params![id.0, business.0, status, seen])?;
    Ok(changed > 0)
}
