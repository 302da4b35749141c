//! Outbound webhooks (cloud only): a business's subscriptions, and what the
//! cloud's dispatcher needs from the log: deliveries made from events,
//! claimed one attempt at a time, and the attempts recorded.

use crate::Office;
use crate::store::webhooks::{self as sql, Fields};
pub use crate::store::webhooks::{After, Head, Outgoing};
use depot_protocol::webhook::{
    Attempt, Changes, Delivery, DeliveryStatus, MAX_WEBHOOKS, Webhook, matches,
};
use depot_protocol::{BusinessId, Page, Timestamp, now};
use depot_sql::Db;
use depot_wms::{Lane, Result, WmsError};

/// The writes of the delivery queue (fan-out, leases, attempts, retention):
/// they read then write only the queue and its cursor, so on PostgreSQL
/// they take turns among themselves and run beside businesses' writes.
const DELIVERIES: Lane = Lane::Own("webhook deliveries");

fn load(conn: &Db, business: BusinessId, id: i64) -> Result<Webhook> {
    sql::get(conn, business, id)?
        .ok_or_else(|| WmsError::NotFound(format!("webhook {id} does not exist")))
}

fn load_delivery(conn: &Db, business: BusinessId, webhook: i64, id: &str) -> Result<Delivery> {
    load(conn, business, webhook)?;
    sql::delivery(conn, webhook, id)?
        .ok_or_else(|| WmsError::NotFound(format!("webhook {webhook} has no delivery {id}")))
}

impl Office {
    /// Stores a subscription (checked by the caller) with its secret; a
    /// business has at most [`MAX_WEBHOOKS`] (409 beyond). Answers it with
    /// the secret, which is never shown again.
    pub async fn create_webhook(
        &self,
        business: BusinessId,
        c: Changes,
        secret: String,
    ) -> Result<Webhook> {
        let (Some(url), Some(types)) = (c.url, c.event_types) else {
            return Err(WmsError::Internal(
                "a webhook was created without url or event types".into(),
            ));
        };
        self.write(move |conn| {
            if sql::count(conn, business)? >= MAX_WEBHOOKS {
                return Err(WmsError::conflict(format!(
                    "a business may have at most {MAX_WEBHOOKS} webhooks"
                )));
            }
            let description = c.description.flatten();
            let fields = Fields {
                url: &url,
                event_types: &types,
                description: description.as_deref(),
                active: c.active.unwrap_or(true),
            };
            let id = sql::insert(conn, business, &fields, &secret, &now())?;
            let mut w = load(conn, business, id)?;
            w.secret = Some(secret);
            Ok(w)
        })
        .await
    }

    pub async fn webhooks(&self, business: BusinessId, page: Page) -> Result<(Vec<Webhook>, u64)> {
        self.read(move |conn| sql::list(conn, business, page)).await
    }

    pub async fn webhook(&self, business: BusinessId, id: i64) -> Result<Webhook> {
        self.read(move |conn| load(conn, business, id)).await
    }

    /// Changes the fields given (checked by the caller).
    pub async fn edit_webhook(&self, business: BusinessId, id: i64, c: Changes) -> Result<Webhook> {
        self.write(move |conn| {
            let w = load(conn, business, id)?;
            let description = match c.description {
                Some(d) => d,
                None => w.description.clone(),
            };
            let fields = Fields {
                url: c.url.as_deref().unwrap_or(&w.url),
                event_types: c.event_types.as_deref().unwrap_or(&w.event_types),
                description: description.as_deref(),
                active: c.active.unwrap_or(w.active),
            };
            sql::update(conn, id, &fields, &now())?;
            load(conn, business, id)
        })
        .await
    }

    /// Replaces the signing secret; the one replaced keeps signing beside
    /// it for `keep_previous` (not at all when zero), so a receiver can
    /// switch without refusing deliveries. Answers the subscription with
    /// the new secret.
    pub async fn rotate_webhook_secret(
        &self,
        business: BusinessId,
        id: i64,
        secret: String,
        keep_previous: chrono::Duration,
    ) -> Result<Webhook> {
        self.write(move |conn| {
            load(conn, business, id)?;
            let at = now();
            let until = (keep_previous > chrono::Duration::zero()).then(|| at + keep_previous);
            sql::set_secret(conn, id, &secret, until.as_ref(), &at)?;
            let mut w = load(conn, business, id)?;
            w.secret = Some(secret);
            Ok(w)
        })
        .await
    }

    /// Deletes a subscription with its deliveries; answers what it was.
    pub async fn delete_webhook(&self, business: BusinessId, id: i64) -> Result<Webhook> {
        self.write(move |conn| {
            let w = load(conn, business, id)?;
            sql::delete(conn, id)?;
            Ok(w)
        })
        .await
    }

    pub async fn webhook_deliveries(
        &self,
        business: BusinessId,
        webhook: i64,
        status: Option<DeliveryStatus>,
        page: Page,
    ) -> Result<(Vec<Delivery>, u64, u64)> {
        self.read(move |conn| {
            load(conn, business, webhook)?;
            sql::deliveries(conn, webhook, status, page)
        })
        .await
    }

    pub async fn webhook_attempts(
        &self,
        business: BusinessId,
        webhook: i64,
        delivery: String,
    ) -> Result<Vec<Attempt>> {
        self.read(move |conn| {
            load_delivery(conn, business, webhook, &delivery)?;
            sql::attempts(conn, &delivery)
        })
        .await
    }

    /// Sends a delivered or failed delivery again, now, with a new retry
    /// period (409 if it is pending). It keeps its id, so a receiver that
    /// had it can tell.
    pub async fn retry_webhook_delivery(
        &self,
        business: BusinessId,
        webhook: i64,
        delivery: String,
        now_ms: i64,
    ) -> Result<Delivery> {
        self.write(move |conn| {
            load_delivery(conn, business, webhook, &delivery)?;
            if !sql::retry(conn, &delivery, now_ms)? {
                return Err(WmsError::conflict(format!(
                    "delivery {delivery} is pending already"
                )));
            }
            load_delivery(conn, business, webhook, &delivery)
        })
        .await
    }

    /// Turns up to `limit` new events of the log into deliveries; answers
    /// whether more are waiting. Looks first on a read connection, so
    /// that the log's every commit does not cost a write.
    pub async fn webhook_fan_out(&self, limit: u32, now_ms: i64) -> Result<bool> {
        if !self.read(sql::behind).await? {
            return Ok(false);
        }
        // Up to the log's safe head: beside businesses' writes, an event
        // below the head may still be on its way (see `Lane::Own`).
        let upto = self.events_head().await?;
        self.write_in(DELIVERIES, move |conn| {
            sql::fan_out(conn, limit, now_ms, &now(), upto, matches)
        })
        .await
    }

    /// The oldest pending delivery of every active subscription.
    pub async fn webhook_heads(&self) -> Result<Vec<Head>> {
        self.read(sql::heads).await
    }

    /// Claims a due delivery for one attempt, leased until `until_ms`.
    pub async fn claim_webhook_delivery(
        &self,
        id: String,
        now_ms: i64,
        until_ms: i64,
    ) -> Result<Option<Outgoing>> {
        self.write_in(DELIVERIES, move |conn| {
            sql::claim(conn, &id, now_ms, until_ms)
        })
        .await
    }

    pub async fn record_webhook_attempt(
        &self,
        id: String,
        attempt: Attempt,
        after: After,
    ) -> Result<()> {
        self.write_in(DELIVERIES, move |conn| {
            sql::record(conn, &id, &attempt, after)
        })
        .await
    }

    /// Deletes up to `limit` deliveries finished before `before`, with
    /// their attempts, in one write; answers how many went.
    pub async fn prune_webhook_deliveries(&self, before: Timestamp, limit: u32) -> Result<usize> {
        self.write_in(DELIVERIES, move |conn| {
            sql::prune_finished(conn, &before, limit)
        })
        .await
    }
}
