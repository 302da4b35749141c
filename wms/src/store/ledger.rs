//! The stock ledger: movements, the running levels, reservations and
//! discrepancies.

use super::ts;
use crate::error::Result;
use depot_protocol::stock::{Movement, StockLevel};
use depot_protocol::{BusinessId, ItemId, Page, WarehouseId};
use rusqlite::{Connection, params};

/// Appends a movement and moves the level with it. Answers the on-hand
/// quantity after the movement; if it went below zero a discrepancy is
/// recorded (the movement stands: the floor knows better than the books).
pub fn record(conn: &Connection, m: &Movement) -> Result<i64> {
    conn.prepare_cached(
        "INSERT INTO stock_movements (id, business_id, item_id, warehouse_id, location, delta, reason, ref, note,
                                      actor, origin, at, lot, expiry)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?
    .execute(params![
        m.id.0.to_string(),
        m.business_id.0,
        m.item_id.0,
        m.warehouse_id.0,
        m.location,
        m.delta,
        m.reason.as_str(),
        m.reference,
        m.note,
        m.actor,
        m.origin,
        ts(&m.at),
        m.lot,
        m.expiry.map(|d| d.to_string()),
    ])?;
    if let Some(lot) = &m.lot {
        conn.prepare_cached(
            "INSERT INTO stock_lots (item_id, warehouse_id, lot, business_id, expiry, on_hand) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (item_id, warehouse_id, lot)
             DO UPDATE SET on_hand = on_hand + excluded.on_hand, expiry = COALESCE(excluded.expiry, expiry)",
        )?
        .execute(params![m.item_id.0, m.warehouse_id.0, lot, m.business_id.0, m.expiry.map(|d| d.to_string()), m.delta])?;
    }
    // An upsert, then a read, not one statement with RETURNING: closing a
    // RETURNING statement inside the writer's transaction cost more than
    // the rest of the movement (its statement journal).
    conn.prepare_cached(
        "INSERT INTO stock_levels (item_id, warehouse_id, business_id, on_hand) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (item_id, warehouse_id) DO UPDATE SET on_hand = on_hand + excluded.on_hand",
    )?
    .execute(params![m.item_id.0, m.warehouse_id.0, m.business_id.0, m.delta])?;
    let on_hand: i64 = conn
        .prepare_cached(
            "SELECT on_hand FROM stock_levels WHERE item_id = ?1 AND warehouse_id = ?2",
        )?
        .query_row(params![m.item_id.0, m.warehouse_id.0], |r| r.get(0))?;
    if on_hand < 0 {
        conn.prepare_cached(
            "INSERT INTO stock_discrepancies (business_id, item_id, warehouse_id, movement_id, on_hand, at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![m.business_id.0, m.item_id.0, m.warehouse_id.0, m.id.0.to_string(), on_hand, ts(&m.at)])?;
    }
    Ok(on_hand)
}

/// On-hand and reserved of one item in one warehouse (zeros if never moved).
pub fn level(conn: &Connection, item: ItemId, warehouse: WarehouseId) -> Result<(i64, i64)> {
    let found = super::maybe(
        conn.prepare_cached(
            "SELECT on_hand, reserved FROM stock_levels WHERE item_id = ?1 AND warehouse_id = ?2",
        )?
        .query_row(params![item.0, warehouse.0], |r| Ok((r.get(0)?, r.get(1)?))),
    )?;
    Ok(found.unwrap_or((0, 0)))
}

/// Changes the reserved quantity by `delta` (negative releases).
pub fn reserve(
    conn: &Connection,
    business: BusinessId,
    item: ItemId,
    warehouse: WarehouseId,
    delta: i64,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO stock_levels (item_id, warehouse_id, business_id, reserved) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (item_id, warehouse_id) DO UPDATE SET reserved = reserved + excluded.reserved",
    )?
    .execute(params![item.0, warehouse.0, business.0, delta])?;
    Ok(())
}

/// Filters of the inventory list.
#[derive(Debug, Clone, Default)]
pub struct StockFilter {
    pub warehouse_id: Option<WarehouseId>,
    pub item_id: Option<ItemId>,
    pub sku: Option<String>,
    /// Only rows whose on-hand is below zero.
    pub negative: bool,
}

pub fn list(
    conn: &Connection,
    business: BusinessId,
    f: &StockFilter,
    page: Page,
) -> Result<(Vec<StockLevel>, u64, u64)> {
    let mut q = super::ListQuery::new(
        "FROM stock_levels s JOIN items i ON i.id = s.item_id
         LEFT JOIN item_locations l ON l.item_id = s.item_id AND l.warehouse_id = s.warehouse_id
         WHERE s.business_id = ?",
        business,
    );
    if let Some(w) = f.warehouse_id {
        q.and("s.warehouse_id = ?", [w.0.into()]);
    }
    if let Some(i) = f.item_id {
        q.and("s.item_id = ?", [i.0.into()]);
    }
    if let Some(sku) = &f.sku {
        q.and("i.sku = ?", [sku.clone().into()]);
    }
    if f.negative {
        q.and("s.on_hand < 0", []);
    }
    q.run(
        conn,
        "stock_levels",
        "s.item_id, i.sku, i.name, s.warehouse_id, l.location, s.on_hand, s.reserved",
        "s.warehouse_id, s.item_id",
        page,
        |r| {
            let on_hand: i64 = r.get(5)?;
            let reserved: i64 = r.get(6)?;
            Ok(StockLevel {
                item_id: ItemId(r.get(0)?),
                sku: r.get(1)?,
                name: r.get(2)?,
                warehouse_id: WarehouseId(r.get(3)?),
                location: r.get(4)?,
                on_hand,
                reserved,
                available: on_hand - reserved,
                negative: on_hand < 0,
            })
        },
    )
}

/// A level that disagrees with its ledger or with the orders holding stock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inconsistency {
    pub item_id: ItemId,
    pub warehouse_id: WarehouseId,
    /// Set when the disagreement is in one lot's stock.
    pub lot: Option<String>,
    pub on_hand: i64,
    pub ledger_sum: i64,
    pub reserved: i64,
    pub held_by_orders: i64,
}

/// Levels whose on-hand differs from the sum of their movements, or whose
/// reservation differs from what open orders hold. Empty when the books are
/// consistent.
pub fn inconsistencies(conn: &Connection) -> Result<Vec<Inconsistency>> {
    let mut stmt = conn.prepare(
        "SELECT s.item_id, s.warehouse_id, s.on_hand,
                COALESCE((SELECT SUM(delta) FROM stock_movements m
                          WHERE m.item_id = s.item_id AND m.warehouse_id = s.warehouse_id), 0) AS ledger,
                s.reserved,
                COALESCE((SELECT SUM(ol.quantity) FROM order_lines ol JOIN orders o ON o.id = ol.order_id
                          WHERE ol.item_id = s.item_id AND o.warehouse_id = s.warehouse_id
                            AND o.status IN ('confirmed', 'picking', 'packed')), 0) AS held
         FROM stock_levels s",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(Inconsistency {
            item_id: ItemId(r.get(0)?),
            warehouse_id: WarehouseId(r.get(1)?),
            lot: None,
            on_hand: r.get(2)?,
            ledger_sum: r.get(3)?,
            reserved: r.get(4)?,
            held_by_orders: r.get(5)?,
        })
    })?;
    let mut all: Vec<Inconsistency> = rows.collect::<rusqlite::Result<_>>()?;
    let mut stmt = conn.prepare(
        "SELECT l.item_id, l.warehouse_id, l.lot, l.on_hand,
                COALESCE((SELECT SUM(delta) FROM stock_movements m
                          WHERE m.item_id = l.item_id AND m.warehouse_id = l.warehouse_id AND m.lot = l.lot), 0)
         FROM stock_lots l",
    )?;
    let lots = stmt.query_map([], |r| {
        Ok(Inconsistency {
            item_id: ItemId(r.get(0)?),
            warehouse_id: WarehouseId(r.get(1)?),
            lot: Some(r.get(2)?),
            on_hand: r.get(3)?,
            ledger_sum: r.get(4)?,
            reserved: 0,
            held_by_orders: 0,
        })
    })?;
    all.extend(lots.collect::<rusqlite::Result<Vec<_>>>()?);
    Ok(all
        .into_iter()
        .filter(|i| i.on_hand != i.ledger_sum || i.reserved != i.held_by_orders)
        .collect())
}
