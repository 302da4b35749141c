//! The pick-scan scenario: waves of confirmed orders in the second warehouse,
//! each worked through by one scanner, one unit per scan, as a station
//! working one order at a time would.

use crate::{Tally, Target, load, sku};
use anyhow::bail;
use depot_protocol::order_request::{OrderCreate, OrderLineCreate};
use depot_protocol::picking::{DEFAULT_WAVE_ORDERS, ScanResult, WaveCreate};
use depot_protocol::stock::{AdjustRequest, MovementReason};
use depot_protocol::tenant::Caller;
use depot_protocol::{DataEnvelope, OrderId, OrderStatus, WarehouseId};
use depot_wms::Wms;
use reqwest::StatusCode;
use serde_json::json;
use std::time::Instant;

/// Orders per wave, and lines per order (fewer if the catalog is smaller).
const WAVE_ORDERS: u32 = DEFAULT_WAVE_ORDERS;
const ORDER_LINES: u64 = 3;
/// Scans per second the waves are sized for: well above what the router
/// serves on a small machine, so no scanner runs out of work in time.
const SCAN_BUDGET: u64 = 80_000;
/// Units per pick line at least.
const MIN_LINE_UNITS: i64 = 200;

/// One pick line: `units` of `sku` for `order`.
struct Line {
    id: i64,
    order: OrderId,
    sku: String,
    units: i64,
}

/// A wave's pick lines as its scanner walks them: order after order, each
/// order's lines in walking order.
pub struct Walk {
    wave: i64,
    lines: Vec<Line>,
}

/// The waves built, and what building them took.
pub struct Setup {
    pub walks: Vec<Walk>,
    pub wave_orders: u32,
    pub lines_per_order: u64,
    pub units_per_line: i64,
    pub writes: usize,
}

/// Builds `waves` waves of confirmed orders in `warehouse`, with stock
/// received there to cover them, sized for `secs` seconds of scanning.
pub async fn setup(
    wms: &Wms,
    caller: Caller,
    warehouse: WarehouseId,
    waves: usize,
    items: u64,
    secs: u64,
) -> anyhow::Result<Setup> {
    let per_order = ORDER_LINES.min(items);
    let orders = waves * WAVE_ORDERS as usize;
    let lines = orders as u64 * per_order;
    let units = MIN_LINE_UNITS.max((SCAN_BUDGET * secs).div_ceil(lines.max(1)) as i64);
    // Line `g` of the whole set is for SKU `g % items`: an order's lines are
    // consecutive, so distinct. Each SKU gets exactly what its lines need.
    let skus = items.min(lines) as usize;
    load("pick stock (W2)", skus, |s| {
        let wms = wms.clone();
        let uses = (lines - s as u64).div_ceil(items) as i64;
        let stock = AdjustRequest {
            warehouse_id: warehouse,
            item_id: None,
            sku: Some(sku(s as u64)),
            reason: MovementReason::Received,
            quantity: Some(uses * units),
            delta: None,
            counted: None,
            to_warehouse_id: None,
            location: None,
            reference: None,
            note: None,
        };
        async move {
            wms.adjust(caller, stock).await?;
            Ok(())
        }
    })
    .await?;
    load("pick orders (W2)", orders, |o| {
        let wms = wms.clone();
        let req = OrderCreate {
            channel: "web".into(),
            external_ref: format!("P-{o}"),
            warehouse_id: Some(warehouse),
            buyer: None,
            shipping_address: None,
            payments: None,
            lines: (0..per_order)
                .map(|k| OrderLineCreate {
                    sku: sku((o as u64 * per_order + k) % items),
                    quantity: units,
                    unit_price: None,
                })
                .collect(),
            currency: None,
            carrier: None,
            service: None,
            ordered_at: None,
        };
        async move {
            let id = wms.create_order(caller, req).await?.0.id;
            wms.set_order_status(caller, id, OrderStatus::Confirmed, None)
                .await?;
            Ok(())
        }
    })
    .await?;
    let mut built = load("pick waves (W2)", waves, |_| {
        let wms = wms.clone();
        let req = WaveCreate {
            warehouse_id: warehouse,
            max_orders: Some(WAVE_ORDERS),
            carrier: None,
            cutoff: None,
        };
        async move { Ok(wms.create_wave(caller.business_id, req).await?) }
    })
    .await?;
    built.sort_by_key(|w| w.id);
    let expected = i64::from(WAVE_ORDERS) * per_order as i64 * units;
    let mut walks = Vec::with_capacity(built.len());
    for w in built {
        if w.pick_lists.len() != WAVE_ORDERS as usize || w.units_total != expected {
            bail!(
                "wave {} has {} orders and {} units, not {WAVE_ORDERS} and {expected}",
                w.id,
                w.pick_lists.len(),
                w.units_total
            );
        }
        let lines = w
            .pick_lists
            .into_iter()
            .flat_map(|p| p.lines)
            .map(|l| Line {
                id: l.id,
                order: l.order_id,
                sku: l.sku,
                units: l.remaining,
            })
            .collect();
        walks.push(Walk { wave: w.id, lines });
    }
    Ok(Setup {
        walks,
        wave_orders: WAVE_ORDERS,
        lines_per_order: per_order,
        units_per_line: units,
        writes: skus + 2 * orders + waves,
    })
}

/// Scans `walk`'s lines in turn, one unit per request, until the deadline.
/// Running out of work (the wave picked, or a 409/422 that says so) ends the
/// worker early and is not an error; its refused scan is not counted.
pub async fn scan(t: &Target, walk: &Walk, deadline: Instant) -> Tally {
    let mut tally = Tally::default();
    let url = format!("{}/v1/picking/{}/item/scan", t.base, t.business);
    let mut lines = walk.lines.iter();
    let mut line = lines.next();
    let mut left = line.map_or(0, |l| l.units);
    while Instant::now() < deadline {
        let Some(l) = line else {
            tally.ran_out = true;
            break;
        };
        if left <= 0 {
            line = lines.next();
            left = line.map_or(0, |l| l.units);
            continue;
        }
        let sent = Instant::now();
        let body = json!({"wave_id": walk.wave, "order_id": l.order, "code": l.sku, "quantity": 1});
        let outcome = match t
            .client
            .post(&url)
            .header("x-api-key", &t.key)
            .json(&body)
            .send()
            .await
        {
            Ok(resp) => (resp.status(), resp.text().await),
            Err(e) => (StatusCode::default(), Err(e)),
        };
        let took = sent.elapsed();
        match outcome {
            (status, Ok(_))
                if status == StatusCode::CONFLICT || status == StatusCode::UNPROCESSABLE_ENTITY =>
            {
                tally.ran_out = true;
                break;
            }
            (status, Ok(body)) if status.is_success() => {
                tally.lat.push(took);
                match serde_json::from_str::<DataEnvelope<ScanResult>>(&body) {
                    Ok(r) if r.data.line_id == l.id => {
                        left = r.data.remaining;
                        if r.data.wave_remaining == 0 {
                            tally.ran_out = true;
                            break;
                        }
                    }
                    Ok(r) => {
                        tally.errors.push(format!(
                            "scan for line {} took line {}",
                            l.id, r.data.line_id
                        ));
                        left -= 1;
                    }
                    Err(e) => {
                        tally.errors.push(format!("unreadable scan answer: {e}"));
                        left -= 1;
                    }
                }
            }
            (status, Ok(body)) => {
                tally.lat.push(took);
                tally.errors.push(format!("{status}: {body:.300}"));
            }
            (_, Err(e)) => {
                tally.lat.push(took);
                tally.errors.push(e.to_string());
            }
        }
    }
    tally
}
