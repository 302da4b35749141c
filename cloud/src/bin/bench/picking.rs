//! The pick-scan scenario: waves of confirmed orders in the second warehouse,
//! each worked through by one scanner, one unit per scan, as a station
//! working one order at a time would.

use crate::target::Target;
use depot_bench::Tally;
use depot_bench::load::PARALLEL;
use depot_bench::picking::{Walk, Workload};
use depot_protocol::picking::ScanResult;
use depot_protocol::tenant::Caller;
use depot_protocol::{DataEnvelope, WarehouseId};
use depot_wms::Wms;
use reqwest::StatusCode;
use serde_json::json;
use std::time::Instant;

/// Scans per second the waves are sized for: well above what the router
/// serves on a small machine, so no scanner runs out of work in time.
const SCAN_BUDGET: u64 = 80_000;

/// Builds `waves` waves of confirmed orders in `warehouse`, with stock
/// received there to cover them, sized for `secs` seconds of scanning;
/// answers the workload and its waves' walks.
pub async fn setup(
    wms: &Wms,
    caller: Caller,
    warehouse: WarehouseId,
    waves: usize,
    items: u64,
    secs: u64,
) -> anyhow::Result<(Workload, Vec<Walk>)> {
    let work = Workload::new(waves, items, secs, SCAN_BUDGET);
    work.seed(wms, caller, warehouse, "W2").await?;
    let walks = work
        .waves(wms, caller.business_id, warehouse, PARALLEL, "W2")
        .await?;
    Ok((work, walks))
}

/// Scans `walk`'s lines in turn, one unit per request, until the deadline.
/// Running out of work (the wave picked, or a 409/422 that says so) ends the
/// worker early and is not an error; its refused scan is not counted.
pub async fn scan(t: &Target, walk: &Walk, deadline: Instant) -> Tally {
    let mut tally = Tally::default();
    // A scanner stays on one instance, as a station's connection would.
    let url = format!(
        "{}/v1/picking/{}/item/scan",
        t.base(walk.wave.0 as u64),
        t.business
    );
    let mut walker = walk.start();
    while Instant::now() < deadline {
        let Some(l) = walker.line() else {
            tally.ran_out = true;
            break;
        };
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
                        walker.left = r.data.remaining;
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
                        walker.left -= 1;
                    }
                    Err(e) => {
                        tally.errors.push(format!("unreadable scan answer: {e}"));
                        walker.left -= 1;
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
