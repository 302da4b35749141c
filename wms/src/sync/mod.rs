//! The storage side of sync: edge registration and cursors in the cloud,
//! batches from an edge applied exactly once and in order, and the edge's
//! own acknowledgement. The protocol rules themselves are pure, in
//! `depot_protocol::sync`; this module runs them against the database, each
//! batch in one transaction with its cursor.
//!
//! Here edges' registration, presence and the edge's own link state;
//! `receive.rs` the batches an edge sends, applied in the cloud;
//! `pages.rs` the pages of the cloud's log an edge takes.

mod pages;
mod receive;

pub use pages::{Page, PageOutcome};
pub use receive::{Ack, EVENTS_PER_JOB, Receipts};

use crate::presence;
use crate::store::{self, replica as conflicts, sync as sql, tenants};
use crate::writer::Queued;
use crate::{Result, Wms, WmsError};
use depot_protocol::sync::message::Landmark;
use depot_protocol::sync::{EdgeId, Rejection};
use depot_protocol::{BusinessId, WarehouseId, now};

pub use sql::{EdgeRecord, LocalKey, Refused, Sighting, SyncRefusals, SyncSnapshot};

/// What a hello is answered from: see [`Wms::hello_facts`].
#[derive(Debug, Clone, PartialEq)]
pub struct HelloFacts {
    pub record: Option<EdgeRecord>,
    pub holds_last: Option<bool>,
    pub head: i64,
}

impl Wms {
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
