//! What an event log holds, for tests of sync: an event that arrived twice
//! or not at all shows in the counts.

use depot_wms::Wms;
use std::collections::HashMap;

/// How many times each event id is in `wms`'s log.
pub async fn event_ids(wms: &Wms) -> HashMap<String, usize> {
    let mut ids = HashMap::new();
    for e in wms.events_since(0, u32::MAX).await.expect("events") {
        *ids.entry(e.id.to_string()).or_insert(0) += 1;
    }
    ids
}

/// How many times each stock movement (by its id) is in `wms`'s log: a
/// write that arrived twice or not at all shows in the counts.
pub async fn movement_ids(wms: &Wms) -> HashMap<String, usize> {
    let mut seen = HashMap::new();
    for e in wms.events_since(0, u32::MAX).await.expect("events") {
        if e.kind == "stock.moved" {
            if let Some(id) = e.payload["id"].as_str() {
                *seen.entry(id.to_owned()).or_insert(0) += 1;
            }
        }
    }
    seen
}

/// The events `wms` made itself after log position `after`, in log order,
/// with the position read through: what a cloud's sync pages to its edges
/// (the cloud numbers nothing outgoing on PostgreSQL, so its own events
/// are read by their place in its log).
pub async fn own_since(wms: &Wms, after: i64) -> (i64, Vec<depot_protocol::event::Event>) {
    let head = wms.events_head().await.expect("head");
    let events = wms
        .events_since(after, u32::MAX)
        .await
        .expect("events")
        .into_iter()
        .filter(|e| e.origin == wms.origin() && e.seq <= head)
        .collect();
    (head, events)
}
