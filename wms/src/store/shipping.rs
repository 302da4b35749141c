//! Shipments, packages, tracking events and dispatch runs.

use super::{maybe, parse_ts, ts};
use crate::error::Result;
use depot_protocol::catalog::Dimensions;
use depot_protocol::shipping::{
    DispatchRun, Milestone, Package, RunShipment, RunStatus, Shipment, ShipmentStatus,
    TrackingEvent,
};
use depot_protocol::{
    BusinessId, DispatchRunId, OrderId, Page, ShipmentId, Timestamp, WarehouseId,
};
use depot_sql::{Db, Row, params};

pub struct NewShipment<'a> {
    pub business: BusinessId,
    pub order: OrderId,
    pub warehouse: WarehouseId,
    pub carrier: &'a str,
    pub service: &'a str,
    pub run: DispatchRunId,
    pub packed_at: &'a Timestamp,
}

pub fn insert(conn: &Db, s: &NewShipment) -> Result<ShipmentId> {
    let id = super::ids::allocate(conn, "shipments")?;
    conn.execute("INSERT INTO shipments (id, business_id, order_id, warehouse_id, carrier, service, status, dispatch_run_id, packed_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'packed', ?7, ?8)", params![id, s.business.0, s.order.0, s.warehouse.0, s.carrier, s.service, s.run.0, ts(s.packed_at)])?;
    Ok(ShipmentId(id))
}

pub fn set_tracking(
    conn: &Db,
    id: ShipmentId,
    tracking: &str,
    estimate: chrono::NaiveDate,
) -> Result<()> {
    conn.execute(
        "UPDATE shipments SET tracking_number = ?2, estimated_delivery = ?3 WHERE id = ?1",
        params![id.0, tracking, estimate.to_string()],
    )?;
    Ok(())
}

pub fn set_estimate(conn: &Db, id: ShipmentId, estimate: chrono::NaiveDate) -> Result<()> {
    conn.execute(
        "UPDATE shipments SET estimated_delivery = ?2 WHERE id = ?1",
        params![id.0, estimate.to_string()],
    )?;
    Ok(())
}

/// Stores a package; a weight beyond what a package may weigh (1 to
/// `MAX_WEIGHT_G` grams, as packing checks it) is refused, so the run's
/// and shipment's sums of weights stay far inside `i64`.
pub fn insert_package(conn: &Db, shipment: ShipmentId, p: &Package) -> Result<()> {
    let max = depot_protocol::catalog::MAX_WEIGHT_G;
    if !(1..=max).contains(&p.weight_g) {
        return Err(crate::WmsError::invalid(vec![
            depot_protocol::FieldError::new(
                format!("packages[{}].weight_g", p.index.saturating_sub(1)),
                format!("must be between 1 and {max}"),
            ),
        ]));
    }
    conn.execute("INSERT INTO packages (shipment_id, idx, weight_g, length_mm, width_mm, height_mm, sscc, loaded_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", params![
        shipment.0,
        p.index,
        p.weight_g,
        p.dimensions.map(|d| d.length_mm),
        p.dimensions.map(|d| d.width_mm),
        p.dimensions.map(|d| d.height_mm),
        p.sscc,
        p.loaded_at.as_ref().map(ts)
    ])?;
    Ok(())
}

pub fn set_status(conn: &Db, id: ShipmentId, status: ShipmentStatus, at: &Timestamp) -> Result<()> {
    let sql = match status {
        ShipmentStatus::Packed => {
            "UPDATE shipments SET status = 'packed' WHERE id = ?1 AND CAST(?2 AS TEXT) IS NOT NULL"
        }
        ShipmentStatus::Dispatched => {
            "UPDATE shipments SET status = 'dispatched', dispatched_at = ?2 WHERE id = ?1"
        }
        ShipmentStatus::Delivered => {
            "UPDATE shipments SET status = 'delivered', delivered_at = ?2 WHERE id = ?1"
        }
    };
    conn.execute(sql, params![id.0, ts(at)])?;
    Ok(())
}

const COLS: &str = "id, business_id, order_id, warehouse_id, carrier, service, tracking_number, status, dispatch_run_id, \
                    estimated_delivery, packed_at, dispatched_at, delivered_at";

fn opt_ts(s: Option<String>) -> depot_sql::Result<Option<Timestamp>> {
    s.map(|s| parse_ts(&s)).transpose()
}

fn row(r: &Row) -> depot_sql::Result<Shipment> {
    let status: String = r.get(7)?;
    Ok(Shipment {
        id: ShipmentId(r.get(0)?),
        business_id: BusinessId(r.get(1)?),
        order_id: OrderId(r.get(2)?),
        warehouse_id: WarehouseId(r.get(3)?),
        carrier: r.get(4)?,
        service: r.get(5)?,
        tracking_number: r.get::<Option<String>>(6)?.unwrap_or_default(),
        status: ShipmentStatus::parse(&status).ok_or_else(|| {
            depot_sql::Error::conversion(7, format!("not a value this release knows: {status}"))
        })?,
        dispatch_run_id: r.get::<Option<i64>>(8)?.map(DispatchRunId),
        estimated_delivery: super::parse_date(r.get(9)?)?,
        packages: Vec::new(),
        packed_at: parse_ts(&r.get::<String>(10)?)?,
        dispatched_at: opt_ts(r.get(11)?)?,
        delivered_at: opt_ts(r.get(12)?)?,
    })
}

fn packages(conn: &Db, shipment: ShipmentId) -> Result<Vec<Package>> {
    let stmt = "SELECT idx, weight_g, length_mm, width_mm, height_mm, sscc, loaded_at FROM packages WHERE shipment_id = ?1 ORDER BY idx";
    let rows = conn.query_map(stmt, params![shipment.0], |r| {
        let dims: (Option<i64>, Option<i64>, Option<i64>) = (r.get(2)?, r.get(3)?, r.get(4)?);
        Ok(Package {
            index: r.get(0)?,
            weight_g: r.get(1)?,
            dimensions: match dims {
                (Some(length_mm), Some(width_mm), Some(height_mm)) => Some(Dimensions {
                    length_mm,
                    width_mm,
                    height_mm,
                }),
                _ => None,
            },
            sscc: r.get(5)?,
            loaded_at: opt_ts(r.get(6)?)?,
        })
    })?;
    Ok(rows)
}

/// A package of the business found by its SSCC: its shipment's id and its
/// index.
pub fn package_by_sscc(
    conn: &Db,
    business: BusinessId,
    sscc: &str,
) -> Result<Option<(ShipmentId, u32)>> {
    maybe(conn.query_row(
        "SELECT p.shipment_id, p.idx FROM packages p JOIN shipments s ON s.id = p.shipment_id
             WHERE p.sscc = ?1 AND s.business_id = ?2",
        params![sscc, business.0],
        |r| Ok((ShipmentId(r.get(0)?), r.get(1)?)),
    ))
}

/// Marks a package loaded; false when it already was.
pub fn set_loaded(conn: &Db, shipment: ShipmentId, index: u32, at: &Timestamp) -> Result<bool> {
    Ok(conn
        .execute("UPDATE packages SET loaded_at = ?3 WHERE shipment_id = ?1 AND idx = ?2 AND loaded_at IS NULL", params![shipment.0, index, ts(at)])?
        == 1)
}

/// The packages of a run not yet loaded: shipment, index, SSCC.
pub fn not_loaded(conn: &Db, run: DispatchRunId) -> Result<Vec<(ShipmentId, u32, Option<String>)>> {
    let stmt = "SELECT p.shipment_id, p.idx, p.sscc FROM packages p JOIN shipments s ON s.id = p.shipment_id
         WHERE s.dispatch_run_id = ?1 AND p.loaded_at IS NULL ORDER BY p.shipment_id, p.idx";
    let rows = conn.query_map(stmt, params![run.0], |r| {
        Ok((ShipmentId(r.get(0)?), r.get(1)?, r.get(2)?))
    })?;
    Ok(rows)
}

fn one(conn: &Db, sql: &str, args: &[&dyn depot_sql::ToSql]) -> Result<Option<Shipment>> {
    let found = maybe(conn.query_row(sql, args, row))?;
    let Some(mut s) = found else { return Ok(None) };
    s.packages = packages(conn, s.id)?;
    Ok(Some(s))
}

pub fn shipment(conn: &Db, business: BusinessId, id: ShipmentId) -> Result<Option<Shipment>> {
    one(
        conn,
        &format!("SELECT {COLS} FROM shipments WHERE business_id = ?1 AND id = ?2"),
        params![business.0, id.0],
    )
}

pub fn by_order(conn: &Db, business: BusinessId, order: OrderId) -> Result<Option<Shipment>> {
    one(
        conn,
        &format!("SELECT {COLS} FROM shipments WHERE business_id = ?1 AND order_id = ?2"),
        params![business.0, order.0],
    )
}

/// Across businesses: tracking numbers are global.
pub fn by_tracking(conn: &Db, tracking: &str) -> Result<Option<Shipment>> {
    one(
        conn,
        &format!("SELECT {COLS} FROM shipments WHERE tracking_number = ?1"),
        params![tracking],
    )
}

#[derive(Debug, Clone, Default)]
pub struct ShipmentFilter {
    pub status: Option<ShipmentStatus>,
    pub carrier: Option<String>,
    /// Dispatched at or after.
    pub from: Option<Timestamp>,
    /// Dispatched before.
    pub to: Option<Timestamp>,
}

pub fn list(
    conn: &Db,
    business: BusinessId,
    f: &ShipmentFilter,
    page: Page,
) -> Result<depot_protocol::Listed<Shipment>> {
    let mut q = super::ListQuery::new("FROM shipments WHERE business_id = ?", business);
    if let Some(s) = f.status {
        q.and("status = ?", [s.as_str().to_owned().into()]);
    }
    if let Some(c) = &f.carrier {
        q.and("carrier = ?", [c.clone().into()]);
    }
    if let Some(from) = &f.from {
        q.and("dispatched_at >= ?", [ts(from).into()]);
    }
    if let Some(to) = &f.to {
        q.and("dispatched_at < ?", [ts(to).into()]);
    }
    let mut listed = q.run(
        conn,
        "shipments",
        COLS,
        super::Order::desc(&[super::Key::Int("id")]),
        page,
        row,
    )?;
    for s in &mut listed.rows {
        s.packages = packages(conn, s.id)?;
    }
    Ok(listed)
}

/// Records a milestone; answers false when an event with this key was
/// already recorded (carriers deliver webhooks more than once).
pub fn add_event(
    conn: &Db,
    shipment: ShipmentId,
    e: &TrackingEvent,
    source: &str,
    dedup_key: &str,
) -> Result<bool> {
    let n = conn
        .execute("INSERT INTO tracking_events (shipment_id, milestone, description, city, at, source, dedup_key)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING", params![shipment.0, e.milestone.as_str(), e.description, e.city, ts(&e.at), source, dedup_key])?;
    Ok(n == 1)
}

/// Milestones in the order they happened.
pub fn events(conn: &Db, shipment: ShipmentId) -> Result<Vec<TrackingEvent>> {
    let stmt = "SELECT milestone, description, city, at FROM tracking_events WHERE shipment_id = ?1 ORDER BY at, id";
    let rows = conn.query_map(stmt, params![shipment.0], |r| {
        let m: String = r.get(0)?;
        Ok(TrackingEvent {
            milestone: Milestone::parse(&m).ok_or_else(|| {
                depot_sql::Error::conversion(0, format!("not a value this release knows: {m}"))
            })?,
            description: r.get(1)?,
            city: r.get(2)?,
            at: parse_ts(&r.get::<String>(3)?)?,
        })
    })?;
    Ok(rows)
}

/// The open run of a carrier at a warehouse, opened if there is none.
pub fn open_run(
    conn: &Db,
    business: BusinessId,
    warehouse: WarehouseId,
    carrier: &str,
    at: &Timestamp,
) -> Result<DispatchRunId> {
    let found = maybe(
        conn.query_row("SELECT id FROM dispatch_runs WHERE business_id = ?1 AND warehouse_id = ?2 AND carrier = ?3 AND status = 'open'", params![business.0, warehouse.0, carrier], |r| {
            Ok(DispatchRunId(r.get(0)?))
        }),
    )?;
    if let Some(id) = found {
        return Ok(id);
    }
    let id = super::ids::allocate(conn, "dispatch_runs")?;
    conn.execute(
        "INSERT INTO dispatch_runs (id, business_id, warehouse_id, carrier, status, created_at)
         VALUES (?1, ?2, ?3, ?4, 'open', ?5)",
        params![id, business.0, warehouse.0, carrier, ts(at)],
    )?;
    Ok(DispatchRunId(id))
}

pub fn close_run(conn: &Db, id: DispatchRunId, at: &Timestamp, manifest: &[u8]) -> Result<()> {
    conn.execute(
        "UPDATE dispatch_runs SET status = 'closed', closed_at = ?2, manifest = ?3 WHERE id = ?1",
        params![id.0, ts(at), manifest],
    )?;
    Ok(())
}

pub fn manifest(
    conn: &Db,
    business: BusinessId,
    id: DispatchRunId,
) -> Result<Option<Option<Vec<u8>>>> {
    maybe(conn.query_row(
        "SELECT manifest FROM dispatch_runs WHERE business_id = ?1 AND id = ?2",
        params![business.0, id.0],
        |r| r.get(0),
    ))
}

const RUN_COLS: &str = "id, business_id, warehouse_id, carrier, status, created_at, closed_at";

fn run_row(r: &Row) -> depot_sql::Result<DispatchRun> {
    let status: String = r.get(4)?;
    Ok(DispatchRun {
        id: DispatchRunId(r.get(0)?),
        business_id: BusinessId(r.get(1)?),
        warehouse_id: WarehouseId(r.get(2)?),
        carrier: r.get(3)?,
        status: RunStatus::parse(&status).ok_or_else(|| {
            depot_sql::Error::conversion(4, format!("not a value this release knows: {status}"))
        })?,
        shipments: Vec::new(),
        packages: 0,
        loaded: 0,
        weight_g: 0,
        created_at: parse_ts(&r.get::<String>(5)?)?,
        closed_at: opt_ts(r.get(6)?)?,
    })
}

fn fill_run(conn: &Db, run: &mut DispatchRun) -> Result<()> {
    let stmt = "SELECT s.id, s.order_id, COALESCE(s.tracking_number, ''), COUNT(p.idx), COALESCE(SUM(p.weight_g), 0),
                COUNT(p.loaded_at)
         FROM shipments s LEFT JOIN packages p ON p.shipment_id = s.id
         WHERE s.dispatch_run_id = ?1 GROUP BY s.id ORDER BY s.id";
    let rows = conn.query_map(stmt, params![run.id.0], |r| {
        Ok(RunShipment {
            shipment_id: ShipmentId(r.get(0)?),
            order_id: OrderId(r.get(1)?),
            tracking_number: r.get(2)?,
            packages: r.get(3)?,
            weight_g: r.get(4)?,
            loaded: r.get(5)?,
        })
    })?;
    run.shipments = rows;
    // Saturating: a run is as long as the carrier's day; its totals are
    // shown, never stored.
    run.packages = run
        .shipments
        .iter()
        .fold(0u32, |n, s| n.saturating_add(s.packages));
    run.weight_g = run
        .shipments
        .iter()
        .fold(0i64, |n, s| n.saturating_add(s.weight_g));
    run.loaded = run
        .shipments
        .iter()
        .fold(0u32, |n, s| n.saturating_add(s.loaded));
    Ok(())
}

pub fn run(conn: &Db, business: BusinessId, id: DispatchRunId) -> Result<Option<DispatchRun>> {
    let found = maybe(conn.query_row(
        &format!("SELECT {RUN_COLS} FROM dispatch_runs WHERE business_id = ?1 AND id = ?2"),
        params![business.0, id.0],
        run_row,
    ))?;
    let Some(mut r) = found else { return Ok(None) };
    fill_run(conn, &mut r)?;
    Ok(Some(r))
}

#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    pub status: Option<RunStatus>,
    pub carrier: Option<String>,
    pub warehouse_id: Option<WarehouseId>,
}

pub fn runs(
    conn: &Db,
    business: BusinessId,
    f: &RunFilter,
    page: Page,
) -> Result<depot_protocol::Listed<DispatchRun>> {
    let mut q = super::ListQuery::new("FROM dispatch_runs WHERE business_id = ?", business);
    if let Some(s) = f.status {
        q.and("status = ?", [s.as_str().to_owned().into()]);
    }
    if let Some(c) = &f.carrier {
        q.and("carrier = ?", [c.clone().into()]);
    }
    if let Some(w) = f.warehouse_id {
        q.and("warehouse_id = ?", [w.0.into()]);
    }
    let mut listed = q.run(
        conn,
        "dispatch_runs",
        RUN_COLS,
        super::Order::desc(&[super::Key::Int("id")]),
        page,
        run_row,
    )?;
    for r in &mut listed.rows {
        fill_run(conn, r)?;
    }
    Ok(listed)
}

/// A shipment made on another node, with its id, tracking number and
/// packages as they were there.
pub fn insert_replica(conn: &Db, s: &Shipment) -> Result<()> {
    conn.execute("INSERT INTO shipments (id, business_id, order_id, warehouse_id, carrier, service, tracking_number, status,
                                dispatch_run_id, estimated_delivery, packed_at, dispatched_at, delivered_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)", params![
        s.id.0,
        s.business_id.0,
        s.order_id.0,
        s.warehouse_id.0,
        s.carrier,
        s.service,
        Some(&s.tracking_number).filter(|t| !t.is_empty()),
        s.status.as_str(),
        s.dispatch_run_id.map(|r| r.0),
        s.estimated_delivery.map(|d| d.to_string()),
        ts(&s.packed_at),
        s.dispatched_at.as_ref().map(ts),
        s.delivered_at.as_ref().map(ts)
    ])?;
    for p in &s.packages {
        insert_package(conn, s.id, p)?;
    }
    Ok(())
}

/// A run another node opened, known here by its id (open until its
/// closing arrives).
pub fn ensure_run(
    conn: &Db,
    id: DispatchRunId,
    business: BusinessId,
    warehouse: WarehouseId,
    carrier: &str,
    at: &Timestamp,
) -> Result<()> {
    conn.execute(
        "INSERT INTO dispatch_runs (id, business_id, warehouse_id, carrier, status, created_at)
         VALUES (?1, ?2, ?3, ?4, 'open', ?5) ON CONFLICT DO NOTHING",
        params![id.0, business.0, warehouse.0, carrier, ts(at)],
    )?;
    Ok(())
}

/// Puts a shipment in a run (or takes it out, with `None`).
pub fn set_run(conn: &Db, shipment: ShipmentId, run: Option<DispatchRunId>) -> Result<()> {
    conn.execute(
        "UPDATE shipments SET dispatch_run_id = ?2 WHERE id = ?1",
        params![shipment.0, run.map(|r| r.0)],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Weights a run sums are bounded where they are stored, whichever node
    /// packed them.
    #[test]
    fn package_weights_are_bounded_where_stored() -> Result<()> {
        let conn = crate::store::memory(u32::MAX)?;
        conn.execute_batch("PRAGMA foreign_keys = OFF; -- the shipment does not matter here")?;
        let package = |weight_g| Package {
            index: 2,
            weight_g,
            dimensions: None,
            sscc: None,
            loaded_at: None,
        };
        let max = depot_protocol::catalog::MAX_WEIGHT_G;
        for w in [i64::MIN, -1, 0, max + 1, i64::MAX] {
            match insert_package(&conn, ShipmentId(1), &package(w)) {
                Err(crate::WmsError::Invalid { errors, .. }) => {
                    assert_eq!(errors[0].name, "packages[1].weight_g")
                }
                other => panic!("{w}: {other:?}"),
            }
        }
        insert_package(&conn, ShipmentId(1), &package(max))?;
        let n: i64 = conn.query_row("SELECT COUNT(*) FROM packages", params![], |r| r.get(0))?;
        assert_eq!(n, 1);
        Ok(())
    }
}
