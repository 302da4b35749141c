//! Movements made elsewhere booked together: a run of replicated
//! `stock.moved` events (an edge's backlog draining into the cloud) as
//! [`super::record_once`] books each, with what they read read together
//! and what they write written once.
//!
//! On PostgreSQL, booking one movement is about ten statements; a run of
//! 128 booked one by one was 1,280, and the server spent most of its time
//! starting statements. Here a run is three round trips: the levels,
//! locations and lots of its items; then its movements' rows (in blocks,
//! each answering which it booked) and their bins; then, once the levels
//! are written, their channels' figures. The levels are worked out in
//! order here, and each level, bin, lot and figure the run moved is
//! written once, at its last value.

use super::{
    Of, discrepancies, insert_movements_once, lot_level, moved, put_bin, put_level, put_lot,
    stored_bin_level,
};
use crate::error::{Result, WmsError};
use crate::store::channels::Figures;
use crate::store::rows::in_list;
use depot_protocol::stock::Movement;
use depot_protocol::{BusinessId, ItemId, WarehouseId};
use depot_sql::{Db, Later};
use std::collections::{BTreeMap, HashMap, HashSet};

/// A level as read and as the run leaves it.
struct Level {
    /// On-hand before the run; 0 where no row was stored.
    read: i64,
    stored: bool,
    /// On-hand after the run's movements so far, once one moved it.
    now: Option<i64>,
}

/// A bin's or a lot's on-hand as read and as the run leaves it.
struct Count {
    stored: bool,
    now: i64,
    moved: bool,
}

type LevelKey = (ItemId, WarehouseId);
type BinKey = (ItemId, WarehouseId, String, String);

/// Books `ms` in order, as [`super::record_once`] would one after the
/// other: each movement's on-hand after it, `None` for one already booked
/// here (or earlier in `ms`). A movement that would take a level beyond
/// `±MAX_ON_HAND` refuses them all, and what the run wrote (its movements'
/// rows) is the caller's to undo: it runs in a savepoint it rolls back,
/// then books them one by one to tell which. Each movement booked names
/// the location it was booked at, as `record_once` leaves it.
pub fn record_many_once(conn: &Db, ms: &mut [Movement]) -> Result<Vec<Option<i64>>> {
    // Round one: the levels and assigned locations of the items in each
    // warehouse, the lots.
    let mut items: BTreeMap<(BusinessId, WarehouseId), Vec<ItemId>> = BTreeMap::new();
    for m in ms.iter() {
        let list = items.entry((m.business_id, m.warehouse_id)).or_default();
        if !list.contains(&m.item_id) {
            list.push(m.item_id);
        }
    }
    let mut reads = Vec::with_capacity(items.len());
    for (&(_, warehouse), list) in &items {
        let unplaced: Vec<ItemId> = ms
            .iter()
            .filter(|m| m.warehouse_id == warehouse && m.location.is_none())
            .map(|m| m.item_id)
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        reads.push((
            warehouse,
            levels_of(conn, warehouse, list)?,
            assigned_of(conn, warehouse, &unplaced)?,
        ));
    }
    let lots: Vec<(BinKey, Later<i64>)> = ms
        .iter()
        .filter_map(|m| {
            let lot = m.lot.as_deref()?;
            Some((m.item_id, m.warehouse_id, String::new(), lot.to_owned()))
        })
        .collect::<HashSet<_>>()
        .into_iter()
        .map(|key| Ok((key.clone(), lot_level(conn, key.0, key.1, &key.3)?)))
        .collect::<Result<_>>()?;
    let mut levels: BTreeMap<LevelKey, Level> = BTreeMap::new();
    let mut assigned: HashMap<LevelKey, String> = HashMap::new();
    for (warehouse, level_read, assigned_read) in reads {
        for (item, read) in level_read.map_or(Ok(Vec::new()), |r| r.all(conn))? {
            levels.insert(
                (item, warehouse),
                Level {
                    read,
                    stored: true,
                    now: None,
                },
            );
        }
        for (item, location) in assigned_read.map_or(Ok(Vec::new()), |r| r.all(conn))? {
            assigned.insert((item, warehouse), location);
        }
    }
    let mut lot_counts: BTreeMap<BinKey, Count> = BTreeMap::new();
    for (key, read) in lots {
        let stored = read.first(conn)?;
        lot_counts.insert(key, count(stored));
    }

    // Where each is: a movement that names no location is of the item's
    // own there, as `record_once` books it.
    let placed: Vec<bool> = ms
        .iter_mut()
        .map(|m| {
            let place = m.location.is_none();
            if place {
                m.location = assigned.get(&(m.item_id, m.warehouse_id)).cloned();
            }
            place
        })
        .collect();

    // Round two: each movement's row, where its id is not booked yet (no
    // read first: a read of many ids by a list is planned, on PostgreSQL,
    // as the table was when the plan was cached, a scan of every row once
    // it was small), and the bins they move.
    let rows = insert_movements_once(conn, &ms.iter().collect::<Vec<_>>())?;
    let bins: Vec<(BinKey, Later<i64>)> = ms
        .iter()
        .map(bin_key)
        .collect::<HashSet<_>>()
        .into_iter()
        .map(|key| {
            Ok((
                key.clone(),
                stored_bin_level(conn, key.0, key.1, &key.2, &key.3)?,
            ))
        })
        .collect::<Result<_>>()?;
    let mut booked = HashSet::new();
    for block in rows {
        booked.extend(block.all(conn)?);
    }
    let mut fresh = Vec::with_capacity(ms.len());
    for (i, m) in ms.iter_mut().enumerate() {
        if booked.remove(&m.id.0.to_string()) {
            fresh.push(i);
        } else if placed[i] {
            // Booked before: left as it came, as `record_once` leaves it.
            m.location = None;
        }
    }
    let mut bin_counts: BTreeMap<BinKey, Count> = BTreeMap::new();
    for (key, read) in bins {
        let stored = read.first(conn)?;
        bin_counts.insert(key, count(stored));
    }

    // In order, as one by one: each level checked as the ones before left it.
    let mut answers = vec![None; ms.len()];
    let mut short = Vec::new();
    let mut expiries: HashMap<BinKey, chrono::NaiveDate> = HashMap::new();
    for &i in &fresh {
        let m = &ms[i];
        let level = levels.entry((m.item_id, m.warehouse_id)).or_insert(Level {
            read: 0,
            stored: false,
            now: None,
        });
        let before = level.now.unwrap_or(level.read);
        let on_hand = moved("delta", m, Of::Warehouse, before)?;
        level.now = Some(on_hand);
        if let Some(lot) = &m.lot {
            let key = (m.item_id, m.warehouse_id, String::new(), lot.clone());
            let lot_count = lot_counts.get_mut(&key).ok_or_else(|| unread("lot"))?;
            lot_count.now = moved("delta", m, Of::Lot(lot), lot_count.now)?;
            lot_count.moved = true;
            if let Some(expiry) = m.expiry {
                expiries.insert(key, expiry);
            }
        }
        let key = bin_key(m);
        let bin = bin_counts.get_mut(&key).ok_or_else(|| unread("bin"))?;
        bin.now = moved("delta", m, Of::Bin(&key.2), bin.now)?;
        bin.moved = true;
        if on_hand < 0 {
            short.push((i, on_hand));
        }
        answers[i] = Some(on_hand);
    }

    // Every check passed: the writes, each level at its last value.
    let booking: Vec<&Movement> = fresh.iter().map(|&i| &ms[i]).collect();
    // The first movement of each item in each warehouse stands for its
    // business in the rows the writes make.
    let mut first: HashMap<LevelKey, &Movement> = HashMap::new();
    for m in &booking {
        first.entry((m.item_id, m.warehouse_id)).or_insert(m);
    }
    let first = |item: ItemId, warehouse: WarehouseId| {
        first
            .get(&(item, warehouse))
            .copied()
            .ok_or_else(|| unread("movement"))
    };
    for (key, lot) in &lot_counts {
        if lot.moved {
            put_lot(
                conn,
                first(key.0, key.1)?,
                &key.3,
                expiries.get(key).copied(),
                lot.now,
            )?;
        }
    }
    for (&(item, warehouse), level) in &levels {
        if let Some(now) = level.now {
            put_level(conn, first(item, warehouse)?, level.stored, now)?;
        }
    }
    for (key, bin) in &bin_counts {
        if bin.moved {
            put_bin(
                conn,
                first(key.0, key.1)?,
                (&key.2, &key.3),
                bin.stored,
                bin.now,
            )?;
        }
    }
    let short: Vec<(&Movement, i64)> = short.into_iter().map(|(i, n)| (&ms[i], n)).collect();
    discrepancies(conn, &short)?;
    // What the sales channels selling from each warehouse may sell moves
    // with it: read once the levels are written, each channel's pool is
    // what the whole run left in every warehouse it sells from (an item
    // the run moved in two of them counts both).
    let mut figures = Vec::with_capacity(items.len());
    for (&(business, warehouse), list) in &items {
        figures.push(Figures::send(conn, business, warehouse, list)?);
    }
    for f in figures {
        f.write(conn, &[])?;
    }
    Ok(answers)
}

/// A level the run moves that it did not read: a bug here.
fn unread(what: &str) -> WmsError {
    WmsError::Internal(format!("a {what} the run moves was not read first"))
}

fn count(stored: Option<i64>) -> Count {
    Count {
        stored: stored.is_some(),
        now: stored.unwrap_or(0),
        moved: false,
    }
}

fn bin_key(m: &Movement) -> BinKey {
    (
        m.item_id,
        m.warehouse_id,
        m.location.clone().unwrap_or_default(),
        m.lot.clone().unwrap_or_default(),
    )
}

/// The stored levels of `items` in `warehouse` (no row where none is).
fn levels_of(
    conn: &Db,
    warehouse: WarehouseId,
    items: &[ItemId],
) -> Result<Option<Later<(ItemId, i64)>>> {
    of_items(conn, "on_hand FROM stock_levels", warehouse, items, |r| {
        Ok((ItemId(r.get(0)?), r.get(1)?))
    })
}

/// The locations assigned to `items` in `warehouse`.
fn assigned_of(
    conn: &Db,
    warehouse: WarehouseId,
    items: &[ItemId],
) -> Result<Option<Later<(ItemId, String)>>> {
    of_items(
        conn,
        "location FROM item_locations",
        warehouse,
        items,
        |r| Ok((ItemId(r.get(0)?), r.get(1)?)),
    )
}

/// `SELECT item_id, {what}` of `items` in `warehouse`, by one list (its
/// generic plan on PostgreSQL probes the primary key, empty table or not);
/// nothing to read for no items.
fn of_items<T>(
    conn: &Db,
    what: &str,
    warehouse: WarehouseId,
    items: &[ItemId],
    map: fn(&depot_sql::Row<'_>) -> depot_sql::Result<T>,
) -> Result<Option<Later<T>>> {
    let ids: Vec<i64> = items.iter().map(|i| i.0).collect();
    let Some((list, keys)) = in_list(2, &ids) else {
        return Ok(None);
    };
    let mut args = vec![warehouse.0];
    args.extend(keys);
    Ok(Some(conn.query_later(
        &format!("SELECT item_id, {what} WHERE warehouse_id = ?1 AND item_id IN ({list})"),
        &depot_sql::params_from_iter(&args),
        map,
    )?))
}
