//! The putaway-scan scenario at the edge: each station has a pallet of one
//! item received at the dock (one putaway task) and puts it away one unit
//! per scan to a rack of its own, as a station scanning the goods and the
//! rack does.

use crate::seed::Cloud;
use depot_bench::{Tally, sku};
use depot_protocol::putaway::PutawayResult;
use depot_wms::Wms;
use serde_json::{Value, json};
use std::time::Instant;

/// Scans per second the pallets are sized for: far above what a small box
/// serves, so no station runs out of work before the end.
const SCAN_BUDGET: u64 = 40_000;

/// What one station puts away: its task, the goods' code, its rack.
pub struct Pallet {
    pub task: i64,
    pub code: String,
    pub rack: String,
}

fn from<T: serde::de::DeserializeOwned>(v: Value) -> anyhow::Result<T> {
    Ok(serde_json::from_value(v)?)
}

/// One inbound order per station in the cloud, replicated to `edge`, and
/// received there at a dock made at the edge: one task per station, sized
/// for `secs` seconds of scanning.
pub async fn setup(
    cloud: &Cloud,
    edge: &Wms,
    stations: usize,
    secs: u64,
) -> anyhow::Result<Vec<Pallet>> {
    let units = (SCAN_BUDGET * secs / stations.max(1) as u64).max(1_000);
    let (b, w) = (cloud.business, cloud.warehouse.0);
    edge.create_location(
        b,
        from(json!({"warehouse_id": w, "code": "BENCH-DOCK", "type": "dock"}))?,
    )
    .await?;
    let mut inbound = Vec::new();
    for i in 0..stations {
        let order = cloud
            .wms
            .create_inbound(
                b,
                from(
                    json!({"warehouse_id": w, "reference": format!("BENCH-PO-{i}"),
                    "supplier": "Bench", "lines": [{"sku": sku(i as u64), "quantity": units}]}),
                )?,
            )
            .await?;
        inbound.push(order.id);
        edge.create_location(
            b,
            from(json!({"warehouse_id": w, "code": format!("R-{i:03}"), "type": "bulk"}))?,
        )
        .await?;
    }
    cloud.replicate_to(edge).await?;
    let mut pallets = Vec::new();
    for (i, id) in inbound.into_iter().enumerate() {
        let code = sku(i as u64);
        let r = edge
            .receive(
                cloud.caller,
                from(json!({"inbound_id": id, "location": "BENCH-DOCK",
                    "lines": [{"code": code, "quantity": units}]}))?,
            )
            .await?;
        let task = r.received[0]
            .putaway_task_id
            .ok_or_else(|| anyhow::anyhow!("a reception at the dock made no putaway task"))?;
        pallets.push(Pallet {
            task: task.0,
            code,
            rack: format!("R-{i:03}"),
        });
    }
    Ok(pallets)
}

/// Puts `pallet` away one unit per scan over HTTP until the deadline.
pub async fn station(
    client: &reqwest::Client,
    url: &str,
    key: &str,
    pallet: &Pallet,
    deadline: Instant,
) -> Tally {
    let mut tally = Tally::default();
    let body = json!({"task_id": pallet.task, "code": pallet.code, "location": pallet.rack, "quantity": 1});
    while Instant::now() < deadline {
        let sent = Instant::now();
        let answer: Result<PutawayResult, String> =
            crate::picking::post(client, url, key, &body).await;
        tally.lat.push(sent.elapsed());
        match answer {
            Ok(r) if r.task.remaining == 0 => {
                tally.ran_out = true;
                break;
            }
            Ok(_) => {}
            Err(e) => {
                tally.errors.push(e);
                break;
            }
        }
    }
    tally
}
