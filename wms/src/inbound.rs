//! Inbound orders and blind, scan-based receiving with quality inspection.

use crate::store::{self, catalog, inbound as sql, ledger, tenants};
use crate::{Result, Wms, WmsError, scan};
use depot_protocol::event::EventKind;
use depot_protocol::inbound::{
    CheckedReception, InboundCreate, InboundOrder, InboundStatus, ReceivedLine, ReceptionRequest,
    ReceptionResult,
};
use depot_protocol::location::LocationKind;
use depot_protocol::stock::{Movement, MovementReason};
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, FieldError, MovementId, Page, now};
use depot_sql::Db;

pub use sql::InboundFilter;

fn load(conn: &Db, business: BusinessId, id: i64) -> Result<InboundOrder> {
    sql::inbound(conn, business, id)?
        .ok_or_else(|| WmsError::NotFound(format!("inbound order {id} does not exist")))
}

/// Accepted and rejected units of a reception line, once the scan is known.
fn split(line: &CheckedReception, count: Option<i64>) -> (i64, i64) {
    match (line.accepted, line.rejected) {
        (Some(a), Some(r)) => (a, r),
        (Some(a), None) => (a, 0),
        (None, r) => {
            let total = line.quantity.or(count).unwrap_or(1);
            let rejected = r.unwrap_or(0);
            (total.saturating_sub(rejected).max(0), rejected)
        }
    }
}

fn receive(
    conn: &Db,
    origin: &str,
    caller: &Caller,
    inbound_id: i64,
    location: Option<String>,
    lines: Vec<CheckedReception>,
) -> Result<ReceptionResult> {
    let business = caller.business_id;
    let order = load(conn, business, inbound_id)?;
    let w = order.warehouse_id;
    // Goods go where the reception says, else to the warehouse's dock, else
    // (a warehouse without one) to each item's own location. What lands at
    // a dock or staging location waits there for putaway.
    let target = match &location {
        Some(code) => Some(crate::locations::require(conn, w, code, "location")?),
        None => match store::locations::first_of_kind(conn, w, LocationKind::Dock)? {
            Some(code) => store::locations::by_code(conn, w, &code)?,
            None => None,
        },
    };
    let location = target.as_ref().map(|t| t.code.clone());
    let putaway_from = target
        .as_ref()
        .filter(|t| crate::putaway::waits_for_putaway(t.kind))
        .map(|t| t.code.clone());
    let actor = caller.actor();
    let at = now();
    let mut received = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let field = |name: &str| format!("lines[{i}].{name}");
        let s = scan::resolve(conn, business, &line.code, &field("code"))?;
        let lot = match (&line.lot, &s.lot) {
            (Some(a), Some(b)) if a != b => {
                return Err(WmsError::invalid(vec![FieldError::new(
                    field("lot"),
                    format!("{a} differs from the scanned lot {b}"),
                )]));
            }
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        let expiry = match (line.expiry, s.expiry) {
            (Some(a), Some(b)) if a != b => {
                return Err(WmsError::invalid(vec![FieldError::new(
                    field("expiry"),
                    format!("{a} differs from the scanned expiry {b}"),
                )]));
            }
            (a, b) => a.or(b),
        };
        if s.lot_tracked && lot.is_none() {
            return Err(WmsError::invalid(vec![FieldError::new(
                field("lot"),
                format!("{} is lot-tracked: scan or enter its lot", s.sku),
            )]));
        }
        let (accepted, rejected) = split(line, s.count);
        let (line_no, unexpected) = match sql::line_for_item(conn, inbound_id, s.item_id)? {
            Some(n) => (n, false),
            // Blind receiving cannot stop the operator from scanning what
            // arrived; an item not on the order is booked and reported.
            None => (sql::add_line(conn, inbound_id, s.item_id, 0)?, true),
        };
        sql::add_received_as(conn, inbound_id, line_no, accepted, rejected, &field(""))?;
        sql::insert_reception(
            conn,
            &sql::Reception {
                business,
                inbound: inbound_id,
                item: s.item_id,
                scanned: &line.code,
                accepted,
                rejected,
                reason: line.reason.as_deref(),
                lot: lot.as_deref(),
                expiry,
                serial: s.serial.as_deref(),
                location: location.as_deref(),
                actor: &actor,
                at: &at,
            },
        )?;
        let movement_id = if accepted > 0 {
            let mut m = Movement {
                id: MovementId::new(),
                business_id: business,
                item_id: s.item_id,
                warehouse_id: order.warehouse_id,
                location: location.clone(),
                delta: accepted,
                reason: MovementReason::Received,
                reference: Some(format!("inbound:{}", order.reference)),
                note: line.reason.clone(),
                lot: lot.clone(),
                expiry,
                actor: actor.clone(),
                origin: origin.to_owned(),
                at,
            };
            let counted = if line.accepted.is_some() {
                "accepted"
            } else {
                "quantity"
            };
            ledger::record_as(conn, &mut m, &field(counted))?;
            store::events::append(conn, origin, Some(business), EventKind::StockMoved, &m)?;
            Some(m.id)
        } else {
            None
        };
        let putaway_task_id = match (&putaway_from, accepted > 0) {
            (Some(from), true) => Some(
                crate::putaway::create(
                    conn,
                    origin,
                    &crate::putaway::Received {
                        business,
                        warehouse: w,
                        item: s.item_id,
                        lot: lot.as_deref(),
                        expiry,
                        at_location: from,
                        units: accepted,
                        reference: &format!("inbound:{}", order.reference),
                        at: &at,
                    },
                )?
                .id,
            ),
            _ => None,
        };
        received.push(ReceivedLine {
            item_id: s.item_id,
            sku: s.sku,
            accepted,
            rejected,
            lot,
            expiry,
            serial: s.serial,
            movement_id,
            unexpected,
            putaway_task_id,
        });
    }
    let mut order = load(conn, business, inbound_id)?;
    let status = InboundStatus::from_lines(&order.lines);
    if status != order.status {
        sql::set_status(conn, inbound_id, status, &at)?;
        order = load(conn, business, inbound_id)?;
    }
    let payload = serde_json::json!({"inbound_id": inbound_id, "business_id": business, "received": received, "status": status});
    store::events::append(
        conn,
        origin,
        Some(business),
        EventKind::InboundReceived,
        &payload,
    )?;
    Ok(ReceptionResult {
        over_receipt: order.lines.iter().any(|l| l.over > 0),
        under_receipt: order.lines.iter().any(|l| l.outstanding > 0),
        received,
        order,
    })
}

impl Wms {
    /// Whether this node has inbound order `id` of `business`.
    pub async fn has_inbound(&self, business: BusinessId, id: i64) -> Result<bool> {
        self.read(move |c| Ok(sql::inbound(c, business, id)?.is_some()))
            .await
    }

    pub async fn create_inbound(
        &self,
        business: BusinessId,
        req: InboundCreate,
    ) -> Result<InboundOrder> {
        let new = req.parse().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write_for(business, move |conn| {
            if tenants::warehouse(conn, business, new.warehouse_id)?.is_none() {
                return Err(WmsError::invalid(vec![FieldError::new(
                    "warehouse_id",
                    "no such warehouse in this business",
                )]));
            }
            if sql::id_by_reference(conn, business, &new.reference)?.is_some() {
                return Err(WmsError::field_conflict(
                    "reference",
                    format!("inbound order {} already exists", new.reference),
                ));
            }
            let mut items = Vec::new();
            let mut unknown = Vec::new();
            for (i, (sku, q)) in new.lines.iter().enumerate() {
                match catalog::sku_owner(conn, business, sku)? {
                    Some(item) => items.push((item, *q)),
                    None => unknown.push(FieldError::new(
                        format!("lines[{i}].sku"),
                        format!("no item with SKU {sku}"),
                    )),
                }
            }
            if !unknown.is_empty() {
                return Err(WmsError::invalid(unknown));
            }
            let id = sql::insert(
                conn,
                business,
                new.warehouse_id,
                &new.reference,
                &new.supplier,
                new.expected_at,
                &now(),
            )?;
            for (item, q) in items {
                sql::add_line(conn, id, item, q)?;
            }
            let order = load(conn, business, id)?;
            store::events::append(
                conn,
                &origin,
                Some(business),
                EventKind::InboundCreated,
                &order,
            )?;
            Ok(order)
        })
        .await
    }

    pub async fn receive(&self, caller: Caller, req: ReceptionRequest) -> Result<ReceptionResult> {
        let (inbound_id, location, lines) = req.parse().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write_for(caller.business_id, move |conn| {
            receive(conn, &origin, &caller, inbound_id, location, lines)
        })
        .await
    }

    pub async fn inbound(&self, business: BusinessId, id: i64) -> Result<InboundOrder> {
        self.read(move |conn| load(conn, business, id)).await
    }

    pub async fn list_inbounds(
        &self,
        business: BusinessId,
        filter: InboundFilter,
        page: Page,
    ) -> Result<depot_protocol::Listed<InboundOrder>> {
        self.read(move |conn| sql::list(conn, business, &filter, page))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(
        quantity: Option<i64>,
        accepted: Option<i64>,
        rejected: Option<i64>,
    ) -> CheckedReception {
        CheckedReception {
            code: "A".into(),
            quantity,
            accepted,
            rejected,
            reason: None,
            lot: None,
            expiry: None,
        }
    }

    #[test]
    fn quantities_split_into_accepted_and_rejected() {
        assert_eq!(split(&line(None, None, None), None), (1, 0));
        assert_eq!(split(&line(None, None, None), Some(12)), (12, 0));
        assert_eq!(split(&line(Some(5), None, None), Some(12)), (5, 0));
        assert_eq!(split(&line(Some(5), None, Some(2)), None), (3, 2));
        assert_eq!(split(&line(None, Some(4), Some(1)), Some(12)), (4, 1));
        assert_eq!(split(&line(None, None, Some(3)), None), (0, 3));
    }
}
