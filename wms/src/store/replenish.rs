//! Replenishment: levels of pick locations, the tasks that refill them,
//! and the reserve stock a refill may take.

use super::{ListQuery, maybe, parse_date, parse_ts, ts};
use crate::error::Result;
use depot_protocol::replenish::{ReplenishLevel, ReplenishStatus, ReplenishTask, Source};
use depot_protocol::{BusinessId, ItemId, Page, ReplenishTaskId, Timestamp, WarehouseId};
use depot_sql::{Db, Row, params};

/// Sets a level (made here or on another node).
pub fn put_level(conn: &Db, l: &ReplenishLevel) -> Result<()> {
    conn.execute(
        "INSERT INTO replenish_levels (business_id, warehouse_id, location, item_id, min, max, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (warehouse_id, location, item_id) DO UPDATE SET
             min = excluded.min, max = excluded.max, updated_at = excluded.updated_at",
        params![
            l.business_id.0,
            l.warehouse_id.0,
            l.location,
            l.item_id.0,
            l.min,
            l.max,
            ts(&l.updated_at)
        ],
    )?;
    Ok(())
}

/// The level of an item at a location, if it has one: (min, max).
pub fn level(
    conn: &Db,
    warehouse: WarehouseId,
    location: &str,
    item: ItemId,
) -> Result<Option<(i64, i64)>> {
    maybe(conn.query_row(
        "SELECT min, max FROM replenish_levels
         WHERE warehouse_id = ?1 AND location = ?2 AND item_id = ?3",
        params![warehouse.0, location, item.0],
        |r| Ok((r.get(0)?, r.get(1)?)),
    ))
}

fn level_row(r: &Row) -> depot_sql::Result<ReplenishLevel> {
    Ok(ReplenishLevel {
        business_id: BusinessId(r.get(0)?),
        warehouse_id: WarehouseId(r.get(1)?),
        location: r.get(2)?,
        item_id: ItemId(r.get(3)?),
        min: r.get(4)?,
        max: r.get(5)?,
        updated_at: parse_ts(&r.get::<String>(6)?)?,
    })
}

/// A business's levels, by warehouse and location.
pub fn levels(
    conn: &Db,
    business: BusinessId,
    warehouse: Option<WarehouseId>,
) -> Result<Vec<ReplenishLevel>> {
    let cols = "business_id, warehouse_id, location, item_id, min, max, updated_at";
    Ok(match warehouse {
        Some(w) => conn.query_map(
            &format!(
                "SELECT {cols} FROM replenish_levels WHERE business_id = ?1 AND warehouse_id = ?2
                 ORDER BY warehouse_id, location, item_id"
            ),
            params![business.0, w.0],
            level_row,
        )?,
        None => conn.query_map(
            &format!(
                "SELECT {cols} FROM replenish_levels WHERE business_id = ?1
                 ORDER BY warehouse_id, location, item_id"
            ),
            params![business.0],
            level_row,
        )?,
    })
}

/// On-hand of an item at a location, of all its lots.
pub fn held(conn: &Db, warehouse: WarehouseId, location: &str, item: ItemId) -> Result<i64> {
    Ok(conn.query_row(
        "SELECT COALESCE(SUM(on_hand), 0) FROM stock_bins
         WHERE warehouse_id = ?1 AND location = ?2 AND item_id = ?3",
        params![warehouse.0, location, item.0],
        |r| r.get(0),
    )?)
}

/// Whether a pick location has an open task for an item.
pub fn has_open(conn: &Db, warehouse: WarehouseId, location: &str, item: ItemId) -> Result<bool> {
    Ok(maybe(conn.query_row(
        "SELECT 1 FROM replenish_tasks
         WHERE warehouse_id = ?1 AND to_location = ?2 AND item_id = ?3 AND status = 'open'",
        params![warehouse.0, location, item.0],
        |r| r.get::<i64>(0),
    ))?
    .is_some())
}

/// Reserve stock of an item in a warehouse: what its `bulk` locations
/// hold, per lot, with the lot's expiry.
pub fn sources(conn: &Db, warehouse: WarehouseId, item: ItemId) -> Result<Vec<Source>> {
    Ok(conn.query_map(
        "SELECT b.location, b.lot, s.expiry, b.on_hand
         FROM stock_bins b
         JOIN locations l ON l.warehouse_id = b.warehouse_id AND l.code = b.location
         LEFT JOIN stock_lots s ON s.item_id = b.item_id AND s.warehouse_id = b.warehouse_id
                               AND s.lot = b.lot
         WHERE b.warehouse_id = ?1 AND b.item_id = ?2 AND b.on_hand > 0 AND l.kind = 'bulk'",
        params![warehouse.0, item.0],
        |r| {
            let lot: String = r.get(1)?;
            Ok(Source {
                location: r.get(0)?,
                lot: (!lot.is_empty()).then_some(lot),
                expiry: parse_date(r.get(2)?)?,
                on_hand: r.get(3)?,
            })
        },
    )?)
}

const COLS: &str = "t.id, t.business_id, t.warehouse_id, t.item_id, i.sku, t.lot, t.expiry, \
                    t.from_location, t.to_location, t.quantity, t.moved, t.status, t.reference, \
                    t.created_at, t.updated_at";

fn row(r: &Row) -> depot_sql::Result<ReplenishTask> {
    let (quantity, moved): (i64, i64) = (r.get(9)?, r.get(10)?);
    let status: String = r.get(11)?;
    Ok(ReplenishTask {
        id: ReplenishTaskId(r.get(0)?),
        business_id: BusinessId(r.get(1)?),
        warehouse_id: WarehouseId(r.get(2)?),
        item_id: ItemId(r.get(3)?),
        sku: r.get(4)?,
        lot: r.get(5)?,
        expiry: parse_date(r.get(6)?)?,
        from_location: r.get(7)?,
        to_location: r.get(8)?,
        quantity,
        moved,
        remaining: quantity.saturating_sub(moved),
        status: ReplenishStatus::parse(&status).ok_or_else(|| {
            depot_sql::Error::conversion(11, format!("not a replenishment status: {status}"))
        })?,
        reference: r.get(12)?,
        created_at: parse_ts(&r.get::<String>(13)?)?,
        updated_at: parse_ts(&r.get::<String>(14)?)?,
    })
}

/// Writes a task as it stands (made here, with a new id, or on another
/// node, with its own).
pub fn insert(conn: &Db, t: &ReplenishTask) -> Result<()> {
    super::count_within("quantity", t.quantity)?;
    super::count_within("moved", t.moved)?;
    conn.execute(
        "INSERT INTO replenish_tasks (id, business_id, warehouse_id, item_id, lot, expiry,
                                      from_location, to_location, quantity, moved, status,
                                      reference, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        params![
            t.id.0,
            t.business_id.0,
            t.warehouse_id.0,
            t.item_id.0,
            t.lot,
            t.expiry.map(|d| d.to_string()),
            t.from_location,
            t.to_location,
            t.quantity,
            t.moved,
            t.status.as_str(),
            t.reference,
            ts(&t.created_at),
            ts(&t.updated_at)
        ],
    )?;
    Ok(())
}

/// Records what scans moved: the units so far and the status.
pub fn set_moved(
    conn: &Db,
    id: ReplenishTaskId,
    moved: i64,
    status: ReplenishStatus,
    at: &Timestamp,
) -> Result<()> {
    super::count_within("moved", moved)?;
    conn.execute(
        "UPDATE replenish_tasks SET moved = ?2, status = ?3, updated_at = ?4 WHERE id = ?1",
        params![id.0, moved, status.as_str(), ts(at)],
    )?;
    Ok(())
}

pub fn task(conn: &Db, business: BusinessId, id: ReplenishTaskId) -> Result<Option<ReplenishTask>> {
    maybe(conn.query_row(
        &format!(
            "SELECT {COLS} FROM replenish_tasks t JOIN items i ON i.id = t.item_id
             WHERE t.id = ?1 AND t.business_id = ?2"
        ),
        params![id.0, business.0],
        row,
    ))
}

#[derive(Debug, Clone, Default)]
pub struct ReplenishFilter {
    pub warehouse_id: Option<WarehouseId>,
    pub status: Option<ReplenishStatus>,
}

/// A business's tasks, oldest first (the emptiest faces first).
pub fn list(
    conn: &Db,
    business: BusinessId,
    f: &ReplenishFilter,
    page: Page,
) -> Result<depot_protocol::Listed<ReplenishTask>> {
    let mut q = ListQuery::new(
        "FROM replenish_tasks t JOIN items i ON i.id = t.item_id WHERE t.business_id = ?",
        business,
    );
    if let Some(w) = f.warehouse_id {
        q.and("t.warehouse_id = ?", [w.0.into()]);
    }
    if let Some(s) = f.status {
        q.and("t.status = ?", [s.as_str().to_owned().into()]);
    }
    q.run(
        conn,
        "replenish_tasks",
        COLS,
        super::Order::asc(&[super::Key::Int("t.id")]),
        page,
        row,
    )
}
