//! What each channel may sell of each item: the figures [`Figures`] keeps
//! in the transaction of every change of on-hand or reservations, each
//! changed figure numbered from its business's feed.
//!
//! A stock write runs this on every item it moves, so it reads each item's
//! channels with their free stock in one statement, sent with the write's
//! own reads of the levels, and writes the figures without waiting: on
//! PostgreSQL no round trip of its own for any number of items and
//! channels (it was four an item).

use crate::error::Result;
use depot_protocol::channel::{Allocation, Channel, available};
use depot_protocol::{BusinessId, ChannelId, ItemId, WarehouseId};
use depot_sql::{Db, Later, Row, params};
use std::collections::HashMap;

/// What a channel's warehouses hold of an item free to promise: each
/// warehouse's on-hand less its reservations and the units its pending
/// orders sold, at least 0.
const POOL: &str = "SUM(CASE WHEN s.on_hand - s.reserved - s.pending > 0
                        THEN s.on_hand - s.reserved - s.pending ELSE 0 END)";

/// A channel selling from a warehouse, its rules, its figure before and
/// what its warehouses hold free to promise now.
type Covering = (ChannelId, Allocation, Option<i64>, i64);

/// Rows a statement writes (four parameters each): within SQLite's and
/// PostgreSQL's limits for the channels one warehouse has (or one block of
/// items).
const ROWS: usize = 200;

/// Writes figures that changed, numbered from the business's feed in one
/// block: the block is taken and the figures written without waiting for
/// either (each row's number read from the feed as the block left it).
fn put_changed(
    conn: &Db,
    business: BusinessId,
    changed: &[(ChannelId, ItemId, i64)],
) -> Result<()> {
    if changed.is_empty() {
        return Ok(());
    }
    let n = i64::try_from(changed.len()).unwrap_or(i64::MAX);
    conn.execute_later(
        "INSERT INTO channel_feed (business_id, seq, emitted) VALUES (?1, ?2, 0)
         ON CONFLICT (business_id) DO UPDATE SET seq = channel_feed.seq + ?2",
        params![business.0, n],
    )?;
    for (chunk_no, chunk) in changed.chunks(ROWS).enumerate() {
        // The figure at `index` of `changed` takes number
        // `last - (n - 1 - index)`, `last` the feed's number now.
        let mut args: Vec<depot_sql::Value> = Vec::with_capacity(chunk.len() * 4 + 1);
        args.push(business.0.into());
        let mut rows = Vec::with_capacity(chunk.len());
        for (k, (channel, item, now)) in chunk.iter().enumerate() {
            let index = ROWS * chunk_no + k;
            let back = n - 1 - i64::try_from(index).unwrap_or(0);
            let p = 4 * k + 1;
            rows.push(format!(
                "(?{}, ?{}, ?1, ?{}, (SELECT seq FROM channel_feed WHERE business_id = ?1) - ?{})",
                p + 1,
                p + 2,
                p + 3,
                p + 4
            ));
            args.extend([item.0.into(), channel.0.into(), (*now).into(), back.into()]);
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

/// Recomputes what each channel selling from a warehouse may sell of some
/// items (an order's lines, a movement's item), numbering each figure that
/// changed, in two steps: the figures and pools are read (`send`) with the
/// caller's reads of the items' levels, before it writes them, so that on
/// PostgreSQL they cost no round trip of their own; once the levels are
/// written, the figures that changed are (`write`), each pool moved by
/// what the writes changed of the item's free stock there.
#[must_use = "figures read are written with `write`"]
pub struct Figures {
    business: BusinessId,
    items: Vec<(ItemId, Later<Covering>)>,
}

impl Figures {
    /// Sends, for each of `items`, the read of the channels selling from
    /// `warehouse` with their figure and pool: before the caller writes
    /// the items' levels there.
    pub fn send(
        conn: &Db,
        business: BusinessId,
        warehouse: WarehouseId,
        items: &[ItemId],
    ) -> Result<Self> {
        let items = items
            .iter()
            .map(|item| Ok((*item, covering(conn, warehouse, *item)?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { business, items })
    }

    /// Writes the figures that changed. `moved` names, of each item whose
    /// level in the warehouse changed since `send`, its free stock there
    /// before and after (on-hand less reserved and pending): every pool
    /// read counted the first.
    pub fn write(self, conn: &Db, moved: &[(ItemId, i64, i64)]) -> Result<()> {
        let mut changed = Vec::new();
        for (item, covering) in self.items {
            let shift = moved.iter().filter(|(i, ..)| *i == item).fold(
                0i64,
                |shift, (_, before, after)| {
                    shift.saturating_add(after.max(&0).saturating_sub(*before.max(&0)))
                },
            );
            changed.extend(covering.all(conn)?.into_iter().filter_map(
                |(channel, allocation, before, pool)| {
                    let now = available(pool.saturating_add(shift), &allocation);
                    (now != before.unwrap_or(0)).then_some((channel, item, now))
                },
            ));
        }
        put_changed(conn, self.business, &changed)
    }
}

fn covering_row(r: &Row) -> depot_sql::Result<Covering> {
    Ok((
        ChannelId(r.get(0)?),
        Allocation {
            buffer_units: r.get(1)?,
            buffer_percent: r.get(2)?,
            cap_units: r.get(3)?,
            cap_percent: r.get(4)?,
        },
        r.get::<Option<i64>>(5)?,
        r.get::<i64>(6)?,
    ))
}

/// The channels selling from `warehouse`, each with its figure of `item`
/// and what its warehouses hold of it free (in one statement: an item no
/// channel sells costs one index probe).
fn covering(conn: &Db, warehouse: WarehouseId, item: ItemId) -> Result<Later<Covering>> {
    Ok(conn.query_later(
        &format!(
            "SELECT c.id, c.buffer_units, c.buffer_percent, c.cap_units, c.cap_percent,
                    a.available,
                    (SELECT COALESCE({POOL}, 0) FROM channel_warehouses pw
                     JOIN stock_levels s ON s.warehouse_id = pw.warehouse_id AND s.item_id = ?2
                     WHERE pw.channel_id = c.id)
             FROM channel_warehouses cw JOIN channels c ON c.id = cw.channel_id
             LEFT JOIN channel_availability a ON a.channel_id = c.id AND a.item_id = ?2
             WHERE cw.warehouse_id = ?1"
        ),
        params![warehouse.0, item.0],
        covering_row,
    )?)
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
    Ok(super::maybe(conn.query_row(
        "SELECT available FROM channel_availability WHERE item_id = ?1 AND channel_id = ?2",
        params![item.0, channel.0],
        |r| r.get(0),
    ))?
    .unwrap_or(0))
}
