//! The pick-scan scenario at the edge: orders confirmed in the cloud reach
//! the edge through the down feed; the edge makes one wave per station and
//! each station scans its wave one unit at a time, order after order, as a
//! station working one order at a time does.

use crate::seed::Cloud;
use depot_bench::Tally;
use depot_bench::picking::{Walk, Workload};
use depot_protocol::picking::{ScanRequest, ScanResult};
use depot_protocol::tenant::Caller;
use depot_protocol::{DataEnvelope, OrderId};
use depot_wms::Wms;
use serde_json::json;
use std::future::Future;
use std::time::Instant;

/// Scans per second the waves are sized for: far above what a small box
/// serves, so no station runs out of work before the end.
const SCAN_BUDGET: u64 = 40_000;

/// The waves built, and what building them took.
pub struct Setup {
    pub work: Workload,
    pub walks: Vec<Walk>,
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
    let work = Workload::new(waves, items, secs, SCAN_BUDGET);
    work.seed(&cloud.wms, cloud.caller, cloud.warehouse, "cloud")
        .await?;
    let replicated = cloud.replicate_to(edge).await?;
    let walks = work
        .waves(edge, cloud.business, cloud.warehouse, 8, "edge")
        .await?;
    Ok(Setup {
        work,
        walks,
        replicated,
    })
}

/// What a scan names: the wave, the order worked on, the code scanned.
pub struct Scan {
    pub wave: depot_protocol::WaveId,
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
    let mut walker = walk.start();
    while Instant::now() < deadline {
        let Some(l) = walker.line() else {
            tally.ran_out = true;
            break;
        };
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
                walker.left = r.remaining;
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
                walker.left -= 1;
            }
            Err(e) => {
                tally.errors.push(e);
                // A refused scan would be refused again: next line.
                walker.left = 0;
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
    post(client, url, key, &body).await
}

/// Posts `body` as a station does and reads the answer's data; an answer
/// other than a 2xx is the error, with the start of its body.
pub async fn post<T: serde::de::DeserializeOwned>(
    client: &reqwest::Client,
    url: &str,
    key: &str,
    body: &serde_json::Value,
) -> Result<T, String> {
    let resp = client
        .post(url)
        .header("x-api-key", key)
        .json(body)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = resp.status();
    let text = resp.text().await.map_err(|e| e.to_string())?;
    if !status.is_success() {
        return Err(format!("{status}: {text:.300}"));
    }
    serde_json::from_str::<DataEnvelope<T>>(&text)
        .map(|r| r.data)
        .map_err(|e| format!("unreadable answer: {e}"))
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
