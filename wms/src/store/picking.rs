//! Waves and pick lines.

use super::catalog::SCANNED_ITEM;
use super::{maybe, parse_ts, ts};
use crate::error::{Result, WmsError};
use chrono::NaiveDate;
use depot_protocol::picking::{PickLine, PickList, Wave, WaveStatus};
use depot_protocol::{
    BusinessId, ItemId, OrderId, Page, PickLineId, Timestamp, WarehouseId, WaveId,
};
use depot_sql::{Db, Row, params};
use std::sync::LazyLock;

/// Confirmed orders of a warehouse not yet in a wave, oldest first: read
/// from `orders_unwaved`, which holds only those (its `WHERE` and this
/// one's must match term for term for SQLite to use it).
const WAITING_ORDERS: &str = "SELECT id FROM orders
     WHERE business_id = ?1 AND warehouse_id = ?2 AND status = 'confirmed' AND wave_id IS NULL
       AND (carrier = ?3 OR ?3 IS NULL) AND (created_at < ?4 OR ?4 IS NULL)
     ORDER BY created_at, id LIMIT ?5";

/// Confirmed orders of a warehouse not yet in a wave, oldest first.
pub fn waiting_orders(
    conn: &Db,
    business: BusinessId,
    warehouse: WarehouseId,
    carrier: Option<&str>,
    cutoff: Option<&Timestamp>,
    limit: u32,
) -> Result<Vec<OrderId>> {
    let rows = conn.query_map(
        WAITING_ORDERS,
        params![business.0, warehouse.0, carrier, cutoff.map(ts), limit],
        |r| Ok(OrderId(r.get(0)?)),
    )?;
    Ok(rows)
}

pub fn insert_wave(
    conn: &Db,
    business: BusinessId,
    warehouse: WarehouseId,
    carrier: Option<&str>,
    cutoff: Option<&Timestamp>,
    at: &Timestamp,
) -> Result<WaveId> {
    let id = super::ids::allocate(conn, "waves")?;
    conn.execute(
        "INSERT INTO waves (id, business_id, warehouse_id, status, carrier, cutoff, created_at)
         VALUES (?1, ?2, ?3, 'open', ?4, ?5, ?6)",
        params![id, business.0, warehouse.0, carrier, cutoff.map(ts), ts(at)],
    )?;
    Ok(WaveId(id))
}

pub fn set_order_wave(conn: &Db, order: OrderId, wave: WaveId) -> Result<()> {
    conn.execute(
        "UPDATE orders SET wave_id = ?2 WHERE id = ?1",
        params![order.0, wave.0],
    )?;
    Ok(())
}

/// Lots of an item in a warehouse with what is not yet promised to open
/// pick lines, soonest expiry first (FEFO).
pub fn free_lots(
    conn: &Db,
    item: ItemId,
    warehouse: WarehouseId,
) -> Result<Vec<(String, Option<NaiveDate>, i64)>> {
    let stmt = "SELECT s.lot, s.expiry, s.on_hand - COALESCE((
                SELECT SUM(p.quantity) FROM pick_lines p JOIN orders o ON o.id = p.order_id
                WHERE p.item_id = s.item_id AND p.lot = s.lot AND o.warehouse_id = s.warehouse_id
                  AND o.status IN ('confirmed', 'picking', 'packed')), 0) AS free
         FROM stock_lots s WHERE s.item_id = ?1 AND s.warehouse_id = ?2 AND s.on_hand > 0
         ORDER BY s.expiry IS NULL, s.expiry, s.lot";
    let rows = conn.query_map(stmt, params![item.0, warehouse.0], |r| {
        Ok((r.get(0)?, super::parse_date(r.get(1)?)?, r.get(2)?))
    })?;
    Ok(rows.into_iter().filter(|(_, _, free)| *free > 0).collect())
}

/// A pick line to insert; `seq` is assigned when the wave is laid out.
pub struct NewLine {
    pub order_id: OrderId,
    pub item_id: ItemId,
    pub sku: String,
    pub location: Option<String>,
    pub lot: Option<String>,
    pub expiry: Option<NaiveDate>,
    pub quantity: i64,
}

pub fn insert_line(conn: &Db, wave: WaveId, l: &NewLine, seq: i64) -> Result<()> {
    super::count_within("quantity", l.quantity)?;
    conn.execute("INSERT INTO pick_lines (id, wave_id, order_id, item_id, sku, location, lot, expiry, quantity, seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)", params![super::ids::allocate(conn, "pick_lines")?, wave.0, l.order_id.0, l.item_id.0, l.sku, l.location, l.lot, l.expiry.map(|d| d.to_string()), l.quantity, seq])?;
    Ok(())
}

const LINE_COLS: &str = "id, order_id, item_id, sku, location, lot, expiry, quantity, picked";

fn line_row(r: &Row) -> depot_sql::Result<PickLine> {
    let (quantity, picked): (i64, i64) = (r.get(7)?, r.get(8)?);
    Ok(PickLine {
        id: PickLineId(r.get(0)?),
        order_id: OrderId(r.get(1)?),
        item_id: ItemId(r.get(2)?),
        sku: r.get(3)?,
        location: r.get(4)?,
        lot: r.get(5)?,
        expiry: super::parse_date(r.get(6)?)?,
        quantity,
        picked,
        remaining: quantity.saturating_sub(picked),
        awaiting_replenishment: false,
    })
}

/// Every line of a wave in walking order.
pub fn lines(conn: &Db, wave: WaveId) -> Result<Vec<PickLine>> {
    let stmt = &format!("SELECT {LINE_COLS} FROM pick_lines WHERE wave_id = ?1 ORDER BY seq, id");
    let rows = conn.query_map(stmt, params![wave.0], line_row)?;
    Ok(rows)
}

/// Lines of one order (in whatever wave), in walking order.
pub fn order_lines(conn: &Db, order: OrderId) -> Result<Vec<PickLine>> {
    let stmt = &format!("SELECT {LINE_COLS} FROM pick_lines WHERE order_id = ?1 ORDER BY seq, id");
    let rows = conn.query_map(stmt, params![order.0], line_row)?;
    Ok(rows)
}

/// Read from `orders_by_wave`, which holds the orders in a wave.
const CANCELLED_ORDERS: &str = "SELECT id FROM orders WHERE wave_id = ?1 AND status = 'cancelled'";

/// Orders of a wave cancelled since it was made: their lines are not to be
/// picked any more.
pub fn cancelled_orders(conn: &Db, wave: WaveId) -> Result<Vec<OrderId>> {
    Ok(conn.query_map(CANCELLED_ORDERS, params![wave.0], |r| {
        Ok(OrderId(r.get(0)?))
    })?)
}

/// Adds to what a line has picked. The count stays within
/// `0..=MAX_ON_HAND`: a pick that would take it beyond is refused, naming
/// `quantity`, before anything is written.
pub fn add_picked(conn: &Db, line: PickLineId, quantity: i64) -> Result<()> {
    // One statement when the count stays within bounds, as every scan's
    // does; the line is read only to say why one does not. A quantity
    // beyond the ceiling either way never fits, and is not added in SQL,
    // where PostgreSQL would refuse the overflow with an error of its own.
    let max = depot_protocol::stock::MAX_ON_HAND;
    if quantity.checked_abs().is_some_and(|q| q <= max) {
        let changed = conn.execute(
            "UPDATE pick_lines SET picked = picked + ?2
             WHERE id = ?1 AND picked + ?2 BETWEEN 0 AND ?3",
            params![line.0, quantity, max],
        )?;
        if changed > 0 {
            return Ok(());
        }
    }
    // A line that is not there is left alone, as the `UPDATE` leaves it.
    let was: i64 = maybe(conn.query_row(
        "SELECT picked FROM pick_lines WHERE id = ?1",
        params![line.0],
        |r| r.get(0),
    ))?
    .unwrap_or(0);
    match depot_protocol::stock::next_count(was, quantity) {
        Some(_) => Ok(()),
        None => Err(WmsError::invalid(vec![depot_protocol::FieldError::new(
            "quantity",
            format!(
                "pick line {line} has {was} picked: {quantity} more would take it beyond {max}"
            ),
        )])),
    }
}

pub fn complete_wave(conn: &Db, wave: WaveId, at: &Timestamp) -> Result<()> {
    conn.execute(
        "UPDATE waves SET status = 'completed', completed_at = ?2 WHERE id = ?1",
        params![wave.0, ts(at)],
    )?;
    Ok(())
}

const WAVE_COLS: &str =
    "id, business_id, warehouse_id, status, carrier, cutoff, created_at, completed_at";

fn wave_row(r: &Row) -> depot_sql::Result<Wave> {
    let status: String = r.get(3)?;
    Ok(Wave {
        id: WaveId(r.get(0)?),
        business_id: BusinessId(r.get(1)?),
        warehouse_id: WarehouseId(r.get(2)?),
        status: WaveStatus::parse(&status).ok_or_else(|| {
            depot_sql::Error::conversion(3, format!("not a value this release knows: {status}"))
        })?,
        carrier: r.get(4)?,
        cutoff: r
            .get::<Option<String>>(5)?
            .map(|s| parse_ts(&s))
            .transpose()?,
        pick_lists: Vec::new(),
        units_total: 0,
        units_picked: 0,
        created_at: parse_ts(&r.get::<String>(6)?)?,
        completed_at: r
            .get::<Option<String>>(7)?
            .map(|s| parse_ts(&s))
            .transpose()?,
    })
}

/// Groups a wave's lines into one pick list per order, keeping walking order.
fn fill(conn: &Db, w: &mut Wave) -> Result<()> {
    let mut all = lines(conn, w.id)?;
    // Which faces wait for a refill: one look per location and item.
    let mut waiting: Vec<(String, ItemId, bool)> = Vec::new();
    for l in all.iter_mut().filter(|l| l.remaining > 0) {
        let Some(at) = l.location.as_deref() else {
            continue;
        };
        let known = waiting
            .iter()
            .find(|(loc, item, _)| loc == at && *item == l.item_id)
            .map(|w| w.2);
        l.awaiting_replenishment = match known {
            Some(open) => open,
            None => {
                let open = super::replenish::has_open(conn, w.warehouse_id, at, l.item_id)?;
                waiting.push((at.to_owned(), l.item_id, open));
                open
            }
        };
    }
    w.units_total = all.iter().fold(0i64, |n, l| n.saturating_add(l.quantity));
    w.units_picked = all.iter().fold(0i64, |n, l| n.saturating_add(l.picked));
    let mut lists: Vec<PickList> = Vec::new();
    for l in all {
        match lists.iter_mut().find(|p| p.order_id == l.order_id) {
            Some(p) => p.lines.push(l),
            None => lists.push(PickList {
                order_id: l.order_id,
                lines: vec![l],
            }),
        }
    }
    w.pick_lists = lists;
    Ok(())
}

pub fn wave(conn: &Db, business: BusinessId, id: WaveId) -> Result<Option<Wave>> {
    let Some(mut w) = wave_head(conn, business, id)? else {
        return Ok(None);
    };
    fill(conn, &mut w)?;
    Ok(Some(w))
}

/// The warehouse of a wave of the business: all a scan needs of the wave
/// itself.
pub fn wave_warehouse(conn: &Db, business: BusinessId, id: WaveId) -> Result<Option<WarehouseId>> {
    Ok(wave_warehouse_later(conn, business, id)?.first(conn)?)
}

/// [`wave_warehouse`], sent to be taken later.
pub fn wave_warehouse_later(
    conn: &Db,
    business: BusinessId,
    id: WaveId,
) -> Result<depot_sql::Later<WarehouseId>> {
    Ok(conn.query_later(
        "SELECT warehouse_id FROM waves WHERE business_id = ?1 AND id = ?2",
        params![business.0, id.0],
        |r| Ok(WarehouseId(r.get(0)?)),
    )?)
}

/// A wave without its pick lists.
fn wave_head(conn: &Db, business: BusinessId, id: WaveId) -> Result<Option<Wave>> {
    maybe(conn.query_row(
        &format!("SELECT {WAVE_COLS} FROM waves WHERE business_id = ?1 AND id = ?2"),
        params![business.0, id.0],
        wave_row,
    ))
}

/// The end of a scan's lines' statements: lines of orders not cancelled,
/// in walking order.
const NOT_CANCELLED: &str = "AND NOT EXISTS (SELECT 1 FROM orders o
                                 WHERE o.id = p.order_id AND o.status = 'cancelled')
                             ORDER BY seq, id";

/// A statement made once, not formatted anew on every scan.
type Made = LazyLock<String>;

/// The lines of a wave for one item (and one order, if given) whose order
/// is not cancelled, in walking order: the lines a scan can fill.
///
/// One statement for an order and one for none, not one with `(order_id =
/// ?3 OR ?3 IS NULL)`: PostgreSQL found no generic plan for that form as
/// cheap as one made for the values, and planned it again on every scan
/// (92 µs a scan, six times what running it took; `tests/it/plans_pg.rs`).
pub fn item_lines(
    conn: &Db,
    wave: WaveId,
    item: ItemId,
    order: Option<OrderId>,
) -> Result<Vec<PickLine>> {
    static OF_ORDER: Made = Made::new(|| {
        format!(
            "SELECT {LINE_COLS} FROM pick_lines p WHERE wave_id = ?1 AND item_id = ?2 AND order_id = ?3 {NOT_CANCELLED}"
        )
    });
    static OF_WAVE: Made = Made::new(|| {
        format!(
            "SELECT {LINE_COLS} FROM pick_lines p WHERE wave_id = ?1 AND item_id = ?2 {NOT_CANCELLED}"
        )
    });
    let rows = match order {
        Some(o) => conn.query_map(&OF_ORDER, params![wave.0, item.0, o.0], line_row),
        None => conn.query_map(&OF_WAVE, params![wave.0, item.0], line_row),
    }?;
    Ok(rows)
}

/// [`item_lines`] of the item a scanned code names (`key` as
/// `catalog::code_key` makes it, `sku` when the code may be one), the code
/// looked up in the same statement: sent to be taken later, so that a
/// scan on PostgreSQL reads its wave, its item and its lines in one round
/// trip.
pub fn scanned_lines_later(
    conn: &Db,
    wave: WaveId,
    business: BusinessId,
    key: &str,
    sku: Option<&str>,
    order: Option<OrderId>,
) -> Result<depot_sql::Later<PickLine>> {
    // The lookup's numbers are its own: the business ?1, the code ?2, the
    // SKU ?3.
    static OF_ORDER: Made = Made::new(|| {
        format!(
            "SELECT {LINE_COLS} FROM pick_lines p WHERE wave_id = ?4 AND item_id = {SCANNED_ITEM} AND order_id = ?5 {NOT_CANCELLED}"
        )
    });
    static OF_WAVE: Made = Made::new(|| {
        format!(
            "SELECT {LINE_COLS} FROM pick_lines p WHERE wave_id = ?4 AND item_id = {SCANNED_ITEM} {NOT_CANCELLED}"
        )
    });
    Ok(match order {
        Some(o) => conn.query_later(
            &OF_ORDER,
            params![business.0, key, sku, wave.0, o.0],
            line_row,
        ),
        None => conn.query_later(&OF_WAVE, params![business.0, key, sku, wave.0], line_row),
    }?)
}

/// Whether an order has lines in a wave.
pub fn order_in_wave(conn: &Db, wave: WaveId, order: OrderId) -> Result<bool> {
    Ok(maybe(conn.query_row(
        "SELECT 1 FROM pick_lines WHERE wave_id = ?1 AND order_id = ?2 LIMIT 1",
        params![wave.0, order.0],
        |_| Ok(()),
    ))?
    .is_some())
}

/// Units left to pick in a wave (leaving out cancelled orders) and in one
/// of its orders: the wave's from the counter the schema's triggers keep
/// (migration 021), the order's summed over its own few lines (`+wave_id`
/// keeps the planner on `pick_lines_by_order` rather than the wave's many).
/// Sent to be taken later: a scan sends it with its pick and takes off
/// what it picked.
pub fn remaining_later(
    conn: &Db,
    wave: WaveId,
    order: OrderId,
) -> Result<depot_sql::Later<(i64, i64)>> {
    Ok(conn.query_later(
        "SELECT units_left,
                    COALESCE((SELECT SUM(quantity - picked) FROM pick_lines
                              WHERE order_id = ?2 AND +wave_id = ?1), 0)
             FROM waves WHERE id = ?1",
        params![wave.0, order.0],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}

#[derive(Debug, Clone, Default)]
pub struct WaveFilter {
    pub status: Option<WaveStatus>,
    pub warehouse_id: Option<WarehouseId>,
}

pub fn list(
    conn: &Db,
    business: BusinessId,
    f: &WaveFilter,
    page: Page,
) -> Result<depot_protocol::Listed<Wave>> {
    let mut q = super::ListQuery::new("FROM waves WHERE business_id = ?", business);
    if let Some(s) = f.status {
        q.and("status = ?", [s.as_str().to_owned().into()]);
    }
    if let Some(w) = f.warehouse_id {
        q.and("warehouse_id = ?", [w.0.into()]);
    }
    let mut listed = q.run(
        conn,
        "waves",
        WAVE_COLS,
        super::Order::desc(&[super::Key::Int("id")]),
        page,
        wave_row,
    )?;
    for w in &mut listed.rows {
        fill(conn, w)?;
    }
    Ok(listed)
}

/// A wave made on another node, with its ids and lines as they were there;
/// the lines keep the order they were laid out in.
pub fn insert_replica(conn: &Db, w: &Wave) -> Result<()> {
    conn.execute("INSERT INTO waves (id, business_id, warehouse_id, status, carrier, cutoff, created_at, completed_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", params![
        w.id.0,
        w.business_id.0,
        w.warehouse_id.0,
        w.status.as_str(),
        w.carrier,
        w.cutoff.as_ref().map(ts),
        ts(&w.created_at),
        w.completed_at.as_ref().map(ts)
    ])?;
    let mut lines: Vec<&PickLine> = w.pick_lists.iter().flat_map(|p| &p.lines).collect();
    // The walk the wave was laid out in where it was made, as far as the
    // locations here say the same.
    let walk = super::locations::walk_sequences(conn, w.warehouse_id)?;
    lines.sort_by_cached_key(|l| {
        (
            super::locations::walk_key(&walk, l.location.as_deref()),
            l.sku.clone(),
            l.id,
        )
    });
    let stmt = "INSERT INTO pick_lines (id, wave_id, order_id, item_id, sku, location, lot, expiry, quantity, picked, seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";
    for (seq, l) in lines.into_iter().enumerate() {
        super::count_within("quantity", l.quantity)?;
        super::count_within("picked", l.picked)?;
        conn.execute(
            stmt,
            params![
                l.id.0,
                w.id.0,
                l.order_id.0,
                l.item_id.0,
                l.sku,
                l.location,
                l.lot,
                l.expiry.map(|d| d.to_string()),
                l.quantity,
                l.picked,
                seq as i64
            ],
        )?;
    }
    Ok(())
}

/// The wave an order is in, if any.
pub fn order_wave(conn: &Db, order: OrderId) -> Result<Option<WaveId>> {
    Ok(maybe(conn.query_row(
        "SELECT wave_id FROM orders WHERE id = ?1",
        params![order.0],
        |r| r.get::<Option<i64>>(0),
    ))?
    .flatten()
    .map(WaveId))
}

/// Units still to pick in a wave, leaving out cancelled orders' lines.
pub fn wave_remaining(conn: &Db, wave: WaveId) -> Result<i64> {
    Ok(conn
        .query_row("SELECT COALESCE(SUM(p.quantity - p.picked), 0) FROM pick_lines p JOIN orders o ON o.id = p.order_id
             WHERE p.wave_id = ?1 AND o.status != 'cancelled'", params![wave.0], |r| r.get(0))?)
}

/// The wave and remaining units of a pick line.
pub fn line_state(conn: &Db, line: PickLineId) -> Result<Option<(WaveId, i64)>> {
    maybe(conn.query_row(
        "SELECT wave_id, quantity - picked FROM pick_lines WHERE id = ?1",
        params![line.0],
        |r| Ok((WaveId(r.get(0)?), r.get(1)?)),
    ))
}

#[cfg(test)]
mod tests;
