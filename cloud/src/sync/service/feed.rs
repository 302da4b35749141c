//! Paging the log down: which edges have new changes, and a round of pages
//! for each; the periodic check of edges online by a hello alone rides on
//! the rounds.

use super::{EdgeKey, Service};
use depot_protocol::BusinessId;
use depot_protocol::sync::DownMessage;
use depot_protocol::sync::message::{MAX_MESSAGE_BYTES, encode};
use depot_protocol::sync::topic::EdgeId;
use std::collections::HashSet;
use tokio::time::Instant;

/// Events of the log read per check for which businesses changed; past it
/// every edge is checked.
const SCAN_LIMIT: u32 = 1000;

/// How often edges online by a hello alone are checked, and how long one
/// may go unheard before it is shown offline.
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(15);
const SILENT_AFTER: std::time::Duration = std::time::Duration::from_secs(60);

enum Progress {
    /// Sent everything there is.
    Done,
    /// Sent a round's worth; more follow.
    More,
    /// Could not read or send; the next tick tries again.
    Failed,
}

impl Service {
    /// The log's newest rev, or `None` (logged) when it cannot be read.
    pub(super) async fn head(&self) -> Option<i64> {
        match self.wms.events_head().await {
            Ok(head) => Some(head),
            Err(e) => {
                tracing::warn!(reason = %e, "cannot read the head of the log");
                None
            }
        }
    }

    /// Marks the edges of businesses with new changes in the log.
    async fn scan(&mut self) {
        let Some(after) = self.scanned else {
            // Nothing is known about what changed: check every edge.
            self.scanned = self.head().await;
            if self.scanned.is_some() {
                self.edges.values_mut().for_each(|d| d.pending = true);
            }
            return;
        };
        let events = match self.wms.events_since(after, SCAN_LIMIT).await {
            Ok(events) => events,
            Err(e) => {
                tracing::warn!(reason = %e, "cannot read the log");
                return;
            }
        };
        let Some(last) = events.last().map(|e| e.seq) else {
            return;
        };
        // A change of no business (a release) concerns every edge.
        let all =
            events.len() >= SCAN_LIMIT as usize || events.iter().any(|e| e.business_id.is_none());
        let touched: HashSet<BusinessId> = events.iter().filter_map(|e| e.business_id).collect();
        for ((business, _), downlink) in &mut self.edges {
            if all || touched.contains(business) {
                downlink.pending = true;
            }
        }
        self.scanned = Some(last);
    }

    /// Sends every edge with pending changes a round of pages.
    pub(super) async fn round(&mut self) {
        self.dirty = false;
        self.last_round = Instant::now();
        if self.last_sweep.elapsed() >= SWEEP_EVERY {
            self.last_sweep = Instant::now();
            self.hellos.forget_idle(self.last_sweep.into_std());
            if let Err(e) = self.wms.expire_silent_edges(SILENT_AFTER).await {
                tracing::warn!(reason = %e, "cannot check edges for silence");
            }
        }
        if !self.connected {
            return;
        }
        self.scan().await;
        if self.options.share_group.is_some() && self.edges.values().any(|d| d.pending) {
            self.keep_own_downlinks().await;
        }
        let due: Vec<EdgeKey> = self
            .edges
            .iter()
            .filter(|(_, d)| d.pending)
            .map(|(k, _)| k.clone())
            .collect();
        for key in due {
            match self.feed(&key).await {
                Progress::Done => {
                    if let Some(d) = self.edges.get_mut(&key) {
                        d.pending = false;
                    }
                }
                Progress::More => self.dirty = true,
                Progress::Failed => {}
            }
        }
    }

    /// Several instances share the edges: an edge's hello may reach any of
    /// them, and the one that answered last owns its downlink (recorded
    /// with the hello). The others stop paging it, so an edge is fed by
    /// one instance, not by each it ever said hello to. When the owner
    /// cannot be read, paging goes on: an edge fed twice skips what it
    /// holds; one fed by nobody waits for its next hello.
    async fn keep_own_downlinks(&mut self) {
        let owned = match self.wms.downlinks_of(self.options.session.clone()).await {
            Ok(owned) => owned.into_iter().collect::<std::collections::HashSet<_>>(),
            Err(e) => {
                tracing::warn!(reason = %e, "cannot read which edges this instance pages");
                return;
            }
        };
        self.edges.retain(|key, _| {
            let mine = owned.contains(key);
            if !mine {
                let (business, edge) = key;
                tracing::info!(%business, %edge, "another instance answered the edge's last hello: it pages the edge now");
            }
            mine
        });
    }

    /// Up to a round's worth of pages for one edge.
    async fn feed(&mut self, key: &EdgeKey) -> Progress {
        let (business, edge) = key;
        for _ in 0..self.options.pages_per_round {
            let Some(after) = self.edges.get(key).map(|d| d.feed.sent()) else {
                return Progress::Done;
            };
            let page = match self.page(*business, edge, after).await {
                Ok(Some(page)) => page,
                Ok(None) => return Progress::Done,
                Err(reason) => {
                    let d = self.edges.get_mut(key);
                    if d.as_ref().is_some_and(|d| d.stalled == Some(after)) {
                        tracing::debug!(%business, %edge, after, %reason, "cannot page the log down");
                    } else {
                        tracing::warn!(%business, %edge, after, %reason, "cannot page the log down");
                    }
                    if let Some(d) = d {
                        d.stalled = Some(after);
                    }
                    return Progress::Failed;
                }
            };
            if !self.send(*business, edge, page.payload).await {
                return Progress::Failed;
            }
            if let Some(d) = self.edges.get_mut(key) {
                d.feed.published(page.to);
                d.stalled = None;
            }
            if !page.more {
                return Progress::Done;
            }
        }
        Progress::More
    }

    /// The next page after `after`, encoded, or `None` when there is
    /// nothing past it. A page too large for a message is read again with
    /// half as many changes.
    async fn page(
        &self,
        business: BusinessId,
        edge: &EdgeId,
        after: i64,
    ) -> Result<Option<EncodedPage>, String> {
        let mut limit = self.options.page_size;
        loop {
            let page = self
                .wms
                .changes_for(business, edge.clone(), after, limit)
                .await
                .map_err(|e| e.to_string())?;
            if page.to <= after {
                return Ok(None);
            }
            let first = page.changes.first().map(|c| c.rev);
            let (to, more) = (page.to, page.more);
            let payload = encode(&DownMessage::Changes {
                from_rev: page.from,
                to_rev: page.to,
                changes: page.changes,
                more: page.more,
            });
            if payload.len() <= MAX_MESSAGE_BYTES {
                return Ok(Some(EncodedPage { payload, to, more }));
            }
            if limit == 1 {
                // Never skipped: the edge would miss it for good. It waits
                // here (retried every tick) until someone looks.
                return Err(format!(
                    "change {} is too large to send ({} bytes encoded, the limit is {MAX_MESSAGE_BYTES})",
                    first.unwrap_or(to),
                    payload.len()
                ));
            }
            limit = (limit / 2).max(1);
        }
    }
}

struct EncodedPage {
    payload: Vec<u8>,
    to: i64,
    more: bool,
}
