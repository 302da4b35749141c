//! Orders, their lines and their status history.

use super::{maybe, parse_json, parse_ts, ts};
use crate::error::Result;
use depot_protocol::order::{Address, Buyer, Order, OrderLine, OrderStatus, StatusChange};
use depot_protocol::{BusinessId, ItemId, Money, OrderId, Page, Timestamp, WarehouseId};
use rusqlite::{Connection, Row, params};

/// Whether an order with this id exists (in any business).
pub fn exists(conn: &Connection, id: OrderId) -> Result<bool> {
    Ok(maybe(
        conn.prepare_cached("SELECT 1 FROM orders WHERE id = ?1")?
            .query_row([id.0], |_| Ok(())),
    )?
    .is_some())
}

/// An order's status alone, for paths that need nothing else of it.
pub fn status_of(
    conn: &Connection,
    business: BusinessId,
    id: OrderId,
) -> Result<Option<OrderStatus>> {
    maybe(
        conn.prepare_cached("SELECT status FROM orders WHERE business_id = ?1 AND id = ?2")?
            .query_row(params![business.0, id.0], |r| {
                status(&r.get::<_, String>(0)?)
            }),
    )
}

pub fn id_by_ref(
    conn: &Connection,
    business: BusinessId,
    channel: &str,
    external_ref: &str,
) -> Result<Option<OrderId>> {
    maybe(
        conn.prepare_cached(
            "SELECT id FROM orders WHERE business_id = ?1 AND channel = ?2 AND external_ref = ?3",
        )?
        .query_row(params![business.0, channel, external_ref], |r| {
            Ok(OrderId(r.get(0)?))
        }),
    )
}

/// Stores an order with its lines (`line_no`s already assigned). A new order
/// has id 0 and gets the next one; a replicated order keeps its id.
pub fn insert(conn: &Connection, o: &Order) -> Result<OrderId> {
    conn.prepare_cached(
        "INSERT INTO orders (business_id, warehouse_id, channel, external_ref, status, buyer_name, buyer_email,
                             buyer_phone, shipping_address, payments, currency, total_cents, created_at, updated_at,
                             carrier, service, id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, NULLIF(?17, 0))",
    )?
    .execute(params![
        o.business_id.0,
        o.warehouse_id.0,
        o.channel,
        o.external_ref,
        o.status.as_str(),
        o.buyer.name,
        o.buyer.email,
        o.buyer.phone,
        serde_json::to_string(&o.shipping_address)?,
        serde_json::to_string(&o.payments)?,
        o.currency,
        o.total.cents(),
        ts(&o.created_at),
        ts(&o.updated_at),
        o.carrier,
        o.service,
        o.id.0,
    ])?;
    let id = OrderId(conn.last_insert_rowid());
    let mut line = conn.prepare_cached(
        "INSERT INTO order_lines (order_id, line_no, item_id, sku, name, quantity, unit_price_cents)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for l in &o.lines {
        super::count_within("quantity", l.quantity)?;
        line.execute(params![
            id.0,
            l.line_no,
            l.item_id.0,
            l.sku,
            l.name,
            l.quantity,
            l.unit_price.cents()
        ])?;
    }
    Ok(id)
}

pub fn set_status(
    conn: &Connection,
    id: OrderId,
    status: OrderStatus,
    at: &Timestamp,
) -> Result<()> {
    conn.prepare_cached("UPDATE orders SET status = ?2, updated_at = ?3 WHERE id = ?1")?
        .execute(params![id.0, status.as_str(), ts(at)])?;
    Ok(())
}

/// Replaces the shipping address, as given.
pub fn set_address(
    conn: &Connection,
    id: OrderId,
    address: &Address,
    at: &Timestamp,
) -> Result<()> {
    conn.prepare_cached("UPDATE orders SET shipping_address = ?2, updated_at = ?3 WHERE id = ?1")?
        .execute(params![id.0, serde_json::to_string(address)?, ts(at)])?;
    Ok(())
}

pub fn add_history(conn: &Connection, id: OrderId, change: &StatusChange) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO order_history (order_id, from_status, to_status, actor, note, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![id.0, change.from.map(OrderStatus::as_str), change.to.as_str(), change.actor, change.note, ts(&change.at)])?;
    Ok(())
}

fn status(s: &str) -> rusqlite::Result<OrderStatus> {
    OrderStatus::parse(s).ok_or_else(|| {
        rusqlite::Error::InvalidColumnType(0, format!("status {s}"), rusqlite::types::Type::Text)
    })
}

const ORDER_COLS: &str = "id, business_id, warehouse_id, channel, external_ref, status, buyer_name, buyer_email, \
                          buyer_phone, shipping_address, payments, currency, total_cents, created_at, updated_at, carrier, service";

fn order_row(r: &Row) -> rusqlite::Result<Order> {
    Ok(Order {
        id: OrderId(r.get(0)?),
        business_id: BusinessId(r.get(1)?),
        warehouse_id: WarehouseId(r.get(2)?),
        channel: r.get(3)?,
        external_ref: r.get(4)?,
        status: status(&r.get::<_, String>(5)?)?,
        buyer: Buyer {
            name: r.get(6)?,
            email: r.get(7)?,
            phone: r.get(8)?,
        },
        shipping_address: parse_json(&r.get::<_, String>(9)?)?,
        payments: parse_json(&r.get::<_, String>(10)?)?,
        lines: Vec::new(),
        currency: r.get(11)?,
        total: Money(r.get(12)?),
        created_at: parse_ts(&r.get::<_, String>(13)?)?,
        updated_at: parse_ts(&r.get::<_, String>(14)?)?,
        carrier: r.get(15)?,
        service: r.get(16)?,
        address_issues: Vec::new(),
        history: Vec::new(),
    }
    .with_address_issues())
}

fn line_row(r: &Row) -> rusqlite::Result<(OrderId, OrderLine)> {
    Ok((
        OrderId(r.get(0)?),
        OrderLine {
            line_no: r.get(1)?,
            item_id: ItemId(r.get(2)?),
            sku: r.get(3)?,
            name: r.get(4)?,
            quantity: r.get(5)?,
            unit_price: Money(r.get(6)?),
        },
    ))
}

const LINE_COLS: &str = "order_id, line_no, item_id, sku, name, quantity, unit_price_cents";

fn lines(conn: &Connection, id: OrderId) -> Result<Vec<OrderLine>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {LINE_COLS} FROM order_lines WHERE order_id = ?1 ORDER BY line_no"
    ))?;
    let rows = stmt.query_map([id.0], line_row)?;
    Ok(rows
        .map(|r| r.map(|(_, l)| l))
        .collect::<rusqlite::Result<_>>()?)
}

/// Fills the lines of a page of orders with one query rather than one per
/// order.
fn fill_lines(conn: &Connection, orders: &mut [Order]) -> Result<()> {
    if orders.is_empty() {
        return Ok(());
    }
    let marks = vec!["?"; orders.len()].join(", ");
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {LINE_COLS} FROM order_lines WHERE order_id IN ({marks}) ORDER BY order_id, line_no"
    ))?;
    let ids: Vec<i64> = orders.iter().map(|o| o.id.0).collect();
    let mut by_order: std::collections::HashMap<OrderId, Vec<OrderLine>> =
        std::collections::HashMap::new();
    for row in stmt.query_map(rusqlite::params_from_iter(ids), line_row)? {
        let (id, line) = row?;
        by_order.entry(id).or_default().push(line);
    }
    for o in orders {
        o.lines = by_order.remove(&o.id).unwrap_or_default();
    }
    Ok(())
}

fn history(conn: &Connection, id: OrderId) -> Result<Vec<StatusChange>> {
    let mut stmt = conn.prepare_cached(
        "SELECT from_status, to_status, actor, note, at FROM order_history WHERE order_id = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map([id.0], |r| {
        Ok(StatusChange {
            from: r
                .get::<_, Option<String>>(0)?
                .map(|s| status(&s))
                .transpose()?,
            to: status(&r.get::<_, String>(1)?)?,
            actor: r.get(2)?,
            note: r.get(3)?,
            at: parse_ts(&r.get::<_, String>(4)?)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// An order with its lines, and with its history when `with_history`.
pub fn order(
    conn: &Connection,
    business: BusinessId,
    id: OrderId,
    with_history: bool,
) -> Result<Option<Order>> {
    let found = maybe(
        conn.prepare_cached(&format!(
            "SELECT {ORDER_COLS} FROM orders WHERE business_id = ?1 AND id = ?2"
        ))?
        .query_row(params![business.0, id.0], order_row),
    )?;
    let Some(mut order) = found else {
        return Ok(None);
    };
    order.lines = lines(conn, id)?;
    if with_history {
        order.history = history(conn, id)?;
    }
    Ok(Some(order))
}

/// An order by id whatever its business (replication knows the id only).
pub fn order_any(conn: &Connection, id: OrderId) -> Result<Option<Order>> {
    let business: Option<i64> = maybe(
        conn.prepare_cached("SELECT business_id FROM orders WHERE id = ?1")?
            .query_row([id.0], |r| r.get(0)),
    )?;
    match business {
        Some(b) => order(conn, BusinessId(b), id, false),
        None => Ok(None),
    }
}

/// Filters of the order list.
#[derive(Debug, Clone, Default)]
pub struct OrderFilter {
    pub status: Option<OrderStatus>,
    pub channel: Option<String>,
    /// Matches the buyer's email, or the buyer's name ignoring case.
    pub customer: Option<String>,
    pub warehouse_id: Option<WarehouseId>,
    /// Created at or after.
    pub from: Option<Timestamp>,
    /// Created before.
    pub to: Option<Timestamp>,
}

/// Newest first. Every filter combination is served by an index that starts
/// with `business_id` and ends with `created_at, id`.
pub fn list(
    conn: &Connection,
    business: BusinessId,
    f: &OrderFilter,
    page: Page,
) -> Result<(Vec<Order>, u64, u64)> {
    let mut q = super::ListQuery::new("FROM orders WHERE business_id = ?", business);
    if let Some(s) = f.status {
        q.and("status = ?", [s.as_str().to_owned().into()]);
    }
    if let Some(c) = &f.channel {
        q.and("channel = ?", [c.clone().into()]);
    }
    if let Some(c) = &f.customer {
        q.and(
            "(buyer_email = ? OR buyer_name = ? COLLATE NOCASE)",
            [c.to_lowercase().into(), c.clone().into()],
        );
    }
    if let Some(w) = f.warehouse_id {
        q.and("warehouse_id = ?", [w.0.into()]);
    }
    if let Some(from) = &f.from {
        q.and("created_at >= ?", [ts(from).into()]);
    }
    if let Some(to) = &f.to {
        q.and("created_at < ?", [ts(to).into()]);
    }
    let (mut orders, total, filtered) = q.run(
        conn,
        "orders",
        ORDER_COLS,
        "created_at DESC, id DESC",
        page,
        order_row,
    )?;
    fill_lines(conn, &mut orders)?;
    Ok((orders, total, filtered))
}
