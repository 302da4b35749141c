//! Warehouse work done on another node: waves and picks, receptions,
//! shipments, dispatch runs, and the printers the cloud configures. Each
//! record arrives whole, with the ids it was given where it was made (node
//! ranges keep them apart), so applying it is an insert, never a second
//! decision. The stock these operations move travels as its own
//! `stock.moved` events and is not booked again here.

use super::{Applied, ApplyError, already_here};
use crate::picking::PickScanned;
use crate::shipping::{hand_over, manifest};
use crate::store::{
    inbound as inbound_sql, orders as order_sql, picking as picking_sql, printing as printing_sql,
    shipping as shipping_sql, tenants,
};
use depot_protocol::event::RemoteEvent;
use depot_protocol::inbound::{InboundOrder, InboundStatus, ReceivedLine};
use depot_protocol::picking::Wave;
use depot_protocol::printing::Printer;
use depot_protocol::shipping::{
    DispatchRun, Milestone, RunStatus, Shipment, ShipmentStatus, TrackingEvent,
};
use depot_protocol::tenant::Warehouse;
use depot_protocol::{BusinessId, ShipmentId, WarehouseId};
use depot_sql::Db;
use serde::Deserialize;

fn reject<T>(reason: String) -> std::result::Result<T, ApplyError> {
    Err(ApplyError::Reject(reason))
}

fn business_of(e: &RemoteEvent) -> std::result::Result<BusinessId, ApplyError> {
    e.business_id
        .ok_or_else(|| ApplyError::Reject(format!("{} event names no business", e.kind)))
}

fn warehouse(
    conn: &Db,
    business: BusinessId,
    id: WarehouseId,
) -> std::result::Result<Warehouse, ApplyError> {
    tenants::warehouse(conn, business, id)?
        .ok_or_else(|| ApplyError::Reject(format!("warehouse {id} is not known here")))
}

/// What tells one wave from another: where, and whose orders.
fn wave_key(w: &Wave) -> String {
    let mut orders: Vec<i64> = w.pick_lists.iter().map(|p| p.order_id.0).collect();
    orders.sort_unstable();
    orders.dedup();
    let orders: Vec<String> = orders.iter().map(i64::to_string).collect();
    format!("warehouse {}, orders {}", w.warehouse_id, orders.join(", "))
}

pub(super) fn wave(conn: &Db, w: Wave) -> Applied {
    if let Some(here) = picking_sql::wave(conn, w.business_id, w.id)? {
        return already_here(&format!("wave {}", w.id), wave_key(&here), wave_key(&w));
    }
    for p in &w.pick_lists {
        if !order_sql::exists(conn, p.order_id)? {
            return reject(format!("order {} is not known here", p.order_id));
        }
        if let Some(other) = picking_sql::order_wave(conn, p.order_id)? {
            return reject(format!(
                "order {} is already in wave {other} here",
                p.order_id
            ));
        }
    }
    picking_sql::insert_replica(conn, &w)?;
    for p in &w.pick_lists {
        picking_sql::set_order_wave(conn, p.order_id, w.id)?;
    }
    Ok(None)
}

/// Books the units of a scan on the lines it took them from. Two nodes
/// picking one line at once both really picked: the units are in the
/// totes, so the picks stand and the over-pick is recorded.
pub(super) fn pick(conn: &Db, p: PickScanned) -> Applied {
    let wave = p.result.wave_id;
    let mut over = Vec::new();
    for t in &p.takes {
        let Some((line_wave, remaining)) = picking_sql::line_state(conn, t.line_id)? else {
            return reject(format!("pick line {} is not known here", t.line_id));
        };
        if line_wave != wave {
            return reject(format!(
                "pick line {} is not in wave {wave} here",
                t.line_id
            ));
        }
        if t.quantity > remaining {
            over.push(format!(
                "line {}: {} picked, {remaining} were left",
                t.line_id, t.quantity
            ));
        }
        picking_sql::add_picked(conn, t.line_id, t.quantity)?;
    }
    if picking_sql::wave_remaining(conn, wave)? <= 0 {
        picking_sql::complete_wave(conn, wave, &depot_protocol::now())?;
    }
    if over.is_empty() {
        Ok(None)
    } else {
        Ok(Some((
            format!("over-pick in wave {wave}: {}", over.join("; ")),
            "the picks stand".to_owned(),
        )))
    }
}

pub(super) fn shipment(conn: &Db, s: Shipment) -> Applied {
    if let Some(here) = shipping_sql::shipment(conn, s.business_id, s.id)? {
        let key = |s: &Shipment| format!("order {}, warehouse {}", s.order_id, s.warehouse_id);
        return already_here(&format!("shipment {}", s.id), key(&here), key(&s));
    }
    if let Some(other) = shipping_sql::by_order(conn, s.business_id, s.order_id)? {
        return reject(format!(
            "order {} already has shipment {} here",
            s.order_id, other.id
        ));
    }
    let w = warehouse(conn, s.business_id, s.warehouse_id)?;
    if let Some(run) = s.dispatch_run_id {
        shipping_sql::ensure_run(
            conn,
            run,
            s.business_id,
            s.warehouse_id,
            &s.carrier,
            &s.packed_at,
        )?;
    }
    shipping_sql::insert_replica(conn, &s)?;
    let label = TrackingEvent {
        milestone: Milestone::LabelCreated,
        description: Milestone::LabelCreated.describe().into(),
        city: w.address.city.clone(),
        at: s.packed_at,
    };
    shipping_sql::add_event(conn, s.id, &label, "depot", "label_created")?;
    Ok(None)
}

#[derive(Deserialize)]
pub(super) struct MilestoneReported {
    shipment_id: ShipmentId,
    event: TrackingEvent,
    source: Option<String>,
    dedup_key: Option<String>,
}

pub(super) fn milestone(conn: &Db, e: &RemoteEvent, m: MilestoneReported) -> Applied {
    let business = business_of(e)?;
    let Some(s) = shipping_sql::shipment(conn, business, m.shipment_id)? else {
        return reject(format!("shipment {} is not known here", m.shipment_id));
    };
    // The carrier's own key, so a webhook that reached both nodes is one
    // milestone.
    let key = m.dedup_key.unwrap_or_else(|| format!("event:{}", e.id));
    let source = m.source.as_deref().unwrap_or("depot");
    let recorded = shipping_sql::add_event(conn, s.id, &m.event, source, &key)?;
    if recorded
        && m.event.milestone == Milestone::Delivered
        && s.status == ShipmentStatus::Dispatched
    {
        shipping_sql::set_status(conn, s.id, ShipmentStatus::Delivered, &m.event.at)?;
    }
    Ok(None)
}

/// A run closed elsewhere: the shipments it handed over are dispatched
/// here too, and the manifest is rendered from them.
pub(super) fn run_closed(conn: &Db, r: DispatchRun) -> Applied {
    let Some(closed_at) = r.closed_at else {
        return reject(format!(
            "dispatch run {} arrived without a closing time",
            r.id
        ));
    };
    let w = warehouse(conn, r.business_id, r.warehouse_id)?;
    shipping_sql::ensure_run(
        conn,
        r.id,
        r.business_id,
        r.warehouse_id,
        &r.carrier,
        &r.created_at,
    )?;
    let here = shipping_sql::run(conn, r.business_id, r.id)?
        .ok_or_else(|| ApplyError::Reject(format!("dispatch run {} vanished", r.id)))?;
    if here.status == RunStatus::Closed {
        return Ok(None);
    }
    for rs in &here.shipments {
        if !r.shipments.iter().any(|s| s.shipment_id == rs.shipment_id) {
            // Left behind where the run was closed (its order cancelled).
            shipping_sql::set_run(conn, rs.shipment_id, None)?;
        }
    }
    for rs in &r.shipments {
        if shipping_sql::shipment(conn, r.business_id, rs.shipment_id)?.is_none() {
            return reject(format!("shipment {} is not known here", rs.shipment_id));
        }
        shipping_sql::set_run(conn, rs.shipment_id, Some(r.id))?;
        hand_over(conn, rs.shipment_id, &w, &closed_at)?;
    }
    let pdf = manifest(conn, r.business_id, r.id, &w, &closed_at)?;
    shipping_sql::close_run(conn, r.id, &closed_at, &pdf)?;
    Ok(None)
}

pub(super) fn inbound(conn: &Db, o: InboundOrder) -> Applied {
    if let Some(here) = inbound_sql::inbound(conn, o.business_id, o.id)? {
        let key =
            |o: &InboundOrder| format!("warehouse {}, reference {:?}", o.warehouse_id, o.reference);
        return already_here(&format!("inbound order {}", o.id), key(&here), key(&o));
    }
    inbound_sql::insert_replica(conn, &o)?;
    Ok(None)
}

#[derive(Deserialize)]
pub(super) struct Received {
    inbound_id: i64,
    received: Vec<ReceivedLine>,
}

pub(super) fn received(conn: &Db, e: &RemoteEvent, r: Received) -> Applied {
    let business = business_of(e)?;
    let Some(order) = inbound_sql::inbound(conn, business, r.inbound_id)? else {
        return reject(format!("inbound order {} is not known here", r.inbound_id));
    };
    for l in &r.received {
        let line_no = match inbound_sql::line_for_item(conn, order.id, l.item_id)? {
            Some(n) => n,
            None => inbound_sql::add_line(conn, order.id, l.item_id, 0)?,
        };
        inbound_sql::add_received(conn, order.id, line_no, l.accepted, l.rejected)?;
        inbound_sql::insert_reception(
            conn,
            &inbound_sql::Reception {
                business,
                inbound: order.id,
                item: l.item_id,
                scanned: &l.sku,
                accepted: l.accepted,
                rejected: l.rejected,
                reason: None,
                lot: l.lot.as_deref(),
                expiry: l.expiry,
                serial: l.serial.as_deref(),
                location: None,
                actor: &e.origin,
                at: &e.at,
            },
        )?;
    }
    let after = inbound_sql::inbound(conn, business, order.id)?
        .ok_or_else(|| ApplyError::Reject(format!("inbound order {} vanished", order.id)))?;
    let status = InboundStatus::from_lines(&after.lines);
    if status != after.status {
        inbound_sql::set_status(conn, order.id, status, &e.at)?;
    }
    Ok(None)
}

pub(super) fn printer(conn: &Db, p: Printer) -> Applied {
    printing_sql::upsert_replica(conn, &p)?;
    Ok(None)
}

#[derive(Deserialize)]
pub(super) struct BlockGranted {
    node: u32,
    prefix: String,
    first: i64,
    last: i64,
}

/// A block of SSCCs the cloud granted (to this node or another of the
/// business): this node numbers only in its own.
pub(super) fn sscc_block(conn: &Db, e: &RemoteEvent, g: BlockGranted) -> Applied {
    let business = business_of(e)?;
    let block = crate::store::sscc::Block {
        prefix: g.prefix,
        first: g.first,
        last: g.last,
        node: g.node,
    };
    crate::sscc::apply_grant(conn, business, &block)?;
    Ok(None)
}

#[derive(Deserialize)]
pub(super) struct Loaded {
    shipment_id: ShipmentId,
    package: u32,
    at: depot_protocol::Timestamp,
}

/// A package scanned onto its vehicle elsewhere: loaded here too (the
/// first scan's time stands).
pub(super) fn loaded(conn: &Db, e: &RemoteEvent, l: Loaded) -> Applied {
    let business = business_of(e)?;
    let Some(s) = shipping_sql::shipment(conn, business, l.shipment_id)? else {
        return reject(format!("shipment {} is not known here", l.shipment_id));
    };
    if !s.packages.iter().any(|p| p.index == l.package) {
        return reject(format!(
            "shipment {} has no package {}",
            l.shipment_id, l.package
        ));
    }
    shipping_sql::set_loaded(conn, s.id, l.package, &l.at)?;
    Ok(None)
}
