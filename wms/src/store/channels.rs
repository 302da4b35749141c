//! Sales channels, and what each may sell of each item. [`Figures`] keeps
//! the figures: the ledger calls it in the transaction of every change of
//! on-hand or reservations, so a figure is never older than the stock it
//! is computed from. Each changed figure takes the next number of its
//! business's feed, which the change feed and the debounced events read.

mod figures;

pub use figures::{Figures, figure, refresh_channel};

use super::{ListQuery, maybe, parse_ts, ts};
use crate::error::Result;
use depot_protocol::channel::{
    Availability, AvailabilityChanged, Backorders, Channel, ChannelKind, CheckedChannel,
};
use depot_protocol::{BusinessId, ChannelId, ItemId, Page, Timestamp, WarehouseId};
use depot_sql::{Db, Row, params};

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
