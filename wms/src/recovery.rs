//! An edge taking its own events back from the cloud. A box restored from
//! an older backup, or a new box taking over an edge id, has a log that
//! stops short of what the cloud applied from it. Numbering its next events
//! from there would have the cloud take them for ones it has and skip them;
//! so until the cloud has answered, nothing of its own goes up. If the cloud
//! holds more, the events made meanwhile move past the cloud's cursor, and
//! the missing ones come back, page by page, applied here as they were
//! where they were made, each in its old place in the log.

use crate::replica::{self, Outcome};
use crate::store::{events, sync as sql};
use crate::{Result, Wms};
use depot_protocol::BusinessId;
use depot_protocol::event::RemoteEvent;
use depot_protocol::now;
use depot_protocol::sync::EdgeId;
use depot_protocol::sync::message::{DownMessage, RecoveredEvent, recovered_page};

/// Events the cloud reads for one page (the page may hold fewer, to fit).
const PAGE: u32 = 1000;

/// Why a recovery does not go on when the cloud does not hand events back.
pub const STALLED: &str = "the cloud does not hand back this box's own events (it is older than \
    this edge): nothing of the box's own goes up until the cloud is upgraded";

/// A page of own events as the cloud sent it.
#[derive(Debug, Clone)]
pub struct RecoveredPage {
    pub after: i64,
    pub through: i64,
    pub events: Vec<RecoveredEvent>,
    pub more: bool,
}

/// What taking a page did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovered {
    /// The log is whole: nothing was under way.
    NotNeeded,
    /// The page does not start where the log stands: an old duplicate
    /// (`stale`), or one after a lost page, to ask again for.
    Gap { recovered: i64, stale: bool },
    Applied {
        /// How far the log is now certain.
        recovered: i64,
        /// The last page: the log is whole, numbered on from the cloud's
        /// cursor.
        done: bool,
        /// Events made here meanwhile, moved past the cloud's cursor.
        renumbered: usize,
        /// Events the cloud could not hand back (applied before it kept
        /// their seqs), counted with the last page.
        missing: i64,
        /// Events that came back but could not be applied here again.
        rejected: usize,
    },
}

impl Wms {
    /// Edge: the seq to ask the cloud for own events after, while the log
    /// may lack its tail; `None` once it is known whole.
    pub async fn recover_after(&self) -> Result<Option<i64>> {
        self.read(|conn| Ok(sql::recovery(conn)?.map(|r| r.recovered)))
            .await
    }

    /// Edge: the cloud's cursor for this edge, from its answer to a hello.
    /// A cursor not past where the log is certain means the cloud has
    /// nothing more to hand back: the log is as whole as it can be. Answers whether it is. `hands_back` is whether the
    /// cloud said it hands own events back: one that does not never will,
    /// and the recovery records why it is stalled.
    pub async fn cloud_cursor_seen(&self, cursor: i64, hands_back: bool) -> Result<bool> {
        self.write(move |conn| {
            let Some(r) = sql::recovery(conn)? else {
                return Ok(true);
            };
            // The cloud holds nothing past what the log is certain of: it
            // never had more, or it was restored from an older backup while
            // this box took its events back. Events made here meanwhile,
            // if moved past the cloud's old cursor to make room, move back
            // to follow what the log holds: a hole would stop the cloud at
            // it for good.
            if cursor <= r.recovered {
                if r.shifted {
                    events::close_gap(conn, r.recovered)?;
                }
                sql::end_recovery(conn)?;
                return Ok(true);
            }
            let stalled = (!hands_back).then_some(STALLED);
            if r.stalled.as_deref() != stalled {
                sql::set_recovery_stalled(conn, stalled)?;
            }
            Ok(false)
        })
        .await
    }

    /// Edge: takes a page of own events back, in one transaction with the
    /// renumbering (first page) and the progress.
    pub async fn take_back(&self, business: BusinessId, page: RecoveredPage) -> Result<Recovered> {
        let origin = self.origin().to_owned();
        self.write(move |conn| {
            let Some(r) = sql::recovery(conn)? else {
                return Ok(Recovered::NotNeeded);
            };
            if page.after != r.recovered {
                return Ok(Recovered::Gap {
                    recovered: r.recovered,
                    stale: page.after < r.recovered,
                });
            }
            let mut renumbered = 0;
            let mut shifted_past = r.shifted_past;
            if !r.shifted && page.through > r.from {
                renumbered = events::shift_own(conn, r.from, page.through - r.from)?;
                shifted_past = page.through;
            }
            let taken: Vec<(i64, RemoteEvent)> = page
                .events
                .into_iter()
                .filter(|e| e.seq > r.recovered && e.seq <= page.through)
                .map(|e| {
                    Ok((
                        e.seq,
                        RemoteEvent {
                            id: e.id,
                            origin: origin.clone(),
                            business_id: Some(business),
                            kind: e.kind,
                            payload: serde_json::value::to_raw_value(&e.payload)?,
                            at: e.at,
                            seq: Some(e.seq),
                        },
                    ))
                })
                .collect::<Result<_>>()?;
            // What comes back is this box's own, but from across the
            // boundary: held to its business like any page of the cloud's.
            let sender = replica::Sender::cloud(business);
            let run: Vec<&RemoteEvent> = taken.iter().map(|(_, e)| e).collect();
            let outcomes = replica::optimistic(conn, |conn, guard| {
                let mut checker = replica::Checker::new(&sender);
                replica::apply_all(conn, &run, guard, Some(&mut checker))
            })?;
            for (seq, e) in &taken {
                events::set_out_seq(conn, e.id, *seq)?;
            }
            let rejected = outcomes
                .iter()
                .filter(|o| matches!(o, Outcome::Rejected { .. }))
                .count();
            let last = taken.last().map_or(r.recovered, |(seq, _)| *seq);
            if page.more {
                sql::set_recovery(conn, last, shifted_past)?;
                return Ok(Recovered::Applied {
                    recovered: last,
                    done: false,
                    renumbered,
                    missing: 0,
                    rejected,
                });
            }
            let through = page.through.max(r.from);
            let held = events::own_between(conn, r.from, through)?;
            sql::end_recovery(conn)?;
            sql::set_acked(conn, through, &now())?;
            Ok(Recovered::Applied {
                recovered: through,
                done: true,
                renumbered,
                missing: through - r.from - held,
                rejected,
            })
        })
        .await
    }

    /// Cloud: the page of `edge`'s own events after `after`, up to its
    /// cursor `through`, answering the hello of `session`.
    pub async fn own_page(
        &self,
        business: BusinessId,
        edge: &EdgeId,
        session: &str,
        after: i64,
        through: i64,
    ) -> Result<DownMessage> {
        let origin = format!("edge:{edge}");
        let session = session.to_owned();
        self.read(move |conn| {
            let mut events = events::own_events(conn, business, &origin, after, through, PAGE + 1)?;
            let more = events.len() > PAGE as usize;
            events.truncate(PAGE as usize);
            Ok(recovered_page(&session, after, through, events, more))
        })
        .await
    }
}

/// Marks a database (a restored backup, not open elsewhere) as certain only
/// through its own newest event, so the daemon takes the rest back from the
/// cloud before sending anything. Answers that seq.
pub fn mark_restored(conn: &depot_sql::Db) -> Result<i64> {
    let head = events::outgoing_head(conn)?;
    sql::start_recovery(conn, head)?;
    Ok(head)
}
