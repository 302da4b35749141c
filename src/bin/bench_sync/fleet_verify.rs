//! After the drain: nothing lost, nothing doubled, the books as the
//! adjustments make them, in the cloud and at every edge.

use super::super::drain::{self, Business};
use super::edges::Member;
use anyhow::bail;
use depot_protocol::EventId;
use depot_wms::Wms;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

/// Nothing lost, nothing doubled: every event of every edge is in the
/// cloud's log exactly once (the log read whole), each edge's count there
/// is its head; every stock level is what the adjustments make, in the
/// cloud and at every edge of the business (each warehouse's); no
/// conflicts on either side. Answers what was checked.
pub(super) async fn verify(
    cloud: &Wms,
    fleet: &[Member],
    businesses: &[Arc<Business>],
    events: usize,
) -> anyhow::Result<String> {
    let started = Instant::now();
    let mut by_origin: HashMap<String, i64> = HashMap::new();
    let mut seen: HashMap<EventId, u32> = HashMap::new();
    let mut after = 0;
    let mut logged = 0usize;
    loop {
        let page = cloud.events_since(after, 10_000).await?;
        let Some(last) = page.last().map(|e| e.seq) else {
            break;
        };
        logged += page.len();
        for e in page {
            *by_origin.entry(e.origin).or_default() += 1;
            *seen.entry(e.id).or_default() += 1;
        }
        after = last;
    }
    let doubled = seen.values().filter(|&&n| n > 1).count();
    if doubled > 0 {
        bail!("{doubled} events are in the cloud's log more than once");
    }
    let mut lost = 0;
    for m in fleet {
        let origin = m.t.edge.origin().to_owned();
        let here = by_origin.get(&origin).copied().unwrap_or(0);
        let missing = m
            .backlog
            .ids
            .iter()
            .filter(|id| !seen.contains_key(id))
            .count();
        if here != m.t.head || missing > 0 {
            eprintln!(
                "edge {}: the cloud's log has {here} of its events, it made {}; {missing} of its backlog are missing",
                m.t.edge_id, m.t.head
            );
            lost += 1;
        }
    }
    if lost > 0 {
        bail!("{lost} edges' events are not all in the cloud's log, or more are");
    }
    let expected = drain::expected_on_hand(events);
    let mut levels = 0;
    for m in fleet {
        let b = &businesses[m.business];
        for &warehouse in &b.warehouses {
            for (item, &on_hand) in b.items.iter().zip(&expected) {
                let at_edge = m.t.edge.stock_level(*item, warehouse).await?;
                let want = (on_hand, 0);
                if at_edge != want {
                    bail!(
                        "edge {}: item {item} in warehouse {warehouse} is {at_edge:?}, the adjustments make {want:?}",
                        m.t.edge_id
                    );
                }
                levels += 1;
                if warehouse == m.t.warehouse {
                    let in_cloud = cloud.stock_level(*item, warehouse).await?;
                    if in_cloud != want {
                        bail!(
                            "the cloud: item {item} in edge {}'s warehouse {warehouse} is {in_cloud:?}, the adjustments make {want:?}",
                            m.t.edge_id
                        );
                    }
                    levels += 1;
                }
            }
        }
        let conflicts = m.t.edge.conflicts(None, 5).await?;
        if !conflicts.is_empty() {
            bail!("edge {} recorded conflicts: {conflicts:?}", m.t.edge_id);
        }
    }
    for b in businesses {
        let conflicts = cloud.conflicts(Some(b.id), 5).await?;
        if !conflicts.is_empty() {
            bail!("the cloud recorded conflicts: {conflicts:?}");
        }
    }
    let mine: i64 = fleet.iter().map(|m| m.t.head).sum();
    Ok(format!(
        "verified ({:.1} s): the cloud's log ({logged} events) holds each of the edges' {mine} events exactly once, each edge's all; {levels} stock levels as the adjustments make them, in the cloud and at every edge (every warehouse of its business); no conflicts",
        started.elapsed().as_secs_f64()
    ))
}
