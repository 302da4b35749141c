//! The pick-scan scenario at the edge: orders confirmed in the cloud reach
//! the edge through the down feed; the edge makes one wave per station and
//! each station scans its wave one unit at a time, order after order, as a
//! station working one order at a time does.

use crate::seed::{Cloud, sku};
use crate::{Tally, load};
use anyhow::bail;
use depot_protocol::order_request::{OrderCreate, OrderLineCreate};
use depot_protocol::picking::{DEFAULT_WAVE_ORDERS, ScanRequest, ScanResult, WaveCreate};
use depot_protocol::stock::{AdjustRequest, MovementReason};
use depot_protocol::tenant::Caller;
use depot_protocol::{DataEnvelope, OrderId, OrderStatus};
use depot_wms::Wms;
use serde_json::json;
use std::future::Future;
use std::time::Instant;

/// Orders per wave, and lines per order (fewer if the catalog is smaller).
const WAVE_ORDERS: u32 = DEFAULT_WAVE_ORDERS;
const ORDER_LINES: u64 = 3;
/// Scans per second the waves are sized for: far above what a small box
/// serves, so no station runs out of work before the end.
const SCAN_BUDGET: u64 = 40_000;
/// Units per pick line at least.
const MIN_LINE_UNITS: i64 = 200;

/// One pick line: `units` of `sku` for `order`.
struct Line {
    id: i64,
    order: OrderId,
    sku: String,
    units: i64,
}

/// A wave's pick lines as its station walks them.
pub struct Walk {
    wave: i64,
    lines: Vec<Line>,
}

/// The waves built, and what building them took.
pub struct Setup {
    pub walks: Vec<Walk>,
    pub orders: usize,
    pub lines_per_order: u64,
    pub units_per_line: i64,
    /// Changes the edge applied from the cloud's feed.
    pub replicated: usize,
}

/// Stock and confirmed orders in the cloud, replicated to `edge`, then
/// `waves` waves made at the edge, sized for `secs` seconds of scanning.
pub async fn setup(
    cloud: &Cloud,
    edge: &Wms,
    waves: usize,
    items: u64,
    secs: u64,
) -> anyhow::Result<Setup> {
    let (wms, caller, warehouse) = (&cloud.wms, cloud.caller, cloud.warehouse);
    let per_order = ORDER_LINES.min(items);
    let orders = waves * WAVE_ORDERS as usize;
    let lines = orders as u64 * per_order;
    let units = MIN_LINE_UNITS.max((SCAN_BUDGET * secs).div_ceil(lines.max(1)) as i64);
    // Line `g` of the whole set is for SKU `g % items`: an order's lines are
    // consecutive, so distinct. Each SKU gets exactly what its lines need.
    let skus = items.min(lines) as usize;
    load("stock (cloud)", skus, 64, |s| {
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
    load("confirmed orders (cloud)", orders, 64, |o| {
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
    let replicated = cloud.replicate_to(edge).await?;
    let business = cloud.business;
    let mut built = load("waves (edge)", waves, 8, |_| {
        let edge = edge.clone();
        let req = WaveCreate {
            warehouse_id: warehouse,
            max_orders: Some(WAVE_ORDERS),
            carrier: None,
            cutoff: None,
        };
        async move { Ok(edge.create_wave(business, req).await?) }
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
        orders,
        lines_per_order: per_order,
        units_per_line: units,
        replicated,
    })
}

/// What a scan names: the wave, the order worked on, the code scanned.
pub struct Scan {
    pub wave: i64,
    pub order: OrderId,
    pub code: String,
}

/// Scans `walk`'s lines in turn, one unit per scan, until the deadline.
/// `scan` answers what the edge answered, or why it refused; a scan must be
/// answered for the line it was meant for, anything else is an error (and
/// counted, and the line left). A station that finishes its wave stops
/// early.
pub async fn station<F, Fut>(walk: &Walk, deadline: Instant, mut scan: F) -> Tally
where
    F: FnMut(Scan) -> Fut,
    Fut: Future<Output = Result<ScanResult, String>>,
{
    let mut tally = Tally::default();
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
        let answer = scan(Scan {
            wave: walk.wave,
            order: l.order,
            code: l.sku.clone(),
        })
        .await;
        tally.lat.push(sent.elapsed());
        match answer {
            Ok(r) if r.line_id == l.id => {
                left = r.remaining;
                if r.wave_remaining == 0 {
                    tally.ran_out = true;
                    break;
                }
            }
            Ok(r) => {
                tally.errors.push(format!(
                    "the scan for line {} took line {}",
                    l.id, r.line_id
                ));
                left -= 1;
            }
            Err(e) => {
                tally.errors.push(e);
                // A refused scan would be refused again: next line.
                left = 0;
            }
        }
    }
    tally
}

/// A scan over HTTP, as a station sends it.
pub async fn over_http(
    client: &reqwest::Client,
    url: &str,
    key: &str,
    s: Scan,
) -> Result<ScanResult, String> {
    let body = json!({"wave_id": s.wave, "order_id": s.order, "code": s.code, "quantity": 1});
    let resp = client
        .post(url)
        .header("x-api-key", key)
        .json(&body)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = resp.status();
    let text = resp.text().await.map_err(|e| e.to_string())?;
    if !status.is_success() {
        return Err(format!("{status}: {text:.300}"));
    }
    serde_json::from_str::<DataEnvelope<ScanResult>>(&text)
        .map(|r| r.data)
        .map_err(|e| format!("unreadable scan answer: {e}"))
}

/// The same scan as an engine call, without HTTP.
pub async fn direct(edge: &Wms, caller: Caller, s: Scan) -> Result<ScanResult, String> {
    let req = ScanRequest {
        wave_id: s.wave,
        order_id: Some(s.order),
        code: s.code,
        quantity: Some(1),
    };
    edge.pick_scan(caller, req).await.map_err(|e| e.to_string())
}
