//! Customer returns: an RMA for units of a dispatched order (with a return
//! label when the own fleet delivered it), then a scan per unit at the
//! returns station, graded by the rules of `depot_protocol::returns`:
//! `restock` books it `returned` into the returns location with a putaway
//! task, `damaged` into quarantine, `scrap` books nothing.
//!
//! | status | a create that | a receive scan that |
//! |---|---|---|
//! | 404 | names an order that does not exist | names a return or a code that does not exist |
//! | 409 | names an order not dispatched | is for a return done, units already graded, or a warehouse without a returns (quarantine) location |
//! | 422 | names a line the order lacks, or more units than it can still return | scans an item not on the return, or a lot-tracked item without its lot |

use crate::carriers::Carrier;
use crate::packing::party;
use crate::putaway::{self, Received};
use crate::store::{self, orders as order_sql, returns as sql, tenants};
use crate::{Result, Wms, WmsError, scan};
use depot_labels::{PackageInfo, ShippingLabel};
use depot_protocol::event::EventKind;
use depot_protocol::order::Order;
use depot_protocol::returns::{
    CheckedReturn, Grade, Return, ReturnCreate, ReturnLine, ReturnReceive, ReturnReceiveResult,
    ReturnReceived, ReturnStatus, ReturnSummary, line_for, rma, status_of,
};
use depot_protocol::stock::{Movement, MovementReason};
use depot_protocol::tenant::Caller;
use depot_protocol::{
    BusinessId, FieldError, MovementId, OrderId, OrderStatus, Page, ReturnId, now,
};
use depot_sql::Db;
use std::collections::BTreeMap;

pub use sql::ReturnFilter;

fn load(conn: &Db, business: BusinessId, id: ReturnId) -> Result<Return> {
    sql::get(conn, business, id)?
        .ok_or_else(|| WmsError::NotFound(format!("return {id} does not exist")))
}

fn refuse(field: impl Into<String>, message: String) -> WmsError {
    WmsError::invalid(vec![FieldError::new(field, message)])
}

/// The ZPL return label of a return whose order the own fleet delivered:
/// from the customer to the warehouse, the RMA number as its barcode.
fn label(conn: &Db, r: &Return, order: &Order) -> Result<Option<String>> {
    if order.carrier != crate::carriers::OwnFleet.code() {
        return Ok(None);
    }
    let business = r.business_id;
    let w = tenants::warehouse(conn, business, r.warehouse_id)?
        .ok_or_else(|| WmsError::Internal("warehouse vanished".into()))?;
    let biz = tenants::business(conn, business)?
        .ok_or_else(|| WmsError::Internal("business vanished".into()))?;
    let mut weight_g = 0i64;
    for l in &r.lines {
        let (_, per) = store::putaway::item_measures(conn, l.item_id)?;
        weight_g = weight_g.saturating_add(per.unwrap_or(0).saturating_mul(l.quantity));
    }
    let l = ShippingLabel {
        carrier: "Own fleet".into(),
        service: "return".into(),
        tracking_number: r.rma.clone(),
        piece_number: r.rma.clone(),
        sscc: None,
        ship_from: party(
            &order.shipping_address,
            order.buyer.name.as_deref().unwrap_or(""),
        ),
        ship_to: party(&w.address, &biz.name),
        order_ref: order.external_ref.clone(),
        package: PackageInfo {
            index: 1,
            count: 1,
            weight_g,
            dimensions_mm: None,
        },
        shipped_on: r.created_at.date_naive(),
    };
    Ok(Some(depot_labels::shipping_label_zpl(&l)))
}

/// Units of each order line that returns already hold.
fn held(conn: &Db, order: OrderId) -> Result<BTreeMap<u32, i64>> {
    let mut held = BTreeMap::new();
    for r in sql::of_order(conn, order)? {
        if r.status == ReturnStatus::Cancelled {
            continue;
        }
        for l in r.lines {
            let n: &mut i64 = held.entry(l.line_no).or_insert(0);
            *n = n.saturating_add(l.quantity);
        }
    }
    Ok(held)
}

fn create(conn: &Db, origin: &str, caller: &Caller, req: CheckedReturn) -> Result<Return> {
    let business = caller.business_id;
    let order = order_sql::order(conn, business, req.order_id, false)?
        .ok_or_else(|| WmsError::NotFound(format!("order {} does not exist", req.order_id)))?;
    if !matches!(
        order.status,
        OrderStatus::Dispatched | OrderStatus::Delivered
    ) {
        return Err(WmsError::conflict(format!(
            "order {} is {}: only a dispatched or delivered order can be returned",
            order.id, order.status
        )));
    }
    let held = held(conn, order.id)?;
    let mut errors = Vec::new();
    let mut lines = Vec::new();
    for (i, l) in req.lines.iter().enumerate() {
        let Some(ol) = order.lines.iter().find(|ol| ol.line_no == l.line_no) else {
            errors.push(FieldError::new(
                format!("lines[{i}].line_no"),
                format!(
                    "order {} has no line {} (it has {})",
                    order.id,
                    l.line_no,
                    order.lines.len()
                ),
            ));
            continue;
        };
        let on_returns = held.get(&l.line_no).copied().unwrap_or(0);
        let left = ol.quantity.saturating_sub(on_returns).max(0);
        if l.quantity > left {
            errors.push(FieldError::new(
                format!("lines[{i}].quantity"),
                format!(
                    "only {left} of line {}'s {} × {} can still be returned ({on_returns} on other returns)",
                    l.line_no, ol.quantity, ol.sku
                ),
            ));
            continue;
        }
        lines.push(ReturnLine {
            line_no: l.line_no,
            item_id: ol.item_id,
            sku: ol.sku.clone(),
            quantity: l.quantity,
            reason: l.reason,
            note: l.note.clone(),
            restocked: 0,
            damaged: 0,
            scrapped: 0,
            remaining: l.quantity,
        });
    }
    if !errors.is_empty() {
        return Err(WmsError::invalid(errors));
    }
    let id = ReturnId(store::ids::allocate(conn, "returns")?);
    let at = now();
    let mut r = Return {
        id,
        rma: rma(id),
        business_id: business,
        order_id: order.id,
        order_ref: order.external_ref.clone(),
        warehouse_id: order.warehouse_id,
        status: ReturnStatus::Open,
        lines,
        reference: req.reference,
        created_at: at,
        updated_at: at,
        label_zpl: None,
    };
    sql::insert(conn, &r)?;
    store::events::append(conn, origin, Some(business), EventKind::ReturnCreated, &r)?;
    r.label_zpl = label(conn, &r, &order)?;
    Ok(r)
}

fn receive(
    conn: &Db,
    origin: &str,
    caller: &Caller,
    id: ReturnId,
    req: ReturnReceive,
) -> Result<ReturnReceiveResult> {
    let business = caller.business_id;
    let mut r = load(conn, business, id)?;
    if r.status == ReturnStatus::Cancelled {
        return Err(WmsError::conflict(format!(
            "{} is cancelled: authorise a new return for its units",
            r.rma
        )));
    }
    if r.status == ReturnStatus::Received {
        return Err(WmsError::conflict(format!(
            "{} is received: all its {} units are graded",
            r.rma,
            r.units()
        )));
    }
    let s = scan::resolve(conn, business, &req.code, "code")?;
    let i = match line_for(&r.lines, s.item_id) {
        Ok(i) => i,
        Err(true) => {
            return Err(WmsError::conflict(format!(
                "every unit of {} on {} is graded",
                s.sku, r.rma
            )));
        }
        Err(false) => {
            let skus: Vec<&str> = r.lines.iter().map(|l| l.sku.as_str()).collect();
            return Err(refuse(
                "code",
                format!(
                    "{} is not on {}: it holds {}",
                    s.sku,
                    r.rma,
                    skus.join(", ")
                ),
            ));
        }
    };
    let units = req.quantity.or(s.count).unwrap_or(1);
    let remaining = r.lines[i].remaining;
    if units > remaining {
        return Err(WmsError::conflict(format!(
            "{units} units is more than the {remaining} of {} left to grade on {}",
            s.sku, r.rma
        )));
    }
    let lot = match (&req.lot, &s.lot) {
        (Some(a), Some(b)) if a != b => {
            return Err(refuse(
                "lot",
                format!("{a} differs from the scanned lot {b}"),
            ));
        }
        (a, b) => a.clone().or_else(|| b.clone()),
    };
    let kind = req.grade.location_kind();
    if s.lot_tracked && lot.is_none() && kind.is_some() {
        return Err(refuse(
            "lot",
            format!("{} is lot-tracked: scan or enter its lot", s.sku),
        ));
    }
    let location = match kind {
        None => None,
        Some(kind) => Some(
            store::locations::first_of_kind(conn, r.warehouse_id, kind)?.ok_or_else(|| {
                WmsError::conflict(format!(
                    "warehouse {} has no {kind} location: make one to take {} units",
                    r.warehouse_id, req.grade
                ))
            })?,
        ),
    };
    let at = now();
    let reference = format!("return:{}", r.rma);
    let mut putaway_task_id = None;
    if let Some(code) = &location {
        let mut m = Movement {
            id: MovementId::new(),
            business_id: business,
            item_id: s.item_id,
            warehouse_id: r.warehouse_id,
            location: Some(code.clone()),
            delta: units,
            reason: MovementReason::Returned,
            reference: Some(reference.clone()),
            note: Some(match &req.note {
                Some(n) => format!("{}: {n}", req.grade),
                None => req.grade.as_str().to_owned(),
            }),
            lot: lot.clone(),
            expiry: s.expiry,
            actor: caller.actor(),
            origin: origin.to_owned(),
            at,
        };
        store::ledger::record_as(conn, &mut m, "quantity")?;
        store::events::append(conn, origin, Some(business), EventKind::StockMoved, &m)?;
        if req.grade == Grade::Restock {
            let task = putaway::create(
                conn,
                origin,
                &Received {
                    business,
                    warehouse: r.warehouse_id,
                    item: s.item_id,
                    lot: lot.as_deref(),
                    expiry: s.expiry,
                    at_location: code,
                    units,
                    reference: &reference,
                    at: &at,
                },
            )?;
            putaway_task_id = Some(task.id);
        }
    }
    r.lines[i].grade(req.grade, units);
    r.status = status_of(&r.lines);
    r.updated_at = at;
    sql::save_grades(conn, &r, &r.lines[i], &at)?;
    let line_no = r.lines[i].line_no;
    store::events::append(
        conn,
        origin,
        Some(business),
        EventKind::ReturnReceived,
        &ReturnReceived {
            returned: r.clone(),
            received_line: line_no,
            grade: req.grade,
            units,
            location: location.clone(),
        },
    )?;
    let left = match r
        .units()
        .saturating_sub(r.lines.iter().map(ReturnLine::graded).sum())
    {
        n if n <= 0 => format!("{} received", r.rma),
        n => format!("{n} left on {}", r.rma),
    };
    let message = match (req.grade, &location) {
        (Grade::Restock, Some(code)) => {
            format!(
                "{units} × {} restocked: to {code}, for putaway; {left}",
                s.sku
            )
        }
        (_, Some(code)) => format!("{units} × {} damaged: to {code}; {left}", s.sku),
        (_, None) => format!("{units} × {} scrapped; {left}", s.sku),
    };
    Ok(ReturnReceiveResult {
        returned: r,
        line_no,
        sku: s.sku,
        grade: req.grade,
        units,
        lot,
        location,
        putaway_task_id,
        message,
    })
}

fn cancel(conn: &Db, origin: &str, business: BusinessId, id: ReturnId) -> Result<Return> {
    let mut r = load(conn, business, id)?;
    if r.status != ReturnStatus::Open {
        return Err(WmsError::conflict(format!(
            "{} is {}: only a return none of whose units arrived can be cancelled",
            r.rma, r.status
        )));
    }
    let at = now();
    sql::set_status(conn, r.id, ReturnStatus::Cancelled, &at)?;
    r.status = ReturnStatus::Cancelled;
    r.updated_at = at;
    store::events::append(conn, origin, Some(business), EventKind::ReturnCancelled, &r)?;
    Ok(r)
}

/// Applies another node's cancellation, unless units of the return were
/// graded here meanwhile: what arrived wins.
pub(crate) fn apply_cancelled(conn: &Db, r: &Return) -> Result<()> {
    let Some(here) = sql::get_any(conn, r.id)? else {
        return Ok(());
    };
    if here.status == ReturnStatus::Open {
        sql::set_status(conn, r.id, ReturnStatus::Cancelled, &r.updated_at)?;
    }
    Ok(())
}

/// Applies another node's return.
pub(crate) fn apply_created(conn: &Db, r: &Return) -> Result<()> {
    if sql::get_any(conn, r.id)?.is_some() {
        return Ok(());
    }
    sql::insert(
        conn,
        &Return {
            status: status_of(&r.lines),
            ..r.clone()
        },
    )
}

/// Applies another node's receive scan: its units are added to the line
/// they were graded on, so scans made on two nodes while apart both count
/// (their movements are events of their own).
pub(crate) fn apply_received(conn: &Db, e: &ReturnReceived) -> Result<()> {
    if !(1..=depot_protocol::returns::MAX_RETURN_SCAN).contains(&e.units) {
        return Err(refuse(
            "units",
            format!(
                "{} is not between 1 and {}",
                e.units,
                depot_protocol::returns::MAX_RETURN_SCAN
            ),
        ));
    }
    let mut r = sql::get_any(conn, e.returned.id)?
        .ok_or_else(|| WmsError::NotFound(format!("return {} does not exist", e.returned.id)))?;
    let Some(i) = r.lines.iter().position(|l| l.line_no == e.received_line) else {
        return Err(refuse(
            "received_line",
            format!("{} has no line {}", r.rma, e.received_line),
        ));
    };
    r.lines[i].grade(e.grade, e.units);
    r.status = status_of(&r.lines);
    let at = e.returned.updated_at.max(r.updated_at);
    sql::save_grades(conn, &r, &r.lines[i], &at)
}

/// An order's returns, as its detail view lists them.
pub(crate) fn summaries(conn: &Db, order: OrderId) -> Result<Vec<ReturnSummary>> {
    Ok(sql::of_order(conn, order)?
        .iter()
        .map(ReturnSummary::from)
        .collect())
}

impl Wms {
    pub async fn create_return(&self, caller: Caller, req: ReturnCreate) -> Result<Return> {
        let req = req.parse().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write_for(caller.business_id, move |conn| {
            create(conn, &origin, &caller, req)
        })
        .await
    }

    pub async fn receive_return(
        &self,
        caller: Caller,
        id: ReturnId,
        req: ReturnReceive,
    ) -> Result<ReturnReceiveResult> {
        let req = req.parse().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write_for(caller.business_id, move |conn| {
            receive(conn, &origin, &caller, id, req)
        })
        .await
    }

    pub async fn cancel_return(&self, caller: Caller, id: ReturnId) -> Result<Return> {
        let origin = self.origin().to_owned();
        let business = caller.business_id;
        self.write_for(business, move |conn| cancel(conn, &origin, business, id))
            .await
    }

    /// One return, with its label when the own fleet delivered the order.
    pub async fn customer_return(&self, business: BusinessId, id: ReturnId) -> Result<Return> {
        self.read(move |conn| {
            let mut r = load(conn, business, id)?;
            if let Some(order) = order_sql::order(conn, business, r.order_id, false)? {
                r.label_zpl = label(conn, &r, &order)?;
            }
            Ok(r)
        })
        .await
    }

    pub async fn customer_returns(
        &self,
        business: BusinessId,
        filter: ReturnFilter,
        page: Page,
    ) -> Result<depot_protocol::Listed<Return>> {
        self.read(move |conn| sql::list(conn, business, &filter, page))
            .await
    }
}
