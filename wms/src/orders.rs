//! Orders: idempotent ingestion, and every status change through the
//! protocol's state machine with its stock effect in the same transaction.

use crate::store::{self, catalog, ledger, orders as sql, tenants};
use crate::{Result, Wms, WmsError};
use depot_protocol::event::EventKind;
use depot_protocol::order::{
    self, Address, Backorder, Order, OrderLine, OrderStatus, Oversold, ShortLine, StatusChange,
    StockEffect, units_per_item,
};
use depot_protocol::order_request::{AddressChange, NewOrder, OrderCreate};
use depot_protocol::stock::{Movement, MovementReason};
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, FieldError, ItemId, Money, MovementId, OrderId, Page, now};
use depot_sql::Db;
use std::collections::BTreeMap;

pub use sql::OrderFilter;

fn load(conn: &Db, business: BusinessId, id: OrderId) -> Result<Order> {
    sql::order(conn, business, id, true)?
        .ok_or_else(|| WmsError::NotFound(format!("order {id} does not exist")))
}

/// Stores a new order, or finds the one already ingested under the same
/// (channel, external reference). Answers the order and whether it is new.
fn ingest(
    conn: &Db,
    origin: &str,
    business: BusinessId,
    o: NewOrder,
    actor: &str,
) -> Result<(Order, bool)> {
    // Reads that do not wait for each other's answers, sent together (on
    // PostgreSQL one round trip, not one each).
    let existing = sql::id_by_ref_later(conn, business, &o.channel, &o.external_ref)?;
    let defaults = tenants::order_defaults(conn, business, o.warehouse_id)?;
    let items = o
        .lines
        .iter()
        .map(|l| catalog::for_order_line(conn, business, &l.sku))
        .collect::<Result<Vec<_>>>()?;
    let channel = store::channels::by_code_later(conn, business, &o.channel)?;
    let buyer = crate::buyers::look_up(conn, business, &o.buyer)?;
    if let Some(id) = existing.first(conn)? {
        return Ok((load(conn, business, id)?, false));
    }
    if crate::carriers::get(&o.carrier).is_none() {
        let known: Vec<&str> = crate::carriers::all().iter().map(|c| c.code()).collect();
        return Err(WmsError::invalid(vec![FieldError::new(
            "carrier",
            format!("unknown carrier; known: {}", known.join(", ")),
        )]));
    }
    if crate::carriers::get(&o.carrier).is_some_and(|c| !c.services().contains(&o.service.as_str()))
    {
        return Err(WmsError::invalid(vec![FieldError::new(
            "service",
            format!("{} has no service {}", o.carrier, o.service),
        )]));
    }
    let (currency, warehouse) = defaults
        .first(conn)?
        .ok_or_else(|| WmsError::NotFound(format!("business {business} does not exist")))?;
    let warehouse_id = match (warehouse, o.warehouse_id) {
        (Some(w), _) => w,
        (None, Some(_)) => {
            return Err(WmsError::invalid(vec![FieldError::new(
                "warehouse_id",
                "no such warehouse in this business",
            )]));
        }
        (None, None) => {
            return Err(WmsError::conflict(
                "the business has no warehouse to fulfil from",
            ));
        }
    };
    let mut errors = Vec::new();
    let mut lines = Vec::with_capacity(o.lines.len());
    let mut total = Money::ZERO;
    for ((i, l), item) in o.lines.iter().enumerate().zip(items) {
        let Some(item) = item.first(conn)? else {
            errors.push(FieldError::new(
                format!("lines[{i}].sku"),
                format!("no item with SKU {}", l.sku),
            ));
            continue;
        };
        let unit_price = l.unit_price.or(item.list_price).unwrap_or(Money::ZERO);
        // Checked: the total must be an amount too (at most Money::MAX).
        total = unit_price
            .checked_mul(l.quantity)
            .and_then(|line_total| total.checked_add(line_total))
            .ok_or_else(|| {
                WmsError::invalid(vec![FieldError::new(
                    format!("lines[{i}].unit_price"),
                    format!(
                        "{unit_price} × {} takes the order total beyond {}",
                        l.quantity,
                        Money::MAX
                    ),
                )])
            })?;
        lines.push(OrderLine {
            line_no: (i + 1) as u32,
            item_id: item.id,
            sku: item.sku,
            name: item.name,
            quantity: l.quantity,
            unit_price,
        });
    }
    if !errors.is_empty() {
        return Err(WmsError::invalid(errors));
    }
    let at = now();
    let channel = store::channels::with_warehouses_of(conn, channel.first(conn)?)?;
    let short = beyond_channel(conn, channel, &lines)?;
    let mut order = Order {
        id: OrderId(0),
        business_id: business,
        warehouse_id,
        channel: o.channel,
        external_ref: o.external_ref,
        status: OrderStatus::Pending,
        carrier: o.carrier,
        service: o.service,
        buyer: o.buyer,
        shipping_address: o.shipping_address,
        payments: o.payments,
        lines,
        currency: o.currency.unwrap_or(currency),
        total,
        created_at: o
            .ordered_at
            .map(|t| chrono::SubsecRound::trunc_subsecs(t, 0))
            .unwrap_or(at),
        updated_at: at,
        address_issues: Vec::new(),
        history: Vec::new(),
        returns: Vec::new(),
        oversold: short.is_some(),
        backorder: None,
        split_from: None,
    }
    .with_address_issues();
    if let Some((true, lines)) = &short {
        order.backorder = Some(Backorder {
            since: at,
            lines: lines.clone(),
        });
    }
    order.id = sql::insert(conn, &order)?;
    crate::buyers::note_order(conn, &order, buyer)?;
    let change = StatusChange {
        from: None,
        to: OrderStatus::Pending,
        actor: actor.to_owned(),
        note: None,
        at,
    };
    sql::add_history(conn, order.id, &change)?;
    order.history.push(change);
    store::events::append(
        conn,
        origin,
        Some(business),
        EventKind::OrderCreated,
        &order,
    )?;
    if let Some((backordered, lines)) = short {
        let flag = Oversold {
            order_id: order.id,
            warehouse_id: order.warehouse_id,
            channel: order.channel.clone(),
            lines,
            backordered,
        };
        store::events::append(
            conn,
            origin,
            Some(business),
            EventKind::OrderOversold,
            &flag,
        )?;
    }
    Ok((order, true))
}

/// The lines of an order for more of an item than its channel (a channel
/// record by the order's `channel`) may sell now, and whether the channel
/// lets such orders wait as backorders; `None` when the channel could
/// sell it all, or is not a channel record. The figures already count
/// every pending order before this one, so of orders coming one after
/// another, those beyond the pool are the ones flagged.
fn beyond_channel(
    conn: &Db,
    channel: Option<depot_protocol::channel::Channel>,
    lines: &[OrderLine],
) -> Result<Option<(bool, Vec<ShortLine>)>> {
    let Some(c) = channel else {
        return Ok(None);
    };
    let mut short = Vec::new();
    for (item, quantity) in units_per_item(lines.iter().map(|l| (l.item_id, l.quantity))) {
        let available = store::channels::figure(conn, c.id, item)?;
        if quantity > available {
            let Some(first) = lines.iter().find(|l| l.item_id == item) else {
                continue;
            };
            short.push(ShortLine {
                line_no: first.line_no,
                item_id: item,
                sku: first.sku.clone(),
                quantity,
                available,
            });
        }
    }
    Ok((!short.is_empty()).then_some((c.oversell, short)))
}

/// Quantities per item across the order's lines.
pub(crate) fn per_item(order: &Order) -> BTreeMap<ItemId, i64> {
    units_per_item(order.lines.iter().map(|l| (l.item_id, l.quantity)))
}

/// What a transition does to the reservations and to the pending units of
/// each of the order's items, in one write per item: confirming moves the
/// units from pending to reserved, and its channels' figures stay. (A
/// dispatch releases its reservation as it books its movements.)
pub(crate) fn hold_for(
    conn: &Db,
    order: &Order,
    from: OrderStatus,
    effect: StockEffect,
) -> Result<()> {
    let reserve = match effect {
        StockEffect::Reserve => 1,
        StockEffect::Release | StockEffect::Ship => -1,
        StockEffect::None => 0,
    };
    let pending = if from == OrderStatus::Pending { -1 } else { 0 };
    if reserve == 0 && pending == 0 {
        return Ok(());
    }
    let moved: Vec<_> = per_item(order)
        .into_iter()
        .map(|(item, qty)| (item, reserve * qty, pending * qty))
        .collect();
    ledger::Holding::send(conn, order.business_id, order.warehouse_id, &moved)?
        .apply(conn, "status")
}

/// Applies a status change inside the caller's transaction.
pub(crate) fn change_status(
    conn: &Db,
    origin: &str,
    business: BusinessId,
    id: OrderId,
    to: OrderStatus,
    note: Option<String>,
    actor: &str,
) -> Result<Order> {
    let order = load(conn, business, id)?;
    let t = order::transition(order.status, to).map_err(|e| WmsError::conflict(e.to_string()))?;
    if t.is_noop() {
        return Ok(order);
    }
    if to == OrderStatus::Confirmed && !order.address_issues.is_empty() {
        return Err(unshippable(&order, "confirmed"));
    }
    let w = order.warehouse_id;
    let at = now();
    match t.effect {
        StockEffect::None => hold_for(conn, &order, t.from, t.effect)?,
        StockEffect::Reserve => {
            let mut short = Vec::new();
            let mut levels = Vec::new();
            for (item, qty) in per_item(&order) {
                levels.push((item, qty, ledger::level_later(conn, item, w)?));
            }
            for (item, qty, level) in levels {
                let (on_hand, reserved) = level.first(conn)?.unwrap_or((0, 0));
                let available = on_hand.saturating_sub(reserved);
                if available < qty {
                    let sku = order
                        .lines
                        .iter()
                        .find(|l| l.item_id == item)
                        .map(|l| l.sku.clone())
                        .unwrap_or_default();
                    short.push(FieldError::new(
                        sku,
                        format!("needs {qty}, {available} available"),
                    ));
                }
            }
            if !short.is_empty() {
                let detail = short
                    .iter()
                    .map(|e| format!("{} {}", e.name, e.status))
                    .collect::<Vec<_>>()
                    .join("; ");
                return Err(WmsError::Conflict {
                    message: format!("insufficient stock to confirm: {detail}"),
                    errors: short,
                });
            }
            hold_for(conn, &order, t.from, t.effect)?;
        }
        StockEffect::Release => hold_for(conn, &order, t.from, t.effect)?,
        StockEffect::Ship => {
            // Units picked for the order leave as the lots and from the
            // locations they were picked from; the rest of an item's
            // quantity leaves from its own location, without a lot.
            let picked = store::picking::order_lines(conn, id)?;
            for (item, qty) in per_item(&order) {
                ledger::reserve_as(conn, business, item, w, -qty, "status")?;
                type Part = (
                    Option<String>,
                    Option<String>,
                    Option<chrono::NaiveDate>,
                    i64,
                );
                let mut parts: Vec<Part> = Vec::new();
                for l in picked.iter().filter(|l| l.item_id == item && l.picked > 0) {
                    let (lot, location) = (l.lot.clone(), l.location.clone());
                    match parts.iter_mut().find(|p| p.0 == lot && p.1 == location) {
                        Some(p) => p.3 = p.3.saturating_add(l.picked),
                        None => parts.push((lot, location, l.expiry, l.picked)),
                    }
                }
                let taken = parts.iter().fold(0i64, |sum, p| sum.saturating_add(p.3));
                if qty > taken {
                    parts.push((None, None, None, qty - taken));
                }
                for (lot, location, expiry, quantity) in parts {
                    let mut m = Movement {
                        id: MovementId::new(),
                        business_id: business,
                        item_id: item,
                        warehouse_id: w,
                        location,
                        delta: quantity.saturating_neg(),
                        reason: MovementReason::Shipped,
                        reference: Some(format!("order:{id}")),
                        note: None,
                        lot,
                        expiry,
                        actor: actor.to_owned(),
                        origin: origin.to_owned(),
                        at,
                    };
                    ledger::record_as(conn, &mut m, "status")?;
                    store::events::append(conn, origin, Some(business), EventKind::StockMoved, &m)?;
                    if let Some(face) = crate::replenish::left(&m) {
                        let why = format!("order:{id}");
                        let face = crate::replenish::Face {
                            business,
                            warehouse: w,
                            location: face,
                            item,
                        };
                        crate::replenish::check(conn, origin, face, &why, 0)?;
                    }
                }
            }
        }
    }
    sql::set_status(conn, id, to, &at)?;
    let change = StatusChange {
        from: Some(t.from),
        to,
        actor: actor.to_owned(),
        note,
        at,
    };
    sql::add_history(conn, id, &change)?;
    // The warehouse lets a warehouse's screens take only their own orders'
    // changes; nodes applying the event read only the order and the change.
    let payload = serde_json::json!({"order_id": id, "warehouse_id": w, "change": change});
    store::events::append(
        conn,
        origin,
        Some(business),
        EventKind::OrderStatusChanged,
        &payload,
    )?;
    load(conn, business, id)
}

/// The 422 for an order whose address cannot be shipped to, naming each
/// problem, and what to do about it.
pub(crate) fn unshippable(order: &Order, to_be: &str) -> WmsError {
    WmsError::refused(
        format_args!(
            "order {} cannot be {to_be} until its shipping address is corrected with PUT /v1/orders/{}/{}/address",
            order.id, order.business_id, order.id
        ),
        order.address_issues.clone(),
    )
}

/// Corrects the shipping address of an order not yet packed (a packed one
/// has its label, printed with the address it had).
fn change_address(
    conn: &Db,
    origin: &str,
    business: BusinessId,
    id: OrderId,
    address: Address,
    note: Option<String>,
    actor: &str,
) -> Result<Order> {
    let order = load(conn, business, id)?;
    if !matches!(
        order.status,
        OrderStatus::Pending | OrderStatus::Confirmed | OrderStatus::Picking
    ) {
        return Err(WmsError::conflict(format!(
            "order {id} is {}: its label was printed with the address it had; the address can only change before packing",
            order.status
        )));
    }
    let at = now();
    sql::set_address(conn, id, &address, &at)?;
    let changed = load(conn, business, id)?;
    let payload = serde_json::json!({
        "order_id": id, "warehouse_id": order.warehouse_id, "shipping_address": changed.shipping_address,
        "address_issues": changed.address_issues, "actor": actor, "note": note, "at": at,
    });
    store::events::append(
        conn,
        origin,
        Some(business),
        EventKind::OrderAddressChanged,
        &payload,
    )?;
    Ok(changed)
}

impl Wms {
    /// Replaces an order's shipping address (before it is packed).
    pub async fn change_order_address(
        &self,
        caller: Caller,
        id: OrderId,
        req: AddressChange,
    ) -> Result<Order> {
        let (address, note) = req.parse().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write_for(caller.business_id, move |conn| {
            change_address(
                conn,
                &origin,
                caller.business_id,
                id,
                address,
                note,
                &caller.actor(),
            )
        })
        .await
    }

    /// Ingests an order; the same (channel, external_ref) twice is one order.
    /// Answers the order and whether this call created it.
    pub async fn create_order(&self, caller: Caller, req: OrderCreate) -> Result<(Order, bool)> {
        let new = req.parse().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write_for(caller.business_id, move |conn| {
            ingest(conn, &origin, caller.business_id, new, &caller.actor())
        })
        .await
    }

    /// [`Wms::create_order`] by another than an API key: a connector
    /// bringing a platform's order in (`actor` names it in the history).
    pub async fn create_order_as(
        &self,
        business: BusinessId,
        actor: String,
        req: OrderCreate,
    ) -> Result<(Order, bool)> {
        let new = req.parse().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write_for(business, move |conn| {
            ingest(conn, &origin, business, new, &actor)
        })
        .await
    }

    pub async fn set_order_status(
        &self,
        caller: Caller,
        id: OrderId,
        to: OrderStatus,
        note: Option<String>,
    ) -> Result<Order> {
        let origin = self.origin().to_owned();
        self.write_for(caller.business_id, move |conn| {
            change_status(
                conn,
                &origin,
                caller.business_id,
                id,
                to,
                note,
                &caller.actor(),
            )
        })
        .await
    }

    pub async fn order(&self, business: BusinessId, id: OrderId) -> Result<Order> {
        self.read(move |conn| {
            let mut order = load(conn, business, id)?;
            order.returns = crate::returns::summaries(conn, id)?;
            Ok(order)
        })
        .await
    }

    pub async fn list_orders(
        &self,
        business: BusinessId,
        filter: OrderFilter,
        page: Page,
    ) -> Result<depot_protocol::Listed<Order>> {
        self.read(move |conn| sql::list(conn, business, &filter, page))
            .await
    }

    /// [`Wms::list_orders`] with each order as the JSON the API answers
    /// for it, written once per change of the order rather than on every
    /// read (see [`crate::rendered`]).
    pub async fn list_orders_json(
        &self,
        business: BusinessId,
        filter: OrderFilter,
        page: Page,
    ) -> Result<depot_protocol::Listed<std::sync::Arc<str>>> {
        let rendered = self.inner.rendered.clone();
        let kept = rendered.clone();
        // The page of ids and versions is brief; writing orders is not, and
        // goes to the pool.
        let reader = &self.inner.reader;
        let listing = sql::list_kept(reader.dialect(), business, &filter);
        let listed = reader
            .list(listing, page, move |r| sql::kept(r, &kept))
            .await?;
        let stale = sql::not_kept(&listed);
        let written = if stale.is_empty() {
            Default::default()
        } else {
            self.read(move |conn| sql::written_now(conn, business, &stale, &rendered))
                .await?
        };
        Ok(sql::with_written(listed, &written))
    }
}
