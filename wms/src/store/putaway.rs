//! Putaway tasks, and the locations as the putaway rules see them.

use super::{ListQuery, maybe, parse_date, parse_ts, ts};
use crate::error::Result;
use depot_protocol::location::LocationKind;
use depot_protocol::putaway::{Place, PutawayStatus, PutawayTask};
use depot_protocol::{BusinessId, ItemId, Page, PutawayTaskId, Timestamp, WarehouseId};
use depot_sql::{Db, Row, params};

const COLS: &str = "t.id, t.business_id, t.warehouse_id, t.item_id, i.sku, t.lot, t.expiry, \
                    t.from_location, t.suggested, t.quantity, t.put, t.status, t.reference, \
                    t.created_at, t.updated_at";

fn row(r: &Row) -> depot_sql::Result<PutawayTask> {
    let (quantity, put): (i64, i64) = (r.get(9)?, r.get(10)?);
    let status: String = r.get(11)?;
    Ok(PutawayTask {
        id: PutawayTaskId(r.get(0)?),
        business_id: BusinessId(r.get(1)?),
        warehouse_id: WarehouseId(r.get(2)?),
        item_id: ItemId(r.get(3)?),
        sku: r.get(4)?,
        lot: r.get(5)?,
        expiry: parse_date(r.get(6)?)?,
        from_location: r.get(7)?,
        suggested: r.get(8)?,
        quantity,
        put,
        remaining: quantity.saturating_sub(put),
        status: PutawayStatus::parse(&status).ok_or_else(|| {
            depot_sql::Error::conversion(11, format!("not a putaway status: {status}"))
        })?,
        reference: r.get(12)?,
        created_at: parse_ts(&r.get::<String>(13)?)?,
        updated_at: parse_ts(&r.get::<String>(14)?)?,
    })
}

/// A task to insert: what `PutawayTask` holds but its id and counts.
pub struct NewTask<'a> {
    pub business: BusinessId,
    pub warehouse: WarehouseId,
    pub item: ItemId,
    pub lot: Option<&'a str>,
    pub expiry: Option<chrono::NaiveDate>,
    pub from: &'a str,
    pub suggested: Option<&'a str>,
    pub quantity: i64,
    pub reference: Option<&'a str>,
    pub at: &'a Timestamp,
}

/// A new task, numbered in this node's range.
pub fn insert(conn: &Db, t: &NewTask) -> Result<PutawayTaskId> {
    super::count_within("quantity", t.quantity)?;
    let id = super::ids::allocate(conn, "putaway_tasks")?;
    conn.execute(
        "INSERT INTO putaway_tasks (id, business_id, warehouse_id, item_id, lot, expiry, from_location,
                                    suggested, quantity, put, status, reference, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 0, 'open', ?10, ?11, ?11)",
        params![
            id,
            t.business.0,
            t.warehouse.0,
            t.item.0,
            t.lot,
            t.expiry.map(|d| d.to_string()),
            t.from,
            t.suggested,
            t.quantity,
            t.reference,
            ts(t.at)
        ],
    )?;
    Ok(PutawayTaskId(id))
}

/// A task made on another node, with its id and counts as they were there.
pub fn insert_replica(conn: &Db, t: &PutawayTask) -> Result<()> {
    super::count_within("quantity", t.quantity)?;
    super::count_within("put", t.put)?;
    conn.execute(
        "INSERT INTO putaway_tasks (id, business_id, warehouse_id, item_id, lot, expiry, from_location,
                                    suggested, quantity, put, status, reference, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        params![
            t.id.0,
            t.business_id.0,
            t.warehouse_id.0,
            t.item_id.0,
            t.lot,
            t.expiry.map(|d| d.to_string()),
            t.from_location,
            t.suggested,
            t.quantity,
            t.put,
            t.status.as_str(),
            t.reference,
            ts(&t.created_at),
            ts(&t.updated_at)
        ],
    )?;
    Ok(())
}

/// Records what a scan put away: the units so far and the status.
pub fn set_put(
    conn: &Db,
    id: PutawayTaskId,
    put: i64,
    status: PutawayStatus,
    at: &Timestamp,
) -> Result<()> {
    super::count_within("put", put)?;
    conn.execute(
        "UPDATE putaway_tasks SET put = ?2, status = ?3, updated_at = ?4 WHERE id = ?1",
        params![id.0, put, status.as_str(), ts(at)],
    )?;
    Ok(())
}

pub fn task(conn: &Db, business: BusinessId, id: PutawayTaskId) -> Result<Option<PutawayTask>> {
    maybe(conn.query_row(
        &format!(
            "SELECT {COLS} FROM putaway_tasks t JOIN items i ON i.id = t.item_id
             WHERE t.id = ?1 AND t.business_id = ?2"
        ),
        params![id.0, business.0],
        row,
    ))
}

#[derive(Debug, Clone, Default)]
pub struct PutawayFilter {
    pub warehouse_id: Option<WarehouseId>,
    pub status: Option<PutawayStatus>,
}

/// A business's tasks, oldest first (the goods that waited longest).
pub fn list(
    conn: &Db,
    business: BusinessId,
    f: &PutawayFilter,
    page: Page,
) -> Result<depot_protocol::Listed<PutawayTask>> {
    let mut q = ListQuery::new(
        "FROM putaway_tasks t JOIN items i ON i.id = t.item_id WHERE t.business_id = ?",
        business,
    );
    if let Some(w) = f.warehouse_id {
        q.and("t.warehouse_id = ?", [w.0.into()]);
    }
    if let Some(s) = f.status {
        q.and("t.status = ?", [s.as_str().to_owned().into()]);
    }
    q.run(
        conn,
        "putaway_tasks",
        COLS,
        super::Order::asc(&[super::Key::Int("t.id")]),
        page,
        row,
    )
}

/// An item's volume per unit in cm³ (rounded up) and weight in grams, where
/// the catalogue knows them.
pub fn item_measures(conn: &Db, item: ItemId) -> Result<(Option<i64>, Option<i64>)> {
    let (l, w, h, g): (Option<i64>, Option<i64>, Option<i64>, Option<i64>) = conn.query_row(
        "SELECT length_mm, width_mm, height_mm, weight_g FROM items WHERE id = ?1",
        params![item.0],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?;
    let volume = match (l, w, h) {
        (Some(l), Some(w), Some(h)) => l
            .checked_mul(w)
            .and_then(|v| v.checked_mul(h))
            .map(|mm3| (mm3 + 999) / 1000),
        _ => None,
    };
    Ok((volume, g))
}

/// What a location row of [`places_for`] and [`place`] reads: the
/// location, then one of its bins (if any) with its item's measures.
type Held = (
    String,
    String,
    Option<i64>,
    [Option<i64>; 3],
    bool,
    Option<(i64, String, i64)>,
    [Option<i64>; 4],
);

fn held(r: &Row) -> depot_sql::Result<Held> {
    let bin = match r.get::<Option<i64>>(7)? {
        Some(item) => Some((item, r.get(8)?, r.get(9)?)),
        None => None,
    };
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        [r.get(3)?, r.get(4)?, r.get(5)?],
        r.get::<i64>(6)? != 0,
        bin,
        [r.get(10)?, r.get(11)?, r.get(12)?, r.get(13)?],
    ))
}

/// Locations with their bins (one row each, or one without a bin) and
/// the bins' items' measures, of warehouse `?1`.
const PLACES: &str =
    "SELECT l.code, l.kind, l.sequence, l.max_units, l.max_volume_cm3, l.max_weight_g,
                l.mixed_lots, b.item_id, b.lot, b.on_hand, i.length_mm, i.width_mm, i.height_mm,
                i.weight_g
         FROM locations l
         LEFT JOIN stock_bins b ON b.warehouse_id = l.warehouse_id AND b.location = l.code
                               AND b.on_hand <> 0
         LEFT JOIN items i ON i.id = b.item_id
         WHERE l.warehouse_id = ?1";

/// How many empty bulk locations, first in the walk, the rules look at:
/// enough to find one with room past a few too small, without reading a
/// large warehouse's every rack for each line received.
const EMPTY_CANDIDATES: i64 = 50;

/// The locations the putaway rules choose from for `item` in a warehouse:
/// its own (`own`), those holding any of it, and the first empty bulk
/// locations in the walk; each with what it holds.
pub fn places_for(
    conn: &Db,
    warehouse: WarehouseId,
    item: ItemId,
    own: Option<&str>,
) -> Result<Vec<Place>> {
    let rows = conn.query_map(
        &format!(
            "{PLACES}
           AND (l.code = ?3
                OR l.id IN (SELECT h.id FROM locations h JOIN stock_bins hb
                              ON hb.warehouse_id = h.warehouse_id AND hb.location = h.code
                            WHERE h.warehouse_id = ?1 AND hb.item_id = ?2 AND hb.on_hand <> 0)
                OR l.id IN (SELECT e.id FROM locations e
                            WHERE e.warehouse_id = ?1 AND e.kind = 'bulk'
                              AND NOT EXISTS (SELECT 1 FROM stock_bins eb
                                              WHERE eb.warehouse_id = e.warehouse_id
                                                AND eb.location = e.code AND eb.on_hand <> 0)
                            ORDER BY (CASE WHEN e.sequence IS NULL THEN 1 ELSE 0 END), e.sequence, e.code
                            LIMIT ?4))
         ORDER BY l.id"
        ),
        params![warehouse.0, item.0, own, EMPTY_CANDIDATES],
        held,
    )?;
    Ok(fold(rows, item))
}

/// One location of a warehouse as the rules see it, if there is one by
/// that code: where a putaway scan says the goods went.
pub fn place(conn: &Db, warehouse: WarehouseId, item: ItemId, code: &str) -> Result<Option<Place>> {
    let rows = conn.query_map(
        &format!("{PLACES} AND l.code = ?2"),
        params![warehouse.0, code],
        held,
    )?;
    Ok(fold(rows, item).pop())
}

/// Rows of locations and their bins, one place per location: its units,
/// the volume and weight of the items whose measures are known, and
/// `item`'s units per lot.
fn fold(rows: Vec<Held>, item: ItemId) -> Vec<Place> {
    let mut out: Vec<Place> = Vec::new();
    for (
        code,
        kind,
        sequence,
        [max_units, max_volume_cm3, max_weight_g],
        mixed_lots,
        bin,
        measures,
    ) in rows
    {
        if out.last().is_none_or(|p| p.code != code) {
            out.push(Place {
                code: code.clone(),
                kind: LocationKind::parse(&kind).unwrap_or(LocationKind::Quarantine),
                sequence,
                max_units,
                max_volume_cm3,
                max_weight_g,
                mixed_lots,
                units: 0,
                volume_cm3: 0,
                weight_g: 0,
                lots: Vec::new(),
            });
        }
        let (Some(p), Some((held_item, lot, n))) = (out.last_mut(), bin) else {
            continue;
        };
        p.units = p.units.saturating_add(n);
        if let [Some(l), Some(w), Some(h), _] = measures {
            let per = l.saturating_mul(w).saturating_mul(h).saturating_add(999) / 1000;
            p.volume_cm3 = p.volume_cm3.saturating_add(per.saturating_mul(n));
        }
        if let Some(g) = measures[3] {
            p.weight_g = p.weight_g.saturating_add(g.saturating_mul(n));
        }
        if held_item == item.0 {
            p.lots.push(((!lot.is_empty()).then_some(lot), n));
        }
    }
    out
}
