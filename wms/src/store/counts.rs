//! Cycle counts: their headers, locations and lines, and the locations a
//! count's scope names.

use super::{ListQuery, maybe, parse_ts, ts};
use crate::error::Result;
use depot_protocol::count::{
    Count, CountLine, CountLineStatus, CountPlace, CountPlaceStatus, CountStatus, CountSummary,
};
use depot_protocol::{BusinessId, CountId, ItemId, Page, Timestamp, WarehouseId};
use depot_sql::{Db, Row, params};

/// The header and its progress, from `counts c`.
const COLS: &str = "c.id, c.business_id, c.warehouse_id, c.status, c.blind, c.tolerance_units,
    c.tolerance_percent, c.scope, c.item_ids, c.reference, c.created_by, c.created_at,
    c.updated_at, c.approved_by, c.approved_at,
    (SELECT COUNT(*) FROM count_locations p WHERE p.count_id = c.id),
    (SELECT COUNT(*) FROM count_locations p WHERE p.count_id = c.id AND p.status = 'done'),
    (SELECT COUNT(*) FROM count_lines l WHERE l.count_id = c.id),
    (SELECT COUNT(*) FROM count_lines l WHERE l.count_id = c.id AND l.status = 'recount')";

fn parsed<T>(col: usize, s: &str, parse: fn(&str) -> Option<T>) -> depot_sql::Result<T> {
    parse(s).ok_or_else(|| depot_sql::Error::conversion(col, format!("unexpected value {s:?}")))
}

fn opt_ts(s: Option<String>) -> depot_sql::Result<Option<Timestamp>> {
    s.as_deref().map(parse_ts).transpose()
}

fn summary(r: &Row) -> depot_sql::Result<CountSummary> {
    let item_ids: String = r.get(8)?;
    Ok(CountSummary {
        id: CountId(r.get(0)?),
        business_id: BusinessId(r.get(1)?),
        warehouse_id: WarehouseId(r.get(2)?),
        status: parsed(3, &r.get::<String>(3)?, CountStatus::parse)?,
        blind: r.get::<i64>(4)? != 0,
        tolerance_units: r.get(5)?,
        tolerance_percent: r.get(6)?,
        scope: r.get(7)?,
        item_ids: serde_json::from_str(&item_ids)
            .map_err(|e| depot_sql::Error::conversion(8, e.to_string()))?,
        reference: r.get(9)?,
        created_by: r.get(10)?,
        created_at: parse_ts(&r.get::<String>(11)?)?,
        updated_at: parse_ts(&r.get::<String>(12)?)?,
        approved_by: r.get(13)?,
        approved_at: opt_ts(r.get(14)?)?,
        locations_total: r.get(15)?,
        locations_done: r.get(16)?,
        lines_total: r.get(17)?,
        lines_recount: r.get(18)?,
    })
}

const LINE_COLS: &str = "l.location, l.item_id, i.sku, l.lot, l.status, l.round, l.expected,
    l.counted, l.counted_by, l.counted_at, l.first_expected, l.first_counted, l.first_by";

fn line(r: &Row) -> depot_sql::Result<CountLine> {
    let lot: String = r.get(3)?;
    let (expected, counted): (Option<i64>, Option<i64>) = (r.get(6)?, r.get(7)?);
    Ok(CountLine {
        location: r.get(0)?,
        item_id: ItemId(r.get(1)?),
        sku: r.get(2)?,
        lot: (!lot.is_empty()).then_some(lot),
        status: parsed(4, &r.get::<String>(4)?, CountLineStatus::parse)?,
        round: r.get(5)?,
        expected,
        counted,
        variance: counted.zip(expected).and_then(|(c, e)| c.checked_sub(e)),
        counted_by: r.get(8)?,
        counted_at: opt_ts(r.get(9)?)?,
        first_expected: r.get(10)?,
        first_counted: r.get(11)?,
        first_by: r.get(12)?,
    })
}

fn place(r: &Row) -> depot_sql::Result<CountPlace> {
    Ok(CountPlace {
        location: r.get(0)?,
        status: parsed(1, &r.get::<String>(1)?, CountPlaceStatus::parse)?,
        closed_by: r.get(2)?,
    })
}

/// A count's header, if the business has it.
pub fn summary_of(conn: &Db, business: BusinessId, id: CountId) -> Result<Option<CountSummary>> {
    maybe(conn.query_row(
        &format!("SELECT {COLS} FROM counts c WHERE c.id = ?1 AND c.business_id = ?2"),
        params![id.0, business.0],
        summary,
    ))
}

/// A count with its locations and lines, in the order they are walked.
pub fn count(conn: &Db, business: BusinessId, id: CountId) -> Result<Option<Count>> {
    let Some(summary) = summary_of(conn, business, id)? else {
        return Ok(None);
    };
    let locations = conn.query_map(
        "SELECT p.location, p.status, p.closed_by FROM count_locations p
         LEFT JOIN locations w ON w.warehouse_id = ?2 AND w.code = p.location
         WHERE p.count_id = ?1
         ORDER BY (CASE WHEN w.sequence IS NULL THEN 1 ELSE 0 END), w.sequence, p.location",
        params![id.0, summary.warehouse_id.0],
        place,
    )?;
    let lines = lines_where(conn, id, None)?;
    Ok(Some(Count {
        summary,
        locations,
        lines,
    }))
}

/// A count's lines, all or those of one location.
pub fn lines_where(conn: &Db, id: CountId, location: Option<&str>) -> Result<Vec<CountLine>> {
    let from = format!("SELECT {LINE_COLS} FROM count_lines l JOIN items i ON i.id = l.item_id");
    let order = "ORDER BY l.location, i.sku, l.lot";
    Ok(match location {
        None => conn.query_map(
            &format!("{from} WHERE l.count_id = ?1 {order}"),
            params![id.0],
            line,
        )?,
        Some(code) => conn.query_map(
            &format!("{from} WHERE l.count_id = ?1 AND l.location = ?2 {order}"),
            params![id.0, code],
            line,
        )?,
    })
}

/// One location of a count.
pub fn place_of(conn: &Db, id: CountId, location: &str) -> Result<Option<CountPlace>> {
    maybe(conn.query_row(
        "SELECT location, status, closed_by FROM count_locations WHERE count_id = ?1 AND location = ?2",
        params![id.0, location],
        place,
    ))
}

#[derive(Debug, Clone, Default)]
pub struct CountFilter {
    pub warehouse_id: Option<WarehouseId>,
    pub status: Option<CountStatus>,
}

/// A business's counts, newest first.
pub fn list(
    conn: &Db,
    business: BusinessId,
    f: &CountFilter,
    page: Page,
) -> Result<depot_protocol::Listed<CountSummary>> {
    let mut q = ListQuery::new("FROM counts c WHERE c.business_id = ?", business);
    if let Some(w) = f.warehouse_id {
        q.and("c.warehouse_id = ?", [w.0.into()]);
    }
    if let Some(s) = f.status {
        q.and("c.status = ?", [s.as_str().to_owned().into()]);
    }
    q.run(
        conn,
        "counts",
        COLS,
        super::Order::desc(&[super::Key::Int("c.id")]),
        page,
        summary,
    )
}

/// A count's header as it is written: what `CountSummary` holds but its
/// progress figures.
pub fn insert(conn: &Db, c: &CountSummary) -> Result<()> {
    let item_ids = serde_json::to_string(&c.item_ids).unwrap_or_else(|_| "[]".into());
    conn.execute(
        "INSERT INTO counts (id, business_id, warehouse_id, status, blind, tolerance_units,
                             tolerance_percent, scope, item_ids, reference, created_by, created_at,
                             updated_at, approved_by, approved_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
        params![
            c.id.0,
            c.business_id.0,
            c.warehouse_id.0,
            c.status.as_str(),
            i64::from(c.blind),
            c.tolerance_units,
            c.tolerance_percent,
            c.scope,
            item_ids,
            c.reference,
            c.created_by,
            ts(&c.created_at),
            ts(&c.updated_at),
            c.approved_by,
            c.approved_at.as_ref().map(ts)
        ],
    )?;
    Ok(())
}

/// Writes a location of a count as it now stands.
pub fn put_place(conn: &Db, id: CountId, p: &CountPlace) -> Result<()> {
    conn.execute(
        "INSERT INTO count_locations (count_id, location, status, closed_by) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (count_id, location) DO UPDATE SET status = excluded.status,
                                                        closed_by = excluded.closed_by",
        params![id.0, p.location, p.status.as_str(), p.closed_by],
    )?;
    Ok(())
}

/// Writes a line of a count as it now stands.
pub fn put_line(conn: &Db, id: CountId, l: &CountLine) -> Result<()> {
    for (field, v) in [
        ("expected", l.expected),
        ("counted", l.counted),
        ("first_expected", l.first_expected),
        ("first_counted", l.first_counted),
    ] {
        let max = depot_protocol::stock::MAX_ON_HAND;
        if v.is_some_and(|v| !(-max..=max).contains(&v)) {
            return Err(crate::WmsError::invalid(vec![
                depot_protocol::FieldError::new(field, format!("must be between -{max} and {max}")),
            ]));
        }
    }
    conn.execute(
        "INSERT INTO count_lines (count_id, location, item_id, lot, status, round, expected, counted,
                                  counted_by, counted_at, first_expected, first_counted, first_by)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
         ON CONFLICT (count_id, location, item_id, lot) DO UPDATE SET
             status = excluded.status, round = excluded.round, expected = excluded.expected,
             counted = excluded.counted, counted_by = excluded.counted_by,
             counted_at = excluded.counted_at, first_expected = excluded.first_expected,
             first_counted = excluded.first_counted, first_by = excluded.first_by",
        params![
            id.0,
            l.location,
            l.item_id.0,
            l.lot.as_deref().unwrap_or(""),
            l.status.as_str(),
            l.round,
            l.expected,
            l.counted,
            l.counted_by,
            l.counted_at.as_ref().map(ts),
            l.first_expected,
            l.first_counted,
            l.first_by
        ],
    )?;
    Ok(())
}

/// Sets a count's status (and who approved it, when it was approved).
pub fn set_status(
    conn: &Db,
    id: CountId,
    status: CountStatus,
    by: Option<&str>,
    at: &Timestamp,
) -> Result<()> {
    let approved = status == CountStatus::Approved;
    conn.execute(
        "UPDATE counts SET status = ?2, updated_at = ?3,
                approved_by = CASE WHEN ?4 = 1 THEN ?5 ELSE approved_by END,
                approved_at = CASE WHEN ?4 = 1 THEN ?3 ELSE approved_at END
         WHERE id = ?1",
        params![id.0, status.as_str(), ts(at), i64::from(approved), by],
    )?;
    Ok(())
}

pub fn touch(conn: &Db, id: CountId, at: &Timestamp) -> Result<()> {
    conn.execute(
        "UPDATE counts SET updated_at = ?2 WHERE id = ?1",
        params![id.0, ts(at)],
    )?;
    Ok(())
}

/// Records when a count's locations were counted: the day an approval
/// booked them.
pub fn mark_counted(conn: &Db, id: CountId, warehouse: WarehouseId, at: &Timestamp) -> Result<()> {
    conn.execute(
        "UPDATE locations SET counted_at = ?3
         WHERE warehouse_id = ?2
           AND code IN (SELECT location FROM count_locations WHERE count_id = ?1)
           AND (counted_at IS NULL OR counted_at < ?3)",
        params![id.0, warehouse.0, ts(at)],
    )?;
    Ok(())
}

/// Locations of a warehouse in an open count, and which.
pub fn in_open_counts(conn: &Db, warehouse: WarehouseId) -> Result<Vec<(String, CountId)>> {
    Ok(conn.query_map(
        "SELECT p.location, c.id FROM count_locations p JOIN counts c ON c.id = p.count_id
         WHERE c.warehouse_id = ?1 AND c.status = 'open'",
        params![warehouse.0],
        |r| Ok((r.get(0)?, CountId(r.get(1)?))),
    )?)
}

const WALK: &str = "(CASE WHEN sequence IS NULL THEN 1 ELSE 0 END), sequence, code";

/// Whether a warehouse has a location by that code.
pub fn exists(conn: &Db, warehouse: WarehouseId, code: &str) -> Result<bool> {
    Ok(maybe(conn.query_row(
        "SELECT 1 FROM locations WHERE warehouse_id = ?1 AND code = ?2",
        params![warehouse.0, code],
        |r| r.get::<i64>(0),
    ))?
    .is_some())
}

/// The codes of a zone, in walking order, at most `limit + 1` (one more
/// tells the caller there are more than it takes).
pub fn zone(conn: &Db, warehouse: WarehouseId, zone: &str, limit: i64) -> Result<Vec<String>> {
    Ok(conn.query_map(
        &format!(
            "SELECT code FROM locations WHERE warehouse_id = ?1 AND zone = ?2 ORDER BY {WALK} LIMIT ?3"
        ),
        params![warehouse.0, zone, limit.saturating_add(1)],
        |r| r.get(0),
    )?)
}

/// Where items are held in a warehouse (and their own locations).
pub fn holding(conn: &Db, warehouse: WarehouseId, item: ItemId) -> Result<Vec<String>> {
    Ok(conn.query_map(
        "SELECT b.location FROM stock_bins b
         WHERE b.warehouse_id = ?1 AND b.item_id = ?2 AND b.on_hand <> 0 AND b.location <> ''
         UNION SELECT a.location FROM item_locations a WHERE a.warehouse_id = ?1 AND a.item_id = ?2",
        params![warehouse.0, item.0],
        |r| r.get(0),
    )?)
}

/// The locations not counted since `since` (never counted first, then
/// those counted longest ago, each in walking order), at most `limit`.
pub fn not_counted_since(
    conn: &Db,
    warehouse: WarehouseId,
    since: &Timestamp,
    limit: i64,
) -> Result<Vec<String>> {
    Ok(conn.query_map(
        &format!(
            "SELECT code FROM locations
             WHERE warehouse_id = ?1 AND (counted_at IS NULL OR counted_at < ?2)
               AND code NOT IN (SELECT p.location FROM count_locations p JOIN counts c
                                  ON c.id = p.count_id
                                WHERE c.warehouse_id = ?1 AND c.status = 'open')
             ORDER BY (CASE WHEN counted_at IS NULL THEN 0 ELSE 1 END), counted_at, {WALK}
             LIMIT ?3"
        ),
        params![warehouse.0, ts(since), limit],
        |r| r.get(0),
    )?)
}

/// What a location holds: (item, sku, lot) with on-hand other than 0.
pub fn held_at(
    conn: &Db,
    warehouse: WarehouseId,
    location: &str,
) -> Result<Vec<(ItemId, String, Option<String>)>> {
    Ok(conn.query_map(
        "SELECT b.item_id, i.sku, b.lot FROM stock_bins b JOIN items i ON i.id = b.item_id
         WHERE b.warehouse_id = ?1 AND b.location = ?2 AND b.on_hand <> 0
         ORDER BY i.sku, b.lot",
        params![warehouse.0, location],
        |r| {
            let lot: String = r.get(2)?;
            Ok((
                ItemId(r.get(0)?),
                r.get(1)?,
                (!lot.is_empty()).then_some(lot),
            ))
        },
    )?)
}
