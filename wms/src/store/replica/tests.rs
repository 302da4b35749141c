//! The conflicts list against real SQLite: paged by cursor like every list,
//! its total kept by the triggers of migration 046.

use super::{ConflictFilter, conflict_page};
use crate::error::Result;
use depot_protocol::{BusinessId, Page};
use depot_sql::{Db, params};

const B: BusinessId = BusinessId(1);

/// Business 1 with 7 conflicts (kinds alternating, every third rejected),
/// business 2 with 2, and one of no business.
fn db() -> Result<Db> {
    let conn = crate::store::two_businesses()?;
    let rows = (1..=7)
        .map(|i| (Some(1), i))
        .chain([(Some(2), 8), (Some(2), 9), (None, 10)]);
    for (business, i) in rows {
        let kind = if i % 2 == 0 {
            "order.status_changed"
        } else {
            "stock.adjusted"
        };
        let resolution = if i % 3 == 0 { "rejected" } else { "cloud won" };
        conn.execute(
            "INSERT INTO sync_conflicts (business_id, event_id, origin, kind, reason, resolution, at)
             VALUES (?1, ?2, 'edge:e1', ?3, 'ως δοκιμή', ?4, '2026-11-28T00:00:00Z')",
            params![business, format!("ev-{i}"), kind, resolution],
        )?;
    }
    Ok(conn)
}

/// Every page of the filter, each read by the cursor of the one before:
/// the event ids in order, and the totals of the first page.
fn by_cursor(conn: &Db, f: &ConflictFilter, length: u64) -> Result<(Vec<String>, u64, u64)> {
    let first = conflict_page(
        conn,
        B,
        f,
        Page::parse(None, Some(length as i64)).unwrap_or_default(),
    )?;
    let (total, filtered) = (first.total, first.filtered);
    let mut ids: Vec<String> = first.rows.into_iter().map(|c| c.event_id).collect();
    let mut cursor = first.cursor;
    while let Some(c) = cursor.take() {
        let page = Page::parse_with_cursor(None, Some(length as i64), Some(c))
            .map_err(crate::WmsError::invalid)?;
        let next = conflict_page(conn, B, f, page)?;
        ids.extend(next.rows.into_iter().map(|c| c.event_id));
        cursor = next.cursor;
    }
    Ok((ids, total, filtered))
}

#[test]
fn conflicts_page_by_cursor_newest_first_within_the_business() -> Result<()> {
    let conn = db()?;
    let all = |ids: &[i32]| ids.iter().map(|i| format!("ev-{i}")).collect::<Vec<_>>();
    for length in [1, 2, 3, 7, 50] {
        let (ids, total, filtered) = by_cursor(&conn, &ConflictFilter::default(), length)?;
        assert_eq!(ids, all(&[7, 6, 5, 4, 3, 2, 1]), "pages of {length}");
        assert_eq!((total, filtered), (7, 7));
    }
    let rejected = ConflictFilter {
        kind: None,
        rejected: Some(true),
    };
    let (ids, total, filtered) = by_cursor(&conn, &rejected, 1)?;
    assert_eq!(ids, all(&[6, 3]));
    assert_eq!((total, filtered), (7, 2));
    let merged_adjustments = ConflictFilter {
        kind: Some("stock.adjusted".into()),
        rejected: Some(false),
    };
    let (ids, _, filtered) = by_cursor(&conn, &merged_adjustments, 2)?;
    assert_eq!(ids, all(&[7, 5, 1]));
    assert_eq!(filtered, 3);
    Ok(())
}

#[test]
fn a_conflict_recorded_between_pages_is_neither_repeated_nor_skipped() -> Result<()> {
    let conn = db()?;
    let f = ConflictFilter::default();
    let first = conflict_page(&conn, B, &f, Page::parse(None, Some(3)).unwrap_or_default())?;
    conn.execute(
        "INSERT INTO sync_conflicts (business_id, event_id, origin, kind, reason, resolution, at)
         VALUES (1, 'ev-new', 'edge:e1', 'stock.adjusted', 'late', 'rejected', '2026-11-28T00:00:01Z')",
        params![],
    )?;
    let page =
        Page::parse_with_cursor(None, Some(50), first.cursor).map_err(crate::WmsError::invalid)?;
    let rest = conflict_page(&conn, B, &f, page)?;
    let ids: Vec<_> = rest.rows.iter().map(|c| c.event_id.as_str()).collect();
    // The page after the first three starts after them: the new conflict
    // is newest, so it belongs before the cursor, not after it.
    assert_eq!(ids, ["ev-4", "ev-3", "ev-2", "ev-1"]);
    assert_eq!(rest.total, 8, "the trigger counted the new one");
    conn.execute(
        "DELETE FROM sync_conflicts WHERE event_id = 'ev-new'",
        params![],
    )?;
    let again = conflict_page(&conn, B, &f, Page::default())?;
    assert_eq!(again.total, 7, "and took it off again");
    Ok(())
}
