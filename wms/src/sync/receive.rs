//! Batches from an edge, in the cloud: each applied exactly once and in
//! order, in one transaction with the edge's cursor, cut into jobs of at
//! most [`EVENTS_PER_JOB`] events queued on the writer in order.

use crate::presence;
use crate::replica::{self, Outcome};
use crate::store::{self, sync as sql};
use crate::{Result, Wms, WmsError};
use depot_protocol::event::RemoteEvent;
use depot_protocol::sync::message::OVERSIZED_KIND;
use depot_protocol::sync::{EdgeId, Rejection, SyncEvent, inbox};
use depot_protocol::{BusinessId, catalogue, now};
use depot_sql::Db;

/// What the cloud answers a batch with.
#[derive(Debug, Clone, PartialEq)]
pub struct Ack {
    pub through: i64,
    pub gap: bool,
    pub rejected: Vec<Rejection>,
}

/// Events a writer job applies at most. A statement that fires a trigger
/// runs in a statement savepoint, and releasing it walks SQLite's in-memory
/// sub-journal from its start: everything the job's own savepoint has
/// journaled so far. In a job of thousands of events (a burst of batches
/// from many edges) that walk grew with every event, quadratic in the job:
/// 10 % of a 100-edge drain's profile. Runs of this many keep it short.
pub const EVENTS_PER_JOB: usize = 128;

/// `events` cut into runs of at most `most`, in order; one (empty) run for
/// no events, so every batch is answered.
fn runs_of(events: Vec<SyncEvent>, most: usize) -> Vec<Vec<SyncEvent>> {
    let most = most.max(1);
    if events.len() <= most {
        return vec![events];
    }
    let mut runs = Vec::with_capacity(events.len().div_ceil(most));
    let mut events = events.into_iter().peekable();
    while events.peek().is_some() {
        runs.push(events.by_ref().take(most).collect());
    }
    runs
}

/// The answer to a batch applied in runs, from the answers to its runs in
/// their order: the furthest cursor; a gap where the run that reached it
/// (or a later one that did not get past it) found one; every rejection; a
/// run refused refuses the batch.
fn merge_acks(before: Result<Ack>, run: Result<Ack>) -> Result<Ack> {
    let (mut acc, run) = match (before, run) {
        (Err(e), _) | (Ok(_), Err(e)) => return Err(e),
        (Ok(acc), Ok(run)) => (acc, run),
    };
    acc.gap = if run.through > acc.through {
        run.gap
    } else {
        acc.gap || run.gap
    };
    acc.through = acc.through.max(run.through);
    acc.rejected.extend(run.rejected);
    Ok(acc)
}

/// Batches queued by [`Wms::queue_batches`]: their acknowledgements, once
/// the writer has committed them.
#[must_use = "queued batches are answered by their acknowledgements"]
pub struct Receipts {
    batches: usize,
    /// Each run's batch, and its job (or why it could not be queued).
    queued: Vec<(usize, Result<crate::writer::Queued<Ack>>)>,
}

impl Receipts {
    /// Each batch's acknowledgement, in the order they were queued: its
    /// runs' merged, or the first refusal among them.
    pub async fn acks(self) -> Vec<Result<Ack>> {
        let mut acks: Vec<Option<Result<Ack>>> = (0..self.batches).map(|_| None).collect();
        for (i, job) in self.queued {
            let ack = match job {
                Ok(answer) => answer.await,
                Err(e) => Err(e),
            };
            acks[i] = Some(match acks[i].take() {
                None => ack,
                Some(before) => merge_acks(before, ack),
            });
        }
        acks.into_iter()
            .map(|a| a.unwrap_or_else(|| Err(WmsError::Internal("a batch went unanswered".into()))))
            .collect()
    }
}

fn receive(
    conn: &Db,
    node: &str,
    business: BusinessId,
    edge: &EdgeId,
    events: Vec<SyncEvent>,
    checked: bool,
) -> Result<Ack> {
    let record = sql::edge(conn, business, edge.as_str())?.ok_or_else(|| {
        WmsError::NotFound(format!(
            "edge {edge} is not registered in business {business}"
        ))
    })?;
    let plan = inbox::plan(record.up_cursor, &events);
    let origin = format!("edge:{edge}");
    let mut events: Vec<Option<SyncEvent>> = events.into_iter().map(Some).collect();
    let mut todo = Vec::with_capacity(plan.apply.len());
    for &i in &plan.apply {
        let Some(e) = events.get_mut(i).and_then(Option::take) else {
            continue;
        };
        let refusal = if e.kind == OVERSIZED_KIND {
            Some("the event was too large to send".to_owned())
        } else if !catalogue::edges_may_send(&e.kind) {
            Some(format!("an edge may not send {} events", e.kind))
        } else {
            None
        };
        let event = RemoteEvent {
            id: e.id,
            origin: origin.clone(),
            business_id: Some(business),
            kind: e.kind,
            payload: e.payload,
            at: e.at,
            seq: Some(e.seq),
        };
        todo.push((e.seq, event, refusal));
    }
    let sender = replica::Sender::edge(
        business,
        edge.as_str(),
        record.node,
        record.warehouses.clone(),
    );
    let rejected = replica::optimistic(conn, |conn, guard| {
        let mut checker = checked.then(|| replica::Checker::new(&sender));
        let mut rejected = Vec::new();
        // What the edge is told back: the events refused.
        let mut answer = |(seq, event, _): &(i64, RemoteEvent, _), outcome| {
            if let Outcome::Rejected { reason } = outcome {
                let rejection = Rejection {
                    seq: *seq,
                    id: event.id,
                    reason,
                };
                rejected.push((rejection, event.kind.clone()));
            }
        };
        let mut at = 0;
        while at < todo.len() {
            let (_, event, refusal) = &todo[at];
            if let Some(reason) = refusal {
                let outcome = if store::events::append_remote(conn, event)? {
                    replica::refuse(conn, event, reason, "rejected")?;
                    Outcome::Rejected {
                        reason: reason.clone(),
                    }
                } else {
                    Outcome::Duplicate
                };
                answer(&todo[at], outcome);
                at += 1;
                continue;
            }
            // The events up to the next refused one, runs of movements
            // together (see `replica::movements`).
            let n = todo[at..].iter().take_while(|t| t.2.is_none()).count();
            let events: Vec<&RemoteEvent> = todo[at..at + n].iter().map(|t| &t.1).collect();
            let Some(outcomes) = replica::apply_all(conn, &events, guard, checker.as_mut())? else {
                return Ok(None);
            };
            todo[at..at + n]
                .iter()
                .zip(outcomes)
                .for_each(|(t, o)| answer(t, o));
            at += n;
        }
        Ok(Some(rejected))
    })?;
    let at = now();
    for (r, kind) in &rejected {
        sql::note_refused(conn, business, edge.as_str(), kind, &r.reason, &at)?;
    }
    // The edge numbered parcels: it gets its next block of SSCCs before it
    // needs it.
    if todo.iter().any(|(_, e, _)| e.kind == "shipment.packed") {
        crate::sscc::keep_ahead(conn, node, business, record.node)?;
    }
    let rejected = rejected.into_iter().map(|(r, _)| r).collect();
    sql::advance(conn, business, edge.as_str(), plan.through, &at)?;
    presence::advanced(conn, node, business, edge, record.backlog)?;
    Ok(Ack {
        through: plan.through,
        gap: plan.gap,
        rejected,
    })
}

impl Wms {
    /// Cloud: applies a batch from an edge, exactly once and in order, and
    /// answers the acknowledgement to send back.
    pub async fn receive_batch(
        &self,
        business: BusinessId,
        edge: EdgeId,
        events: Vec<SyncEvent>,
    ) -> Result<Ack> {
        let node = self.origin().to_owned();
        let checked = self.ownership_checked();
        self.write_for(business, move |conn| {
            receive(conn, &node, business, &edge, events, checked)
        })
        .await
    }

    /// Cloud: several batches (of one edge or many), each as
    /// [`Wms::receive_batch`] would apply it, each cut into runs of at most
    /// [`EVENTS_PER_JOB`] events, a job each, queued in order: a run that
    /// is refused leaves the others applied (the batch is answered with the
    /// refusal; the edge sends it again and what was applied is skipped).
    /// The jobs are queued together, so the writer commits a burst in one
    /// transaction (group commit); on PostgreSQL each business's jobs take
    /// only its business's turn.
    pub async fn receive_batches(
        &self,
        batches: Vec<(BusinessId, EdgeId, Vec<SyncEvent>)>,
    ) -> Vec<Result<Ack>> {
        self.queue_batches(batches).await.acks().await
    }

    /// [`Wms::receive_batches`] in two steps: answers once the jobs are
    /// queued, with what answers once they are committed. Batches queued
    /// by one caller one call after another are applied in that order, so
    /// the caller may read and queue the next while the writer applies
    /// these.
    pub async fn queue_batches(
        &self,
        batches: Vec<(BusinessId, EdgeId, Vec<SyncEvent>)>,
    ) -> Receipts {
        let node = self.origin().to_owned();
        let checked = self.ownership_checked();
        let batches_n = batches.len();
        let mut queued = Vec::with_capacity(batches_n);
        // Queued one after another, so the writer runs them in this order:
        // a batch's runs one after the other, the batches as they came.
        // (Futures that each queue one and are polled together lose their
        // order past tokio's cooperative budget, and a later run that goes
        // first sees a hole.)
        for (i, (business, edge, events)) in batches.into_iter().enumerate() {
            for events in runs_of(events, EVENTS_PER_JOB) {
                let node = node.clone();
                let edge = edge.clone();
                let job = self
                    .queue_for(business, move |conn| {
                        receive(conn, &node, business, &edge, events, checked)
                    })
                    .await;
                queued.push((i, job));
            }
        }
        Receipts {
            batches: batches_n,
            queued,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use depot_protocol::EventId;

    fn event(seq: i64) -> SyncEvent {
        SyncEvent {
            seq,
            id: EventId::new(),
            kind: "stock.adjusted".into(),
            payload: serde_json::value::to_raw_value(&serde_json::json!({})).expect("json"),
            at: now(),
        }
    }

    fn seqs(runs: &[Vec<SyncEvent>]) -> Vec<Vec<i64>> {
        runs.iter()
            .map(|r| r.iter().map(|e| e.seq).collect())
            .collect()
    }

    #[test]
    fn a_batch_is_cut_into_runs_in_order_and_none_is_lost() {
        let events: Vec<SyncEvent> = (1..=7).map(event).collect();
        assert_eq!(
            seqs(&runs_of(events, 3)),
            vec![vec![1, 2, 3], vec![4, 5, 6], vec![7]]
        );
        let events: Vec<SyncEvent> = (1..=6).map(event).collect();
        assert_eq!(seqs(&runs_of(events, 3)).len(), 2);
        // An empty batch is still answered: one empty run.
        assert_eq!(seqs(&runs_of(Vec::new(), 3)), vec![Vec::<i64>::new()]);
        assert_eq!(seqs(&runs_of((1..=2).map(event).collect(), 0)).len(), 2);
    }

    fn ack(through: i64, gap: bool, rejected: &[i64]) -> Result<Ack> {
        Ok(Ack {
            through,
            gap,
            rejected: rejected
                .iter()
                .map(|&seq| Rejection {
                    seq,
                    id: EventId::new(),
                    reason: "no".into(),
                })
                .collect(),
        })
    }

    #[test]
    fn runs_answer_as_one_batch() {
        // In order: the last run's cursor, its gap, every rejection.
        let merged = merge_acks(ack(100, false, &[7]), ack(200, false, &[150])).expect("ok");
        assert_eq!((merged.through, merged.gap), (200, false));
        assert_eq!(
            merged.rejected.iter().map(|r| r.seq).collect::<Vec<_>>(),
            vec![7, 150]
        );
        // A hole before the batch: every run finds it.
        let merged = merge_acks(ack(10, true, &[]), ack(10, true, &[])).expect("ok");
        assert_eq!((merged.through, merged.gap), (10, true));
        // A later run that did not get past the cursor says what is missing
        // after it.
        let merged = merge_acks(ack(100, false, &[]), ack(50, true, &[])).expect("ok");
        assert_eq!((merged.through, merged.gap), (100, true));
        // A run refused refuses the batch.
        assert!(merge_acks(ack(100, false, &[]), Err(WmsError::Internal("x".into()))).is_err());
        assert!(merge_acks(Err(WmsError::Internal("x".into())), ack(100, false, &[])).is_err());
    }
}
