//! Orders, their lines and their status history.

use super::{maybe, parse_json, parse_ts, ts};
use crate::error::{Result, WmsError};
use depot_protocol::order::{
    Address, Backorder, Buyer, Order, OrderLine, OrderStatus, StatusChange, units_per_item,
};
use depot_protocol::{BusinessId, ItemId, Money, OrderId, Page, Timestamp, WarehouseId};
use depot_sql::{Db, Row, params};

/// Whether an order with this id exists (in any business).
pub fn exists(conn: &Db, id: OrderId) -> Result<bool> {
    Ok(maybe(
        conn.query_row("SELECT 1 FROM orders WHERE id = ?1", params![id.0], |_| {
            Ok(())
        }),
    )?
    .is_some())
}

/// An order's status alone, for paths that need nothing else of it, sent
/// to be taken later (with the caller's next read).
pub fn status_of_later(
    conn: &Db,
    business: BusinessId,
    id: OrderId,
) -> Result<depot_sql::Later<OrderStatus>> {
    Ok(conn.query_later(
        "SELECT status FROM orders WHERE business_id = ?1 AND id = ?2",
        params![business.0, id.0],
        |r| status(&r.get::<String>(0)?),
    )?)
}

pub fn id_by_ref(
    conn: &Db,
    business: BusinessId,
    channel: &str,
    external_ref: &str,
) -> Result<Option<OrderId>> {
    Ok(id_by_ref_later(conn, business, channel, external_ref)?.first(conn)?)
}

/// [`id_by_ref`], sent with the reads after it ([`Db::query_later`]).
pub fn id_by_ref_later(
    conn: &Db,
    business: BusinessId,
    channel: &str,
    external_ref: &str,
) -> Result<depot_sql::Later<OrderId>> {
    Ok(conn.query_later(
        "SELECT id FROM orders WHERE business_id = ?1 AND channel = ?2 AND external_ref = ?3",
        params![business.0, channel, external_ref],
        |r| Ok(OrderId(r.get(0)?)),
    )?)
}

/// Stores an order with its lines (`line_no`s already assigned). A new order
/// has id 0 and gets the next one; a replicated order keeps its id.
pub fn insert(conn: &Db, o: &Order) -> Result<OrderId> {
    // A new order (id 0) takes the next id, a replicated one keeps its
    // own: the column is left out for the first, so that PostgreSQL's
    // identity fills it as SQLite's rowid does.
    let (insert, with_id) = if o.id.0 == 0 {
        (
            "INSERT INTO orders (business_id, warehouse_id, channel, external_ref, status, buyer_name, buyer_email,
                                 buyer_phone, shipping_address, payments, currency, total_cents, created_at, updated_at,
                                 carrier, service, oversold, waiting_since, backorder_lines, split_from)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)
             RETURNING id",
            None,
        )
    } else {
        (
            "INSERT INTO orders (business_id, warehouse_id, channel, external_ref, status, buyer_name, buyer_email,
                                 buyer_phone, shipping_address, payments, currency, total_cents, created_at, updated_at,
                                 carrier, service, oversold, waiting_since, backorder_lines, split_from, id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)
             RETURNING id",
            Some(o.id.0),
        )
    };
    let (address, payments) = (
        serde_json::to_string(&o.shipping_address)?,
        serde_json::to_string(&o.payments)?,
    );
    let (created, updated) = (ts(&o.created_at), ts(&o.updated_at));
    let status = o.status.as_str();
    let mut args: Vec<&dyn depot_sql::ToSql> = vec![
        &o.business_id.0,
        &o.warehouse_id.0,
        &o.channel,
        &o.external_ref,
        &status,
        &o.buyer.name,
        &o.buyer.email,
        &o.buyer.phone,
        &address,
        &payments,
        &o.currency,
    ];
    let total = o.total.cents();
    // A backorder waits only while pending.
    let waiting = o
        .backorder
        .as_ref()
        .filter(|_| o.status == OrderStatus::Pending);
    let oversold = i64::from(o.oversold);
    let since = waiting.map(|b| ts(&b.since));
    let short = waiting
        .map(|b| serde_json::to_string(&b.lines))
        .transpose()?;
    let split_from = o.split_from.map(|s| s.0);
    args.extend([
        &total as &dyn depot_sql::ToSql,
        &created,
        &updated,
        &o.carrier,
        &o.service,
        &oversold,
        &since,
        &short,
        &split_from,
    ]);
    if let Some(id) = &with_id {
        args.push(id);
    }
    // The order's row and its items' levels are sent together: on
    // PostgreSQL one round trip, not one an item more.
    let inserted = conn.query_later(insert, &args, |r| r.get::<i64>(0))?;
    // A pending order's units are sold and not yet reserved: its
    // channels' figures count them (leaving pending, the transition's
    // caller takes them off with `ledger::Holding`).
    let holding = if o.status == OrderStatus::Pending {
        let units: Vec<_> = units_per_item(o.lines.iter().map(|l| (l.item_id, l.quantity)))
            .into_iter()
            .map(|(item, qty)| (item, 0, qty))
            .collect();
        Some(super::ledger::Holding::send(
            conn,
            o.business_id,
            o.warehouse_id,
            &units,
        )?)
    } else {
        None
    };
    let id = OrderId(inserted.first(conn)?.ok_or_else(|| {
        crate::error::WmsError::Internal("an order inserted answered no id".into())
    })?);
    insert_lines(conn, id, &o.lines)?;
    if let Some(holding) = holding {
        holding.apply(conn, "quantity")?;
    }
    Ok(id)
}

fn insert_lines(conn: &Db, id: OrderId, lines: &[OrderLine]) -> Result<()> {
    for l in lines {
        super::count_within("quantity", l.quantity)?;
    }
    // In blocks of rows (`store::rows`): a statement a block, not a line.
    Ok(super::rows::insert_later(
        conn,
        "order_lines (order_id, line_no, item_id, sku, name, quantity, unit_price_cents)",
        lines,
        |l| {
            [
                id.0.into(),
                l.line_no.into(),
                l.item_id.0.into(),
                l.sku.clone().into(),
                l.name.clone().into(),
                l.quantity.into(),
                l.unit_price.cents().into(),
            ]
        },
    )?)
}

/// Sets the status; an order leaving pending no longer waits as a
/// backorder.
pub fn set_status(conn: &Db, id: OrderId, status: OrderStatus, at: &Timestamp) -> Result<()> {
    conn.execute_later(
        "UPDATE orders SET status = ?2, updated_at = ?3,
                           waiting_since = CASE WHEN ?2 = 'pending' THEN waiting_since END,
                           backorder_lines = CASE WHEN ?2 = 'pending' THEN backorder_lines END
         WHERE id = ?1",
        params![id.0, status.as_str(), ts(at)],
    )?;
    Ok(())
}

/// Replaces a pending order's lines and total (a split keeps the units
/// that go ahead), moving the pending units by the difference.
pub fn set_lines(conn: &Db, o: &Order, lines: &[OrderLine], total: Money) -> Result<()> {
    conn.execute_later(
        "DELETE FROM order_lines WHERE order_id = ?1",
        params![o.id.0],
    )?;
    insert_lines(conn, o.id, lines)?;
    conn.execute_later(
        "UPDATE orders SET total_cents = ?2 WHERE id = ?1",
        params![o.id.0, total.cents()],
    )?;
    if o.status == OrderStatus::Pending {
        let before = units_per_item(o.lines.iter().map(|l| (l.item_id, l.quantity)));
        let after = units_per_item(lines.iter().map(|l| (l.item_id, l.quantity)));
        let moved: Vec<_> = before
            .iter()
            .map(|(item, qty)| (*item, 0, after.get(item).copied().unwrap_or(0) - qty))
            .filter(|(_, _, delta)| *delta != 0)
            .collect();
        super::ledger::Holding::send(conn, o.business_id, o.warehouse_id, &moved)?
            .apply(conn, "quantity")?;
    }
    Ok(())
}

/// The backorders of one warehouse, in order of arrival, with their lines.
pub fn waiting(conn: &Db, business: BusinessId, warehouse: WarehouseId) -> Result<Vec<Order>> {
    let mut orders = conn.query_map(
        &format!(
            "SELECT {ORDER_COLS} FROM orders
             WHERE business_id = ?1 AND warehouse_id = ?2 AND waiting_since IS NOT NULL
             ORDER BY waiting_since, id"
        ),
        params![business.0, warehouse.0],
        order_row,
    )?;
    fill_lines(conn, &mut orders)?;
    Ok(orders)
}

/// The warehouses that have backorders, of every business.
pub fn waiting_places(conn: &Db) -> Result<Vec<(BusinessId, WarehouseId)>> {
    Ok(conn.query_map(
        "SELECT DISTINCT business_id, warehouse_id FROM orders WHERE waiting_since IS NOT NULL
         ORDER BY business_id, warehouse_id",
        params![],
        |r| Ok((BusinessId(r.get(0)?), WarehouseId(r.get(1)?))),
    )?)
}

/// Replaces the shipping address, as given.
pub fn set_address(conn: &Db, id: OrderId, address: &Address, at: &Timestamp) -> Result<()> {
    conn.execute_later(
        "UPDATE orders SET shipping_address = ?2, updated_at = ?3 WHERE id = ?1",
        params![id.0, serde_json::to_string(address)?, ts(at)],
    )?;
    Ok(())
}

pub fn add_history(conn: &Db, id: OrderId, change: &StatusChange) -> Result<()> {
    conn.execute_later("INSERT INTO order_history (order_id, from_status, to_status, actor, note, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)", params![id.0, change.from.map(OrderStatus::as_str), change.to.as_str(), change.actor, change.note, ts(&change.at)])?;
    Ok(())
}

fn status(s: &str) -> depot_sql::Result<OrderStatus> {
    OrderStatus::parse(s).ok_or_else(|| {
        depot_sql::Error::conversion(0, format!("not a status this release knows: {s}"))
    })
}

const ORDER_COLS: &str = "id, business_id, warehouse_id, channel, external_ref, status, buyer_name, buyer_email, \
                          buyer_phone, shipping_address, payments, currency, total_cents, created_at, updated_at, carrier, service, \
                          oversold, waiting_since, backorder_lines, split_from";

fn order_row(r: &Row) -> depot_sql::Result<Order> {
    Ok(Order {
        id: OrderId(r.get(0)?),
        business_id: BusinessId(r.get(1)?),
        warehouse_id: WarehouseId(r.get(2)?),
        channel: r.get(3)?,
        external_ref: r.get(4)?,
        status: status(&r.get::<String>(5)?)?,
        buyer: Buyer {
            name: r.get(6)?,
            email: r.get(7)?,
            phone: r.get(8)?,
        },
        shipping_address: parse_json(&r.get::<String>(9)?)?,
        payments: parse_json(&r.get::<String>(10)?)?,
        lines: Vec::new(),
        currency: r.get(11)?,
        total: Money(r.get(12)?),
        created_at: parse_ts(&r.get::<String>(13)?)?,
        updated_at: parse_ts(&r.get::<String>(14)?)?,
        carrier: r.get(15)?,
        service: r.get(16)?,
        address_issues: Vec::new(),
        history: Vec::new(),
        returns: Vec::new(),
        oversold: r.get::<i64>(17)? != 0,
        backorder: match (r.get::<Option<String>>(18)?, r.get::<Option<String>>(19)?) {
            (Some(since), Some(lines)) => Some(Backorder {
                since: parse_ts(&since)?,
                lines: parse_json(&lines)?,
            }),
            _ => None,
        },
        split_from: r.get::<Option<i64>>(20)?.map(OrderId),
    }
    .with_address_issues())
}

fn line_row(r: &Row) -> depot_sql::Result<(OrderId, OrderLine)> {
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

fn lines(conn: &Db, id: OrderId) -> Result<Vec<OrderLine>> {
    let stmt = &format!("SELECT {LINE_COLS} FROM order_lines WHERE order_id = ?1 ORDER BY line_no");
    let rows = conn.query_map(stmt, params![id.0], line_row)?;
    Ok(rows.into_iter().map(|(_, l)| l).collect())
}

/// Fills the lines of a page of orders with one query rather than one per
/// order.
fn fill_lines(conn: &Db, orders: &mut [Order]) -> Result<()> {
    if orders.is_empty() {
        return Ok(());
    }
    let marks = vec!["?"; orders.len()].join(", ");
    let stmt = &format!(
        "SELECT {LINE_COLS} FROM order_lines WHERE order_id IN ({marks}) ORDER BY order_id, line_no"
    );
    let ids: Vec<i64> = orders.iter().map(|o| o.id.0).collect();
    let mut by_order: std::collections::HashMap<OrderId, Vec<OrderLine>> =
        std::collections::HashMap::new();
    for row in conn.query_map(stmt, &depot_sql::params_from_iter(&ids), line_row)? {
        let (id, line) = row;
        by_order.entry(id).or_default().push(line);
    }
    for o in orders {
        o.lines = by_order.remove(&o.id).unwrap_or_default();
    }
    Ok(())
}

fn history(conn: &Db, id: OrderId) -> Result<Vec<StatusChange>> {
    let stmt = "SELECT from_status, to_status, actor, note, at FROM order_history WHERE order_id = ?1 ORDER BY id";
    let rows = conn.query_map(stmt, params![id.0], |r| {
        Ok(StatusChange {
            from: r
                .get::<Option<String>>(0)?
                .map(|s| status(&s))
                .transpose()?,
            to: status(&r.get::<String>(1)?)?,
            actor: r.get(2)?,
            note: r.get(3)?,
            at: parse_ts(&r.get::<String>(4)?)?,
        })
    })?;
    Ok(rows)
}

/// An order with its lines, and with its history when `with_history`.
pub fn order(
    conn: &Db,
    business: BusinessId,
    id: OrderId,
    with_history: bool,
) -> Result<Option<Order>> {
    let found = maybe(conn.query_row(
        &format!("SELECT {ORDER_COLS} FROM orders WHERE business_id = ?1 AND id = ?2"),
        params![business.0, id.0],
        order_row,
    ))?;
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
pub fn order_any(conn: &Db, id: OrderId) -> Result<Option<Order>> {
    let business: Option<i64> = maybe(conn.query_row(
        "SELECT business_id FROM orders WHERE id = ?1",
        params![id.0],
        |r| r.get(0),
    ))?;
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

/// The list's order: newest first.
const NEWEST_FIRST: super::Order =
    super::Order::desc(&[super::Key::Text("created_at"), super::Key::Int("id")]);

/// The list's filters. Every filter combination is served by an index that
/// starts with `business_id` and ends with `created_at, id`.
fn filtered(
    dialect: depot_sql::Dialect,
    business: BusinessId,
    f: &OrderFilter,
) -> super::ListQuery {
    let mut q = super::ListQuery::new("FROM orders WHERE business_id = ?", business);
    if let Some(s) = f.status {
        q.and("status = ?", [s.as_str().to_owned().into()]);
    }
    if let Some(c) = &f.channel {
        q.and("channel = ?", [c.clone().into()]);
    }
    if let Some(c) = &f.customer {
        // Each database's index of names without case: SQLite's by its
        // collation, PostgreSQL's by lower() (which folds beyond ASCII).
        let by_name = match dialect {
            depot_sql::Dialect::Sqlite => "(buyer_email = ? OR buyer_name = ? COLLATE NOCASE)",
            depot_sql::Dialect::Postgres => "(buyer_email = ? OR lower(buyer_name) = lower(?))",
        };
        q.and(by_name, [c.to_lowercase().into(), c.clone().into()]);
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
    q
}

/// A page of the list, newest first, each order with its lines.
pub fn list(
    conn: &Db,
    business: BusinessId,
    f: &OrderFilter,
    page: Page,
) -> Result<depot_protocol::Listed<Order>> {
    let mut listed = filtered(conn.dialect(), business, f).run(
        conn,
        "orders",
        ORDER_COLS,
        NEWEST_FIRST,
        page,
        order_row,
    )?;
    fill_lines(conn, &mut listed.rows)?;
    Ok(listed)
}

/// A page of the order list as [`list_kept`] reads it: each order's JSON
/// where it is kept, or its id where it is not.
pub type KeptPage = depot_protocol::Listed<std::result::Result<std::sync::Arc<str>, i64>>;

/// The same list as [`list`], its page only ids and versions, which the
/// status and date indexes hold (migration 048): on SQLite it is read
/// from the index alone, a brief read. Each row is read by [`kept`].
pub fn list_kept(
    dialect: depot_sql::Dialect,
    business: BusinessId,
    f: &OrderFilter,
) -> super::Listing {
    filtered(dialect, business, f).listing("orders", "id, version", NEWEST_FIRST)
}

/// A row of [`list_kept`]: the order's JSON where `rendered` holds it at
/// the version the row has, and otherwise the order's id, to read with
/// [`written_now`].
pub fn kept(
    r: &depot_sql::Row<'_>,
    rendered: &crate::rendered::Rendered,
) -> depot_sql::Result<std::result::Result<std::sync::Arc<str>, i64>> {
    let (id, version): (i64, i64) = (r.get(0)?, r.get(1)?);
    Ok(rendered.get(id, version).ok_or(id))
}

/// The ids of a page from [`list_kept`] that are not kept.
pub fn not_kept(listed: &KeptPage) -> Vec<i64> {
    listed
        .rows
        .iter()
        .filter_map(|s| s.as_ref().err().copied())
        .collect()
}

/// A page from [`list_kept`] with the orders not kept taken from
/// `written` ([`written_now`]). An order read again is written at the
/// version it had then, which may be later than the page's (each read its
/// own snapshot); an order gone since leaves its slot.
pub fn with_written(
    listed: KeptPage,
    written: &std::collections::HashMap<i64, std::sync::Arc<str>>,
) -> depot_protocol::Listed<std::sync::Arc<str>> {
    let rows = listed
        .rows
        .into_iter()
        .filter_map(|slot| match slot {
            Ok(json) => Some(json),
            Err(id) => written.get(&id).cloned(),
        })
        .collect();
    depot_protocol::Listed {
        rows,
        total: listed.total,
        filtered: listed.filtered,
        cursor: listed.cursor,
    }
}

/// Orders `ids` of `business` read in full, written as the API answers
/// them and kept in `rendered` at the version read.
pub fn written_now(
    conn: &Db,
    business: BusinessId,
    ids: &[i64],
    rendered: &crate::rendered::Rendered,
) -> Result<std::collections::HashMap<i64, std::sync::Arc<str>>> {
    // The version right after the order's own columns.
    const VERSION: usize = 21;
    if ids.is_empty() {
        return Ok(Default::default());
    }
    let marks = vec!["?"; ids.len()].join(", ");
    let stmt = format!(
        "SELECT {ORDER_COLS}, version FROM orders WHERE business_id = ? AND id IN ({marks})"
    );
    let args: Vec<depot_sql::Value> = std::iter::once(business.0)
        .chain(ids.iter().copied())
        .map(Into::into)
        .collect();
    let (mut orders, versions): (Vec<Order>, Vec<i64>) = conn
        .query_map(&stmt, &depot_sql::params_from_iter(&args), |r| {
            Ok((order_row(r)?, r.get::<i64>(VERSION)?))
        })?
        .into_iter()
        .unzip();
    fill_lines(conn, &mut orders)?;
    let mut written = std::collections::HashMap::with_capacity(orders.len());
    for (order, version) in orders.iter().zip(versions) {
        let json: std::sync::Arc<str> = serde_json::to_string(order)
            .map_err(|e| WmsError::Internal(format!("writing an order: {e}")))?
            .into();
        rendered.put(order.id.0, version, json.clone());
        written.insert(order.id.0, json);
    }
    Ok(written)
}

#[cfg(test)]
mod tests;
