//! The pick-scan scenario at the edge: orders confirmed in the cloud reach
//! the edge through the down feed; the edge makes one wave per station and
//! each station scans its wave one unit at a time, order after order, as a
//! station working one order at a time does: closed loop (each station
//! waiting for its answer), or open loop (scans sent at a fixed rate, round
//! robin over the stations, whatever the answers do).

use crate::seed::Cloud;
use depot_bench::picking::{Position, Walk, Workload};
use depot_bench::{OpenRun, Tally};
use depot_protocol::picking::{ScanRequest, ScanResult};
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, DataEnvelope, OrderId};
use depot_wms::Wms;
use serde_json::json;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

/// Scans per second each set of waves is sized for: far above what a small
/// box serves, so no station runs out of work before the end.
const SCAN_BUDGET: u64 = 40_000;

/// The waves built, and what building them took.
pub struct Setup {
    pub work: Workload,
    pub walks: Vec<Walk>,
    /// Changes the edge applied from the cloud's feed.
    pub replicated: usize,
}

/// Stock and confirmed orders in the cloud, replicated to `edge`, then
/// `sets` sets of `stations` waves made at the edge, each set sized for
/// `secs` seconds of scanning at `rate` scans a second or more.
pub async fn setup(
    cloud: &Cloud,
    edge: &Wms,
    sets: usize,
    stations: usize,
    items: u64,
    secs: u64,
    rate: f64,
) -> anyhow::Result<Setup> {
    // The budget is shared by every wave of the workload: each set gets
    // its part of it.
    let per_set = SCAN_BUDGET.max(rate.max(0.0).ceil() as u64);
    let work = Workload::new(sets * stations, items, secs, per_set * sets as u64);
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

/// Scans on `walks` open loop over HTTP: `rate` a second for `secs`,
/// whatever the answers do, request `i` for station `i % walks.len()`,
/// each timed from when it was due. The unit is taken from the station's
/// walk when its scan is sent; the answer is checked as the closed loop
/// checks it (a 2xx for the line meant), and a station with nothing left
/// to scan is an error too.
pub async fn open_loop(
    name: &'static str,
    client: &reqwest::Client,
    (url, key): (&Arc<String>, &Arc<String>),
    (walks, at): (&Arc<Vec<Walk>>, &Positions),
    rate: f64,
    secs: u64,
) -> OpenRun {
    depot_bench::open_loop(name, rate, secs as f64, |i| {
        let s = i % walks.len().max(1);
        let taken = walks.get(s).and_then(|walk| {
            let mut at = at.get(s)?.lock().unwrap_or_else(PoisonError::into_inner);
            walk.take(&mut at).map(|l| {
                (
                    l.id,
                    Scan {
                        wave: walk.wave,
                        order: l.order,
                        code: l.sku.clone(),
                    },
                )
            })
        });
        let (client, url, key) = (client.clone(), url.clone(), key.clone());
        async move {
            let Some((line, scan)) = taken else {
                return Err(format!("station {s} has nothing left to scan"));
            };
            match over_http(&client, &url, &key, scan).await? {
                r if r.line_id == line => Ok(()),
                r => Err(format!("the scan for line {line} took line {}", r.line_id)),
            }
        }
    })
    .await
}

/// Where each station of an open loop is on its walk, shared by the
/// runs that scan the same waves (a warm-up, then the measured run).
pub type Positions = Arc<Vec<Mutex<Position>>>;

/// Every station at the start of its walk.
pub fn positions(walks: &[Walk]) -> Positions {
    Arc::new(walks.iter().map(|w| Mutex::new(w.position())).collect())
}

/// Units picked so far on `walks`' waves, as the edge's database has them.
pub async fn picked(edge: &Wms, business: BusinessId, walks: &[Walk]) -> anyhow::Result<i64> {
    let mut units = 0;
    for w in walks {
        units += edge.wave(business, w.wave).await?.units_picked;
    }
    Ok(units)
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
