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
    let mut q = filtered(&conn, BusinessId(1), f);
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
