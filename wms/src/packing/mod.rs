//! Packing: what went into the boxes must be exactly the order. A good pack
//! moves the order to `packed`, opens its shipment in the carrier's dispatch
//! run, and produces the packing slip; a bad one changes nothing.

mod checks;
#[cfg(test)]
mod tests;

use crate::carriers;
use crate::orders;
use crate::store::{self, orders as order_sql, picking, shipping as sql, tenants};
use crate::{Result, Wms, WmsError, scan};
use base64::Engine;
use depot_labels::{PackageInfo, PackingSlip, Party, SlipLine};
use depot_protocol::event::EventKind;
use depot_protocol::order::{Address, Order};
use depot_protocol::plural::counted;
use depot_protocol::printing::PrintJob;
use depot_protocol::shipping::{Milestone, PackRequest, PackResult, Shipment, TrackingEvent};
use depot_protocol::tenant::Caller;
use depot_protocol::{FieldError, ItemId, OrderStatus, now};
use depot_sql::Db;
use std::collections::BTreeMap;

/// Compares what was packed with what was ordered, per item: every
/// difference is named.
fn differences(order: &Order, packed: &BTreeMap<ItemId, (String, i64)>) -> Vec<FieldError> {
    let ordered: BTreeMap<ItemId, (String, i64)> = crate::orders::per_item(order)
        .into_iter()
        .map(|(item, units)| {
            let sku = order.lines.iter().find(|l| l.item_id == item);
            (
                item,
                (sku.map(|l| l.sku.clone()).unwrap_or_default(), units),
            )
        })
        .collect();
    let mut errors = Vec::new();
    for (item, (sku, want)) in &ordered {
        let got = packed.get(item).map_or(0, |(_, q)| *q);
        if got < *want {
            errors.push(FieldError::new(
                sku.clone(),
                format!("missing {} of {want}", want - got),
            ));
        } else if got > *want {
            errors.push(FieldError::new(
                sku.clone(),
                format!("{} more than the {want} ordered", got - want),
            ));
        }
    }
    for (item, (sku, got)) in packed {
        if !ordered.contains_key(item) {
            errors.push(FieldError::new(
                sku.clone(),
                format!("{got} packed but not in the order"),
            ));
        }
    }
    errors
}

pub(crate) fn party(a: &Address, fallback_name: &str) -> Party {
    Party {
        name: a.name.clone().unwrap_or_else(|| fallback_name.to_owned()),
        line1: a.line1.clone().unwrap_or_default(),
        line2: a.line2.clone(),
        city: a.city.clone().unwrap_or_default(),
        postal_code: a.postal_code.clone().unwrap_or_default(),
        region: a.region.clone(),
        country: a.country.clone().unwrap_or_default(),
    }
}

/// Everything the slip needs, read in the packing transaction.
struct Packed {
    shipment: Shipment,
    slip: PackingSlip,
}

/// Packs, calling `step` after each write with its name: the tests inject a
/// failure there to show that whatever step fails, nothing is left.
fn pack(
    conn: &Db,
    origin: &str,
    caller: &Caller,
    req: PackRequest,
    fleet: &carriers::OwnFleetSettings,
    step: &mut dyn FnMut(&'static str) -> Result<()>,
) -> Result<Packed> {
    let (order_id, items, packages) = req.parse().map_err(WmsError::invalid)?;
    let business = caller.business_id;
    let order = order_sql::order(conn, business, order_id, false)?
        .ok_or_else(|| WmsError::NotFound(format!("order {order_id} does not exist")))?;
    order
        .status
        .check_packable(order_id)
        .map_err(WmsError::conflict)?;
    let unpicked = picking::order_lines(conn, order_id)?
        .iter()
        .fold(0i64, |n, l| n.saturating_add(l.remaining));
    if unpicked > 0 {
        return Err(WmsError::conflict(format!(
            "order {order_id} still has {} to pick",
            counted(unpicked, "unit")
        )));
    }
    let mut packed: BTreeMap<ItemId, (String, i64)> = BTreeMap::new();
    for (i, it) in items.iter().enumerate() {
        let s = scan::resolve(conn, business, &it.code, &format!("items[{i}].code"))?;
        let q = it.quantity.or(s.count).unwrap_or(1);
        // Saturating: a sum beyond any order's is a difference all the same.
        let e = packed
            .entry(s.item_id)
            .or_insert_with(|| (s.sku.clone(), 0));
        e.1 = e.1.saturating_add(q);
    }
    let diff = differences(&order, &packed);
    if !diff.is_empty() {
        return Err(WmsError::refused(
            format_args!("packed items do not match order {order_id}"),
            diff,
        ));
    }
    let carrier = carriers::get(&order.carrier).ok_or_else(|| {
        WmsError::conflict(format!(
            "carrier {:?} of order {order_id} is not configured",
            order.carrier
        ))
    })?;
    let warehouse = tenants::warehouse(conn, business, order.warehouse_id)?
        .ok_or_else(|| WmsError::Internal("warehouse vanished".into()))?;
    let biz = tenants::business(conn, business)?
        .ok_or_else(|| WmsError::Internal("business vanished".into()))?;
    let from = party(&warehouse.address, &biz.name);
    let limits = fleet.limits(carrier, &order.service);
    let with_sscc = biz.gs1_company_prefix.is_some();
    let problems = checks::shipping_problems(&order, carrier, limits, &packages, &from, with_sscc);
    if !problems.is_empty() {
        return Err(WmsError::refused(
            format_args!("order {order_id} cannot be shipped as it stands"),
            problems,
        ));
    }
    let actor = caller.actor();
    if order.status == OrderStatus::Confirmed {
        orders::change_status(
            conn,
            origin,
            business,
            order_id,
            OrderStatus::Picking,
            Some("packed without a wave".into()),
            &actor,
        )?;
    }
    orders::change_status(
        conn,
        origin,
        business,
        order_id,
        OrderStatus::Packed,
        None,
        &actor,
    )?;
    step("status")?;
    let at = now();
    let run = sql::open_run(conn, business, order.warehouse_id, carrier.code(), &at)?;
    step("run")?;
    let id = sql::insert(
        conn,
        &sql::NewShipment {
            business,
            order: order_id,
            warehouse: order.warehouse_id,
            carrier: carrier.code(),
            service: &order.service,
            run,
            packed_at: &at,
        },
    )?;
    step("shipment")?;
    sql::set_tracking(
        conn,
        id,
        &carrier.tracking_number(id.0, rand::random::<u32>() % carriers::TRACKING_SECRET),
        carrier.estimate(&order.service, at.date_naive()),
    )?;
    step("tracking")?;
    for mut p in packages {
        p.sscc = crate::sscc::allocate(conn, origin, business)?.map(|s| s.to_string());
        sql::insert_package(conn, id, &p)?;
        step("package")?;
    }
    let event = TrackingEvent {
        milestone: Milestone::LabelCreated,
        description: Milestone::LabelCreated.describe().into(),
        city: warehouse.address.city.clone(),
        at,
    };
    sql::add_event(conn, id, &event, "depot", "label_created")?;
    step("milestone")?;
    let shipment = sql::shipment(conn, business, id)?
        .ok_or_else(|| WmsError::Internal("shipment vanished".into()))?;
    store::events::append(
        conn,
        origin,
        Some(business),
        EventKind::ShipmentPacked,
        &shipment,
    )?;
    step("event")?;
    let count = shipment.packages.len() as u32;
    let slip = PackingSlip {
        order_ref: order.external_ref.clone(),
        order_id: order_id.to_string(),
        channel: order.channel.clone(),
        ship_to: party(
            &order.shipping_address,
            order.buyer.name.as_deref().unwrap_or(""),
        ),
        lines: order
            .lines
            .iter()
            .map(|l| SlipLine {
                sku: l.sku.clone(),
                name: l.name.clone(),
                quantity: l.quantity,
            })
            .collect(),
        packages: shipment
            .packages
            .iter()
            .map(|p| package_info(p, count))
            .collect(),
        packed_at: at,
        warehouse: format!("{} {}", warehouse.code, warehouse.name),
    };
    Ok(Packed { shipment, slip })
}

/// The pack and its documents, in the caller's transaction: a slip that
/// cannot be rendered undoes the pack.
fn pack_and_render(
    conn: &Db,
    origin: &str,
    caller: &Caller,
    req: PackRequest,
    fleet: &carriers::OwnFleetSettings,
    step: &mut dyn FnMut(&'static str) -> Result<()>,
) -> Result<PackResult> {
    let packed = pack(conn, origin, caller, req, fleet, step)?;
    let zpl = depot_labels::packing_slip_zpl(&packed.slip);
    step("slip_zpl")?;
    let pdf = depot_labels::packing_slip_pdf(&packed.slip)
        .map_err(|e| WmsError::Internal(format!("packing slip: {e}")))?;
    step("slip_pdf")?;
    Ok(PackResult {
        shipment: packed.shipment,
        order_status: OrderStatus::Packed,
        packing_slip_zpl: zpl,
        packing_slip_pdf: base64::engine::general_purpose::STANDARD.encode(pdf),
    })
}

pub(crate) fn package_info(p: &depot_protocol::shipping::Package, count: u32) -> PackageInfo {
    PackageInfo {
        index: p.index,
        count,
        weight_g: p.weight_g,
        dimensions_mm: p.dimensions.map(|d| (d.length_mm, d.width_mm, d.height_mm)),
    }
}

impl Wms {
    /// Packs an order and queues its labels (ZPL, a label per package) on
    /// `printer`, in one write: a station's pack either prints or leaves
    /// no trace, never a packed order with no label on its way.
    pub async fn pack_and_print(
        &self,
        caller: Caller,
        req: PackRequest,
        printer: depot_protocol::PrinterId,
    ) -> Result<(PackResult, PrintJob)> {
        let origin = self.origin().to_owned();
        let fleet = self.own_fleet();
        self.write_for(caller.business_id, move |conn| {
            let packed = pack_and_render(conn, &origin, &caller, req, &fleet, &mut |_| Ok(()))?;
            let zpl = crate::shipping::zpl_labels(conn, caller.business_id, packed.shipment.id)?;
            let job = crate::printing::submit(conn, &origin, &caller, printer, zpl.as_bytes())
                .map_err(|e| match e {
                    WmsError::Invalid { message, errors } => WmsError::Conflict {
                        message: format!(
                            "the label cannot be printed, so nothing was packed: {message}"
                        ),
                        errors,
                    },
                    other => other,
                })?;
            Ok((packed, job))
        })
        .await
    }

    /// Packs an order, its slips rendered in the write: what the answer
    /// promises is made before the commit, or nothing is (and the answer,
    /// stored with an `Idempotency-Key` in the same transaction, is whole).
    pub async fn pack_order(&self, caller: Caller, req: PackRequest) -> Result<PackResult> {
        let origin = self.origin().to_owned();
        let fleet = self.own_fleet();
        self.write_for(caller.business_id, move |conn| {
            pack_and_render(conn, &origin, &caller, req, &fleet, &mut |_| Ok(()))
        })
        .await
    }
}
