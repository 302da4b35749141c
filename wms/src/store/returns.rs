//! Customer returns and their lines.

use super::{ListQuery, maybe, parse_ts, ts};
use crate::error::Result;
use depot_protocol::returns::{Return, ReturnLine, ReturnReason, ReturnStatus, rma, status_of};
use depot_protocol::{BusinessId, ItemId, OrderId, Page, ReturnId, Timestamp, WarehouseId};
use depot_sql::{Db, Row, params};

const COLS: &str = "r.id, r.business_id, r.order_id, o.external_ref, r.warehouse_id, r.status, \
                    r.reference, r.created_at, r.updated_at";

fn header(r: &Row) -> depot_sql::Result<Return> {
    let id = ReturnId(r.get(0)?);
    let status: String = r.get(5)?;
    Ok(Return {
        id,
        rma: rma(id),
        business_id: BusinessId(r.get(1)?),
        order_id: OrderId(r.get(2)?),
        order_ref: r.get(3)?,
        warehouse_id: WarehouseId(r.get(4)?),
        status: ReturnStatus::parse(&status).ok_or_else(|| {
            depot_sql::Error::conversion(5, format!("not a return status: {status}"))
        })?,
        lines: Vec::new(),
        reference: r.get(6)?,
        created_at: parse_ts(&r.get::<String>(7)?)?,
        updated_at: parse_ts(&r.get::<String>(8)?)?,
        label_zpl: None,
    })
}

fn line(r: &Row) -> depot_sql::Result<ReturnLine> {
    let reason: String = r.get(4)?;
    let quantity: i64 = r.get(3)?;
    let mut l = ReturnLine {
        line_no: u32::try_from(r.get::<i64>(0)?)
            .map_err(|_| depot_sql::Error::conversion(0, "line number out of range"))?,
        item_id: ItemId(r.get(1)?),
        sku: r.get(2)?,
        quantity,
        reason: ReturnReason::parse(&reason).ok_or_else(|| {
            depot_sql::Error::conversion(4, format!("not a return reason: {reason}"))
        })?,
        note: r.get(5)?,
        restocked: r.get(6)?,
        damaged: r.get(7)?,
        scrapped: r.get(8)?,
        remaining: 0,
    };
    l.remaining = quantity.saturating_sub(l.graded()).max(0);
    Ok(l)
}

fn with_lines(conn: &Db, mut r: Return) -> Result<Return> {
    r.lines = conn.query_map(
        "SELECT l.line_no, l.item_id, i.sku, l.quantity, l.reason, l.note, l.restocked,
                l.damaged, l.scrapped
         FROM return_lines l JOIN items i ON i.id = l.item_id
         WHERE l.return_id = ?1 ORDER BY l.line_no",
        params![r.id.0],
        line,
    )?;
    Ok(r)
}

/// Writes a return as it stands, lines and all: one made here (with a new
/// id) or on another node (with its own).
pub fn insert(conn: &Db, r: &Return) -> Result<()> {
    conn.execute(
        "INSERT INTO returns (id, business_id, order_id, warehouse_id, status, reference,
                              created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            r.id.0,
            r.business_id.0,
            r.order_id.0,
            r.warehouse_id.0,
            r.status.as_str(),
            r.reference,
            ts(&r.created_at),
            ts(&r.updated_at)
        ],
    )?;
    for l in &r.lines {
        super::count_within("quantity", l.quantity)?;
        for (field, n) in [
            ("restocked", l.restocked),
            ("damaged", l.damaged),
            ("scrapped", l.scrapped),
        ] {
            super::count_within(field, n)?;
        }
        conn.execute(
            "INSERT INTO return_lines (return_id, line_no, item_id, quantity, reason, note,
                                       restocked, damaged, scrapped)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                r.id.0,
                i64::from(l.line_no),
                l.item_id.0,
                l.quantity,
                l.reason.as_str(),
                l.note,
                l.restocked,
                l.damaged,
                l.scrapped
            ],
        )?;
    }
    Ok(())
}

/// Records a line's graded units, and the status they give the return.
pub fn save_grades(conn: &Db, r: &Return, line: &ReturnLine, at: &Timestamp) -> Result<()> {
    for (field, n) in [
        ("restocked", line.restocked),
        ("damaged", line.damaged),
        ("scrapped", line.scrapped),
    ] {
        super::count_within(field, n)?;
    }
    conn.execute(
        "UPDATE return_lines SET restocked = ?3, damaged = ?4, scrapped = ?5
         WHERE return_id = ?1 AND line_no = ?2",
        params![
            r.id.0,
            i64::from(line.line_no),
            line.restocked,
            line.damaged,
            line.scrapped
        ],
    )?;
    conn.execute(
        "UPDATE returns SET status = ?2, updated_at = ?3 WHERE id = ?1",
        params![r.id.0, status_of(&r.lines).as_str(), ts(at)],
    )?;
    Ok(())
}

/// Sets a return's status (a cancellation: grades set theirs).
pub fn set_status(conn: &Db, id: ReturnId, status: ReturnStatus, at: &Timestamp) -> Result<()> {
    conn.execute(
        "UPDATE returns SET status = ?2, updated_at = ?3 WHERE id = ?1",
        params![id.0, status.as_str(), ts(at)],
    )?;
    Ok(())
}

pub fn get(conn: &Db, business: BusinessId, id: ReturnId) -> Result<Option<Return>> {
    match maybe(conn.query_row(
        &format!(
            "SELECT {COLS} FROM returns r JOIN orders o ON o.id = r.order_id
             WHERE r.id = ?1 AND r.business_id = ?2"
        ),
        params![id.0, business.0],
        header,
    ))? {
        Some(r) => Ok(Some(with_lines(conn, r)?)),
        None => Ok(None),
    }
}

/// A return by id whatever its business (replication knows the id only).
pub fn get_any(conn: &Db, id: ReturnId) -> Result<Option<Return>> {
    let business: Option<i64> = maybe(conn.query_row(
        "SELECT business_id FROM returns WHERE id = ?1",
        params![id.0],
        |r| r.get(0),
    ))?;
    match business {
        Some(b) => get(conn, BusinessId(b), id),
        None => Ok(None),
    }
}

/// An order's returns, oldest first.
pub fn of_order(conn: &Db, order: OrderId) -> Result<Vec<Return>> {
    let heads = conn.query_map(
        &format!(
            "SELECT {COLS} FROM returns r JOIN orders o ON o.id = r.order_id
             WHERE r.order_id = ?1 ORDER BY r.id"
        ),
        params![order.0],
        header,
    )?;
    heads.into_iter().map(|r| with_lines(conn, r)).collect()
}

#[derive(Debug, Clone, Default)]
pub struct ReturnFilter {
    pub status: Option<ReturnStatus>,
    pub order_id: Option<OrderId>,
    pub warehouse_id: Option<WarehouseId>,
}

/// A business's returns, newest first.
pub fn list(
    conn: &Db,
    business: BusinessId,
    f: &ReturnFilter,
    page: Page,
) -> Result<depot_protocol::Listed<Return>> {
    let mut q = ListQuery::new(
        "FROM returns r JOIN orders o ON o.id = r.order_id WHERE r.business_id = ?",
        business,
    );
    if let Some(s) = f.status {
        q.and("r.status = ?", [s.as_str().to_owned().into()]);
    }
    if let Some(o) = f.order_id {
        q.and("r.order_id = ?", [o.0.into()]);
    }
    if let Some(w) = f.warehouse_id {
        q.and("r.warehouse_id = ?", [w.0.into()]);
    }
    let depot_protocol::Listed {
        rows: heads,
        total,
        filtered,
        cursor,
    } = q.run(
        conn,
        "returns",
        COLS,
        super::Order::desc(&[super::Key::Int("r.id")]),
        page,
        header,
    )?;
    let rows = heads
        .into_iter()
        .map(|r| with_lines(conn, r))
        .collect::<Result<Vec<_>>>()?;
    Ok(depot_protocol::Listed {
        rows,
        total,
        filtered,
        cursor,
    })
}
