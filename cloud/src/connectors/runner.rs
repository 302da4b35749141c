//! Runs the connectors that are due, each under a lease so that one
//! instance at a time runs it. A run has three steps, each from its own
//! cursor, each cursor moved only past what went through:
//!
//! 1. **orders**: the platform's orders after its position come in as the
//!    channel's orders (the same reference twice is one order); a new
//!    connector's first run only notes where the platform's orders stand,
//!    so that a shop's past orders are not shipped again. One Depot
//!    refuses (an unknown SKU, an address it cannot ship to) is passed
//!    over and said in `last_refusal`: it cannot hold up the rest.
//! 2. **figures**: the channel's change feed after its cursor is pushed
//!    (the first run pushes every item's figure).
//! 3. **dispatches**: the channel's orders dispatched after the event
//!    log's cursor are told, with their tracking numbers.
//!
//! A failed step ends the run: the connector is `failing`, and is tried
//! again after a wait that doubles with each failure in a row.

use super::oscar::Oscar;
use super::platform::{AnyPlatform, Dispatch, Figure, Platform, PlatformError};
use depot_protocol::channel::Availability;
use depot_protocol::connector::ConnectorKind;
use depot_protocol::order_request::OrderCreate;
use depot_protocol::{BusinessId, ChannelId, OrderId, OrderStatus, Page, now};
use depot_wms::connectors::{Progress, Stored};
use depot_wms::{Wms, WmsError};
use std::fmt;
use std::time::Duration;

/// How long a run may hold its connector before another instance may
/// take it (a run that takes longer loses it at its next step).
const LEASE: Duration = Duration::from_secs(300);
/// How often the runner looks for connectors due.
const TICK: Duration = Duration::from_secs(1);
/// Orders brought in per call to the platform.
const ORDERS_PER_PULL: usize = 50;
/// Figures read from the feed and pushed per batch.
const FIGURES_PER_BATCH: u32 = 500;

/// The wait before retrying a failing connector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub first: Duration,
    pub max: Duration,
}

impl Backoff {
    /// The wait after `failures` failed runs in a row (at least 1): the
    /// first wait, doubled for each further failure, at most `max`.
    pub fn after(&self, failures: i64) -> Duration {
        let doublings = u32::try_from(failures.saturating_sub(1).clamp(0, 30)).unwrap_or(30);
        self.first
            .checked_mul(1u32 << doublings)
            .unwrap_or(self.max)
            .min(self.max)
    }
}

/// Why a run stopped.
#[derive(Debug)]
enum RunError {
    Platform(PlatformError),
    Engine(WmsError),
    /// Another instance took the connector (this run outlasted its lease).
    LeaseLost,
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Platform(e) => e.fmt(f),
            Self::Engine(e) => write!(f, "Depot could not take it: {e}"),
            Self::LeaseLost => f.write_str("the run outlasted its lease"),
        }
    }
}

impl From<PlatformError> for RunError {
    fn from(e: PlatformError) -> Self {
        Self::Platform(e)
    }
}

impl From<WmsError> for RunError {
    fn from(e: WmsError) -> Self {
        Self::Engine(e)
    }
}

/// Whether Depot refused the order itself (it would refuse it again),
/// rather than failed to take it.
fn refuses(e: &WmsError) -> bool {
    matches!(
        e,
        WmsError::BadRequest(_)
            | WmsError::NotFound(_)
            | WmsError::Conflict { .. }
            | WmsError::Invalid { .. }
            | WmsError::Mismatch { .. }
    )
}

/// Runs connectors for as long as it runs.
pub struct Runner {
    wms: Wms,
    client: reqwest::Client,
    backoff: Backoff,
    owner: String,
}

impl Runner {
    pub fn new(wms: Wms, settings: &super::settings::ConnectorSettings) -> anyhow::Result<Self> {
        let (timeout, backoff) = settings.check().map_err(anyhow::Error::msg)?;
        let mut client = reqwest::Client::builder()
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("Depot-Connectors/", env!("CARGO_PKG_VERSION")));
        if !settings.allow_private_targets {
            client = client.dns_resolver(std::sync::Arc::new(crate::webhooks::target::PublicOnly));
        }
        Ok(Self {
            wms,
            client: client.build()?,
            backoff,
            owner: format!("{}:{}", std::process::id(), uuid::Uuid::now_v7()),
        })
    }

    pub async fn run(self) {
        loop {
            tokio::time::sleep(TICK).await;
            self.tick().await;
        }
    }

    /// Runs every connector due now; answers how many ran.
    pub async fn tick(&self) -> usize {
        let due = match self.wms.connectors_due(now()).await {
            Ok(d) => d,
            Err(e) => {
                tracing::error!(error = %e, "connectors: reading those due");
                return 0;
            }
        };
        let mut ran = 0;
        for (business, channel) in due {
            match self.run_one(business, channel).await {
                Ok(true) => ran += 1,
                Ok(false) => {}
                Err(e) => tracing::error!(error = %e, %business, "connectors: a run"),
            }
        }
        ran
    }

    async fn run_one(&self, business: BusinessId, channel: ChannelId) -> Result<bool, WmsError> {
        let until = now() + chrono::Duration::from_std(LEASE).unwrap_or_default();
        let Some(s) = self
            .wms
            .claim_connector(business, channel, self.owner.clone(), until)
            .await?
        else {
            return Ok(false);
        };
        let outcome = self.steps(&s).await;
        let (error, wait) = match &outcome {
            Ok(()) => (
                None,
                Duration::from_secs(u64::try_from(s.settings.every_secs).unwrap_or(5)),
            ),
            Err(e) => {
                tracing::warn!(error = %e, channel = %s.view.channel, %business, "connector failed");
                (Some(e.to_string()), self.backoff.after(s.view.failures + 1))
            }
        };
        let next = now() + chrono::Duration::from_std(wait).unwrap_or_default();
        self.wms
            .connector_finished(business, channel, self.owner.clone(), error, next)
            .await?;
        Ok(true)
    }

    async fn steps(&self, s: &Stored) -> Result<(), RunError> {
        let mut platform = match s.settings.kind {
            ConnectorKind::Oscar => {
                AnyPlatform::Oscar(Oscar::new(self.client.clone(), &s.settings))
            }
        };
        self.orders(&mut platform, s).await?;
        self.figures(&mut platform, s).await?;
        self.dispatches(&mut platform, s).await
    }

    async fn progress(&self, s: &Stored, p: Progress) -> Result<(), RunError> {
        if self
            .wms
            .connector_progress(s.business, s.channel, self.owner.clone(), p)
            .await?
        {
            Ok(())
        } else {
            Err(RunError::LeaseLost)
        }
    }

    async fn orders(&self, platform: &mut AnyPlatform, s: &Stored) -> Result<(), RunError> {
        let mut cursor = s.view.orders_cursor.clone();
        if cursor.is_empty() {
            // A new connector takes the orders placed from its first run on.
            let p = Progress {
                orders_cursor: Some(platform.newest_order().await?),
                ..Progress::default()
            };
            return self.progress(s, p).await;
        }
        let actor = format!("connector:{}", s.view.channel);
        loop {
            let batch = platform.pull_orders(&cursor, ORDERS_PER_PULL).await?;
            let full = batch.len() == ORDERS_PER_PULL;
            for o in batch {
                let mut body = o.body;
                body["channel"] = s.view.channel.clone().into();
                for line in body["lines"].as_array_mut().into_iter().flatten() {
                    if let Some(sku) = line["sku"].as_str() {
                        line["sku"] = s.settings.inward(sku).to_owned().into();
                    }
                }
                let mut p = Progress {
                    orders_cursor: Some(o.position.clone()),
                    ..Progress::default()
                };
                let taken = match serde_json::from_value::<OrderCreate>(body) {
                    Ok(req) => self
                        .wms
                        .create_order_as(s.business, actor.clone(), req)
                        .await
                        .map(|_| ()),
                    Err(e) => Err(WmsError::BadRequest(e.to_string())),
                };
                match taken {
                    Ok(()) => p.orders_in = 1,
                    Err(e) if refuses(&e) => {
                        p.orders_refused = 1;
                        p.last_refusal = Some(format!("order {}: {e}", o.reference));
                    }
                    Err(e) => return Err(e.into()),
                }
                self.progress(s, p).await?;
                cursor = o.position;
            }
            if !full {
                return Ok(());
            }
        }
    }

    async fn figures(&self, platform: &mut AnyPlatform, s: &Stored) -> Result<(), RunError> {
        let code = s.view.channel.clone();
        let mut cursor = s.view.availability_cursor;
        if cursor == 0 {
            // The first run: every item's figure, then the feed from where
            // it stood before they were read.
            let head = self.wms.channel_feed_head(s.business).await?;
            // By the list's cursor: each page reads on from the last
            // item, not past every item before it.
            let mut after = None;
            loop {
                let page = Page::parse_with_cursor(None, Some(1000), after.take())
                    .map_err(|e| WmsError::Internal(format!("{e:?}")))?;
                let listed = self
                    .wms
                    .channel_availability(s.business, code.clone(), None, page)
                    .await?;
                if !listed.rows.is_empty() {
                    self.push(platform, s, &listed.rows, None).await?;
                }
                match listed.cursor {
                    Some(next) => after = Some(next),
                    None => break,
                }
            }
            // Never 0 again, so the first run is not repeated.
            cursor = head.max(1);
            self.progress(
                s,
                Progress {
                    availability_cursor: Some(cursor),
                    ..Progress::default()
                },
            )
            .await?;
        }
        loop {
            let page = self
                .wms
                .channel_changes(s.business, code.clone(), cursor, FIGURES_PER_BATCH)
                .await?;
            if page.data.is_empty() {
                return Ok(());
            }
            cursor = page.next.parse().unwrap_or(cursor);
            self.push(platform, s, &page.data, Some(cursor)).await?;
            if page.data.len() < FIGURES_PER_BATCH as usize {
                return Ok(());
            }
        }
    }

    /// Pushes figures in the platform's SKUs, and records them with the
    /// feed's cursor they reach (when they come from the feed).
    async fn push(
        &self,
        platform: &mut AnyPlatform,
        s: &Stored,
        rows: &[Availability],
        cursor: Option<i64>,
    ) -> Result<(), RunError> {
        let figures: Vec<Figure> = rows
            .iter()
            .map(|a| Figure {
                sku: s.settings.outward(&a.sku).to_owned(),
                available: a.available,
            })
            .collect();
        let unknown = platform.push_figures(&figures).await?;
        let p = Progress {
            availability_cursor: cursor,
            figures_out: i64::try_from(figures.len().saturating_sub(unknown.len())).unwrap_or(0),
            ..Progress::default()
        };
        self.progress(s, p).await
    }

    async fn dispatches(&self, platform: &mut AnyPlatform, s: &Stored) -> Result<(), RunError> {
        let mut cursor = s.view.fulfilment_cursor;
        loop {
            let events = self
                .wms
                .business_events_settled(s.business, cursor, "order.status_changed", 200)
                .await?;
            if events.is_empty() {
                return Ok(());
            }
            for e in events {
                let mut p = Progress {
                    fulfilment_cursor: Some(e.seq),
                    ..Progress::default()
                };
                let to = e.payload["change"]["to"].as_str();
                let id = e.payload["order_id"].as_i64().map(OrderId);
                if let (Some(OrderStatus::Dispatched), Some(id)) =
                    (to.and_then(OrderStatus::parse), id)
                {
                    if let Some(d) = self.dispatch_of(s, id).await? {
                        match platform.push_dispatch(&d).await {
                            Ok(()) => p.fulfilments_out = 1,
                            // The platform will not take it (an order it does
                            // not have): said, and passed over.
                            Err(PlatformError::Refused { call, status, body })
                                if (400..500).contains(&status) && status != 429 =>
                            {
                                let e = PlatformError::Refused { call, status, body };
                                p.last_refusal = Some(format!("dispatch of {}: {e}", d.reference));
                            }
                            Err(e) => return Err(e.into()),
                        }
                    }
                }
                self.progress(s, p).await?;
                cursor = e.seq;
            }
        }
    }

    /// What the platform is told of a dispatched order of the channel (an
    /// order split from another is the platform's order it came from).
    async fn dispatch_of(&self, s: &Stored, id: OrderId) -> Result<Option<Dispatch>, RunError> {
        let order = self.wms.order(s.business, id).await?;
        if order.channel != s.view.channel {
            return Ok(None);
        }
        let mut reference = order.external_ref.clone();
        let mut from = order.split_from;
        while let Some(parent) = from {
            let p = self.wms.order(s.business, parent).await?;
            reference = p.external_ref;
            from = p.split_from;
        }
        let tracking_number = self
            .wms
            .order_shipment(s.business, id)
            .await?
            .map(|sh| sh.tracking_number)
            .unwrap_or_default();
        Ok(Some(Dispatch {
            reference,
            carrier: order.carrier,
            tracking_number,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_doubles_up_to_its_most() {
        let b = Backoff {
            first: Duration::from_secs(2),
            max: Duration::from_secs(60),
        };
        let waits: Vec<u64> = (1..=7).map(|n| b.after(n).as_secs()).collect();
        assert_eq!(waits, [2, 4, 8, 16, 32, 60, 60]);
        assert_eq!(b.after(0).as_secs(), 2);
        assert_eq!(b.after(i64::MAX).as_secs(), 60);
    }
}
