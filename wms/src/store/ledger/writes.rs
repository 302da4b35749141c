//! The ledger's writes of a movement, sent without waiting for their
//! answers (`Db::execute_later`): its row, and the levels it moves, each
//! written as the caller worked it out. One movement's (`book`) or many
//! movements' together (`many`).

use crate::error::Result;
use crate::store::ts;
use depot_protocol::stock::Movement;
use depot_sql::{Db, params};

/// Movements' rows, in blocks (see `store::rows`), sent without waiting.
pub(super) fn insert_movements(conn: &Db, ms: &[&Movement]) -> Result<()> {
    for (sql, args) in movement_rows(ms, "") {
        conn.execute_later(&sql, &depot_sql::params_from_iter(&args))?;
    }
    Ok(())
}

/// [`insert_movements`] of those not booked yet: each block answers the
/// ids it booked, once taken (`Later::all`). A movement whose id is booked
/// (here before, or earlier in `ms`) is not booked again.
pub(super) fn insert_movements_once(
    conn: &Db,
    ms: &[&Movement],
) -> Result<Vec<depot_sql::Later<String>>> {
    movement_rows(ms, " ON CONFLICT (id) DO NOTHING RETURNING id")
        .into_iter()
        .map(|(sql, args)| {
            Ok(conn.query_later(&sql, &depot_sql::params_from_iter(&args), |r| r.get(0))?)
        })
        .collect()
}

/// The statements that insert `ms`' rows, a block each, `tail` after
/// their rows.
fn movement_rows(ms: &[&Movement], tail: &str) -> Vec<(String, Vec<depot_sql::Value>)> {
    crate::store::rows::insert_blocks(
        "stock_movements (id, business_id, item_id, warehouse_id, location, delta, reason, ref, note,
                          actor, origin, at, lot, expiry)",
        tail,
        ms,
        |m| {
            [
                m.id.0.to_string().into(),
                m.business_id.0.into(),
                m.item_id.0.into(),
                m.warehouse_id.0.into(),
                m.location.clone().into(),
                m.delta.into(),
                m.reason.as_str().into(),
                m.reference.clone().into(),
                m.note.clone().into(),
                m.actor.clone().into(),
                m.origin.clone().into(),
                ts(&m.at).into(),
                m.lot.clone().into(),
                m.expiry.map(|d| d.to_string()).into(),
            ]
        },
    )
}

/// A lot's on-hand, and its expiry where `expiry` names one.
pub(super) fn put_lot(
    conn: &Db,
    m: &Movement,
    lot: &str,
    expiry: Option<chrono::NaiveDate>,
    on_hand: i64,
) -> Result<()> {
    conn.execute_later("INSERT INTO stock_lots (item_id, warehouse_id, lot, business_id, expiry, on_hand) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (item_id, warehouse_id, lot)
         DO UPDATE SET on_hand = excluded.on_hand, expiry = COALESCE(excluded.expiry, stock_lots.expiry)", params![m.item_id.0, m.warehouse_id.0, lot, m.business_id.0, expiry.map(|d| d.to_string()), on_hand])?;
    Ok(())
}

/// The on-hand of `m`'s item in its warehouse. The level was read before:
/// a row that is there (`stored`) is updated, one that is not inserted. An
/// upsert would do either in one statement, but on SQLite it runs in a
/// statement journal (it may insert, firing the row-count trigger, or
/// update): releasing one walks the journal of the whole job's savepoint
/// so far, which made applying a burst of movements quadratic in its
/// job's length.
pub(super) fn put_level(conn: &Db, m: &Movement, stored: bool, on_hand: i64) -> Result<()> {
    if stored {
        conn.execute_later(
            "UPDATE stock_levels SET on_hand = ?3 WHERE item_id = ?1 AND warehouse_id = ?2",
            params![m.item_id.0, m.warehouse_id.0, on_hand],
        )?;
    } else {
        conn.execute_later(
            "INSERT INTO stock_levels (item_id, warehouse_id, business_id, on_hand) VALUES (?1, ?2, ?3, ?4)",
            params![m.item_id.0, m.warehouse_id.0, m.business_id.0, on_hand],
        )?;
    }
    Ok(())
}

/// The on-hand of `m`'s item at a location and lot (`""`: none), as
/// [`put_level`].
pub(super) fn put_bin(
    conn: &Db,
    m: &Movement,
    (bin, lot): (&str, &str),
    stored: bool,
    on_hand: i64,
) -> Result<()> {
    if stored {
        conn.execute_later(
            "UPDATE stock_bins SET on_hand = ?5
             WHERE item_id = ?1 AND warehouse_id = ?2 AND location = ?3 AND lot = ?4",
            params![m.item_id.0, m.warehouse_id.0, bin, lot, on_hand],
        )?;
    } else {
        conn.execute_later(
            "INSERT INTO stock_bins (item_id, warehouse_id, location, lot, business_id, on_hand)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                m.item_id.0,
                m.warehouse_id.0,
                bin,
                lot,
                m.business_id.0,
                on_hand
            ],
        )?;
    }
    Ok(())
}

/// Movements that took their item's on-hand below zero, each with the
/// on-hand it left: the books and the floor disagree. In blocks, sent
/// without waiting.
pub(super) fn discrepancies(conn: &Db, short: &[(&Movement, i64)]) -> Result<()> {
    Ok(crate::store::rows::insert_later(
        conn,
        "stock_discrepancies (business_id, item_id, warehouse_id, movement_id, on_hand, at)",
        short,
        |(m, on_hand)| {
            [
                m.business_id.0.into(),
                m.item_id.0.into(),
                m.warehouse_id.0.into(),
                m.id.0.to_string().into(),
                (*on_hand).into(),
                ts(&m.at).into(),
            ]
        },
    )?)
}
