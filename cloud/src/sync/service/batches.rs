//! Batches: a group's queued on the writer at once, answered to their
//! edges in the order they were queued once the writer has committed them.
//! While the writer applies one group the service reads, decodes and
//! queues the next, so the writer does not wait on the service.

use super::Service;
use super::message::Pending;
use depot_protocol::BusinessId;
use depot_protocol::sync::message::encode;
use depot_protocol::sync::topic::EdgeId;
use depot_wms::Result;
use depot_wms::sync::Ack;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;

/// Groups queued on the writer and not yet answered, at most: the service
/// reads no message while this many wait. With the broker's inflight
/// window it bounds what the cloud holds of edges' batches.
pub(super) const APPLYING: usize = 2;

/// A group's batches, queued on the writer.
pub(super) struct Applying {
    /// Each batch's edge, session and number of events, in queued order.
    heads: Vec<(BusinessId, EdgeId, String, usize)>,
    acks: Pin<Box<dyn Future<Output = Vec<Result<Ack>>> + Send + Sync>>,
}

impl Applying {
    /// The edges whose batches these are.
    pub(super) fn edges(&self) -> impl Iterator<Item = (BusinessId, &EdgeId)> {
        self.heads
            .iter()
            .map(|(business, edge, ..)| (*business, edge))
    }
}

/// The answers to the group queued first; pending while none is.
pub(super) async fn first_answered(applying: &mut VecDeque<Applying>) -> Vec<Result<Ack>> {
    match applying.front_mut() {
        Some(first) => first.acks.as_mut().await,
        None => std::future::pending().await,
    }
}

impl Service {
    /// Queues batches on the writer, a job per run of events, in order,
    /// and goes on: [`Service::answered`] acknowledges them once committed.
    pub(super) async fn queue(&mut self, batches: Vec<Pending>) {
        if batches.is_empty() {
            return;
        }
        let mut heads = Vec::with_capacity(batches.len());
        let mut inputs = Vec::with_capacity(batches.len());
        for Pending {
            topic,
            session,
            events,
        } in batches
        {
            heads.push((topic.business, topic.edge.clone(), session, events.len()));
            inputs.push((topic.business, topic.edge, events));
        }
        let events: usize = heads.iter().map(|(.., count)| count).sum();
        tracing::debug!(
            batches = heads.len(),
            events,
            before = self.applying.len(),
            "queued batches"
        );
        let receipts = self.wms.queue_batches(inputs).await;
        self.applying.push_back(Applying {
            heads,
            acks: Box::pin(receipts.acks()),
        });
    }

    /// The group queued first was answered: each batch is acknowledged to
    /// its edge (or its refusal logged: the edge sends it again).
    pub(super) async fn answered(&mut self, acks: Vec<Result<Ack>>) {
        let Some(Applying { heads, .. }) = self.applying.pop_front() else {
            return;
        };
        for ((business, edge, session, count), result) in heads.into_iter().zip(acks) {
            let ack = match result {
                Ok(ack) => ack,
                Err(e) => {
                    tracing::warn!(%business, %edge, events = count, reason = %e, "refused a batch");
                    continue;
                }
            };
            tracing::debug!(
                %business, %edge, %session, events = count, through = ack.through,
                gap = ack.gap, rejected = ack.rejected.len(), "applied a batch"
            );
            for message in super::super::ack::messages(&session, ack) {
                self.send(business, &edge, encode(&message)).await;
            }
        }
        // The log may have grown: other edges of the business may need it.
        self.dirty = true;
    }

    /// Queues batches and waits until they and every group queued before
    /// are answered: what comes next sees them applied.
    pub(super) async fn apply(&mut self, batches: Vec<Pending>) {
        self.queue(batches).await;
        self.settle().await;
    }

    /// Waits until every group queued is answered, and answers them.
    pub(super) async fn settle(&mut self) {
        while let Some(first) = self.applying.front_mut() {
            let acks = first.acks.as_mut().await;
            self.answered(acks).await;
        }
    }
}
