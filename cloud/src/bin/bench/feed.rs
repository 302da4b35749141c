//! The change feed after a channel edit: how long the edit took to
//! recompute every item's figure, and how fast a connector reads them.

use crate::target::Target;
use depot_wms::Wms;
use serde_json::json;
use std::time::Instant;

/// What reading the change feed after a channel edit took.
pub struct Feed {
    pub edit_ms: f64,
    pub items: usize,
    pub pages: usize,
    pub read_ms: f64,
}

/// Edits channel `bench-1` to hold nothing back, which changes every
/// item's figure, then reads them all through the change feed over HTTP,
/// 1,000 a page, as a connector would.
pub async fn change_feed(
    wms: &Wms,
    t: &Target,
    business: depot_protocol::BusinessId,
) -> anyhow::Result<Feed> {
    let page = |after: &str| {
        t.client
            .get(format!(
                "{}/v1/channels/{}/bench-1/availability/changes?after={after}&limit=1000",
                t.bases[0], t.business
            ))
            .header("x-api-key", &t.key)
            .send()
    };
    // To the feed's head first.
    let mut cursor = String::new();
    loop {
        let body: serde_json::Value = page(&cursor).await?.error_for_status()?.json().await?;
        let next = body["next"].as_str().unwrap_or_default().to_owned();
        if next == cursor {
            break;
        }
        cursor = next;
    }
    let fields = serde_json::from_value(json!({"code": "bench-1", "name": "Bench channel 1",
        "kind": "marketplace", "warehouse_ids": [t.warehouse.0], "buffer_units": 0}))?;
    let editing = Instant::now();
    wms.edit_channel(business, "bench-1".into(), fields).await?;
    let edit_ms = editing.elapsed().as_secs_f64() * 1000.0;
    let reading = Instant::now();
    let (mut items, mut pages) = (0, 0);
    loop {
        let body: serde_json::Value = page(&cursor).await?.error_for_status()?.json().await?;
        let rows = body["data"].as_array().map_or(0, Vec::len);
        if rows == 0 {
            break;
        }
        items += rows;
        pages += 1;
        cursor = body["next"].as_str().unwrap_or_default().to_owned();
    }
    Ok(Feed {
        edit_ms,
        items,
        pages,
        read_ms: reading.elapsed().as_secs_f64() * 1000.0,
    })
}
