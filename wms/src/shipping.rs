//! Shipments after packing: labels, public tracking, carrier events and
//! dispatch runs.

use crate::carriers;
use crate::orders;
use crate::packing::{package_info, party};
use crate::store::{self, orders as order_sql, shipping as sql, tenants};
use crate::{Result, Wms, WmsError};
use depot_labels::{Manifest, ManifestRow, ShippingLabel};
use depot_protocol::event::EventKind;
use depot_protocol::shipping::{
    CarrierEvent, DispatchRun, LabelFormat, Milestone, RunStatus, Shipment, ShipmentStatus,
    Tracking, TrackingEvent,
};
use depot_protocol::tenant::{Caller, Warehouse};
use depot_protocol::{BusinessId, DispatchRunId, OrderStatus, Page, ShipmentId, Timestamp, now};
use depot_sql::Db;

pub use sql::{RunFilter, ShipmentFilter};

fn load(conn: &Db, business: BusinessId, id: ShipmentId) -> Result<Shipment> {
    sql::shipment(conn, business, id)?
        .ok_or_else(|| WmsError::NotFound(format!("shipment {id} does not exist")))
}

/// A rendered label and its media type.
pub struct Label {
    pub content_type: &'static str,
    pub bytes: Vec<u8>,
}

fn labels(conn: &Db, business: BusinessId, id: ShipmentId) -> Result<Vec<ShippingLabel>> {
    let s = load(conn, business, id)?;
    let order = order_sql::order(conn, business, s.order_id, false)?
        .ok_or_else(|| WmsError::Internal("order vanished".into()))?;
    let w = tenants::warehouse(conn, business, s.warehouse_id)?
        .ok_or_else(|| WmsError::Internal("warehouse vanished".into()))?;
    let biz = tenants::business(conn, business)?
        .ok_or_else(|| WmsError::Internal("business vanished".into()))?;
    let known = carriers::get(&s.carrier);
    let carrier = known.map_or(s.carrier.clone(), |c| c.name().to_owned());
    let count = s.packages.len() as u32;
    let shipped_on = s.dispatched_at.unwrap_or(s.packed_at).date_naive();
    Ok(s.packages
        .iter()
        .map(|p| ShippingLabel {
            carrier: carrier.clone(),
            service: s.service.clone(),
            tracking_number: s.tracking_number.clone(),
            piece_number: carriers::piece_of(&s, p.index),
            sscc: p.sscc.clone(),
            ship_from: party(&w.address, &biz.name),
            ship_to: party(
                &order.shipping_address,
                order.buyer.name.as_deref().unwrap_or(""),
            ),
            order_ref: order.external_ref.clone(),
            package: package_info(p, count),
            shipped_on,
        })
        .collect())
}

/// Every package's ZPL label of a shipment, one after another, as
/// `generate-label` answers them.
pub(crate) fn zpl_labels(conn: &Db, business: BusinessId, id: ShipmentId) -> Result<String> {
    Ok(labels(conn, business, id)?
        .iter()
        .map(depot_labels::shipping_label_zpl)
        .collect())
}

/// Public tracking: the milestones, the estimate and the destination city,
/// nothing about the buyer.
fn tracking(conn: &Db, number: &str) -> Result<Tracking> {
    let not_found = || WmsError::NotFound(format!("no shipment with tracking number {number}"));
    let s = sql::by_tracking(conn, number)?.ok_or_else(not_found)?;
    let order = order_sql::order(conn, s.business_id, s.order_id, false)?.ok_or_else(not_found)?;
    Ok(Tracking {
        tracking_number: s.tracking_number,
        carrier: carriers::get(&s.carrier).map_or(s.carrier.clone(), |c| c.name().to_owned()),
        status: s.status,
        estimated_delivery: s.estimated_delivery,
        destination_city: order.shipping_address.city,
        destination_country: order.shipping_address.country,
        milestones: sql::events(conn, s.id)?,
    })
}

/// What a carrier event did.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct EventOutcome {
    /// False when this event id was seen before.
    pub recorded: bool,
    pub shipment_status: ShipmentStatus,
    /// The order's status after the event.
    pub order_status: OrderStatus,
}

fn carrier_event(conn: &Db, origin: &str, carrier: &str, e: CarrierEvent) -> Result<EventOutcome> {
    let s = sql::by_tracking(conn, &e.tracking_number)?
        .filter(|s| s.carrier == carrier)
        .ok_or_else(|| {
            WmsError::NotFound(format!(
                "no {carrier} shipment with tracking number {}",
                e.tracking_number
            ))
        })?;
    let event = TrackingEvent {
        milestone: e.milestone,
        description: e
            .description
            .clone()
            .unwrap_or_else(|| e.milestone.describe().to_owned()),
        city: e.city.clone(),
        at: chrono::SubsecRound::trunc_subsecs(e.at, 0),
    };
    let dedup_key = format!("{carrier}:{}", e.event_id);
    let recorded = sql::add_event(conn, s.id, &event, carrier, &dedup_key)?;
    let order = order_sql::order(conn, s.business_id, s.order_id, false)?
        .ok_or_else(|| WmsError::Internal("order vanished".into()))?;
    let mut outcome = EventOutcome {
        recorded,
        shipment_status: s.status,
        order_status: order.status,
    };
    if !recorded {
        return Ok(outcome);
    }
    store::events::append(
        conn,
        origin,
        Some(s.business_id),
        EventKind::ShipmentMilestone,
        &serde_json::json!({"shipment_id": s.id, "business_id": s.business_id, "event": event,
                            "source": carrier, "dedup_key": dedup_key}),
    )?;
    revise_estimate(conn, origin, &s, &event, e.estimated_delivery)?;
    if e.milestone == Milestone::Delivered && s.status != ShipmentStatus::Delivered {
        // The carrier has the goods only after dispatch; a delivery reported
        // for a shipment still in the building is kept as a milestone but
        // does not move the order (the warehouse wins after dispatch,
        // the state machine before it).
        if order.status == OrderStatus::Dispatched {
            sql::set_status(conn, s.id, ShipmentStatus::Delivered, &event.at)?;
            let o = orders::change_status(
                conn,
                origin,
                s.business_id,
                s.order_id,
                OrderStatus::Delivered,
                Some(format!("{carrier} reported delivery")),
                &format!("carrier:{carrier}"),
            )?;
            outcome.shipment_status = ShipmentStatus::Delivered;
            outcome.order_status = o.status;
        }
    }
    Ok(outcome)
}

/// Sets or moves a shipment's estimated delivery after a milestone, by its
/// carrier's rule, and says so in the log (what subscribers to
/// `shipment.estimated_delivery_changed` are sent).
fn revise_estimate(
    conn: &Db,
    origin: &str,
    s: &Shipment,
    event: &TrackingEvent,
    given: Option<chrono::NaiveDate>,
) -> Result<()> {
    let Some(carrier) = carriers::get(&s.carrier) else {
        return Ok(());
    };
    if s.status == ShipmentStatus::Delivered {
        return Ok(());
    }
    let Some(estimate) = carrier.revise(
        &s.service,
        s.estimated_delivery,
        event.milestone,
        event.at.date_naive(),
        given,
    ) else {
        return Ok(());
    };
    sql::set_estimate(conn, s.id, estimate)?;
    store::events::append(
        conn,
        origin,
        Some(s.business_id),
        EventKind::ShipmentEstimatedDeliveryChanged,
        &serde_json::json!({"shipment_id": s.id, "business_id": s.business_id, "order_id": s.order_id,
                            "tracking_number": s.tracking_number,
                            "previous_estimate": s.estimated_delivery, "estimated_delivery": estimate,
                            "milestone": event}),
    )?;
    Ok(())
}

/// The carrier has the parcel: the shipment is dispatched, with its
/// milestone (keyed, so a node applying another's closing records it once).
pub(crate) fn hand_over(
    conn: &Db,
    shipment: ShipmentId,
    w: &Warehouse,
    at: &Timestamp,
) -> Result<()> {
    sql::set_status(conn, shipment, ShipmentStatus::Dispatched, at)?;
    let event = TrackingEvent {
        milestone: Milestone::Dispatched,
        description: Milestone::Dispatched.describe().into(),
        city: w.address.city.clone(),
        at: *at,
    };
    sql::add_event(conn, shipment, &event, "depot", "dispatched")?;
    Ok(())
}

/// The manifest of a run's shipments as they stand, for the driver to sign.
pub(crate) fn manifest(
    conn: &Db,
    business: BusinessId,
    run: DispatchRunId,
    w: &Warehouse,
    at: &Timestamp,
) -> Result<Vec<u8>> {
    let run =
        sql::run(conn, business, run)?.ok_or_else(|| WmsError::Internal("run vanished".into()))?;
    let mut rows = Vec::with_capacity(run.shipments.len());
    for rs in &run.shipments {
        let order = order_sql::order(conn, business, rs.order_id, false)?
            .ok_or_else(|| WmsError::Internal("order vanished".into()))?;
        let shipment = sql::shipment(conn, business, rs.shipment_id)?
            .ok_or_else(|| WmsError::Internal("shipment vanished".into()))?;
        let count = shipment.packages.len() as u32;
        let a = &order.shipping_address;
        for p in &shipment.packages {
            rows.push(ManifestRow {
                tracking_number: rs.tracking_number.clone(),
                piece_number: carriers::piece_of(&shipment, p.index),
                sscc: p.sscc.clone(),
                order_ref: order.external_ref.clone(),
                package: package_info(p, count),
                postal_code: a.postal_code.clone().unwrap_or_default(),
                city: a.city.clone().unwrap_or_default(),
                country: a.country.clone().unwrap_or_default(),
            });
        }
    }
    let manifest = Manifest {
        run_id: run.id.to_string(),
        carrier: carriers::get(&run.carrier).map_or(run.carrier.clone(), |c| c.name().to_owned()),
        closed_at: *at,
        warehouse: format!("{} {}", w.code, w.name),
        packages: rows,
    };
    depot_labels::manifest_pdf(&manifest).map_err(|e| WmsError::Internal(format!("manifest: {e}")))
}

/// Closes a run: its orders are dispatched (booking the goods out), its
/// shipments handed over, and a manifest produced.
fn close_run(
    conn: &Db,
    origin: &str,
    caller: &Caller,
    id: DispatchRunId,
    force: bool,
) -> Result<DispatchRun> {
    let business = caller.business_id;
    let run = sql::run(conn, business, id)?
        .ok_or_else(|| WmsError::NotFound(format!("dispatch run {id} does not exist")))?;
    if run.status == RunStatus::Closed {
        return Err(WmsError::conflict(format!(
            "dispatch run {id} is already closed"
        )));
    }
    if run.shipments.is_empty() {
        return Err(WmsError::conflict(format!(
            "dispatch run {id} has no shipments"
        )));
    }
    crate::dispatch::check_loaded(conn, business, &run, force)?;
    let at = now();
    let actor = caller.actor();
    let w = tenants::warehouse(conn, business, run.warehouse_id)?
        .ok_or_else(|| WmsError::Internal("warehouse vanished".into()))?;
    for rs in &run.shipments {
        let status = order_sql::order(conn, business, rs.order_id, false)?.map(|o| o.status);
        if status == Some(OrderStatus::Cancelled) {
            // Cancelled after packing: the parcel stays in the building and
            // leaves the run.
            sql::set_run(conn, rs.shipment_id, None)?;
            continue;
        }
        orders::change_status(
            conn,
            origin,
            business,
            rs.order_id,
            OrderStatus::Dispatched,
            Some(format!("dispatch run {id}")),
            &actor,
        )?;
        hand_over(conn, rs.shipment_id, &w, &at)?;
    }
    let pdf = manifest(conn, business, id, &w, &at)?;
    sql::close_run(conn, id, &at, &pdf)?;
    let closed =
        sql::run(conn, business, id)?.ok_or_else(|| WmsError::Internal("run vanished".into()))?;
    store::events::append(
        conn,
        origin,
        Some(business),
        EventKind::DispatchRunClosed,
        &closed,
    )?;
    Ok(closed)
}

impl Wms {
    pub async fn shipment(&self, business: BusinessId, id: ShipmentId) -> Result<Shipment> {
        self.read(move |conn| load(conn, business, id)).await
    }

    pub async fn list_shipments(
        &self,
        business: BusinessId,
        filter: ShipmentFilter,
        page: Page,
    ) -> Result<depot_protocol::Listed<Shipment>> {
        self.read(move |conn| sql::list(conn, business, &filter, page))
            .await
    }

    /// The label of one package (1-based), or of every package: ZPL labels
    /// follow each other in one job; a PDF has one page per label only when
    /// one package is asked for.
    pub async fn label(
        &self,
        business: BusinessId,
        shipment: ShipmentId,
        format: LabelFormat,
        package: Option<u32>,
    ) -> Result<Label> {
        let all = self
            .read(move |conn| labels(conn, business, shipment))
            .await?;
        let chosen: Vec<&ShippingLabel> = match package {
            Some(n) => {
                let l = all.iter().find(|l| l.package.index == n).ok_or_else(|| {
                    WmsError::invalid(vec![depot_protocol::FieldError::new(
                        "package",
                        format!("shipment {shipment} has packages 1 to {}", all.len()),
                    )])
                })?;
                vec![l]
            }
            None => all.iter().collect(),
        };
        match format {
            LabelFormat::Zpl => Ok(Label {
                content_type: "application/zpl; charset=utf-8",
                bytes: chosen
                    .iter()
                    .map(|l| depot_labels::shipping_label_zpl(l))
                    .collect::<String>()
                    .into_bytes(),
            }),
            LabelFormat::Pdf => {
                let [one] = chosen.as_slice() else {
                    return Err(WmsError::invalid(vec![depot_protocol::FieldError::new(
                        "package",
                        format!(
                            "this shipment has {} packages: choose one for a PDF label",
                            chosen.len()
                        ),
                    )]));
                };
                let bytes = depot_labels::shipping_label_pdf(one)
                    .map_err(|e| WmsError::Internal(format!("label: {e}")))?;
                Ok(Label {
                    content_type: "application/pdf",
                    bytes,
                })
            }
        }
    }

    pub async fn tracking(&self, number: String) -> Result<Tracking> {
        // A package's own number (from its label) finds its shipment.
        let number = carriers::shipment_number(&number).to_owned();
        if !carriers::all()
            .iter()
            .any(|c| c.is_tracking_number(&number))
        {
            return Err(WmsError::NotFound(format!(
                "{number:?} is not a tracking number of any carrier we ship with"
            )));
        }
        self.read(move |conn| tracking(conn, &number)).await
    }

    /// Applies a carrier's (already authenticated) event.
    pub async fn carrier_event(&self, carrier: &str, event: CarrierEvent) -> Result<EventOutcome> {
        let event = event.parse().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        let carrier = carriers::get(carrier)
            .ok_or_else(|| WmsError::NotFound(format!("unknown carrier {carrier}")))?
            .code();
        self.write(move |conn| carrier_event(conn, &origin, carrier, event))
            .await
    }

    pub async fn dispatch_runs(
        &self,
        business: BusinessId,
        filter: RunFilter,
        page: Page,
    ) -> Result<depot_protocol::Listed<DispatchRun>> {
        self.read(move |conn| sql::runs(conn, business, &filter, page))
            .await
    }

    /// Closes a run; once loading has begun, only with every package
    /// loaded, or `force`.
    pub async fn close_dispatch_run(
        &self,
        caller: Caller,
        id: DispatchRunId,
        force: bool,
    ) -> Result<DispatchRun> {
        let origin = self.origin().to_owned();
        self.write_for(caller.business_id, move |conn| {
            close_run(conn, &origin, &caller, id, force)
        })
        .await
    }

    /// The manifest PDF of a closed run.
    pub async fn manifest(&self, business: BusinessId, id: DispatchRunId) -> Result<Vec<u8>> {
        match self
            .read(move |conn| sql::manifest(conn, business, id))
            .await?
        {
            None => Err(WmsError::NotFound(format!(
                "dispatch run {id} does not exist"
            ))),
            Some(None) => Err(WmsError::conflict(format!(
                "dispatch run {id} is still open: close it to get its manifest"
            ))),
            Some(Some(pdf)) => Ok(pdf),
        }
    }
}
