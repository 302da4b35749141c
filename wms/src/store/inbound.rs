//! Inbound orders, their lines and receptions.

use super::{maybe, parse_ts, ts};
use crate::error::{Result, WmsError};
use depot_protocol::inbound::{InboundLine, InboundOrder, InboundStatus};
use depot_protocol::stock::{MAX_ON_HAND, next_count};
use depot_protocol::{BusinessId, FieldError, ItemId, Page, Timestamp, WarehouseId};
use depot_sql::{Db, Row, params};

pub fn id_by_reference(conn: &Db, business: BusinessId, reference: &str) -> Result<Option<i64>> {
    maybe(conn.query_row(
        "SELECT id FROM inbound_orders WHERE business_id = ?1 AND reference = ?2",
        params![business.0, reference],
        |r| r.get(0),
    ))
}

pub fn insert(
    conn: &Db,
    business: BusinessId,
    warehouse: WarehouseId,
    reference: &str,
    supplier: &str,
    expected_at: Option<chrono::NaiveDate>,
    at: &Timestamp,
) -> Result<i64> {
    let inserted: i64 = conn.query_value("INSERT INTO inbound_orders (business_id, warehouse_id, reference, supplier, status, expected_at, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, 'open', ?5, ?6, ?6) RETURNING id", params![business.0, warehouse.0, reference, supplier, expected_at.map(|d| d.to_string()), ts(at)])?;
    Ok(inserted)
}

/// Adds a line; answers its number.
pub fn add_line(conn: &Db, inbound: i64, item: ItemId, expected: i64) -> Result<u32> {
    super::count_within("quantity", expected)?;
    let next: u32 = conn.query_row(
        "SELECT COALESCE(MAX(line_no), 0) + 1 FROM inbound_lines WHERE inbound_id = ?1",
        params![inbound],
        |r| r.get(0),
    )?;
    conn.execute("INSERT INTO inbound_lines (inbound_id, line_no, item_id, expected) VALUES (?1, ?2, ?3, ?4)", params![inbound, next, item.0, expected])?;
    Ok(next)
}

/// The line of this item (the first, if listed more than once).
pub fn line_for_item(conn: &Db, inbound: i64, item: ItemId) -> Result<Option<u32>> {
    maybe(
        conn.query_row("SELECT line_no FROM inbound_lines WHERE inbound_id = ?1 AND item_id = ?2 ORDER BY line_no LIMIT 1", params![inbound, item.0], |r| r.get(0)),
    )
}

/// Adds to what a line has accepted and rejected. A line's counts stay
/// within `0..=MAX_ON_HAND`: what would take one beyond is refused, naming
/// `accepted` or `rejected`, before anything is written.
pub fn add_received(
    conn: &Db,
    inbound: i64,
    line_no: u32,
    accepted: i64,
    rejected: i64,
) -> Result<()> {
    add_received_as(conn, inbound, line_no, accepted, rejected, "")
}

/// [`add_received`], with `prefix` before the field it names when refused
/// (`lines[2].`).
pub fn add_received_as(
    conn: &Db,
    inbound: i64,
    line_no: u32,
    accepted: i64,
    rejected: i64,
    prefix: &str,
) -> Result<()> {
    let (was_accepted, was_rejected): (i64, i64) = maybe(conn.query_row(
        "SELECT accepted, rejected FROM inbound_lines WHERE inbound_id = ?1 AND line_no = ?2",
        params![inbound, line_no],
        |r| Ok((r.get(0)?, r.get(1)?)),
    ))?
    .unwrap_or((0, 0));
    let count = |name: &str, was: i64, more: i64| {
        next_count(was, more).ok_or_else(|| {
            let status = format!(
                "line {line_no} of inbound order {inbound} has {name} {was}: {more} more would take it beyond {MAX_ON_HAND}"
            );
            WmsError::invalid(vec![FieldError::new(format!("{prefix}{name}"), status)])
        })
    };
    let accepted = count("accepted", was_accepted, accepted)?;
    let rejected = count("rejected", was_rejected, rejected)?;
    conn.execute("UPDATE inbound_lines SET accepted = ?3, rejected = ?4 WHERE inbound_id = ?1 AND line_no = ?2", params![inbound, line_no, accepted, rejected])?;
    Ok(())
}

/// One reception, as recorded for the audit trail.
pub struct Reception<'a> {
    pub business: BusinessId,
    pub inbound: i64,
    pub item: ItemId,
    pub scanned: &'a str,
    pub accepted: i64,
    pub rejected: i64,
    pub reason: Option<&'a str>,
    pub lot: Option<&'a str>,
    pub expiry: Option<chrono::NaiveDate>,
    pub serial: Option<&'a str>,
    pub location: Option<&'a str>,
    pub actor: &'a str,
    pub at: &'a Timestamp,
}

pub fn insert_reception(conn: &Db, r: &Reception) -> Result<()> {
    conn.execute("INSERT INTO receptions (business_id, inbound_id, item_id, scanned, accepted, rejected, reason, lot, expiry,
                                 serial, location, actor, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)", params![
        r.business.0,
        r.inbound,
        r.item.0,
        r.scanned,
        r.accepted,
        r.rejected,
        r.reason,
        r.lot,
        r.expiry.map(|d| d.to_string()),
        r.serial,
        r.location,
        r.actor,
        ts(r.at),
    ])?;
    Ok(())
}

pub fn set_status(conn: &Db, inbound: i64, status: InboundStatus, at: &Timestamp) -> Result<()> {
    conn.execute(
        "UPDATE inbound_orders SET status = ?2, updated_at = ?3 WHERE id = ?1",
        params![inbound, status.as_str(), ts(at)],
    )?;
    Ok(())
}

const COLS: &str = "id, business_id, warehouse_id, reference, supplier, status, expected_at, created_at, updated_at";

fn row(r: &Row) -> depot_sql::Result<InboundOrder> {
    let status: String = r.get(5)?;
    Ok(InboundOrder {
        id: r.get(0)?,
        business_id: BusinessId(r.get(1)?),
        warehouse_id: WarehouseId(r.get(2)?),
        reference: r.get(3)?,
        supplier: r.get(4)?,
        status: InboundStatus::parse(&status).ok_or_else(|| {
            depot_sql::Error::conversion(5, format!("not a value this release knows: {status}"))
        })?,
        expected_at: super::parse_date(r.get(6)?)?,
        lines: Vec::new(),
        created_at: parse_ts(&r.get::<String>(7)?)?,
        updated_at: parse_ts(&r.get::<String>(8)?)?,
    })
}

fn lines(conn: &Db, inbound: i64) -> Result<Vec<InboundLine>> {
    let stmt = "SELECT l.line_no, l.item_id, i.sku, i.name, l.expected, l.accepted, l.rejected
         FROM inbound_lines l JOIN items i ON i.id = l.item_id WHERE l.inbound_id = ?1 ORDER BY l.line_no";
    let rows = conn.query_map(stmt, params![inbound], |r| {
        let (expected, accepted): (i64, i64) = (r.get(4)?, r.get(5)?);
        Ok(InboundLine {
            line_no: r.get(0)?,
            item_id: ItemId(r.get(1)?),
            sku: r.get(2)?,
            name: r.get(3)?,
            expected,
            accepted,
            rejected: r.get(6)?,
            outstanding: expected.saturating_sub(accepted).max(0),
            over: accepted.saturating_sub(expected).max(0),
        })
    })?;
    Ok(rows)
}

pub fn inbound(conn: &Db, business: BusinessId, id: i64) -> Result<Option<InboundOrder>> {
    let found = maybe(conn.query_row(
        &format!("SELECT {COLS} FROM inbound_orders WHERE business_id = ?1 AND id = ?2"),
        params![business.0, id],
        row,
    ))?;
    let Some(mut o) = found else { return Ok(None) };
    o.lines = lines(conn, id)?;
    Ok(Some(o))
}

#[derive(Debug, Clone, Default)]
pub struct InboundFilter {
    pub status: Option<InboundStatus>,
    /// Only orders not yet fully received.
    pub awaiting: bool,
    pub warehouse_id: Option<WarehouseId>,
    pub supplier: Option<String>,
}

pub fn list(
    conn: &Db,
    business: BusinessId,
    f: &InboundFilter,
    page: Page,
) -> Result<depot_protocol::Listed<InboundOrder>> {
    let mut q = super::ListQuery::new("FROM inbound_orders WHERE business_id = ?", business);
    if let Some(s) = f.status {
        q.and("status = ?", [s.as_str().to_owned().into()]);
    }
    if f.awaiting {
        q.and("status != 'received'", []);
    }
    if let Some(w) = f.warehouse_id {
        q.and("warehouse_id = ?", [w.0.into()]);
    }
    if let Some(s) = &f.supplier {
        q.and("supplier = ?", [s.clone().into()]);
    }
    let mut listed = q.run(
        conn,
        "inbound_orders",
        COLS,
        super::Order::desc(&[super::Key::Int("id")]),
        page,
        row,
    )?;
    for o in &mut listed.rows {
        o.lines = lines(conn, o.id)?;
    }
    Ok(listed)
}

/// An inbound order made on another node, with its id and lines; a second
/// delivery of it changes nothing.
pub fn insert_replica(conn: &Db, o: &InboundOrder) -> Result<bool> {
    let n = conn
        .execute("INSERT INTO inbound_orders (id, business_id, warehouse_id, reference, supplier, status, expected_at,
                                         created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT DO NOTHING", params![
            o.id,
            o.business_id.0,
            o.warehouse_id.0,
            o.reference,
            o.supplier,
            o.status.as_str(),
            o.expected_at.map(|d| d.to_string()),
            ts(&o.created_at),
            ts(&o.updated_at)
        ])?;
    if n == 0 {
        return Ok(false);
    }
    let stmt = "INSERT INTO inbound_lines (inbound_id, line_no, item_id, expected, accepted, rejected) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
    for l in &o.lines {
        super::count_within("expected", l.expected)?;
        super::count_within("accepted", l.accepted)?;
        super::count_within("rejected", l.rejected)?;
        conn.execute(
            stmt,
            params![
                o.id,
                l.line_no,
                l.item_id.0,
                l.expected,
                l.accepted,
                l.rejected
            ],
        )?;
    }
    Ok(true)
}
