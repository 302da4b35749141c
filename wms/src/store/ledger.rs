//! The stock ledger: movements, the running levels, reservations and
//! discrepancies.

use crate::error::{Result, WmsError};
use depot_protocol::stock::{BinStock, MAX_ON_HAND, Movement, StockLevel, next_level};
use depot_protocol::{BusinessId, FieldError, ItemId, Page, WarehouseId};
use depot_sql::{Db, Later, params};

mod holds;
mod many;
#[cfg(test)]
mod tests;
mod writes;

pub use holds::{Holding, reserve, reserve_as};
pub use many::record_many_once;
use writes::{discrepancies, insert_movements, insert_movements_once, put_bin, put_level, put_lot};

/// The refusal of a change that would take a stored level or count beyond
/// `±MAX_ON_HAND`: a 422 naming `field`, the request field it came from.
pub(crate) fn beyond(field: &str, what: &str, level: i64, delta: i64) -> WmsError {
    let status = format!(
        "{what} is {level}: {delta:+} would take it beyond the limit of {} to {MAX_ON_HAND}",
        -MAX_ON_HAND
    );
    WmsError::invalid(vec![FieldError::new(field, status)])
}

/// A level a movement moves: its item's in its warehouse, a lot's, a
/// bin's (at a location, `""` for none).
enum Of<'a> {
    Warehouse,
    Lot(&'a str),
    Bin(&'a str),
}

/// What `m` leaves of a level it moves, `before` as it stands: refused,
/// naming `field`, beyond `±MAX_ON_HAND`.
fn moved(field: &str, m: &Movement, of: Of<'_>, before: i64) -> Result<i64> {
    next_level(before, m.delta).ok_or_else(|| {
        let what = match of {
            Of::Warehouse => format!(
                "on-hand of item {} in warehouse {}",
                m.item_id, m.warehouse_id
            ),
            Of::Lot(lot) => format!("on-hand of lot {lot} of item {}", m.item_id),
            Of::Bin(bin) => format!("on-hand of item {} at location {bin}", m.item_id),
        };
        beyond(field, &what, before, m.delta)
    })
}

/// Appends a movement and moves the levels with it: the item's in the
/// warehouse, its lot's, and its location's (per lot). Answers the on-hand
/// quantity after the movement; if it went below zero a discrepancy is
/// recorded (the movement stands: the floor knows better than the books).
/// A movement that would take a level beyond `±MAX_ON_HAND` is refused,
/// naming `field` (the request's), before anything is written.
///
/// A movement that names no location is of the item's own location in the
/// warehouse, if it has one: `m.location` says so once recorded, so the
/// event the caller logs next names it too.
pub fn record_as(conn: &Db, m: &mut Movement, field: &str) -> Result<i64> {
    Ok(book(conn, m, field, false)?.unwrap_or_default())
}

/// [`record_as`] of a movement made elsewhere, naming `delta`: `None`, and nothing written,
/// when a movement by its id is already booked here (the same count
/// approved on two nodes names its movements alike).
pub fn record_once(conn: &Db, m: &mut Movement) -> Result<Option<i64>> {
    book(conn, m, "delta", true)
}

/// The reads a movement needs go out together where they do not wait for
/// each other's answers ([`Db::query_later`]: on PostgreSQL a round trip
/// for the level, the location, the channels' figures and whether it is
/// booked, one for the bin and lot), and its writes without waiting for
/// theirs, once every check has passed (a movement refused writes
/// nothing, even where no savepoint is rolled back).
fn book(conn: &Db, m: &mut Movement, field: &str, once: bool) -> Result<Option<i64>> {
    let booked = once.then(|| booked_later(conn, m.id)).transpose()?;
    let location = match m.location {
        None => Some(super::locations::assigned_later(
            conn,
            m.item_id,
            m.warehouse_id,
        )?),
        Some(_) => None,
    };
    let level = stored_level(conn, m.item_id, m.warehouse_id)?;
    // The channels' figures as they stand, read with the level: what the
    // movement changes of their pools is worked out from the level.
    let figures =
        super::channels::Figures::send(conn, m.business_id, m.warehouse_id, &[m.item_id])?;
    if let Some(booked) = booked {
        if booked.first(conn)?.is_some() {
            return Ok(None);
        }
    }
    if let Some(location) = location {
        m.location = location.first(conn)?.flatten();
    }
    let m = &*m;
    let (bin, lot) = (
        m.location.as_deref().unwrap_or(""),
        m.lot.as_deref().unwrap_or(""),
    );
    let lot_read = m
        .lot
        .as_deref()
        .map(|lot| lot_level(conn, m.item_id, m.warehouse_id, lot))
        .transpose()?;
    let bin_read = stored_bin_level(conn, m.item_id, m.warehouse_id, bin, lot)?;
    // The sums are made here, checked, and stored as they are: SQLite
    // would turn an overflowing `+` into a REAL and the level would be
    // unreadable from then on.
    let stored = level.first(conn)?;
    let [before, reserved, pending] = stored.unwrap_or_default();
    let on_hand = moved(field, m, Of::Warehouse, before)?;
    let lot_on_hand = match (&m.lot, lot_read) {
        (Some(lot), Some(lot_read)) => {
            let before = lot_read.first(conn)?.unwrap_or(0);
            Some(moved(field, m, Of::Lot(lot), before)?)
        }
        _ => None,
    };
    let bin_stored = bin_read.first(conn)?;
    let bin_before = bin_stored.unwrap_or(0);
    let bin_on_hand = moved(field, m, Of::Bin(bin), bin_before)?;
    insert_movements(conn, &[m])?;
    if let (Some(lot), Some(lot_on_hand)) = (&m.lot, lot_on_hand) {
        put_lot(conn, m, lot, m.expiry, lot_on_hand)?;
    }
    put_level(conn, m, stored.is_some(), on_hand)?;
    put_bin(conn, m, (bin, lot), bin_stored.is_some(), bin_on_hand)?;
    if on_hand < 0 {
        discrepancies(conn, &[(m, on_hand)])?;
    }
    // What the sales channels selling from here may sell moves with it.
    let free = |on_hand: i64| on_hand.saturating_sub(reserved).saturating_sub(pending);
    figures.write(conn, &[(m.item_id, free(before), free(on_hand))])?;
    Ok(Some(on_hand))
}

/// Whether a movement by this id is in the ledger (a row when it is).
fn booked_later(conn: &Db, id: depot_protocol::MovementId) -> Result<Later<i64>> {
    Ok(conn.query_later(
        "SELECT 1 FROM stock_movements WHERE id = ?1",
        params![id.0.to_string()],
        |r| r.get::<i64>(0),
    )?)
}

/// On-hand of one lot of an item in a warehouse (no row if never moved).
fn lot_level(conn: &Db, item: ItemId, warehouse: WarehouseId, lot: &str) -> Result<Later<i64>> {
    Ok(conn.query_later(
        "SELECT on_hand FROM stock_lots WHERE item_id = ?1 AND warehouse_id = ?2 AND lot = ?3",
        params![item.0, warehouse.0, lot],
        |r| r.get(0),
    )?)
}

/// On-hand of one item at one location (`""`: none) and lot (`""`: none).
pub fn bin_level(
    conn: &Db,
    item: ItemId,
    warehouse: WarehouseId,
    location: &str,
    lot: &str,
) -> Result<i64> {
    Ok(stored_bin_level(conn, item, warehouse, location, lot)?
        .first(conn)?
        .unwrap_or(0))
}

/// [`bin_level`], no row where none holds it yet.
fn stored_bin_level(
    conn: &Db,
    item: ItemId,
    warehouse: WarehouseId,
    location: &str,
    lot: &str,
) -> Result<Later<i64>> {
    Ok(conn.query_later(
        "SELECT on_hand FROM stock_bins
         WHERE item_id = ?1 AND warehouse_id = ?2 AND location = ?3 AND lot = ?4",
        params![item.0, warehouse.0, location, lot],
        |r| r.get(0),
    )?)
}

/// On-hand of one item in one warehouse, no row where none holds it yet.
pub(super) fn stored_level(
    conn: &Db,
    item: ItemId,
    warehouse: WarehouseId,
) -> Result<Later<[i64; 3]>> {
    Ok(conn.query_later(
        "SELECT on_hand, reserved, pending FROM stock_levels WHERE item_id = ?1 AND warehouse_id = ?2",
        params![item.0, warehouse.0],
        |r| Ok([r.get(0)?, r.get(1)?, r.get(2)?]),
    )?)
}

/// On-hand and reserved of one item in one warehouse (zeros if never moved).
pub fn level(conn: &Db, item: ItemId, warehouse: WarehouseId) -> Result<(i64, i64)> {
    Ok(level_later(conn, item, warehouse)?
        .first(conn)?
        .unwrap_or((0, 0)))
}

/// [`level`] of the item of a business by its SKU, sent to be taken
/// later: with the read that finds the item, not after it.
pub fn level_by_sku_later(
    conn: &Db,
    business: BusinessId,
    sku: &str,
    warehouse: WarehouseId,
) -> Result<Later<(i64, i64)>> {
    Ok(conn.query_later(
        "SELECT on_hand, reserved FROM stock_levels
         WHERE item_id = (SELECT id FROM items WHERE business_id = ?1 AND sku = ?2)
           AND warehouse_id = ?3",
        params![business.0, sku, warehouse.0],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}

/// [`level`], sent to be taken later (no row: zeros).
pub fn level_later(conn: &Db, item: ItemId, warehouse: WarehouseId) -> Result<Later<(i64, i64)>> {
    Ok(conn.query_later(
        "SELECT on_hand, reserved FROM stock_levels WHERE item_id = ?1 AND warehouse_id = ?2",
        params![item.0, warehouse.0],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}

/// On-hand, reserved and the units pending orders hold, of one item in
/// one warehouse (zeros if never moved).
pub fn levels(conn: &Db, item: ItemId, warehouse: WarehouseId) -> Result<(i64, i64, i64)> {
    let [on_hand, reserved, pending] = stored_level(conn, item, warehouse)?
        .first(conn)?
        .unwrap_or_default();
    Ok((on_hand, reserved, pending))
}

/// Filters of the inventory list.
#[derive(Debug, Clone, Default)]
pub struct StockFilter {
    pub warehouse_id: Option<WarehouseId>,
    pub item_id: Option<ItemId>,
    pub sku: Option<String>,
    /// Only rows whose on-hand is below zero.
    pub negative: bool,
    /// Only items with stock at the location of this code, and only that
    /// location's bins.
    pub location: Option<String>,
}

pub fn list(
    conn: &Db,
    business: BusinessId,
    f: &StockFilter,
    page: Page,
) -> Result<depot_protocol::Listed<StockLevel>> {
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
    if let Some(code) = &f.location {
        q.and(
            "EXISTS (SELECT 1 FROM stock_bins b WHERE b.item_id = s.item_id
                     AND b.warehouse_id = s.warehouse_id AND b.location = ? AND b.on_hand <> 0)",
            [code.clone().into()],
        );
    }
    let depot_protocol::Listed {
        mut rows,
        total,
        filtered,
        cursor,
    } = q.run(
        conn,
        "stock_levels",
        "s.item_id, i.sku, i.name, s.warehouse_id, l.location, s.on_hand, s.reserved",
        super::Order::asc(&[
            super::Key::Int("s.warehouse_id"),
            super::Key::Int("s.item_id"),
        ]),
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
                available: on_hand.saturating_sub(reserved),
                negative: on_hand < 0,
                bins: Vec::new(),
            })
        },
    )?;
    for row in &mut rows {
        row.bins = bins(conn, row.item_id, row.warehouse_id, f.location.as_deref())?;
    }
    Ok(depot_protocol::Listed {
        rows,
        total,
        filtered,
        cursor,
    })
}

/// Where an item's stock in a warehouse is (of one location, if given).
fn bins(
    conn: &Db,
    item: ItemId,
    warehouse: WarehouseId,
    location: Option<&str>,
) -> Result<Vec<BinStock>> {
    Ok(conn.query_map(
        "SELECT location, lot, on_hand FROM stock_bins
         WHERE item_id = ?1 AND warehouse_id = ?2 AND on_hand <> 0
           AND (location = ?3 OR ?3 IS NULL)
         ORDER BY location, lot",
        params![item.0, warehouse.0, location],
        |r| {
            let (location, lot): (String, String) = (r.get(0)?, r.get(1)?);
            Ok(BinStock {
                location: (!location.is_empty()).then_some(location),
                lot: (!lot.is_empty()).then_some(lot),
                on_hand: r.get(2)?,
            })
        },
    )?)
}

/// A level that disagrees with its ledger or with the orders holding stock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inconsistency {
    pub item_id: ItemId,
    pub warehouse_id: WarehouseId,
    /// Set when the disagreement is in one location's stock (`""`: stock
    /// booked without one).
    pub location: Option<String>,
    /// Set when the disagreement is in one lot's stock.
    pub lot: Option<String>,
    pub on_hand: i64,
    pub ledger_sum: i64,
    pub reserved: i64,
    pub held_by_orders: i64,
    /// The units pending orders hold, as kept and as their lines sum.
    pub pending: i64,
    pub pending_in_orders: i64,
}

/// Levels whose on-hand differs from the sum of their movements, or whose
/// reservation differs from what open orders hold. Empty when the books are
/// consistent.
pub fn inconsistencies(conn: &Db) -> Result<Vec<Inconsistency>> {
    let stmt = "SELECT s.item_id, s.warehouse_id, s.on_hand,
                COALESCE((SELECT SUM(delta) FROM stock_movements m
                          WHERE m.item_id = s.item_id AND m.warehouse_id = s.warehouse_id), 0) AS ledger,
                s.reserved,
                COALESCE((SELECT SUM(ol.quantity) FROM order_lines ol JOIN orders o ON o.id = ol.order_id
                          WHERE ol.item_id = s.item_id AND o.warehouse_id = s.warehouse_id
                            AND o.status IN ('confirmed', 'picking', 'packed')), 0) AS held,
                s.pending,
                COALESCE((SELECT SUM(ol.quantity) FROM order_lines ol JOIN orders o ON o.id = ol.order_id
                          WHERE ol.item_id = s.item_id AND o.warehouse_id = s.warehouse_id
                            AND o.status = 'pending'), 0) AS pending_in_orders
         FROM stock_levels s";
    let rows = conn.query_map(stmt, params![], |r| {
        Ok(Inconsistency {
            item_id: ItemId(r.get(0)?),
            warehouse_id: WarehouseId(r.get(1)?),
            location: None,
            lot: None,
            on_hand: r.get(2)?,
            ledger_sum: r.get(3)?,
            reserved: r.get(4)?,
            held_by_orders: r.get(5)?,
            pending: r.get(6)?,
            pending_in_orders: r.get(7)?,
        })
    })?;
    let mut all: Vec<Inconsistency> = rows;
    let stmt = "SELECT l.item_id, l.warehouse_id, l.lot, l.on_hand,
                COALESCE((SELECT SUM(delta) FROM stock_movements m
                          WHERE m.item_id = l.item_id AND m.warehouse_id = l.warehouse_id AND m.lot = l.lot), 0)
         FROM stock_lots l";
    let lots = conn.query_map(stmt, params![], |r| {
        Ok(Inconsistency {
            item_id: ItemId(r.get(0)?),
            warehouse_id: WarehouseId(r.get(1)?),
            location: None,
            lot: Some(r.get(2)?),
            on_hand: r.get(3)?,
            ledger_sum: r.get(4)?,
            reserved: 0,
            held_by_orders: 0,
            pending: 0,
            pending_in_orders: 0,
        })
    })?;
    all.extend(lots);
    let stmt = "SELECT b.item_id, b.warehouse_id, b.location, b.lot, b.on_hand,
                COALESCE((SELECT SUM(delta) FROM stock_movements m
                          WHERE m.item_id = b.item_id AND m.warehouse_id = b.warehouse_id
                            AND COALESCE(m.location, '') = b.location
                            AND COALESCE(m.lot, '') = b.lot), 0)
         FROM stock_bins b";
    let bins = conn.query_map(stmt, params![], |r| {
        let (location, lot): (String, String) = (r.get(2)?, r.get(3)?);
        Ok(Inconsistency {
            item_id: ItemId(r.get(0)?),
            warehouse_id: WarehouseId(r.get(1)?),
            location: Some(location),
            lot: (!lot.is_empty()).then_some(lot),
            on_hand: r.get(4)?,
            ledger_sum: r.get(5)?,
            reserved: 0,
            held_by_orders: 0,
            pending: 0,
            pending_in_orders: 0,
        })
    })?;
    all.extend(bins);
    Ok(all
        .into_iter()
        .filter(|i| {
            i.on_hand != i.ledger_sum
                || i.reserved != i.held_by_orders
                || i.pending != i.pending_in_orders
        })
        .collect())
}
