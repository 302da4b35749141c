//! The stock ledger: adjustments become movements; levels follow.

use crate::store::{self, catalog, ledger as sql, tenants};
use crate::{Result, Wms, WmsError};
use depot_protocol::event::EventKind;
use depot_protocol::stock::{
    AdjustKind, AdjustRequest, Adjustment, ItemRef, Movement, MovementReason, StockLevel,
};
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, FieldError, ItemId, MovementId, Page, WarehouseId, now};
use depot_sql::Db;
use serde::Serialize;

pub use sql::{Inconsistency, StockFilter};

/// What an adjustment did.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct AdjustResult {
    pub movements: Vec<Movement>,
    /// The levels after the movements, one per warehouse touched.
    pub levels: Vec<LevelAfter>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct LevelAfter {
    pub item_id: ItemId,
    pub warehouse_id: WarehouseId,
    pub on_hand: i64,
    pub reserved: i64,
    pub available: i64,
    /// On-hand is below zero: recorded as a discrepancy to investigate.
    pub negative: bool,
}

/// One movement an adjustment makes: where, why, how many.
type Planned = (WarehouseId, Option<String>, MovementReason, i64);

/// The movements an adjustment turns into, given the on-hand it counts
/// against (the location's, or the warehouse's when it names none); `None`
/// when the difference a count makes does not fit in an `i64`.
fn plan(a: &Adjustment, on_hand: i64) -> Option<Vec<Planned>> {
    let here = a.location.clone();
    Some(match a.kind {
        AdjustKind::Delta { reason, delta } => vec![(a.warehouse_id, here, reason, delta)],
        // A count says what is there; the ledger records the difference.
        AdjustKind::Count { counted } => vec![(
            a.warehouse_id,
            here,
            MovementReason::CycleCount,
            counted.checked_sub(on_hand)?,
        )],
        AdjustKind::Transfer { to, quantity } => {
            vec![
                (
                    a.warehouse_id,
                    here,
                    MovementReason::Transfer,
                    quantity.checked_neg()?,
                ),
                (
                    to,
                    a.to_location.clone(),
                    MovementReason::Transfer,
                    quantity,
                ),
            ]
        }
    })
}

/// The request field a movement of this adjustment comes from, named when
/// it is refused.
fn field(kind: &AdjustKind) -> &'static str {
    match kind {
        AdjustKind::Delta {
            reason: MovementReason::Adjusted,
            ..
        } => "delta",
        AdjustKind::Delta { .. } | AdjustKind::Transfer { .. } => "quantity",
        AdjustKind::Count { .. } => "counted",
    }
}

fn resolve_item(conn: &Db, business: BusinessId, item: &ItemRef) -> Result<ItemId> {
    let found = match item {
        ItemRef::Id(id) => catalog::item(conn, business, *id)?.map(|i| i.id),
        ItemRef::Sku(sku) => catalog::sku_owner(conn, business, sku)?,
    };
    found.ok_or_else(|| match item {
        ItemRef::Id(id) => WmsError::NotFound(format!("item {id} does not exist")),
        ItemRef::Sku(sku) => WmsError::NotFound(format!("no item with SKU {sku}")),
    })
}

/// Units of an item (and lot) going from one location of a warehouse to
/// another: a putaway, a refill.
pub(crate) struct Relocation<'a> {
    pub business: BusinessId,
    pub warehouse: WarehouseId,
    pub item: ItemId,
    pub lot: Option<&'a str>,
    pub expiry: Option<chrono::NaiveDate>,
    pub from: &'a str,
    pub to: &'a str,
    pub quantity: i64,
    /// What moved them (`putaway:<id>`, `replenishment:<id>`).
    pub reference: String,
    pub actor: &'a str,
    pub at: depot_protocol::Timestamp,
}

/// Books a relocation as two `transfer` movements, −quantity at `from` and
/// +quantity at `to`, each logged as `stock.moved`; a refusal names
/// `quantity`.
pub(crate) fn relocate(conn: &Db, origin: &str, r: &Relocation) -> Result<()> {
    for (location, delta) in [(r.from, r.quantity.saturating_neg()), (r.to, r.quantity)] {
        let mut m = Movement {
            id: MovementId::new(),
            business_id: r.business,
            item_id: r.item,
            warehouse_id: r.warehouse,
            location: Some(location.to_owned()),
            delta,
            reason: MovementReason::Transfer,
            reference: Some(r.reference.clone()),
            note: None,
            lot: r.lot.map(str::to_owned),
            expiry: r.expiry,
            actor: r.actor.to_owned(),
            origin: origin.to_owned(),
            at: r.at,
        };
        sql::record_as(conn, &mut m, "quantity")?;
        store::events::append(conn, origin, Some(r.business), EventKind::StockMoved, &m)?;
    }
    Ok(())
}

/// Records one adjustment inside the caller's transaction.
pub(crate) fn apply(
    conn: &Db,
    origin: &str,
    business: BusinessId,
    a: &Adjustment,
    actor: &str,
) -> Result<AdjustResult> {
    let mut warehouses = vec![a.warehouse_id];
    if let AdjustKind::Transfer { to, .. } = a.kind {
        warehouses.push(to);
    }
    warehouses.dedup();
    // Reads that do not wait for each other go out together (on
    // PostgreSQL a round trip each otherwise): the warehouses and each
    // one's level of the item, with the item. (A level is only taken once
    // the item is found to be the business's.)
    let found = warehouses
        .iter()
        .map(|w| tenants::warehouse_later(conn, business, *w))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let sent = warehouses
        .iter()
        .map(|w| match &a.item {
            ItemRef::Id(item) => sql::level_later(conn, *item, *w),
            ItemRef::Sku(sku) => sql::level_by_sku_later(conn, business, sku, *w),
        })
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let item_id = resolve_item(conn, business, &a.item)?;
    for ((field, w), found) in ["warehouse_id", "to_warehouse_id"]
        .iter()
        .zip(&warehouses)
        .zip(found)
    {
        if found.first(conn)?.is_none() {
            return Err(WmsError::NotFound(format!(
                "{field}: warehouse {w} does not exist"
            )));
        }
    }
    let to_warehouse = match a.kind {
        AdjustKind::Transfer { to, .. } => Some(to),
        _ => None,
    };
    if let Some(code) = &a.location {
        crate::locations::require(conn, a.warehouse_id, code, "location")?;
    }
    if let (Some(code), Some(to)) = (&a.to_location, to_warehouse) {
        crate::locations::require(conn, to, code, "to_location")?;
        let from = match &a.location {
            Some(l) => Some(l.clone()),
            None => store::locations::assigned(conn, item_id, a.warehouse_id)?,
        };
        if to == a.warehouse_id && from.as_deref() == Some(code.as_str()) {
            return Err(WmsError::invalid(vec![FieldError::new(
                "to_location",
                format!("the stock is already at {code}"),
            )]));
        }
    }
    // Each warehouse's on-hand and reserved: an adjustment moves the
    // first, never the second, so the levels it answers are these with
    // what its movements booked.
    let mut levels = Vec::with_capacity(warehouses.len());
    for (w, level) in warehouses.iter().zip(sent) {
        levels.push((*w, level.first(conn)?.unwrap_or((0, 0))));
    }
    let on_hand = match (&a.kind, &a.location) {
        (AdjustKind::Count { .. }, Some(code)) => {
            store::locations::item_at(conn, item_id, a.warehouse_id, code)?
        }
        _ => levels.first().map_or(0, |(_, (on_hand, _))| *on_hand),
    };
    let at = now();
    let mut result = AdjustResult {
        movements: Vec::new(),
        levels: Vec::new(),
    };
    let field = field(&a.kind);
    let planned = plan(a, on_hand).ok_or_else(|| sql::beyond(field, "on-hand", on_hand, 0))?;
    for (warehouse_id, location, reason, delta) in planned {
        let mut m = Movement {
            id: MovementId::new(),
            business_id: business,
            item_id,
            warehouse_id,
            location,
            delta,
            reason,
            reference: a.reference.clone(),
            note: a.note.clone(),
            lot: None,
            expiry: None,
            actor: actor.to_owned(),
            origin: origin.to_owned(),
            at,
        };
        let after = sql::record_as(conn, &mut m, field)?;
        if let Some((_, (on_hand, _))) = levels.iter_mut().find(|(w, _)| *w == warehouse_id) {
            *on_hand = after;
        }
        store::events::append(conn, origin, Some(business), EventKind::StockMoved, &m)?;
        if let Some(face) = crate::replenish::left(&m) {
            let face = crate::replenish::Face {
                business,
                warehouse: warehouse_id,
                location: face,
                item: item_id,
            };
            crate::replenish::check(conn, origin, face, "adjust", 0)?;
        }
        result.movements.push(m);
    }
    for (w, (on_hand, reserved)) in levels {
        result.levels.push(LevelAfter {
            item_id,
            warehouse_id: w,
            on_hand,
            reserved,
            available: on_hand.saturating_sub(reserved),
            negative: on_hand < 0,
        });
    }
    Ok(result)
}

impl Wms {
    pub async fn adjust(&self, caller: Caller, req: AdjustRequest) -> Result<AdjustResult> {
        let adjustment = req.parse().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write_for(caller.business_id, move |conn| {
            apply(
                conn,
                &origin,
                caller.business_id,
                &adjustment,
                &caller.actor(),
            )
        })
        .await
    }

    pub async fn list_stock(
        &self,
        business: BusinessId,
        filter: StockFilter,
        page: Page,
    ) -> Result<depot_protocol::Listed<StockLevel>> {
        self.read(move |conn| sql::list(conn, business, &filter, page))
            .await
    }

    /// On-hand and reserved of one item in one warehouse.
    pub async fn stock_level(&self, item: ItemId, warehouse: WarehouseId) -> Result<(i64, i64)> {
        self.read(move |conn| sql::level(conn, item, warehouse))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adj(kind: AdjustKind) -> Adjustment {
        Adjustment {
            warehouse_id: WarehouseId(1),
            item: ItemRef::Id(ItemId(1)),
            kind,
            location: None,
            to_location: None,
            reference: None,
            note: None,
        }
    }

    #[test]
    fn a_count_records_the_difference() {
        assert_eq!(
            plan(&adj(AdjustKind::Count { counted: 7 }), 10),
            Some(vec![(WarehouseId(1), None, MovementReason::CycleCount, -3)])
        );
        assert_eq!(
            plan(&adj(AdjustKind::Count { counted: 7 }), -2),
            Some(vec![(WarehouseId(1), None, MovementReason::CycleCount, 9)])
        );
        assert_eq!(
            plan(&adj(AdjustKind::Count { counted: 7 }), 7),
            Some(vec![(WarehouseId(1), None, MovementReason::CycleCount, 0)])
        );
        // A level already out of range (books written before the limits)
        // is refused, never wrapped.
        assert_eq!(plan(&adj(AdjustKind::Count { counted: 7 }), i64::MIN), None);
    }

    #[test]
    fn a_transfer_is_two_movements_that_cancel() {
        let p = plan(
            &adj(AdjustKind::Transfer {
                to: WarehouseId(2),
                quantity: 4,
            }),
            0,
        )
        .unwrap_or_default();
        assert_eq!(
            p,
            vec![
                (WarehouseId(1), None, MovementReason::Transfer, -4),
                (WarehouseId(2), None, MovementReason::Transfer, 4)
            ]
        );
        assert_eq!(p.iter().map(|(_, _, _, d)| d).sum::<i64>(), 0);
    }
}
