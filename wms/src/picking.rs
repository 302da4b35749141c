//! Waves and scan-based picking.
//!
//! A wave takes the oldest confirmed orders of one warehouse (within the
//! limits asked for) and lays their lines out in walking order by bin
//! location; lot-tracked items are allocated lot by lot, soonest expiry
//! first. A scan is checked against the open lines and answered with a
//! distinct status for each way it can be wrong, so a station can tell the
//! operator what to do:
//!
//! | status | meaning |
//! |---|---|
//! | 400 | the scan is not readable (a broken GS1 string) |
//! | 404 | no item answers to the code |
//! | 422 | the item is not on this pick list |
//! | 409 | over-pick: more than is left of the item |
//! | 412 | right item, wrong lot or expiry |

use crate::orders;
use crate::store::{self, orders as order_sql, picking as sql, tenants};
use crate::{Result, Wms, WmsError, scan};
use depot_protocol::event::EventKind;
use depot_protocol::picking::{PickLine, ScanRequest, ScanResult, Wave, WaveCreate};
use depot_protocol::tenant::Caller;
use depot_protocol::{
    BusinessId, FieldError, OrderStatus, Page, PickLineId, WarehouseId, WaveId, now,
};
use depot_sql::Db;
use serde::{Deserialize, Serialize};

pub use sql::WaveFilter;

/// The `pick.scanned` event: what the station was answered, and how the
/// units were spread over lines, so another node can book the same picks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct PickScanned {
    #[serde(flatten)]
    pub result: ScanResult,
    pub business_id: BusinessId,
    pub takes: Vec<Take>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct Take {
    pub line_id: PickLineId,
    pub quantity: i64,
}

fn load(conn: &Db, business: BusinessId, id: WaveId) -> Result<Wave> {
    sql::wave(conn, business, id)?
        .ok_or_else(|| WmsError::NotFound(format!("wave {id} does not exist")))
}

/// The pick lines for one order line: lot-tracked items are split over
/// lots (FEFO); what no lot covers is left for the picker to choose.
fn lines_for(
    conn: &Db,
    order: OrderId,
    w: WarehouseId,
    item: depot_protocol::ItemId,
    sku: &str,
    qty: i64,
    lot_tracked: bool,
) -> Result<Vec<sql::NewLine>> {
    let own = store::locations::assigned(conn, item, w)?;
    let line = |location: Option<String>, lot: Option<String>, expiry, quantity| sql::NewLine {
        order_id: order,
        item_id: item,
        sku: sku.to_owned(),
        location,
        lot,
        expiry,
        quantity,
    };
    // An item is picked from its own location; one without, from the pick
    // location holding the most of it.
    let unlotted = || -> Result<Option<String>> {
        match &own {
            Some(code) => Ok(Some(code.clone())),
            None => store::locations::pick_face(conn, item, w, ""),
        }
    };
    if !lot_tracked {
        return Ok(vec![line(unlotted()?, None, None, qty)]);
    }
    let mut out = Vec::new();
    let mut left = qty;
    for (lot, expiry, free) in sql::free_lots(conn, item, w)? {
        if left == 0 {
            break;
        }
        let take = free.min(left);
        // A lot is picked where it is: the pick location holding the most
        // of it, else the item's own.
        let at = match store::locations::pick_face(conn, item, w, &lot)? {
            Some(code) => Some(code),
            None => own.clone(),
        };
        out.push(line(at, Some(lot), expiry, take));
        left -= take;
    }
    if left > 0 {
        out.push(line(unlotted()?, None, None, left));
    }
    Ok(out)
}

use depot_protocol::OrderId;

fn create_wave(conn: &Db, origin: &str, business: BusinessId, req: WaveCreate) -> Result<Wave> {
    let new = req.parse().map_err(WmsError::invalid)?;
    if tenants::warehouse(conn, business, new.warehouse_id)?.is_none() {
        return Err(WmsError::invalid(vec![FieldError::new(
            "warehouse_id",
            "no such warehouse in this business",
        )]));
    }
    let orders = sql::waiting_orders(
        conn,
        business,
        new.warehouse_id,
        new.carrier.as_deref(),
        new.cutoff.as_ref(),
        new.max_orders,
    )?;
    if orders.is_empty() {
        return Err(WmsError::conflict(
            "no confirmed orders are waiting for a wave with these limits",
        ));
    }
    let at = now();
    let wave = sql::insert_wave(
        conn,
        business,
        new.warehouse_id,
        new.carrier.as_deref(),
        new.cutoff.as_ref(),
        &at,
    )?;
    let mut lines = Vec::new();
    for id in orders {
        let order = order_sql::order(conn, business, id, false)?
            .ok_or_else(|| WmsError::Internal("order vanished".into()))?;
        for l in &order.lines {
            let lot_tracked =
                store::catalog::item(conn, business, l.item_id)?.is_some_and(|i| i.lot_tracked);
            lines.extend(lines_for(
                conn,
                id,
                new.warehouse_id,
                l.item_id,
                &l.sku,
                l.quantity,
                lot_tracked,
            )?);
        }
        sql::set_order_wave(conn, id, wave)?;
    }
    // Walking order: by the locations' places in the walk (those without
    // one after, by code; unlocated last), then SKU.
    let walk = store::locations::walk_sequences(conn, new.warehouse_id)?;
    lines.sort_by_cached_key(|l| {
        (
            store::locations::walk_key(&walk, l.location.as_deref()),
            l.sku.clone(),
        )
    });
    for (seq, l) in lines.iter().enumerate() {
        sql::insert_line(conn, wave, l, seq as i64)?;
    }
    // A face holding less than the wave takes from it is refilled first.
    let mut wanted: Vec<(&str, depot_protocol::ItemId, i64)> = Vec::new();
    for l in &lines {
        let Some(at) = l.location.as_deref() else {
            continue;
        };
        match wanted
            .iter_mut()
            .find(|(loc, item, _)| *loc == at && *item == l.item_id)
        {
            Some(w) => w.2 = w.2.saturating_add(l.quantity),
            None => wanted.push((at, l.item_id, l.quantity)),
        }
    }
    let why = format!("wave:{wave}");
    for (at, item, units) in wanted {
        let face = crate::replenish::Face {
            business,
            warehouse: new.warehouse_id,
            location: at,
            item,
        };
        crate::replenish::check(conn, origin, face, &why, units)?;
    }
    let w = load(conn, business, wave)?;
    store::events::append(conn, origin, Some(business), EventKind::WaveCreated, &w)?;
    Ok(w)
}

fn mismatch(name: &str, message: String) -> WmsError {
    WmsError::Mismatch {
        errors: vec![FieldError::new(name, message.clone())],
        message,
    }
}

/// A scan reads only the lines of the scanned item and sums what is left in
/// SQL: the writer serves every station, so a scan must not cost a whole
/// wave's worth of rows.
fn pick(conn: &Db, origin: &str, caller: &Caller, req: ScanRequest) -> Result<ScanResult> {
    let business = caller.business_id;
    let wave_id = req.wave_id;
    // The wave is read with the scanned code's item, and on PostgreSQL
    // with the wave's lines of that item, found by the code in the same
    // statement (one round trip for the three; on SQLite, where a read
    // waits for no server, the lines are read by the item found). A wave
    // that is not there is still the first error.
    let wave = sql::wave_warehouse_later(conn, business, wave_id)?;
    let parsed = scan::parse(&req.code, "code");
    let together = conn.dialect() == depot_sql::Dialect::Postgres;
    let lines = match &parsed {
        Ok(p) if together => Some(sql::scanned_lines_later(
            conn,
            wave_id,
            business,
            &p.code,
            p.sku.as_deref(),
            req.order_id,
        )?),
        _ => None,
    };
    let s = parsed.and_then(|p| scan::resolve_parsed(conn, business, p, &req.code));
    let warehouse_id = wave
        .first(conn)?
        .ok_or_else(|| WmsError::NotFound(format!("wave {wave_id} does not exist")))?;
    let s = s?;
    let of_item = match lines {
        Some(lines) => lines.all(conn)?,
        None => sql::item_lines(conn, wave_id, s.item_id, req.order_id)?,
    };
    if of_item.is_empty() {
        // A cancelled order has no lines to offer: only then is it worth
        // asking why.
        if let Some(o) = req.order_id {
            if sql::cancelled_orders(conn, wave_id)?.contains(&o) {
                return Err(WmsError::conflict(format!(
                    "order {o} was cancelled: put its items back"
                )));
            }
            if !sql::order_in_wave(conn, wave_id, o)? {
                return Err(WmsError::NotFound(format!(
                    "order {o} is not in wave {wave_id}"
                )));
            }
        }
        return Err(WmsError::invalid(vec![FieldError::new(
            "code",
            format!("{} is not on this pick list: put it back", s.sku),
        )]));
    }
    let open: Vec<&PickLine> = of_item.iter().filter(|l| l.remaining > 0).collect();
    if open.is_empty() {
        let n = of_item
            .iter()
            .fold(0i64, |n, l| n.saturating_add(l.quantity));
        return Err(WmsError::field_conflict(
            "quantity",
            format!("over-pick: all {n} of {} are already picked", s.sku),
        ));
    }
    // Lines the scanned lot and expiry can fill: unbound lines take any lot.
    let fits = |l: &&PickLine| {
        let lot_ok = match (&l.lot, &s.lot) {
            (Some(want), Some(got)) => want == got,
            (Some(_), None) => false,
            (None, _) => true,
        };
        let expiry_ok = match (l.expiry, s.expiry) {
            (Some(want), Some(got)) => want == got,
            _ => true,
        };
        lot_ok && expiry_ok
    };
    let usable: Vec<&PickLine> = open.iter().copied().filter(fits).collect();
    if usable.is_empty() {
        let wanted: Vec<String> = open.iter().filter_map(|l| l.lot.clone()).collect();
        return Err(match (&s.lot, s.expiry) {
            (None, _) => mismatch(
                "lot",
                format!(
                    "{} is picked by lot: scan the lot label (expected {})",
                    s.sku,
                    wanted.join(" or ")
                ),
            ),
            (Some(lot), _) if !wanted.contains(lot) => mismatch(
                "lot",
                format!(
                    "wrong lot {lot} of {}: pick lot {}",
                    s.sku,
                    wanted.join(" or ")
                ),
            ),
            (Some(lot), Some(exp)) => mismatch(
                "expiry",
                format!(
                    "lot {lot} of {} has expiry {exp}, not the one on the pick list",
                    s.sku
                ),
            ),
            (Some(lot), None) => mismatch(
                "lot",
                format!("lot {lot} of {} does not match the pick list", s.sku),
            ),
        });
    }
    let quantity = req.quantity.or(s.count).unwrap_or(1);
    let available = usable
        .iter()
        .fold(0i64, |n, l| n.saturating_add(l.remaining));
    if quantity > available {
        return Err(WmsError::field_conflict(
            "quantity",
            format!(
                "over-pick: {quantity} of {} scanned, only {available} left to pick",
                s.sku
            ),
        ));
    }
    // The order's status and what is left of it and of the wave are read
    // with the first line's pick (before it: what the scan takes is taken
    // off below).
    let (status, remaining) = match usable.first() {
        Some(line) => (
            Some(order_sql::status_of_later(conn, business, line.order_id)?),
            Some(sql::remaining_later(conn, wave_id, line.order_id)?),
        ),
        None => (None, None),
    };
    let mut left = quantity;
    let mut takes = Vec::new();
    let mut completed = Vec::new();
    for l in &usable {
        if left == 0 {
            break;
        }
        let take = l.remaining.min(left);
        sql::add_picked(conn, l.id, take)?;
        takes.push(Take {
            line_id: l.id,
            quantity: take,
        });
        if take == l.remaining {
            completed.push(l);
        }
        left -= take;
    }
    let (Some(line), Some(first_take)) = (usable.first(), takes.first().map(|t| t.quantity)) else {
        return Err(WmsError::Internal("no line took the scan".into()));
    };
    let order_id = line.order_id;
    let status = match status {
        Some(sent) => sent.first(conn)?,
        None => None,
    }
    .ok_or_else(|| WmsError::Internal("order vanished".into()))?;
    let order_status = if status == OrderStatus::Confirmed {
        orders::change_status(
            conn,
            origin,
            business,
            order_id,
            OrderStatus::Picking,
            Some(format!("first scan in wave {wave_id}")),
            &caller.actor(),
        )?
        .status
    } else {
        status
    };
    let (wave_before, order_before) = match remaining {
        Some(sent) => sent.first(conn)?,
        None => None,
    }
    .ok_or_else(|| WmsError::Internal("wave vanished".into()))?;
    // Every line the scan took from counts in the wave's units left (none
    // of a cancelled order is offered), the order's own in the order's.
    let taken = takes.iter().fold(0i64, |n, t| n.saturating_add(t.quantity));
    let taken_of_order = usable
        .iter()
        .filter(|l| l.order_id == order_id)
        .filter_map(|l| takes.iter().find(|t| t.line_id == l.id))
        .fold(0i64, |n, t| n.saturating_add(t.quantity));
    let (wave_remaining, order_remaining) = (
        wave_before.saturating_sub(taken),
        order_before.saturating_sub(taken_of_order),
    );
    let completed_at = (wave_remaining == 0).then(now);
    if let Some(at) = &completed_at {
        sql::complete_wave(conn, wave_id, at)?;
    }
    let result = ScanResult {
        wave_id,
        order_id,
        line_id: line.id,
        sku: s.sku.clone(),
        location: line.location.clone(),
        lot: line.lot.clone().or(s.lot.clone()),
        picked: line.picked + first_take,
        quantity: line.quantity,
        remaining: line.remaining - first_take,
        order_remaining,
        wave_remaining,
        order_status,
    };
    let event = PickScanned {
        result,
        business_id: business,
        takes,
    };
    store::events::append(conn, origin, Some(business), EventKind::PickScanned, &event)?;
    // Named events for what subscribers wait for; nodes applying them do
    // nothing, as `pick.scanned` already carries the picks.
    for l in completed {
        let payload = serde_json::json!({
            "business_id": business, "warehouse_id": warehouse_id, "wave_id": wave_id,
            "order_id": l.order_id, "line_id": l.id, "sku": l.sku, "quantity": l.quantity,
            "location": l.location,
        });
        store::events::append(
            conn,
            origin,
            Some(business),
            EventKind::PickLineCompleted,
            &payload,
        )?;
    }
    if let Some(at) = completed_at {
        let payload = serde_json::json!({
            "business_id": business, "warehouse_id": warehouse_id, "wave_id": wave_id,
            "completed_at": depot_protocol::format_ts(&at),
        });
        store::events::append(
            conn,
            origin,
            Some(business),
            EventKind::WaveCompleted,
            &payload,
        )?;
    }
    Ok(event.result)
}

impl Wms {
    /// Whether this node has wave `wave` of `business` (`None` when it
    /// does not) and, when `order` is named, whether that order is in it:
    /// what a station checks before it takes a picking task.
    pub async fn wave_holds(
        &self,
        business: BusinessId,
        wave: WaveId,
        order: Option<OrderId>,
    ) -> Result<Option<bool>> {
        self.read(move |c| {
            if sql::wave_warehouse(c, business, wave)?.is_none() {
                return Ok(None);
            }
            Ok(Some(match order {
                Some(o) => sql::order_in_wave(c, wave, o)?,
                None => true,
            }))
        })
        .await
    }

    pub async fn create_wave(&self, business: BusinessId, req: WaveCreate) -> Result<Wave> {
        let origin = self.origin().to_owned();
        self.write_for(business, move |conn| {
            create_wave(conn, &origin, business, req)
        })
        .await
    }

    pub async fn pick_scan(&self, caller: Caller, req: ScanRequest) -> Result<ScanResult> {
        let req = req.parse().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write_for(caller.business_id, move |conn| {
            pick(conn, &origin, &caller, req)
        })
        .await
    }

    pub async fn wave(&self, business: BusinessId, id: WaveId) -> Result<Wave> {
        self.read(move |conn| load(conn, business, id)).await
    }

    pub async fn list_waves(
        &self,
        business: BusinessId,
        filter: WaveFilter,
        page: Page,
    ) -> Result<depot_protocol::Listed<Wave>> {
        self.read(move |conn| sql::list(conn, business, &filter, page))
            .await
    }
}
