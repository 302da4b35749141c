//! The dispatcher: follows the event log, turns new events into
//! deliveries, and sends each subscription's deliveries in log order, one
//! at a time, retrying with backoff until the retry period ends.
//!
//! Nothing is kept only in memory: deliveries are made in the same
//! transaction that moves the log cursor, and an attempt is leased in the
//! database before it is sent and recorded after. A process that stops
//! mid-attempt leaves a lease that runs out; the delivery is then sent
//! again, with the same `Depot-Webhook-Id` (the one case a receiver can
//! see a delivery twice).

use super::settings::WebhookSettings;
use super::{Wake, target};
use depot_office::Office;
use depot_office::webhooks::{After, Outgoing};
use depot_protocol::webhook::{Attempt, MAX_ERROR, MAX_RESPONSE_SNIPPET, Payload, RetryPolicy};
use depot_protocol::{BusinessId, now};
use depot_wms::Wms;
use ring::rand::SecureRandom;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

pub const ID_HEADER: &str = "depot-webhook-id";
pub const TIMESTAMP_HEADER: &str = "depot-webhook-timestamp";
pub const ATTEMPT_HEADER: &str = "depot-webhook-attempt";
pub const SIGNATURE_HEADER: &str = "depot-signature";

/// Events turned into deliveries per transaction.
const FAN_OUT_PAGE: u32 = 500;
/// The longest the dispatcher sleeps without looking: leases of stopped
/// processes run out, other instances change subscriptions.
const IDLE: Duration = Duration::from_secs(30);
/// After a storage error, the pause before trying again.
const ON_ERROR: Duration = Duration::from_secs(1);

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// A number in [0, 1) for jitter; 0 if the system cannot give one.
fn jitter() -> f64 {
    let mut b = [0u8; 4];
    match ring::rand::SystemRandom::new().fill(&mut b) {
        Ok(()) => f64::from(u32::from_le_bytes(b)) / (f64::from(u32::MAX) + 1.0),
        Err(_) => 0.0,
    }
}

/// Cuts a text to at most `max` bytes on a character boundary.
fn cut(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

/// An error with its causes: reqwest's own message names only the URL.
fn describe(e: &reqwest::Error, timeout: Duration) -> String {
    if e.is_timeout() {
        return format!("no answer within {} ms", timeout.as_millis());
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    cut(text, MAX_ERROR)
}

/// The request body of a delivery.
pub fn body(out: &Outgoing) -> serde_json::Result<Vec<u8>> {
    let e = &out.event;
    serde_json::to_vec(&Payload {
        id: e.id,
        kind: e.kind.clone(),
        version: e.version,
        created_at: e.at,
        business_id: e.business_id.unwrap_or(BusinessId(0)),
        data: e.payload.clone(),
    })
}

pub struct Dispatcher {
    wms: Office,
    client: reqwest::Client,
    timeout: Duration,
    policy: RetryPolicy,
    concurrency: usize,
    allow_private: bool,
    wake: Wake,
}

impl Dispatcher {
    pub fn new(wms: Wms, settings: &WebhookSettings, wake: Wake) -> anyhow::Result<Self> {
        let (timeout, policy) = settings.check().map_err(anyhow::Error::msg)?;
        let mut client = reqwest::Client::builder()
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("Depot-Webhooks/", env!("CARGO_PKG_VERSION")));
        if !settings.allow_private_targets {
            client = client.dns_resolver(Arc::new(target::PublicOnly));
        }
        Ok(Self {
            wms: Office::new(wms),
            client: client.build()?,
            timeout,
            policy,
            concurrency: settings.concurrency as usize,
            allow_private: settings.allow_private_targets,
            wake,
        })
    }

    /// Runs until the task is dropped or the engine stops.
    pub async fn run(self) {
        let this = Arc::new(self);
        let mut events = this.wms.events_changed();
        let mut inflight: JoinSet<()> = JoinSet::new();
        let mut busy: HashMap<tokio::task::Id, i64> = HashMap::new();
        loop {
            let wait = match this.step(&mut inflight, &mut busy).await {
                Ok(wait) => wait,
                Err(e) => {
                    tracing::error!(error = %e, "webhook dispatch");
                    ON_ERROR
                }
            };
            tokio::select! {
                changed = events.changed() => if changed.is_err() { return },
                () = this.wake.0.notified() => {},
                Some(done) = inflight.join_next_with_id() => {
                    let id = match done {
                        Ok((id, ())) => id,
                        Err(e) => {
                            tracing::error!(error = %e, "a webhook attempt failed");
                            e.id()
                        }
                    };
                    busy.remove(&id);
                },
                () = tokio::time::sleep(wait) => {},
            }
        }
    }

    /// Makes deliveries of new events and starts the attempts that are
    /// due; answers how long until the next one is.
    async fn step(
        self: &Arc<Self>,
        inflight: &mut JoinSet<()>,
        busy: &mut HashMap<tokio::task::Id, i64>,
    ) -> depot_wms::Result<Duration> {
        while self.wms.webhook_fan_out(FAN_OUT_PAGE, now_ms()).await? {}
        let sending: HashSet<i64> = busy.values().copied().collect();
        let now = now_ms();
        let mut wait = IDLE;
        for head in self.wms.webhook_heads().await? {
            if sending.contains(&head.webhook_id) {
                continue;
            }
            let due = head.next_at_ms.max(head.leased_until_ms.unwrap_or(0));
            if due > now {
                let until = Duration::from_millis(u64::try_from(due - now).unwrap_or(0));
                wait = wait.min(until);
                continue;
            }
            if inflight.len() >= self.concurrency {
                continue;
            }
            let lease = now + ms(self.timeout * 2) + 1000;
            let Some(out) = self
                .wms
                .claim_webhook_delivery(head.delivery_id, now, lease)
                .await?
            else {
                continue;
            };
            let this = self.clone();
            let handle = inflight.spawn(async move { this.attempt(out).await });
            busy.insert(handle.id(), head.webhook_id);
        }
        Ok(wait)
    }

    /// Sends one attempt and records it.
    async fn attempt(&self, out: Outgoing) {
        let at = now();
        let started = Instant::now();
        let (status, error, response) = self.send(&out).await;
        let a = Attempt {
            number: out.attempt,
            at,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            status_code: status,
            error,
            response_body: response,
        };
        let after = if status.is_some_and(|s| (200..300).contains(&s)) {
            After::Delivered
        } else {
            let from = Duration::from_millis(u64::try_from(out.retry_from_ms).unwrap_or(0));
            let now = Duration::from_millis(u64::try_from(now_ms()).unwrap_or(0));
            match self.policy.next_attempt(from, now, out.attempt, jitter()) {
                Some(next) => After::RetryAt(ms(next)),
                None => After::Failed,
            }
        };
        let id = out.delivery_id.clone();
        if let Err(e) = self.wms.record_webhook_attempt(id, a, after).await {
            // The lease runs out and the delivery is tried again.
            tracing::error!(delivery = %out.delivery_id, error = %e, "cannot record a webhook attempt");
        }
    }

    /// The receiver's status and the start of its answer, or why there was
    /// none.
    async fn send(&self, out: &Outgoing) -> (Option<u16>, Option<String>, Option<String>) {
        if let Err(e) = target::check_url(&out.url, self.allow_private) {
            return (None, Some(format!("the URL {e}")), None);
        }
        let body = match body(out) {
            Ok(b) => b,
            Err(e) => return (None, Some(format!("cannot encode the event: {e}")), None),
        };
        let t = chrono::Utc::now().timestamp();
        let secrets: Vec<&str> = std::iter::once(out.secret.as_str())
            .chain(out.previous_secret.as_deref())
            .collect();
        let signature = depot_wms::http::tracking::sign_with(&secrets, t, &body);
        let sent = self
            .client
            .post(&out.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(ID_HEADER, &out.delivery_id)
            .header(TIMESTAMP_HEADER, t.to_string())
            .header(ATTEMPT_HEADER, out.attempt.to_string())
            .header(SIGNATURE_HEADER, signature)
            .body(body)
            .send()
            .await;
        let mut resp = match sent {
            Ok(r) => r,
            Err(e) => return (None, Some(describe(&e, self.timeout)), None),
        };
        let status = resp.status().as_u16();
        let mut snippet: Vec<u8> = Vec::new();
        while snippet.len() < MAX_RESPONSE_SNIPPET {
            match resp.chunk().await {
                Ok(Some(chunk)) => snippet.extend_from_slice(&chunk),
                // An answer cut short still answered with its status.
                Ok(None) | Err(_) => break,
            }
        }
        snippet.truncate(MAX_RESPONSE_SNIPPET);
        let text = String::from_utf8_lossy(&snippet).into_owned();
        (Some(status), None, Some(text).filter(|t| !t.is_empty()))
    }
}
