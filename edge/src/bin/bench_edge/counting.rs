//! The count-scan scenario at the edge: each station counts a location of
//! its own (one open count each) unit by unit, each scan adding one unit of
//! the goods there, as a station's `counting` task does.

use crate::seed::Cloud;
use depot_bench::{Tally, sku};
use depot_protocol::count::CountScanResult;
use depot_wms::Wms;
use serde_json::{Value, json};
use std::time::Instant;

/// What one station counts: its count, its location, the goods there.
pub struct Shelf {
    pub count: i64,
    pub location: String,
    pub code: String,
}

fn from<T: serde::de::DeserializeOwned>(v: Value) -> anyhow::Result<T> {
    Ok(serde_json::from_value(v)?)
}

/// A location per station at the edge, holding some of one item, and an
/// open count of it made there.
pub async fn setup(cloud: &Cloud, edge: &Wms, stations: usize) -> anyhow::Result<Vec<Shelf>> {
    let (b, w) = (cloud.business, cloud.warehouse.0);
    let mut shelves = Vec::new();
    for i in 0..stations {
        let location = format!("C-{i:03}");
        let code = sku(i as u64);
        edge.create_location(
            b,
            from(json!({"warehouse_id": w, "code": location, "type": "bulk"}))?,
        )
        .await?;
        edge.adjust(
            cloud.caller,
            from(json!({"warehouse_id": w, "sku": code, "reason": "received",
                "quantity": 24, "location": location}))?,
        )
        .await?;
        let count = edge
            .create_count(
                cloud.caller,
                from(json!({"warehouse_id": w, "locations": [location]}))?,
            )
            .await?;
        shelves.push(Shelf {
            count: count.summary.id.0,
            location,
            code,
        });
    }
    Ok(shelves)
}

/// Counts `shelf` one unit per scan over HTTP until the deadline.
pub async fn station(
    client: &reqwest::Client,
    base: &str,
    business: i64,
    key: &str,
    shelf: &Shelf,
    deadline: Instant,
) -> Tally {
    let mut tally = Tally::default();
    let url = format!("{base}/v1/counts/{business}/{}/scan", shelf.count);
    let body = json!({"location": shelf.location, "code": shelf.code, "add": true});
    while Instant::now() < deadline {
        let sent = Instant::now();
        let answer: Result<CountScanResult, String> =
            crate::picking::post(client, &url, key, &body).await;
        tally.lat.push(sent.elapsed());
        if let Err(e) = answer {
            tally.errors.push(e);
            break;
        }
    }
    tally
}
