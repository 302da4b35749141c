//! Channels' connectors as records (cloud only): set and read through the
//! API, and what the cloud's runner needs of the engine to run them
//! (which are due, a lease per run, progress and outcome). The platforms'
//! protocols and the runner are the cloud's (`depot_cloud::connectors`).
//!
//! | status | a set that |
//! |---|---|
//! | 404 | names a channel that does not exist |
//! | 422 | has a bad field, or leaves a connector without the token it needs |

pub use crate::store::connectors::{Progress, Stored};
use crate::store::{self, channels, connectors as sql};
use crate::{Result, Wms, WmsError};
use depot_protocol::connector::{Connector, ConnectorSettings};
use depot_protocol::event::Event;
use depot_protocol::shipping::Shipment;
use depot_protocol::{BusinessId, ChannelId, FieldError, OrderId, Timestamp, now};
use depot_sql::Db;

fn channel_id(conn: &Db, business: BusinessId, code: &str) -> Result<ChannelId> {
    Ok(channels::by_code(conn, business, code)?
        .ok_or_else(|| WmsError::NotFound(format!("channel {code} does not exist")))?
        .id)
}

fn set(conn: &Db, business: BusinessId, code: &str, mut s: ConnectorSettings) -> Result<Connector> {
    let channel = channel_id(conn, business, code)?;
    let before = sql::get(conn, channel)?;
    // Secrets are never shown, so an edit that leaves them out keeps them.
    if let Some(b) = &before {
        s.token = s.token.or_else(|| b.settings.token.clone());
        s.password = s.password.or_else(|| b.settings.password.clone());
    }
    if s.token.is_none() {
        return Err(WmsError::invalid(vec![FieldError::new(
            "token",
            "required: the platform's API token",
        )]));
    }
    if s.user.is_some() != s.password.is_some() {
        return Err(WmsError::invalid(vec![FieldError::new(
            "password",
            "give the user and its password together",
        )]));
    }
    sql::put(
        conn,
        business,
        channel,
        &s,
        store::events::head(conn)?,
        &now(),
    )?;
    Ok(sql::get(conn, channel)?
        .ok_or_else(|| WmsError::Internal("a connector just set is gone".into()))?
        .view)
}

impl Wms {
    /// Sets a channel's connector (made, or replaced whole but for secrets
    /// left out); it runs at once.
    pub async fn set_connector(
        &self,
        business: BusinessId,
        code: String,
        s: ConnectorSettings,
    ) -> Result<Connector> {
        self.write_for(business, move |conn| set(conn, business, &code, s))
            .await
    }

    /// A channel's connector and how it is doing.
    pub async fn connector(&self, business: BusinessId, code: String) -> Result<Connector> {
        self.read(move |conn| {
            let channel = channel_id(conn, business, &code)?;
            Ok(sql::get(conn, channel)?
                .ok_or_else(|| WmsError::NotFound(format!("channel {code} has no connector")))?
                .view)
        })
        .await
    }

    /// Every connector (the metrics).
    pub async fn all_connectors(&self) -> Result<Vec<(BusinessId, Connector)>> {
        self.read(|conn| {
            Ok(sql::all(conn)?
                .into_iter()
                .map(|s| (s.business, s.view))
                .collect())
        })
        .await
    }

    /// Connectors due at `at` that no instance holds.
    pub async fn connectors_due(&self, at: Timestamp) -> Result<Vec<(BusinessId, ChannelId)>> {
        self.read(move |conn| sql::due(conn, &at, 100)).await
    }

    /// Takes a connector for a run lasting at most until `until`: its
    /// settings and cursors, or `None` when another instance holds it.
    pub async fn claim_connector(
        &self,
        business: BusinessId,
        channel: ChannelId,
        owner: String,
        until: Timestamp,
    ) -> Result<Option<Stored>> {
        self.write_for(business, move |conn| {
            if !sql::claim(conn, channel, &owner, &now(), &until)? {
                return Ok(None);
            }
            sql::get(conn, channel)
        })
        .await
    }

    /// Records a step of a run. Answers false when the lease was lost (the
    /// run stops; another instance goes on from the cursors).
    pub async fn connector_progress(
        &self,
        business: BusinessId,
        channel: ChannelId,
        owner: String,
        p: Progress,
    ) -> Result<bool> {
        self.write_for(business, move |conn| {
            sql::advance(conn, channel, &owner, &p)
        })
        .await
    }

    /// Ends a run: its error if it failed, and when to run next.
    pub async fn connector_finished(
        &self,
        business: BusinessId,
        channel: ChannelId,
        owner: String,
        error: Option<String>,
        next: Timestamp,
    ) -> Result<()> {
        self.write_for(business, move |conn| {
            sql::finish(conn, channel, &owner, error.as_deref(), &next, &now())
        })
        .await
    }

    /// A business's events of `kind` after `after`, up to the log's safe
    /// head: a cursor moved to the last never passes an event still to
    /// commit.
    pub async fn business_events_settled(
        &self,
        business: BusinessId,
        after: i64,
        kind: &str,
        limit: u32,
    ) -> Result<Vec<Event>> {
        let upto = self.events_head().await?;
        let kind = kind.to_owned();
        let mut events = self
            .read(move |conn| {
                store::events::for_business(conn, business, after, Some(&kind), limit)
            })
            .await?;
        events.retain(|e| e.seq <= upto);
        Ok(events)
    }

    /// The shipment of an order, once packed.
    pub async fn order_shipment(
        &self,
        business: BusinessId,
        order: OrderId,
    ) -> Result<Option<Shipment>> {
        self.read(move |conn| store::shipping::by_order(conn, business, order))
            .await
    }
}
