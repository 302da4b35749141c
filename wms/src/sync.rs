//! The storage side of sync: edge registration and cursors in the cloud,
//! batches from an edge applied exactly once and in order, and the edge's
//! own acknowledgement. The protocol rules themselves are pure, in
//! `depot_protocol::sync`; this module runs them against the database, each
//! batch in one transaction with its cursor.

use crate::presence;
use crate::replica::{self, Outcome};
use crate::store::{self, replica as conflicts, sync as sql, tenants};
use crate::writer::Queued;
use crate::{Result, Wms, WmsError};
use depot_protocol::event::RemoteEvent;
use depot_protocol::sync::downstream::{self, PageVerdict};
use depot_protocol::sync::message::OVERSIZED_KIND;
use depot_protocol::sync::message::{Change, Landmark};
use depot_protocol::sync::{EdgeId, Rejection, SyncEvent, inbox};
use depot_protocol::{BusinessId, WarehouseId, catalogue, now};
use depot_sql::Db;

pub use sql::{EdgeRecord, LocalKey, Refused, Sighting, SyncRefusals, SyncSnapshot};

/// What the cloud answers a batch with.
/// What a hello is answered from: see [`Wms::hello_facts`].
#[derive(Debug, Clone, PartialEq)]
pub struct HelloFacts {
    pub record: Option<EdgeRecord>,
    pub holds_last: Option<bool>,
    pub head: i64,
}

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
        for (seq, event, refusal) in &todo {
            let outcome = match refusal {
                Some(reason) if store::events::append_remote(conn, event)? => {
                    replica::refuse(conn, event, reason, "rejected")?;
                    Outcome::Rejected {
                        reason: reason.clone(),
                    }
                }
                Some(_) => Outcome::Duplicate,
                None => match replica::apply_guarded(conn, event, guard, checker.as_mut())? {
                    Some(outcome) => outcome,
                    None => return Ok(None),
                },
            };
            if let Outcome::Rejected { reason } = outcome {
                rejected.push((
                    Rejection {
                        seq: *seq,
                        id: event.id,
                        reason,
                    },
                    event.kind.clone(),
                ));
            }
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

/// A page of the cloud's log for one edge: changes in `(from, to]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    pub from: i64,
    pub to: i64,
    pub changes: Vec<Change>,
    /// The page is full: more follow right away.
    pub more: bool,
}

/// What an edge did with a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageOutcome {
    /// Applied; the cursor is now `cursor`.
    Applied { cursor: i64, outcomes: Vec<Outcome> },
    /// Already had it.
    Stale,
    /// It starts after the cursor: say hello again with `cursor`.
    Gap { cursor: i64 },
}

fn page_for(
    conn: &Db,
    business: BusinessId,
    edge: &EdgeId,
    after: i64,
    limit: u32,
) -> Result<Page> {
    // The head first: every event up to it is committed (one writer commits
    // in log order), so a page that ends at the head leaves nothing out. Read
    // after the events, it could include a commit the events query missed,
    // and the edge's cursor would step over it for good.
    let head = store::events::head(conn)?;
    let kinds: Vec<&str> = catalogue::sent_to_edges().collect();
    let events = store::events::for_edge(
        conn,
        business,
        &format!("edge:{edge}"),
        &kinds,
        after,
        head,
        limit,
    )?;
    let more = events.len() as u32 == limit;
    let to = match (more, events.last()) {
        (true, Some(last)) => last.seq,
        // Nothing more for this edge up to the head: its cursor may move
        // there, so it does not ask for the same empty range again.
        _ => head.max(after),
    };
    let changes = events
        .into_iter()
        .map(|e| Change {
            rev: e.seq,
            id: e.id,
            origin: e.origin,
            business_id: e.business_id,
            kind: e.kind,
            payload: e.payload,
            at: e.at,
        })
        .collect();
    Ok(Page {
        from: after,
        to,
        changes,
        more,
    })
}

fn apply_page(conn: &Db, business: BusinessId, page: Page) -> Result<PageOutcome> {
    let (_, cursor) = sql::state(conn)?;
    match downstream::plan_page(cursor, page.from, page.to, &page.changes) {
        PageVerdict::Gap => Ok(PageOutcome::Gap { cursor }),
        PageVerdict::Stale => Ok(PageOutcome::Stale),
        PageVerdict::Apply { apply, cursor } => {
            let mut events = Vec::with_capacity(apply.len());
            for i in apply {
                let Some(c) = page.changes.get(i) else {
                    continue;
                };
                events.push(RemoteEvent {
                    id: c.id,
                    origin: c.origin.clone(),
                    business_id: c.business_id.or_else(|| {
                        c.payload
                            .get("business_id")
                            .and_then(serde_json::Value::as_i64)
                            .map(BusinessId)
                    }),
                    kind: c.kind.clone(),
                    payload: serde_json::value::to_raw_value(&c.payload)?,
                    at: c.at,
                    seq: None,
                });
            }
            // The cloud's pages cross the boundary too: each change must be
            // this box's business's, and name only its records.
            let sender = replica::Sender::cloud(business);
            let outcomes: Vec<Outcome> = replica::optimistic(conn, |conn, guard| {
                let mut checker = replica::Checker::new(&sender);
                events
                    .iter()
                    .map(|e| replica::apply_guarded(conn, e, guard, Some(&mut checker)))
                    .collect()
            })?;
            let at = now();
            for (e, o) in events.iter().zip(&outcomes) {
                if let Outcome::Rejected { reason } = o {
                    sql::note_refused_here(conn, true, &e.kind, reason, &at)?;
                }
            }
            sql::set_down_cursor(conn, cursor)?;
            if let Some(c) = page
                .changes
                .iter()
                .filter(|c| c.rev <= cursor)
                .max_by_key(|c| c.rev)
            {
                sql::set_last_applied(
                    conn,
                    Landmark {
                        rev: c.rev,
                        id: c.id,
                    },
                )?;
            }
            Ok(PageOutcome::Applied { cursor, outcomes })
        }
    }
}

impl Wms {
    /// Cloud: the next page of changes for an edge, after rev `after`.
    pub async fn changes_for(
        &self,
        business: BusinessId,
        edge: EdgeId,
        after: i64,
        limit: u32,
    ) -> Result<Page> {
        self.read(move |conn| page_for(conn, business, &edge, after, limit))
            .await
    }

    /// Edge: the last change of the cloud's log applied here, for hello.
    pub async fn last_applied(&self) -> Result<Option<Landmark>> {
        self.read(sql::last_applied).await
    }

    /// Cloud: whether this log holds, at its rev, the change an edge says
    /// it applied last.
    pub async fn holds(&self, last: Landmark) -> Result<bool> {
        self.read(move |conn| sql::holds(conn, last)).await
    }

    /// Edge: applies a page from the cloud and moves the down cursor, in one
    /// transaction.
    pub async fn apply_page(&self, business: BusinessId, page: Page) -> Result<PageOutcome> {
        self.write(move |conn| apply_page(conn, business, page))
            .await
    }

    /// Registers an edge in a business and gives it the next node number.
    pub async fn register_edge(
        &self,
        business: BusinessId,
        edge: EdgeId,
        name: Option<String>,
    ) -> Result<EdgeRecord> {
        let origin = self.origin().to_owned();
        self.write(move |conn| {
            if tenants::business(conn, business)?.is_none() {
                return Err(WmsError::NotFound(format!(
                    "business {business} does not exist"
                )));
            }
            if sql::edge(conn, business, edge.as_str())?.is_some() {
                return Err(WmsError::field_conflict(
                    "edge",
                    format!("edge {edge} is already registered"),
                ));
            }
            sql::register_edge(conn, business, edge.as_str(), name.as_deref(), &now())?;
            let record = sql::edge(conn, business, edge.as_str())?
                .ok_or_else(|| WmsError::Internal("edge vanished".into()))?;
            crate::sscc::keep_ahead(conn, &origin, business, record.node)?;
            Ok(record)
        })
        .await
    }

    /// Sets the warehouses an edge serves: its events may then write only
    /// into these. Empty: every warehouse of its business (as registered).
    pub async fn set_edge_warehouses(
        &self,
        business: BusinessId,
        edge: EdgeId,
        warehouses: Vec<WarehouseId>,
    ) -> Result<EdgeRecord> {
        self.write(move |conn| {
            if sql::edge(conn, business, edge.as_str())?.is_none() {
                return Err(WmsError::NotFound(format!(
                    "edge {edge} is not registered in business {business}"
                )));
            }
            for w in &warehouses {
                if tenants::warehouse(conn, business, *w)?.is_none() {
                    return Err(WmsError::field_conflict(
                        "warehouse",
                        format!("warehouse {w} is not one of business {business}'s"),
                    ));
                }
            }
            sql::set_edge_warehouses(conn, business, edge.as_str(), &warehouses)?;
            sql::edge(conn, business, edge.as_str())?
                .ok_or_else(|| WmsError::Internal("edge vanished".into()))
        })
        .await
    }

    pub async fn edges(&self, business: BusinessId) -> Result<Vec<EdgeRecord>> {
        self.read(move |conn| sql::edges(conn, business)).await
    }

    pub async fn edge(&self, business: BusinessId, edge: EdgeId) -> Result<Option<EdgeRecord>> {
        self.read(move |conn| sql::edge(conn, business, edge.as_str()))
            .await
    }

    /// Cloud: what a hello is answered from, read at once: the edge's
    /// record, whether the log holds the last change the edge says it has
    /// (when it says one and is registered), and the log's head. One read,
    /// not three: a hundred edges reconnecting say two hundred hellos.
    pub async fn hello_facts(
        &self,
        business: BusinessId,
        edge: EdgeId,
        last: Option<Landmark>,
    ) -> Result<HelloFacts> {
        let safe_head = self.safe_head().await?;
        self.read(move |conn| {
            let record = sql::edge(conn, business, edge.as_str())?;
            let holds_last = match (last, &record) {
                (Some(last), Some(_)) => Some(sql::holds(conn, last)?),
                _ => None,
            };
            let head = match safe_head {
                Some(head) => head,
                None => store::events::head(conn)?,
            };
            Ok(HelloFacts {
                record,
                holds_last,
                head,
            })
        })
        .await
    }

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

    /// Cloud: an edge said hello or `online`: when, in which session, which
    /// version, and the newest event of its log.
    pub async fn edge_seen(
        &self,
        business: BusinessId,
        edge: EdgeId,
        sighting: Sighting,
    ) -> Result<()> {
        self.queue_edge_seen(business, edge, sighting).await?.await
    }

    /// [`Wms::edge_seen`], answering once queued with what answers once it
    /// is committed: a hundred edges reconnecting at once have their
    /// hellos and states recorded in one commit, not one each, and what
    /// is queued after it (their batches) runs after it.
    pub async fn queue_edge_seen(
        &self,
        business: BusinessId,
        edge: EdgeId,
        sighting: Sighting,
    ) -> Result<Queued<()>> {
        let origin = self.origin().to_owned();
        self.queue_for(business, move |conn| {
            presence::seen(conn, &origin, business, &edge, &sighting)
        })
        .await
    }

    /// Cloud: the edges whose downlink the instance of sync session `owner`
    /// holds (it answered their last hello): several instances sharing the
    /// edges each page only their own.
    pub async fn downlinks_of(&self, owner: String) -> Result<Vec<(BusinessId, EdgeId)>> {
        self.read(move |conn| {
            Ok(sql::downlinks_of(conn, &owner)?
                .into_iter()
                .filter_map(|(b, e)| EdgeId::parse(&e).ok().map(|e| (b, e)))
                .collect())
        })
        .await
    }

    /// Cloud: edges shown online by a hello alone (no retained state, so
    /// no last will) and silent for `after` are shown offline; answers how
    /// many.
    pub async fn expire_silent_edges(&self, after: std::time::Duration) -> Result<usize> {
        let origin = self.origin().to_owned();
        let before = now() - chrono::Duration::from_std(after).unwrap_or(chrono::Duration::MAX);
        self.write(move |conn| presence::expire(conn, &origin, &before))
            .await
    }

    /// Cloud: an edge's state went `offline` (its last will, or a goodbye)
    /// for `session`.
    pub async fn edge_gone(
        &self,
        business: BusinessId,
        edge: EdgeId,
        session: String,
    ) -> Result<()> {
        self.queue_edge_gone(business, edge, session).await?.await
    }

    /// [`Wms::edge_gone`], answering once queued (see
    /// [`Wms::queue_edge_seen`]).
    pub async fn queue_edge_gone(
        &self,
        business: BusinessId,
        edge: EdgeId,
        session: String,
    ) -> Result<Queued<()>> {
        let origin = self.origin().to_owned();
        self.queue_for(business, move |conn| {
            presence::gone(conn, &origin, business, &edge, &session)
        })
        .await
    }

    /// Edge: (acknowledged out_seq, last cloud rev applied).
    pub async fn sync_state(&self) -> Result<(i64, i64)> {
        self.read(sql::state).await
    }

    /// Edge: a new run of the link: down since now, with nothing said of
    /// why (a previous process's state is not this one's).
    pub async fn link_starting(&self) -> Result<()> {
        self.write(move |conn| sql::link_starting(conn, &now()))
            .await
    }

    /// Edge: the link to the broker went up or down.
    pub async fn set_connected(&self, up: bool) -> Result<()> {
        self.write(move |conn| sql::set_connected(conn, up, None, &now()))
            .await
    }

    /// Edge: connected, but sync cannot go on, and why (`None`: it goes on
    /// again).
    pub async fn set_link_trouble(&self, why: Option<String>) -> Result<()> {
        self.write(move |conn| sql::set_link_trouble(conn, why.as_deref()))
            .await
    }

    /// Edge: the link is down, and why (shown until it connects again).
    pub async fn set_link_down(&self, why: String) -> Result<()> {
        self.write(move |conn| sql::set_connected(conn, false, Some(&why), &now()))
            .await
    }

    /// Edge: the state of sync, for the status route and the CLI.
    pub async fn sync_snapshot(&self) -> Result<SyncSnapshot> {
        self.read(sql::snapshot).await
    }

    /// Edge: the cloud refused some of this node's events. Each becomes a
    /// conflict here, where the station that made it can see it (once, however
    /// often the acknowledgement is delivered).
    pub async fn record_rejections(&self, rejected: Vec<Rejection>) -> Result<()> {
        self.write(move |conn| {
            for r in &rejected {
                match store::events::by_id(conn, r.id)? {
                    Some(e) => {
                        let new = conflicts::record_conflict(
                            conn,
                            &e,
                            &format!("the cloud refused it: {}", r.reason),
                            "rejected",
                            &now(),
                        )?;
                        if new {
                            sql::note_refused_here(conn, false, &e.kind, &r.reason, &now())?;
                        }
                    }
                    None => tracing::warn!(id = %r.id, "the cloud rejected an event this node does not have"),
                }
            }
            Ok(())
        })
        .await
    }

    /// Edge: the cloud cannot serve from the down cursor (`reset`): it goes
    /// back to 0, in one transaction, and the reset is counted. The next
    /// hello asks for the cloud's whole log; what is already here is
    /// recognized by event id and skipped.
    pub async fn reset_down_cursor(&self) -> Result<()> {
        self.write(|conn| sql::reset_down_cursor(conn, &now()))
            .await
    }

    /// Edge: installs the keys provisioned in the configuration (by hash,
    /// bound to `business`, never sent to the cloud) and removes those no
    /// longer there; answers how many are live. See
    /// `store::sync::install_local_keys`.
    pub async fn install_local_keys(
        &self,
        business: BusinessId,
        keys: Vec<LocalKey>,
    ) -> Result<usize> {
        self.write(move |conn| sql::install_local_keys(conn, business, &keys, &now()))
            .await
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
