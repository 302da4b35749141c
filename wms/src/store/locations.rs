//! Locations, and what each holds (from `stock_bins`).

use super::{ListQuery, maybe, parse_ts, ts};
use crate::error::Result;
use depot_protocol::location::{CheckedLocation, Location, LocationKind, LocationRecord};
use depot_protocol::{BusinessId, ItemId, LocationId, Page, Timestamp, WarehouseId};
use depot_sql::{Db, Row, params};

const COLS: &str = "l.id, l.business_id, l.warehouse_id, l.code, l.zone, l.kind, l.sequence, \
                    l.max_units, l.max_volume_cm3, l.max_weight_g, l.created_at, l.updated_at, \
                    l.mixed_lots";

/// Units and items a location holds, read beside its columns.
const HELD: &str = "COALESCE((SELECT SUM(b.on_hand) FROM stock_bins b
                              WHERE b.warehouse_id = l.warehouse_id AND b.location = l.code), 0),
                    (SELECT COUNT(DISTINCT b.item_id) FROM stock_bins b
                     WHERE b.warehouse_id = l.warehouse_id AND b.location = l.code AND b.on_hand <> 0)";

fn kind(s: String, col: usize) -> depot_sql::Result<LocationKind> {
    LocationKind::parse(&s).ok_or_else(|| {
        depot_sql::Error::conversion(col, format!("not a location type this release knows: {s}"))
    })
}

fn record(r: &Row) -> depot_sql::Result<LocationRecord> {
    Ok(LocationRecord {
        id: LocationId(r.get(0)?),
        business_id: BusinessId(r.get(1)?),
        warehouse_id: WarehouseId(r.get(2)?),
        code: r.get(3)?,
        zone: r.get(4)?,
        kind: kind(r.get(5)?, 5)?,
        sequence: r.get(6)?,
        max_units: r.get(7)?,
        max_volume_cm3: r.get(8)?,
        max_weight_g: r.get(9)?,
        created_at: parse_ts(&r.get::<String>(10)?)?,
        updated_at: parse_ts(&r.get::<String>(11)?)?,
        mixed_lots: r.get::<i64>(12)? != 0,
    })
}

fn with_stock(r: &Row) -> depot_sql::Result<Location> {
    Ok(Location {
        record: record(r)?,
        on_hand: r.get(13)?,
        items: r.get(14)?,
    })
}

/// A new location, numbered in this node's range.
pub fn insert(
    conn: &Db,
    business: BusinessId,
    l: &CheckedLocation,
    at: &Timestamp,
) -> Result<LocationId> {
    let id = LocationId(super::ids::allocate(conn, "locations")?);
    insert_row(conn, id, business, l, at, at)?;
    Ok(id)
}

fn insert_row(
    conn: &Db,
    id: LocationId,
    business: BusinessId,
    l: &CheckedLocation,
    created: &Timestamp,
    updated: &Timestamp,
) -> Result<()> {
    conn.execute(
        "INSERT INTO locations (id, business_id, warehouse_id, code, zone, kind, sequence,
                                max_units, max_volume_cm3, max_weight_g, created_at, updated_at,
                                mixed_lots)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        params![
            id.0,
            business.0,
            l.warehouse_id.0,
            l.code,
            l.zone,
            l.kind.as_str(),
            l.sequence,
            l.max_units,
            l.max_volume_cm3,
            l.max_weight_g,
            ts(created),
            ts(updated),
            i64::from(l.mixed_lots)
        ],
    )?;
    Ok(())
}

/// What may change of a location: all but its warehouse and code, which
/// `l` must repeat (a location never moves or changes its code). Answers
/// whether there was such a location.
pub fn update(conn: &Db, id: LocationId, l: &CheckedLocation, at: &Timestamp) -> Result<bool> {
    let changed = conn.execute(
        "UPDATE locations SET zone = ?2, kind = ?3, sequence = ?4, max_units = ?5,
                              max_volume_cm3 = ?6, max_weight_g = ?7, updated_at = ?8,
                              mixed_lots = ?9
         WHERE id = ?1 AND warehouse_id = ?10 AND code = ?11",
        params![
            id.0,
            l.zone,
            l.kind.as_str(),
            l.sequence,
            l.max_units,
            l.max_volume_cm3,
            l.max_weight_g,
            ts(at),
            i64::from(l.mixed_lots),
            l.warehouse_id.0,
            l.code
        ],
    )?;
    Ok(changed > 0)
}

/// A location made or edited on another node, as it was there. Its code
/// taken here by another location is a conflict (the unique key refuses
/// it), and so is a record that would move to another warehouse or code.
pub fn save_replica(conn: &Db, l: &LocationRecord) -> Result<()> {
    let fields = CheckedLocation::from(l);
    if !update(conn, l.id, &fields, &l.updated_at)? {
        insert_row(
            conn,
            l.id,
            l.business_id,
            &fields,
            &l.created_at,
            &l.updated_at,
        )?;
    }
    Ok(())
}

/// One location of a business, with what it holds.
pub fn get(conn: &Db, business: BusinessId, id: LocationId) -> Result<Option<Location>> {
    maybe(conn.query_row(
        &format!("SELECT {COLS}, {HELD} FROM locations l WHERE l.id = ?1 AND l.business_id = ?2"),
        params![id.0, business.0],
        with_stock,
    ))
}

/// The location of a warehouse with this code.
pub fn by_code(conn: &Db, warehouse: WarehouseId, code: &str) -> Result<Option<LocationRecord>> {
    maybe(conn.query_row(
        &format!("SELECT {COLS} FROM locations l WHERE l.warehouse_id = ?1 AND l.code = ?2"),
        params![warehouse.0, code],
        record,
    ))
}

/// Filters of the location list.
#[derive(Debug, Clone, Default)]
pub struct LocationFilter {
    pub warehouse_id: Option<WarehouseId>,
    pub zone: Option<String>,
    pub kind: Option<LocationKind>,
    /// `Some(true)`: only locations holding stock; `Some(false)`: only
    /// empty ones.
    pub occupied: Option<bool>,
}

/// A business's locations in walking order (those without a place in it
/// last, by code), with what each holds.
pub fn list(
    conn: &Db,
    business: BusinessId,
    f: &LocationFilter,
    page: Page,
) -> Result<depot_protocol::Listed<Location>> {
    let mut q = ListQuery::new("FROM locations l WHERE l.business_id = ?", business);
    if let Some(w) = f.warehouse_id {
        q.and("l.warehouse_id = ?", [w.0.into()]);
    }
    if let Some(z) = &f.zone {
        q.and("l.zone = ?", [z.clone().into()]);
    }
    if let Some(k) = f.kind {
        q.and("l.kind = ?", [k.as_str().to_owned().into()]);
    }
    let held = "EXISTS (SELECT 1 FROM stock_bins b WHERE b.warehouse_id = l.warehouse_id
                        AND b.location = l.code AND b.on_hand <> 0)";
    match f.occupied {
        Some(true) => q.and(held, []),
        Some(false) => q.and(&format!("NOT {held}"), []),
        None => {}
    }
    q.run(
        conn,
        "locations",
        &format!("{COLS}, {HELD}"),
        super::Order::asc(&[
            super::Key::Int("l.warehouse_id"),
            super::Key::Int("(CASE WHEN l.sequence IS NULL THEN 1 ELSE 0 END)"),
            super::Key::Int("COALESCE(l.sequence, 0)"),
            super::Key::Text("l.code"),
            super::Key::Int("l.id"),
        ]),
        page,
        with_stock,
    )
}

/// The codes items are assigned to (their pick location in a warehouse)
/// that no location record has yet, with the business: what the cloud
/// makes records of as it opens, and as items name new ones.
pub fn unrecorded_assignments(
    conn: &Db,
    item: Option<ItemId>,
) -> Result<Vec<(BusinessId, WarehouseId, String)>> {
    let stmt = "SELECT DISTINCT w.business_id, il.warehouse_id, il.location
                FROM item_locations il JOIN warehouses w ON w.id = il.warehouse_id
                WHERE (il.item_id = ?1 OR ?1 IS NULL)
                  AND NOT EXISTS (SELECT 1 FROM locations l
                                  WHERE l.warehouse_id = il.warehouse_id AND l.code = il.location)
                ORDER BY il.warehouse_id, il.location";
    Ok(conn.query_map(stmt, params![item.map(|i| i.0)], |r| {
        Ok((BusinessId(r.get(0)?), WarehouseId(r.get(1)?), r.get(2)?))
    })?)
}

/// The location code an item is assigned to in a warehouse (its pick
/// face), if any.
pub fn assigned(conn: &Db, item: ItemId, warehouse: WarehouseId) -> Result<Option<String>> {
    Ok(assigned_later(conn, item, warehouse)?
        .first(conn)?
        .flatten())
}

/// [`assigned`], sent with the reads around it ([`Db::query_later`]).
pub fn assigned_later(
    conn: &Db,
    item: ItemId,
    warehouse: WarehouseId,
) -> Result<depot_sql::Later<Option<String>>> {
    Ok(conn.query_later(
        "SELECT location FROM item_locations WHERE item_id = ?1 AND warehouse_id = ?2",
        params![item.0, warehouse.0],
        |r| r.get(0),
    )?)
}

/// The first location of a type in a warehouse, in walking order.
pub fn first_of_kind(
    conn: &Db,
    warehouse: WarehouseId,
    kind: LocationKind,
) -> Result<Option<String>> {
    maybe(conn.query_row(
        "SELECT code FROM locations WHERE warehouse_id = ?1 AND kind = ?2
         ORDER BY (CASE WHEN sequence IS NULL THEN 1 ELSE 0 END), sequence, code LIMIT 1",
        params![warehouse.0, kind.as_str()],
        |r| r.get(0),
    ))
}

/// On-hand of an item at one location of a warehouse, all lots together.
pub fn item_at(conn: &Db, item: ItemId, warehouse: WarehouseId, code: &str) -> Result<i64> {
    Ok(conn.query_value(
        "SELECT COALESCE(SUM(on_hand), 0) FROM stock_bins
         WHERE item_id = ?1 AND warehouse_id = ?2 AND location = ?3",
        params![item.0, warehouse.0, code],
    )?)
}

/// The place of each location of a warehouse that has one in the walking
/// order, by code.
pub fn walk_sequences(
    conn: &Db,
    warehouse: WarehouseId,
) -> Result<std::collections::HashMap<String, i64>> {
    let rows: Vec<(String, i64)> = conn.query_map(
        "SELECT code, sequence FROM locations WHERE warehouse_id = ?1 AND sequence IS NOT NULL",
        params![warehouse.0],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(rows.into_iter().collect())
}

/// Where a line walks to, as a key to sort by: locations with a place in
/// the walking order by it, then the others by code, then lines with no
/// location at all.
pub fn walk_key(
    sequences: &std::collections::HashMap<String, i64>,
    location: Option<&str>,
) -> (u8, i64, String) {
    match location {
        Some(code) => match sequences.get(code) {
            Some(seq) => (0, *seq, code.to_owned()),
            None => (1, 0, code.to_owned()),
        },
        None => (2, 0, String::new()),
    }
}

/// The pick location holding the most of an item's lot (`""`: no lot) in
/// a warehouse, first in the walk among equals.
pub fn pick_face(
    conn: &Db,
    item: ItemId,
    warehouse: WarehouseId,
    lot: &str,
) -> Result<Option<String>> {
    maybe(conn.query_row(
        "SELECT b.location FROM stock_bins b
         JOIN locations l ON l.warehouse_id = b.warehouse_id AND l.code = b.location
         WHERE b.item_id = ?1 AND b.warehouse_id = ?2 AND b.lot = ?3 AND l.kind = 'pick'
           AND b.on_hand > 0
         ORDER BY b.on_hand DESC, (CASE WHEN l.sequence IS NULL THEN 1 ELSE 0 END), l.sequence, l.code
         LIMIT 1",
        params![item.0, warehouse.0, lot],
        |r| r.get(0),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database as a release before locations left it: an item with its
    /// own bin in one warehouse, movements that named a location, none, or
    /// a lot, and one of an item with no bin.
    fn before_locations() -> Result<Db> {
        let db = super::super::memory(35)?;
        db.execute_batch(
            "INSERT INTO businesses (id, name, currency, timezone, created_at)
                 VALUES (1, 'Ωμέγα', 'EUR', 'Europe/Athens', '2026-01-01T00:00:00Z');
             INSERT INTO warehouses (id, business_id, code, name, address, is_visible_sales, created_at)
                 VALUES (1, 1, 'ATH', 'Αθήνα', '', 1, '2026-01-01T00:00:00Z'),
                        (2, 1, 'SKG', 'Θεσσαλονίκη', '', 1, '2026-01-01T00:00:00Z');
             INSERT INTO items (id, business_id, sku, name, created_at, updated_at)
                 VALUES (1, 1, 'OLIVE', 'Ελιές', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'),
                        (2, 1, 'FETA', 'Φέτα', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z');
             INSERT INTO item_locations (item_id, warehouse_id, location) VALUES (1, 1, 'Α-01');
             INSERT INTO stock_movements (id, business_id, item_id, warehouse_id, location, delta, reason, actor, origin, at, lot)
                 VALUES ('m1', 1, 1, 1, NULL, 10, 'received', 't', 'cloud', '2026-01-01T00:00:00Z', NULL),
                        ('m2', 1, 1, 1, 'B-07', 4, 'received', 't', 'cloud', '2026-01-01T00:00:00Z', NULL),
                        ('m3', 1, 1, 1, NULL, -3, 'shipped', 't', 'cloud', '2026-01-01T00:00:00Z', NULL),
                        ('m4', 1, 1, 1, NULL, 6, 'received', 't', 'cloud', '2026-01-01T00:00:00Z', 'L-9'),
                        ('m5', 1, 1, 2, NULL, 2, 'received', 't', 'cloud', '2026-01-01T00:00:00Z', NULL),
                        ('m6', 1, 2, 1, NULL, 5, 'received', 't', 'cloud', '2026-01-01T00:00:00Z', NULL);",
        )?;
        Ok(db)
    }

    /// Item, warehouse, location, lot, on-hand.
    type Bin = (i64, i64, String, String, i64);

    fn bins(db: &Db) -> Result<Vec<Bin>> {
        Ok(db.query_map(
            "SELECT item_id, warehouse_id, location, lot, on_hand FROM stock_bins
             ORDER BY item_id, warehouse_id, location, lot",
            params![],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )?)
    }

    #[test]
    fn stock_before_locations_is_at_the_items_own_bin_or_where_movements_said() -> Result<()> {
        let db = before_locations()?;
        depot_sql::migrate::run_to(&db, super::super::MIGRATIONS, 36)?;
        let own = |item: i64, w: i64, location: &str, lot: &str, n: i64| {
            (item, w, location.to_owned(), lot.to_owned(), n)
        };
        assert_eq!(
            bins(&db)?,
            [
                own(1, 1, "B-07", "", 4),
                own(1, 1, "Α-01", "", 7),
                own(1, 1, "Α-01", "L-9", 6),
                // No bin of its own in this warehouse: stock without a place.
                own(1, 2, "", "", 2),
                own(2, 1, "", "", 5),
            ]
        );
        // The movements say where they were, so the books agree per bin
        // (read with today's schema).
        depot_sql::migrate::run_to(&db, super::super::MIGRATIONS, u32::MAX)?;
        assert!(super::super::ledger::inconsistencies(&db)?.is_empty());
        Ok(())
    }

    #[test]
    fn the_items_own_bins_become_pick_locations_once() -> Result<()> {
        let db = before_locations()?;
        depot_sql::migrate::run_to(&db, super::super::MIGRATIONS, u32::MAX)?;
        super::super::ids::claim(&db, 0, "cloud")?;
        assert_eq!(crate::locations::record_assignments(&db, "cloud", None)?, 1);
        assert_eq!(crate::locations::record_assignments(&db, "cloud", None)?, 0);
        let made = by_code(&db, WarehouseId(1), "Α-01")?.expect("recorded");
        assert_eq!(made.kind, LocationKind::Pick);
        assert_eq!(made.business_id, BusinessId(1));
        let logged: i64 = db.query_value(
            "SELECT COUNT(*) FROM events WHERE kind = 'location.saved'",
            params![],
        )?;
        assert_eq!(logged, 1);
        // What it holds is what the movements put there.
        let depot_protocol::Listed { rows, total, .. } = list(
            &db,
            BusinessId(1),
            &LocationFilter::default(),
            Page::parse(None, None).map_err(crate::WmsError::invalid)?,
        )?;
        assert_eq!(total, 1);
        assert_eq!((rows[0].on_hand, rows[0].items), (13, 1));
        Ok(())
    }
}
