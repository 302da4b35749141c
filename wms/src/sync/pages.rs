//! Pages of the cloud's log for an edge: read in the cloud, applied at
//! the edge in one transaction with its down cursor.

use crate::replica::{self, Outcome};
use crate::store::{self, sync as sql};
use crate::{Result, Wms};
use depot_protocol::event::RemoteEvent;
use depot_protocol::sync::EdgeId;
use depot_protocol::sync::downstream::{self, PageVerdict};
use depot_protocol::sync::message::{Change, Landmark};
use depot_protocol::{BusinessId, catalogue, now};
use depot_sql::Db;

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
            let run: Vec<&RemoteEvent> = events.iter().collect();
            let outcomes: Vec<Outcome> = replica::optimistic(conn, |conn, guard| {
                let mut checker = replica::Checker::new(&sender);
                replica::apply_all(conn, &run, guard, Some(&mut checker))
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

    /// Edge: applies a page from the cloud and moves the down cursor, in one
    /// transaction.
    pub async fn apply_page(&self, business: BusinessId, page: Page) -> Result<PageOutcome> {
        self.write(move |conn| apply_page(conn, business, page))
            .await
    }
}
