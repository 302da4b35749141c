//! Sales channels, and what each may sell of each item. [`refresh`] keeps
//! the figures: the ledger calls it in the transaction of every change of
//! on-hand or reservations, so a figure is never older than the stock it
//! is computed from. Each changed figure takes the next number of its
//! business's feed, which the change feed and the debounced events read.

use super::{ListQuery, maybe, parse_ts, ts};
use crate::error::Result;
use depot_protocol::channel::{
    Allocation, Availability, AvailabilityChanged, Backorders, Channel, ChannelKind,
    CheckedChannel, available,
};
use depot_protocol::{BusinessId, ChannelId, ItemId, Page, Timestamp, WarehouseId};
use depot_sql::{Db, Row, params};
use std::collections::HashMap;

const COLS: &str = "id, business_id, code, name, kind, buffer_units, buffer_percent, cap_units, \
                    cap_percent, oversell, backorders, created_at, updated_at";

fn row(r: &Row) -> depot_sql::Result<Channel> {
    let kind: String = r.get(4)?;
    let backorders: String = r.get(10)?;
    Ok(Channel {
        id: ChannelId(r.get(0)?),
        business_id: BusinessId(r.get(1)?),
        code: r.get(2)?,
        name: r.get(3)?,
        kind: ChannelKind::parse(&kind).ok_or_else(|| {
            depot_sql::Error::conversion(4, format!("not a channel kind: {kind}"))
        })?,
        warehouse_ids: Vec::new(),
        buffer_units: r.get(5)?,
        buffer_percent: r.get(6)?,
        cap_units: r.get(7)?,
        cap_percent: r.get(8)?,
        oversell: r.get::<i64>(9)? != 0,
        backorders: Backorders::parse(&backorders).ok_or_else(|| {
            depot_sql::Error::conversion(10, format!("not a backorder rule: {backorders}"))
        })?,
        created_at: parse_ts(&r.get::<String>(11)?)?,
        updated_at: parse_ts(&r.get::<String>(12)?)?,
    })
}

fn with_warehouses(conn: &Db, mut c: Channel) -> Result<Channel> {
    c.warehouse_ids = conn
        .query_map(
            "SELECT warehouse_id FROM channel_warehouses WHERE channel_id = ?1 ORDER BY warehouse_id",
            params![c.id.0],
            |r| r.get(0),
        )?
        .into_iter()
        .map(WarehouseId)
        .collect();
    Ok(c)
}

fn set_warehouses(conn: &Db, id: ChannelId, warehouses: &[WarehouseId]) -> Result<()> {
    conn.execute(
        "DELETE FROM channel_warehouses WHERE channel_id = ?1",
        params![id.0],
    )?;
    for w in warehouses {
        conn.execute(
            "INSERT INTO channel_warehouses (channel_id, warehouse_id) VALUES (?1, ?2)",
            params![id.0, w.0],
        )?;
    }
    Ok(())
}

pub fn insert(
    conn: &Db,
    business: BusinessId,
    c: &CheckedChannel,
    at: &Timestamp,
) -> Result<ChannelId> {
    let a = &c.allocation;
    let id: i64 = conn.query_value(
        "INSERT INTO channels (business_id, code, name, kind, buffer_units, buffer_percent,
                               cap_units, cap_percent, oversell, backorders, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11) RETURNING id",
        params![
            business.0,
            c.code,
            c.name,
            c.kind.as_str(),
            a.buffer_units,
            a.buffer_percent,
            a.cap_units,
            a.cap_percent,
            i64::from(c.oversell),
            c.backorders.as_str(),
            ts(at)
        ],
    )?;
    set_warehouses(conn, ChannelId(id), &c.warehouse_ids)?;
    Ok(ChannelId(id))
}

pub fn update(conn: &Db, id: ChannelId, c: &CheckedChannel, at: &Timestamp) -> Result<()> {
    let a = &c.allocation;
    conn.execute(
        "UPDATE channels SET name = ?2, kind = ?3, buffer_units = ?4, buffer_percent = ?5,
                             cap_units = ?6, cap_percent = ?7, oversell = ?8, backorders = ?9,
                             updated_at = ?10
         WHERE id = ?1",
        params![
            id.0,
            c.name,
            c.kind.as_str(),
            a.buffer_units,
            a.buffer_percent,
            a.cap_units,
            a.cap_percent,
            i64::from(c.oversell),
            c.backorders.as_str(),
            ts(at)
        ],
    )?;
    set_warehouses(conn, id, &c.warehouse_ids)
}

/// Stores a channel another node made or edited, with its id, and
/// computes its figures here.
pub fn save_replica(conn: &Db, c: &Channel) -> Result<()> {
    let a = c.allocation();
    conn.execute(
        "INSERT INTO channels (id, business_id, code, name, kind, buffer_units, buffer_percent,
                               cap_units, cap_percent, oversell, backorders, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
         ON CONFLICT (id) DO UPDATE SET name = excluded.name, kind = excluded.kind,
             buffer_units = excluded.buffer_units, buffer_percent = excluded.buffer_percent,
             cap_units = excluded.cap_units, cap_percent = excluded.cap_percent,
             oversell = excluded.oversell, backorders = excluded.backorders,
             updated_at = excluded.updated_at",
        params![
            c.id.0,
            c.business_id.0,
            c.code,
            c.name,
            c.kind.as_str(),
            a.buffer_units,
            a.buffer_percent,
            a.cap_units,
            a.cap_percent,
            i64::from(c.oversell),
            c.backorders.as_str(),
            ts(&c.created_at),
            ts(&c.updated_at)
        ],
    )?;
    set_warehouses(conn, c.id, &c.warehouse_ids)?;
    refresh_channel(conn, c)
}

/// A business's channel by its code.
pub fn by_code(conn: &Db, business: BusinessId, code: &str) -> Result<Option<Channel>> {
    let sent = by_code_later(conn, business, code)?;
    with_warehouses_of(conn, sent.first(conn)?)
}

/// [`by_code`] sent with the reads around it ([`Db::query_later`]); its
/// warehouses are read by [`with_warehouses_of`].
pub fn by_code_later(
    conn: &Db,
    business: BusinessId,
    code: &str,
) -> Result<depot_sql::Later<Channel>> {
    Ok(conn.query_later(
        &format!("SELECT {COLS} FROM channels WHERE business_id = ?1 AND code = ?2"),
        params![business.0, code],
        row,
    )?)
}

/// A channel read with [`by_code_later`], with its warehouses.
pub fn with_warehouses_of(conn: &Db, found: Option<Channel>) -> Result<Option<Channel>> {
    found.map(|c| with_warehouses(conn, c)).transpose()
}

/// Every channel of every business: its business and code.
pub fn all_ids(conn: &Db) -> Result<Vec<(BusinessId, String)>> {
    Ok(conn.query_map(
        "SELECT business_id, code FROM channels ORDER BY business_id, code",
        params![],
        |r| Ok((BusinessId(r.get(0)?), r.get(1)?)),
    )?)
}

/// A business's channels, by code.
pub fn list(
    conn: &Db,
    business: BusinessId,
    page: Page,
) -> Result<depot_protocol::Listed<Channel>> {
    let q = ListQuery::new("FROM channels WHERE business_id = ?", business);
    let depot_protocol::Listed {
        rows,
        total,
        filtered,
        cursor,
    } = q.run(
        conn,
        "channels",
        COLS,
        super::Order::asc(&[super::Key::Text("code")]),
        page,
        row,
    )?;
    let rows = rows
        .into_iter()
        .map(|c| with_warehouses(conn, c))
        .collect::<Result<Vec<_>>>()?;
    Ok(depot_protocol::Listed {
        rows,
        total,
        filtered,
        cursor,
    })
}

/// What a channel's warehouses hold of an item free to promise: each
/// warehouse's on-hand less its reservations and the units its pending
/// orders sold, at least 0.
const POOL: &str = "SUM(CASE WHEN s.on_hand - s.reserved - s.pending > 0
                        THEN s.on_hand - s.reserved - s.pending ELSE 0 END)";

/// The next numbers of a business's feed: `n` of them, the last answered.
fn take_numbers(conn: &Db, business: BusinessId, n: i64) -> Result<i64> {
    Ok(conn.query_value(
        "INSERT INTO channel_feed (business_id, seq, emitted) VALUES (?1, ?2, 0)
         ON CONFLICT (business_id) DO UPDATE SET seq = channel_feed.seq + ?2 RETURNING seq",
        params![business.0, n],
    )?)
}

/// Writes figures that changed, numbered from the business's feed in one
/// block, in one statement.
fn put_changed(
    conn: &Db,
    business: BusinessId,
    changed: &[(ChannelId, ItemId, i64)],
) -> Result<()> {
    if changed.is_empty() {
        return Ok(());
    }
    let n = i64::try_from(changed.len()).unwrap_or(i64::MAX);
    let last = take_numbers(conn, business, n)?;
    // Rows of five parameters each: within SQLite's and PostgreSQL's
    // limits for the channels one warehouse has (or one block of items).
    for (chunk_no, chunk) in changed.chunks(200).enumerate() {
        let first = last - n + 1 + 200 * i64::try_from(chunk_no).unwrap_or(0);
        let mut args: Vec<depot_sql::Value> = Vec::with_capacity(chunk.len() * 5);
        let mut rows = Vec::with_capacity(chunk.len());
        for (k, (channel, item, now)) in chunk.iter().enumerate() {
            let p = 5 * k;
            rows.push(format!(
                "(?{}, ?{}, ?{}, ?{}, ?{})",
                p + 1,
                p + 2,
                p + 3,
                p + 4,
                p + 5
            ));
            args.extend([
                item.0.into(),
                channel.0.into(),
                business.0.into(),
                (*now).into(),
                (first + i64::try_from(k).unwrap_or(0)).into(),
            ]);
        }
        conn.execute_later(
            &format!(
                "INSERT INTO channel_availability (item_id, channel_id, business_id, available, seq)
                 VALUES {}
                 ON CONFLICT (item_id, channel_id) DO UPDATE SET available = excluded.available,
                                                                 seq = excluded.seq",
                rows.join(", ")
            ),
            &depot_sql::params_from_iter(&args),
        )?;
    }
    Ok(())
}

/// Recomputes what each channel selling from `warehouse` may sell of
/// `item`, numbering each figure that changed. A few statements whatever
/// the number of channels: it runs in every stock write.
pub fn refresh(
    conn: &Db,
    business: BusinessId,
    item: ItemId,
    warehouse: WarehouseId,
) -> Result<()> {
    let covering = conn.query_map(
        "SELECT c.id, c.buffer_units, c.buffer_percent, c.cap_units, c.cap_percent,
                a.available
         FROM channel_warehouses cw JOIN channels c ON c.id = cw.channel_id
         LEFT JOIN channel_availability a ON a.channel_id = c.id AND a.item_id = ?2
         WHERE cw.warehouse_id = ?1",
        params![warehouse.0, item.0],
        |r| {
            Ok((
                ChannelId(r.get(0)?),
                Allocation {
                    buffer_units: r.get(1)?,
                    buffer_percent: r.get(2)?,
                    cap_units: r.get(3)?,
                    cap_percent: r.get(4)?,
                },
                r.get::<Option<i64>>(5)?,
            ))
        },
    )?;
    if covering.is_empty() {
        return Ok(());
    }
    // The item's free stock per warehouse, and the warehouses of each
    // channel selling from this one.
    let free: HashMap<i64, i64> = conn
        .query_map(
            "SELECT warehouse_id, on_hand - reserved - pending FROM stock_levels WHERE item_id = ?1",
            params![item.0],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?
        .into_iter()
        .collect();
    let mut pools: HashMap<i64, i64> = HashMap::new();
    for (channel, w) in conn.query_map(
        "SELECT channel_id, warehouse_id FROM channel_warehouses
         WHERE channel_id IN (SELECT channel_id FROM channel_warehouses WHERE warehouse_id = ?1)",
        params![warehouse.0],
        |r| Ok((r.get::<i64>(0)?, r.get::<i64>(1)?)),
    )? {
        let n = free.get(&w).copied().unwrap_or(0).max(0);
        let pool = pools.entry(channel).or_insert(0);
        *pool = pool.saturating_add(n);
    }
    let changed: Vec<(ChannelId, ItemId, i64)> = covering
        .into_iter()
        .filter_map(|(channel, allocation, before)| {
            let pool = pools.get(&channel.0).copied().unwrap_or(0);
            let now = available(pool, &allocation);
            (now != before.unwrap_or(0)).then_some((channel, item, now))
        })
        .collect();
    put_changed(conn, business, &changed)
}

/// Recomputes every item's figure for a channel (made, or its rules or
/// warehouses edited), numbering those that changed.
pub fn refresh_channel(conn: &Db, c: &Channel) -> Result<()> {
    let pools: Vec<(i64, i64)> = conn.query_map(
        &format!(
            "SELECT i.id, COALESCE(p.free, 0) FROM items i
             LEFT JOIN (SELECT s.item_id, {POOL} AS free FROM stock_levels s
                        JOIN channel_warehouses cw ON cw.warehouse_id = s.warehouse_id
                        WHERE cw.channel_id = ?1 GROUP BY s.item_id) p ON p.item_id = i.id
             WHERE i.business_id = ?2 ORDER BY i.id"
        ),
        params![c.id.0, c.business_id.0],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let before: HashMap<i64, i64> = conn
        .query_map(
            "SELECT item_id, available FROM channel_availability WHERE channel_id = ?1",
            params![c.id.0],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?
        .into_iter()
        .collect();
    let allocation = c.allocation();
    let changed: Vec<(ChannelId, ItemId, i64)> = pools
        .into_iter()
        .map(|(item, pool)| (item, available(pool, &allocation)))
        .filter(|(item, now)| *now != before.get(item).copied().unwrap_or(0))
        .map(|(item, now)| (c.id, ItemId(item), now))
        .collect();
    put_changed(conn, c.business_id, &changed)
}

/// What a channel may sell of an item now.
pub fn figure(conn: &Db, channel: ChannelId, item: ItemId) -> Result<i64> {
    Ok(maybe(conn.query_row(
        "SELECT available FROM channel_availability WHERE item_id = ?1 AND channel_id = ?2",
        params![item.0, channel.0],
        |r| r.get(0),
    ))?
    .unwrap_or(0))
}

fn availability_row(r: &Row) -> depot_sql::Result<Availability> {
    Ok(Availability {
        item_id: ItemId(r.get(0)?),
        sku: r.get(1)?,
        available: r.get(2)?,
    })
}

/// What a channel may sell of each of its business's items, by item.
pub fn availability(
    conn: &Db,
    c: &Channel,
    sku: Option<&str>,
    page: Page,
) -> Result<depot_protocol::Listed<Availability>> {
    // The channel's id is a number read from the database, not input.
    let mut q = ListQuery::new(
        &format!(
            "FROM items i LEFT JOIN channel_availability a
                ON a.item_id = i.id AND a.channel_id = {}
             WHERE i.business_id = ?",
            c.id.0
        ),
        c.business_id,
    );
    if let Some(sku) = sku {
        q.and("i.sku = ?", [sku.to_owned().into()]);
    }
    q.run(
        conn,
        "items",
        "i.id, i.sku, COALESCE(a.available, 0)",
        super::Order::asc(&[super::Key::Int("i.id")]),
        page,
        availability_row,
    )
}

/// The items whose figure changed after `after`, each once, oldest change
/// first, and the cursor past the last.
pub fn changes(conn: &Db, c: &Channel, after: i64, limit: u32) -> Result<(Vec<Availability>, i64)> {
    let rows = conn.query_map(
        "SELECT a.item_id, i.sku, a.available, a.seq FROM channel_availability a
         JOIN items i ON i.id = a.item_id
         WHERE a.business_id = ?1 AND a.seq > ?2 AND a.channel_id = ?3 ORDER BY a.seq LIMIT ?4",
        params![c.business_id.0, after, c.id.0, i64::from(limit)],
        |r| Ok((availability_row(r)?, r.get::<i64>(3)?)),
    )?;
    let next = rows.last().map_or(after, |(_, seq)| *seq);
    Ok((rows.into_iter().map(|(a, _)| a).collect(), next))
}

/// Figures changed since the events were last written, of one business
/// that has some: the business, the figures (each channel and item once,
/// as it stands) and how far they go.
pub fn unannounced(
    conn: &Db,
    limit: u32,
) -> Result<Option<(BusinessId, Vec<AvailabilityChanged>, i64)>> {
    let Some((business, emitted)) = maybe(conn.query_row(
        "SELECT business_id, emitted FROM channel_feed WHERE seq > emitted
         ORDER BY business_id LIMIT 1",
        params![],
        |r| Ok((BusinessId(r.get(0)?), r.get::<i64>(1)?)),
    ))?
    else {
        return Ok(None);
    };
    let rows = conn.query_map(
        "SELECT a.channel_id, c.code, a.item_id, i.sku, a.available, a.seq
         FROM channel_availability a JOIN channels c ON c.id = a.channel_id
         JOIN items i ON i.id = a.item_id
         WHERE a.business_id = ?1 AND a.seq > ?2 ORDER BY a.seq LIMIT ?3",
        params![business.0, emitted, i64::from(limit)],
        |r| {
            Ok((
                AvailabilityChanged {
                    business_id: business,
                    channel_id: ChannelId(r.get(0)?),
                    channel: r.get(1)?,
                    item_id: ItemId(r.get(2)?),
                    sku: r.get(3)?,
                    available: r.get(4)?,
                },
                r.get::<i64>(5)?,
            ))
        },
    )?;
    // Nothing left to read (figures changed and changed back): up to the
    // feed's head.
    let upto = match rows.last() {
        Some((_, seq)) => *seq,
        None => feed_head(conn, business)?,
    };
    Ok(Some((
        business,
        rows.into_iter().map(|(e, _)| e).collect(),
        upto,
    )))
}

/// The last number a business's feed gave (0 before any).
pub fn feed_head(conn: &Db, business: BusinessId) -> Result<i64> {
    Ok(maybe(conn.query_row(
        "SELECT seq FROM channel_feed WHERE business_id = ?1",
        params![business.0],
        |r| r.get(0),
    ))?
    .unwrap_or(0))
}

/// Records that a business's figures up to `seq` are announced.
pub fn announced(conn: &Db, business: BusinessId, seq: i64) -> Result<()> {
    conn.execute(
        "UPDATE channel_feed SET emitted = ?2 WHERE business_id = ?1 AND emitted < ?2",
        params![business.0, seq],
    )?;
    Ok(())
}
