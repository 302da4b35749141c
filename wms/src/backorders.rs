//! Backorders: orders taken beyond their channel's figure, from a channel
//! that may oversell, wait for stock. When it comes (a reception, a
//! return, an adjustment, a cancelled order's units freed), the waiting
//! orders of the warehouse are confirmed in order of arrival; an order
//! that cannot go whole goes on waiting, and the orders after it do not
//! take what it needs. A channel that splits sends the units in stock
//! ahead as the order itself and lets the rest wait as a new order in
//! its place.
//!
//! The cloud alone fills them ([`fill_every`]): one node decides, so an
//! order is never split twice. Stock an edge receives while offline fills
//! them when its movements arrive.

use crate::orders::{change_status, per_item};
use crate::store::{self, ledger, orders as sql};
use crate::{Result, Wms};
use depot_protocol::channel::Backorders;
use depot_protocol::event::EventKind;
use depot_protocol::order::{Backorder, Order, OrderLine, OrderStatus, ShortLine, Split};
use depot_protocol::{BusinessId, ItemId, Money, OrderId, WarehouseId, now};
use depot_sql::Db;
use std::collections::BTreeMap;

/// Who the orders' history says confirmed them.
const ACTOR: &str = "backorders";

/// What is free to fill the backorders of a warehouse, per item they
/// need: on-hand less reservations, less the units of the pending orders
/// that do not wait (they were sold within the figures, before or beside
/// these, and are someone's to confirm).
fn free_for(conn: &Db, waiting: &[Order]) -> Result<BTreeMap<ItemId, i64>> {
    let mut wanted: BTreeMap<ItemId, i64> = BTreeMap::new();
    for o in waiting {
        for (item, qty) in per_item(o) {
            let n = wanted.entry(item).or_insert(0);
            *n = n.saturating_add(qty);
        }
    }
    let Some(warehouse) = waiting.first().map(|o| o.warehouse_id) else {
        return Ok(BTreeMap::new());
    };
    let mut free = BTreeMap::new();
    for (item, waiting_units) in wanted {
        let (on_hand, reserved, pending) = ledger::levels(conn, item, warehouse)?;
        let others = pending.saturating_sub(waiting_units).max(0);
        free.insert(
            item,
            on_hand
                .saturating_sub(reserved)
                .saturating_sub(others)
                .max(0),
        );
    }
    Ok(free)
}

/// The backorder rule of an order's channel (a channel gone or never a
/// record: wait).
fn rule(conn: &Db, o: &Order) -> Result<Backorders> {
    Ok(store::channels::by_code(conn, o.business_id, &o.channel)?
        .map_or(Backorders::Wait, |c| c.backorders))
}

/// Fills what it can of a warehouse's backorders, oldest first. Answers
/// how many orders went ahead (whole or split).
pub(crate) fn fill(
    conn: &Db,
    origin: &str,
    business: BusinessId,
    warehouse: WarehouseId,
) -> Result<usize> {
    let waiting = sql::waiting(conn, business, warehouse)?;
    let mut free = free_for(conn, &waiting)?;
    let mut went = 0;
    for o in waiting {
        let need = per_item(&o);
        let whole = need
            .iter()
            .all(|(item, qty)| free.get(item).copied().unwrap_or(0) >= *qty);
        // An order whose address cannot be shipped to cannot be confirmed:
        // it keeps its place, and what it needs, until it is corrected.
        if o.address_issues.is_empty() {
            if whole {
                let note = "stock arrived: confirmed in order of arrival".to_owned();
                change_status(
                    conn,
                    origin,
                    business,
                    o.id,
                    OrderStatus::Confirmed,
                    Some(note),
                    ACTOR,
                )?;
                went += 1;
            } else if rule(conn, &o)? == Backorders::Split
                && need
                    .keys()
                    .any(|item| free.get(item).copied().unwrap_or(0) > 0)
            {
                split(conn, origin, &o, &free)?;
                went += 1;
            }
        }
        // Whatever went ahead took its units; what still waits keeps them
        // from the orders after it.
        for (item, qty) in need {
            if let Some(f) = free.get_mut(&item) {
                *f = f.saturating_sub(qty).max(0);
            }
        }
    }
    Ok(went)
}

/// The lines of `o` in two: the units `free` covers (line by line, in
/// line order) and the rest.
fn divide(o: &Order, free: &BTreeMap<ItemId, i64>) -> (Vec<OrderLine>, Vec<OrderLine>) {
    let mut left = free.clone();
    let (mut ahead, mut rest) = (Vec::new(), Vec::new());
    for l in &o.lines {
        let f = left.entry(l.item_id).or_insert(0);
        let now = l.quantity.min(*f).max(0);
        *f -= now;
        if now > 0 {
            ahead.push(OrderLine {
                quantity: now,
                ..l.clone()
            });
        }
        if l.quantity > now {
            rest.push(OrderLine {
                line_no: u32::try_from(rest.len() + 1).unwrap_or(u32::MAX),
                quantity: l.quantity - now,
                ..l.clone()
            });
        }
    }
    (ahead, rest)
}

/// What lines come to: parts of an order whose total was within bounds.
fn total(lines: &[OrderLine]) -> Money {
    lines.iter().fold(Money::ZERO, |sum, l| {
        l.unit_price
            .checked_mul(l.quantity)
            .and_then(|t| sum.checked_add(t))
            .unwrap_or(sum)
    })
}

/// A reference for the rest of `o` its channel has not used: `-B1`,
/// `-B2`, ... after the order's own.
fn rest_ref(conn: &Db, o: &Order) -> Result<String> {
    let mut k = 1u32;
    loop {
        let r = format!("{}-B{k}", o.external_ref);
        if sql::id_by_ref(conn, o.business_id, &o.channel, &r)?.is_none() {
            return Ok(r);
        }
        k += 1;
    }
}

/// Sends the units in stock ahead as `o` itself, confirmed, and stores the
/// rest as a new order waiting in `o`'s place.
fn split(conn: &Db, origin: &str, o: &Order, free: &BTreeMap<ItemId, i64>) -> Result<()> {
    let (ahead, rest_lines) = divide(o, free);
    let at = now();
    let since = o.backorder.as_ref().map_or(at, |b| b.since);
    let short =
        depot_protocol::order::units_per_item(rest_lines.iter().map(|l| (l.item_id, l.quantity)))
            .into_iter()
            .filter_map(|(item, quantity)| {
                let first = rest_lines.iter().find(|l| l.item_id == item)?;
                Some(ShortLine {
                    line_no: first.line_no,
                    item_id: item,
                    sku: first.sku.clone(),
                    quantity,
                    available: 0,
                })
            })
            .collect();
    let mut rest = Order {
        id: OrderId(0),
        external_ref: rest_ref(conn, o)?,
        status: OrderStatus::Pending,
        payments: Vec::new(),
        total: total(&rest_lines),
        lines: rest_lines,
        updated_at: at,
        history: Vec::new(),
        returns: Vec::new(),
        backorder: Some(Backorder {
            since,
            lines: short,
        }),
        split_from: Some(o.id),
        ..o.clone()
    };
    rest.id = sql::insert(conn, &rest)?;
    let change = depot_protocol::order::StatusChange {
        from: None,
        to: OrderStatus::Pending,
        actor: ACTOR.to_owned(),
        note: Some(format!("the rest of order {}, waiting for stock", o.id)),
        at,
    };
    sql::add_history(conn, rest.id, &change)?;
    rest.history.push(change);
    let ahead_total = total(&ahead);
    sql::set_lines(conn, o, &ahead, ahead_total)?;
    let payload = Split {
        order_id: o.id,
        warehouse_id: o.warehouse_id,
        lines: ahead,
        total: ahead_total,
        backorder_id: rest.id,
    };
    let business = Some(o.business_id);
    // The rest first: the split names it, and a node taking the split
    // knows it by then.
    store::events::append(conn, origin, business, EventKind::OrderCreated, &rest)?;
    store::events::append(conn, origin, business, EventKind::OrderSplit, &payload)?;
    let note = format!(
        "stock arrived for part of it: the rest waits as order {}",
        rest.id
    );
    change_status(
        conn,
        origin,
        o.business_id,
        o.id,
        OrderStatus::Confirmed,
        Some(note),
        ACTOR,
    )?;
    Ok(())
}

impl Wms {
    /// Fills what stock allows of every warehouse's backorders. Answers
    /// how many orders went ahead.
    pub async fn fill_backorders(&self) -> Result<usize> {
        let places = self.read(sql::waiting_places).await?;
        let mut went = 0;
        for (business, warehouse) in places {
            let origin = self.origin().to_owned();
            match self
                .write_for(business, move |conn| {
                    fill(conn, &origin, business, warehouse)
                })
                .await
            {
                Ok(n) => went += n,
                // One business's trouble does not hold up the others'.
                Err(e) => tracing::error!(
                    error = %e, business = %business, warehouse = %warehouse,
                    "filling backorders"
                ),
            }
        }
        Ok(went)
    }
}

/// Fills backorders every `every`, for as long as it runs.
pub async fn fill_every(wms: Wms, every: std::time::Duration) {
    loop {
        tokio::time::sleep(every).await;
        if let Err(e) = wms.fill_backorders().await {
            tracing::error!(error = %e, "filling backorders");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use depot_protocol::order::{Address, Buyer};

    fn line(no: u32, item: i64, quantity: i64) -> OrderLine {
        OrderLine {
            line_no: no,
            item_id: ItemId(item),
            sku: format!("S{item}"),
            name: "x".into(),
            quantity,
            unit_price: Money(100),
        }
    }

    fn order(lines: Vec<OrderLine>) -> Order {
        Order {
            id: OrderId(1),
            business_id: BusinessId(1),
            warehouse_id: WarehouseId(1),
            channel: "shop".into(),
            external_ref: "A".into(),
            status: OrderStatus::Pending,
            carrier: "own".into(),
            service: "standard".into(),
            buyer: Buyer::default(),
            shipping_address: Address::default(),
            payments: Vec::new(),
            lines,
            currency: "EUR".into(),
            total: Money(0),
            created_at: now(),
            updated_at: now(),
            address_issues: Vec::new(),
            history: Vec::new(),
            returns: Vec::new(),
            oversold: true,
            backorder: None,
            split_from: None,
        }
    }

    #[test]
    fn a_split_sends_what_is_free_line_by_line_and_keeps_the_rest() {
        // Two lines of item 1 (3 + 2) and one of item 2; 4 of item 1 free,
        // none of item 2.
        let o = order(vec![line(1, 1, 3), line(2, 1, 2), line(3, 2, 5)]);
        let free = BTreeMap::from([(ItemId(1), 4), (ItemId(2), 0)]);
        let (ahead, rest) = divide(&o, &free);
        let q = |ls: &[OrderLine]| {
            ls.iter()
                .map(|l| (l.line_no, l.item_id.0, l.quantity))
                .collect::<Vec<_>>()
        };
        assert_eq!(q(&ahead), vec![(1, 1, 3), (2, 1, 1)]);
        assert_eq!(q(&rest), vec![(1, 1, 1), (2, 2, 5)]);
        assert_eq!(total(&ahead), Money(400));
        assert_eq!(total(&rest), Money(600));
    }
}
