//! The pick counters (migrations 018 and 021) against what summing the lines
//! through picks, cancellations and a migration of waves already made.

use super::{CANCELLED_ORDERS, WAITING_ORDERS, add_picked, remaining_later};
use crate::error::Result;
use depot_protocol::{OrderId, PickLineId, WaveId};
use depot_sql::{Db, params};

/// Units left in a wave and in one of its orders, as a scan reads them.
fn remaining(conn: &Db, wave: WaveId, order: OrderId) -> Result<(i64, i64)> {
    remaining_later(conn, wave, order)?
        .first(conn)?
        .ok_or_else(|| crate::error::WmsError::NotFound(format!("wave {wave}")))
}

/// What `remaining` answered before the counters: the sums over the lines.
fn summed(conn: &Db, wave: i64, order: i64) -> Result<(i64, i64)> {
    Ok(conn.query_row(
        "SELECT COALESCE(SUM(quantity - picked), 0),
                COALESCE(SUM(CASE WHEN order_id = ?2 THEN quantity - picked ELSE 0 END), 0)
         FROM pick_lines
         WHERE wave_id = ?1
           AND order_id NOT IN (SELECT id FROM orders WHERE wave_id = ?1 AND status = 'cancelled')",
        params![wave, order],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}

/// Two waves: wave 1 with orders 1..=3 (lines of 5, 3 and 4 units, order 1
/// with two lines), wave 2 with order 4.
fn fill(conn: &Db) -> Result<()> {
    conn.execute_batch(
        "PRAGMA foreign_keys = OFF; -- the lines' items do not matter here
         INSERT INTO businesses (id, name, currency, timezone, created_at) VALUES (1, 'a', 'EUR', 'UTC', 'x');
         INSERT INTO warehouses (id, business_id, code, name, address, is_visible_sales, created_at)
         VALUES (1, 1, 'W', 'W', '{}', 0, 'x');
         INSERT INTO orders (id, business_id, warehouse_id, channel, external_ref, status, shipping_address,
                             payments, currency, total_cents, created_at, updated_at)
         VALUES (1, 1, 1, 'web', 'A', 'confirmed', '{}', '[]', 'EUR', 0, 'x', 'x'),
                (2, 1, 1, 'web', 'B', 'confirmed', '{}', '[]', 'EUR', 0, 'x', 'x'),
                (3, 1, 1, 'web', 'C', 'confirmed', '{}', '[]', 'EUR', 0, 'x', 'x'),
                (4, 1, 1, 'web', 'D', 'confirmed', '{}', '[]', 'EUR', 0, 'x', 'x');
         INSERT INTO waves (id, business_id, warehouse_id, status, created_at)
         VALUES (1, 1, 1, 'open', 'x'), (2, 1, 1, 'open', 'x');
         UPDATE orders SET wave_id = 1 WHERE id IN (1, 2, 3);
         UPDATE orders SET wave_id = 2 WHERE id = 4;
         INSERT INTO pick_lines (id, wave_id, order_id, item_id, sku, quantity, picked, seq)
         VALUES (1, 1, 1, 1, 'a', 5, 0, 0), (2, 1, 1, 2, 'b', 2, 1, 1), (3, 1, 2, 1, 'a', 3, 0, 2),
                (4, 1, 3, 3, 'c', 4, 0, 3), (5, 2, 4, 1, 'a', 6, 0, 0);",
    )?;
    Ok(())
}

fn agree(conn: &Db) -> Result<()> {
    for (wave, order) in [(1, 1), (1, 2), (1, 3), (2, 4)] {
        assert_eq!(
            remaining(conn, WaveId(wave), OrderId(order))?.0,
            summed(conn, wave, order)?.0,
            "wave {wave}"
        );
        let cancelled: bool = conn.query_row(
            "SELECT status = 'cancelled' FROM orders WHERE id = ?1",
            params![order],
            |r| r.get(0),
        )?;
        // A scan never answers for a cancelled order: its lines are not
        // offered.
        if !cancelled {
            assert_eq!(
                remaining(conn, WaveId(wave), OrderId(order))?,
                summed(conn, wave, order)?,
                "wave {wave}, order {order}"
            );
        }
    }
    Ok(())
}

fn status(conn: &Db, order: i64, status: &str) -> Result<()> {
    conn.execute(
        "UPDATE orders SET status = ?2, updated_at = 'y' WHERE id = ?1",
        depot_sql::params![order, status],
    )?;
    Ok(())
}

#[test]
fn counters_follow_picks_and_cancellations() -> Result<()> {
    let conn = crate::store::memory(u32::MAX)?;
    fill(&conn)?;
    agree(&conn)?;
    assert_eq!(remaining(&conn, WaveId(1), OrderId(1))?, (13, 6));
    add_picked(&conn, PickLineId(1), 2)?;
    add_picked(&conn, PickLineId(4), 1)?;
    agree(&conn)?;
    status(&conn, 2, "picking")?;
    status(&conn, 2, "cancelled")?;
    agree(&conn)?;
    assert_eq!(remaining(&conn, WaveId(1), OrderId(1))?, (7, 4));
    // Cancelled again (a replayed change) takes nothing more out.
    status(&conn, 2, "cancelled")?;
    add_picked(&conn, PickLineId(3), 1)?;
    agree(&conn)?;
    status(&conn, 2, "confirmed")?;
    agree(&conn)?;
    add_picked(&conn, PickLineId(5), 6)?;
    add_picked(&conn, PickLineId(2), 1)?;
    agree(&conn)?;
    assert_eq!(remaining(&conn, WaveId(2), OrderId(4))?, (0, 0));
    Ok(())
}

#[test]
fn the_migration_counts_waves_already_made() -> Result<()> {
    let conn = crate::store::memory(17)?;
    fill(&conn)?;
    conn.execute_batch(
        "UPDATE pick_lines SET picked = 2 WHERE id = 1;
         UPDATE orders SET status = 'cancelled' WHERE id = 3;",
    )?;
    crate::store::migrate(&conn)?;
    agree(&conn)?;
    assert_eq!(remaining(&conn, WaveId(1), OrderId(1))?.0, 7);
    status(&conn, 3, "confirmed")?;
    agree(&conn)?;
    Ok(())
}

/// A pick that would take a line's count beyond the ceiling (or below 0)
/// is refused before the counters move: only a pick from elsewhere could
/// carry one, a scan is checked against what is left.
#[test]
fn picked_counts_stay_within_the_ceiling() -> Result<()> {
    let conn = crate::store::memory(u32::MAX)?;
    fill(&conn)?;
    let max = depot_protocol::stock::MAX_ON_HAND;
    for q in [i64::MAX, i64::MIN, max + 1, -2] {
        match add_picked(&conn, PickLineId(2), q) {
            Err(crate::WmsError::Invalid { errors, .. }) => assert_eq!(errors[0].name, "quantity"),
            other => panic!("{q}: {other:?}"),
        }
    }
    agree(&conn)?;
    add_picked(&conn, PickLineId(2), max - 1)?;
    agree(&conn)?;
    Ok(())
}

/// The wave indexes of orders are partial (migration 045): the two
/// statements that read them still do, rather than the whole table.
#[test]
fn the_wave_queries_read_their_partial_indexes() -> Result<()> {
    let conn = crate::store::memory(u32::MAX)?;
    fill(&conn)?;
    for (stmt, index, args) in [
        (
            WAITING_ORDERS,
            "orders_unwaved",
            vec![
                depot_sql::Value::from(1),
                depot_sql::Value::from(1),
                depot_sql::Value::Null,
                depot_sql::Value::Null,
                depot_sql::Value::from(10),
            ],
        ),
        (
            CANCELLED_ORDERS,
            "orders_by_wave",
            vec![depot_sql::Value::from(1)],
        ),
    ] {
        let plan: Vec<String> = conn.query_map(
            &format!("EXPLAIN QUERY PLAN {stmt}"),
            &depot_sql::params_from_iter(&args),
            |r| r.get(3),
        )?;
        assert!(plan.iter().any(|p| p.contains(index)), "{index}: {plan:?}");
        let made: String = conn.query_value(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?1",
            params![index],
        )?;
        assert!(made.contains("WHERE"), "{index} is partial: {made}");
    }
    Ok(())
}
