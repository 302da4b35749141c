//! How the order list reads its page (migration 048): ids and versions
//! from an index alone, for the whole list and for a status, by offset
//! and after a cursor.

use super::{NEWEST_FIRST, OrderFilter, filtered};
use crate::error::Result;
use depot_protocol::{BusinessId, OrderStatus, Timestamp};
use depot_sql::Value;

/// SQLite's plan of the page's statement for `f`, after `cursor`'s keys
/// when given, as `EXPLAIN QUERY PLAN` details.
fn plan(f: &OrderFilter, cursor: Option<Vec<Value>>) -> Result<Vec<String>> {
    let conn = crate::store::two_businesses()?;
    let mut q = filtered(conn.dialect(), BusinessId(1), f);
    if let Some(keys) = cursor {
        q.after(NEWEST_FIRST, keys);
    }
    let stmt = q.page_sql("id, version", NEWEST_FIRST);
    let mut args = q.args.clone();
    args.extend([Value::from(50), Value::from(0)]);
    Ok(conn.query_map(
        &format!("EXPLAIN QUERY PLAN {stmt}"),
        &depot_sql::params_from_iter(&args),
        |r| r.get(3),
    )?)
}

#[test]
fn a_page_of_versions_is_read_from_the_index_alone() -> Result<()> {
    let day = |d: &str| -> Timestamp { d.parse().expect("timestamp") };
    let confirmed = OrderFilter {
        status: Some(OrderStatus::Confirmed),
        ..OrderFilter::default()
    };
    let last_days = OrderFilter {
        from: Some(day("2026-09-30T00:00:00Z")),
        to: Some(day("2026-11-29T00:00:00Z")),
        ..confirmed.clone()
    };
    let cursor = || Some(vec![Value::from("2026-11-01T10:00:00Z"), Value::from(77)]);
    for (f, after, index) in [
        (OrderFilter::default(), None, "orders_by_created"),
        (OrderFilter::default(), cursor(), "orders_by_created"),
        (confirmed.clone(), None, "orders_by_status"),
        (last_days.clone(), None, "orders_by_status"),
        (last_days, cursor(), "orders_by_status"),
    ] {
        let plan = plan(&f, after.clone())?;
        let covering = format!("USING COVERING INDEX {index}");
        assert!(
            plan.iter().any(|p| p.contains(&covering)),
            "{f:?} after {after:?}: {plan:?}"
        );
        // Nothing else: no table read, no sort.
        assert_eq!(plan.len(), 1, "{f:?} after {after:?}: {plan:?}");
    }
    Ok(())
}

#[test]
fn a_filter_without_an_index_of_versions_still_finds_its_rows_by_index() -> Result<()> {
    // The channel's index does not hold versions: its page reads each
    // row, but through the index, in its order, without a sort.
    let f = OrderFilter {
        channel: Some("φυσικό κατάστημα".into()),
        ..OrderFilter::default()
    };
    let plan = plan(&f, None)?;
    assert!(
        plan.iter()
            .any(|p| p.contains("USING INDEX orders_by_channel")),
        "{plan:?}"
    );
    assert_eq!(plan.len(), 1, "{plan:?}");
    Ok(())
}

/// SQLite's virtual machine steps to read the page of `f` after the
/// cursor at the `depth`-th order (newest first) of 3,000 confirmed ones,
/// one a minute.
fn steps_after(f: &OrderFilter, depth: i64) -> Result<i32> {
    let conn = crate::store::two_businesses()?;
    conn.execute_batch(
        "INSERT INTO warehouses (id, business_id, code, name, address, is_visible_sales, created_at)
             VALUES (1, 1, 'Κ', 'Κεντρική', '{}', 1, 'x');
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
         INSERT INTO orders (id, business_id, warehouse_id, channel, external_ref, status,
             shipping_address, payments, currency, total_cents, created_at, updated_at)
         SELECT i, 1, 1, 'ιστότοπος', 'Π-' || i, 'confirmed', '{}', '[]', 'EUR', 100,
             strftime('%Y-%m-%dT%H:%M:%SZ', '2026-10-01', '+' || i || ' minutes'), 'x'
         FROM n",
    )?;
    let (at, id): (String, i64) = conn.query_row(
        "SELECT created_at, id FROM orders ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ?1",
        depot_sql::params![depth],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let mut q = filtered(conn.dialect(), BusinessId(1), f);
    q.after(NEWEST_FIRST, vec![Value::from(at), Value::from(id)]);
    let sql = q.page_sql("id, version", NEWEST_FIRST);
    let mut args = q.args.clone();
    args.extend([Value::from(50), Value::from(0)]);
    let args = args.into_iter().map(|v| match v {
        Value::Integer(i) => rusqlite::types::Value::Integer(i),
        Value::Text(t) => rusqlite::types::Value::Text(t),
        other => panic!("not a list's argument: {other:?}"),
    });
    let sqlite = conn.as_sqlite().expect("sqlite");
    let mut stmt = sqlite.prepare(&sql)?;
    let rows = stmt
        .query_map(rusqlite::params_from_iter(args), |r| r.get::<_, i64>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    assert_eq!(rows.len(), 50, "{f:?} at {depth}");
    assert_eq!(
        rows[0],
        id - 1,
        "{f:?} at {depth}: the order after the cursor's"
    );
    Ok(stmt.get_status(rusqlite::StatementStatus::VmStep))
}

#[test]
fn a_page_after_a_cursor_starts_reading_at_the_cursor() -> Result<()> {
    let day = |d: &str| -> Timestamp { d.parse().expect("timestamp") };
    let in_range = OrderFilter {
        status: Some(OrderStatus::Confirmed),
        from: Some(day("2026-09-01T00:00:00Z")),
        to: Some(day("2026-12-01T00:00:00Z")),
        ..OrderFilter::default()
    };
    for f in [
        OrderFilter::default(),
        in_range.clone(),
        OrderFilter {
            from: in_range.from,
            to: in_range.to,
            ..OrderFilter::default()
        },
    ] {
        let (near, deep) = (steps_after(&f, 10)?, steps_after(&f, 2_900)?);
        // A walk from the range's start to the cursor would take some
        // thousands of steps more at 2,900 than at 10.
        assert!(
            deep < near + 200,
            "{f:?}: {near} steps near the top, {deep} deep"
        );
    }
    Ok(())
}
