//! Reservations and the units pending orders hold: each change of them
//! moves the levels and the channels' figures of its items together.

use super::{beyond, stored_level};
use crate::error::Result;
use depot_protocol::stock::next_level;
use depot_protocol::{BusinessId, ItemId, WarehouseId};
use depot_sql::{Db, Later, params};

/// Changes the reserved quantity by `delta` (negative releases). A change
/// that would take it beyond `±MAX_ON_HAND` is refused, naming `quantity`.
pub fn reserve(
    conn: &Db,
    business: BusinessId,
    item: ItemId,
    warehouse: WarehouseId,
    delta: i64,
) -> Result<()> {
    reserve_as(conn, business, item, warehouse, delta, "quantity")
}

/// [`reserve`], naming `field` when the change is refused.
pub fn reserve_as(
    conn: &Db,
    business: BusinessId,
    item: ItemId,
    warehouse: WarehouseId,
    delta: i64,
    field: &str,
) -> Result<()> {
    hold(conn, business, item, warehouse, delta, 0, field)
}

/// Changes the reserved units by `reserved` and the units pending orders
/// hold by `pending` in one write, and the channels' figures once: an
/// order confirmed moves its units from one to the other, and its
/// channels' figures do not move. Beyond `±MAX_ON_HAND` is refused,
/// naming `field`.
fn hold(
    conn: &Db,
    business: BusinessId,
    item: ItemId,
    warehouse: WarehouseId,
    reserved: i64,
    pending: i64,
    field: &str,
) -> Result<()> {
    Holding::send(conn, business, warehouse, &[(item, reserved, pending)])?.apply(conn, field)
}

/// [`hold`] of several items of one warehouse (an order's lines), their
/// levels read together: sent first ([`Holding::send`]), the caller may
/// send reads of its own before they are answered ([`Holding::apply`]).
#[must_use = "holds sent are applied with `apply`"]
pub struct Holding {
    business: BusinessId,
    warehouse: WarehouseId,
    /// Each item, its changes to reserved and pending, and its levels read
    /// (on-hand, reserved, pending).
    items: Vec<(ItemId, i64, i64, Later<[i64; 3]>)>,
    /// The items' channel figures, read with their levels.
    figures: crate::store::channels::Figures,
}

impl Holding {
    /// Sends the reads of each item's levels. An item named twice has its
    /// changes added, as two holds one after the other would.
    pub fn send(
        conn: &Db,
        business: BusinessId,
        warehouse: WarehouseId,
        changes: &[(ItemId, i64, i64)],
    ) -> Result<Self> {
        let mut merged: Vec<(ItemId, i64, i64)> = Vec::with_capacity(changes.len());
        for &(item, reserved, pending) in changes {
            match merged.iter_mut().find(|(i, ..)| *i == item) {
                Some((_, r, p)) => {
                    *r = r.saturating_add(reserved);
                    *p = p.saturating_add(pending);
                }
                None => merged.push((item, reserved, pending)),
            }
        }
        let mut items = Vec::with_capacity(merged.len());
        for (item, reserved, pending) in merged {
            items.push((
                item,
                reserved,
                pending,
                stored_level(conn, item, warehouse)?,
            ));
        }
        let ids: Vec<ItemId> = items.iter().map(|(item, ..)| *item).collect();
        let figures = crate::store::channels::Figures::send(conn, business, warehouse, &ids)?;
        Ok(Self {
            business,
            warehouse,
            items,
            figures,
        })
    }

    /// Writes each item's levels moved (without waiting), then the
    /// channels' figures of them all (read with the levels, before).
    pub fn apply(self, conn: &Db, field: &str) -> Result<()> {
        let Self {
            business,
            warehouse,
            items,
            figures,
        } = self;
        let mut moved = Vec::with_capacity(items.len());
        for (item, reserved, pending, level) in items {
            let [on_hand, r0, p0] = level.first(conn)?.unwrap_or_default();
            let r1 = next_level(r0, reserved).ok_or_else(|| {
                beyond(
                    field,
                    &format!("the reservation of item {item} in warehouse {warehouse}"),
                    r0,
                    reserved,
                )
            })?;
            let p1 = next_level(p0, pending).ok_or_else(|| {
                beyond(
                    field,
                    &format!("the pending orders' units of item {item} in warehouse {warehouse}"),
                    p0,
                    pending,
                )
            })?;
            conn.execute_later(
                "INSERT INTO stock_levels (item_id, warehouse_id, business_id, reserved, pending)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (item_id, warehouse_id) DO UPDATE SET reserved = excluded.reserved,
                                                                   pending = excluded.pending",
                params![item.0, warehouse.0, business.0, r1, p1],
            )?;
            let free = |r: i64, p: i64| on_hand.saturating_sub(r).saturating_sub(p);
            moved.push((item, free(r0, p0), free(r1, p1)));
        }
        figures.write(conn, &moved)
    }
}
