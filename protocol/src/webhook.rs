//! Outbound webhooks: a business's subscriptions (where to POST which
//! events, signed with which secret), their deliveries and attempts, and the
//! pure rules the dispatcher follows: which events a subscription takes,
//! how long it waits before trying again, when it gives up.

use crate::catalogue;
use crate::validate::Check;
use crate::{BusinessId, EventId, FieldError};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Subscriptions one business may have.
pub const MAX_WEBHOOKS: u64 = 25;
/// The longest target URL accepted.
pub const MAX_URL_LEN: usize = 2048;
/// The most event types (or families) one subscription may name.
pub const MAX_EVENT_TYPES: usize = 64;
pub const MAX_DESCRIPTION: usize = 200;
/// A secret the caller supplies: long enough to resist guessing, short
/// enough to fit a header of their own tooling.
pub const MIN_SECRET: usize = 24;
pub const MAX_SECRET: usize = 128;
/// How much of a receiver's answer an attempt keeps.
pub const MAX_RESPONSE_SNIPPET: usize = 1024;
/// How much of an error message an attempt keeps.
pub const MAX_ERROR: usize = 500;

/// Body of create (`url` and `event_types` required) and edit (absent
/// fields are kept; a blank `description` clears it).
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookInput {
    /// Where deliveries are POSTed: `https://…` (plain `http://` and
    /// private addresses only where the service allows them).
    /// An internationalised host is taken, as its punycode form (an IRI).
    #[schema(format = "iri", pattern = "^https?://")]
    pub url: Option<String>,
    /// Event types (`order.status_changed`), families (`order.*`), or `*`
    /// for every type. Key events are never delivered.
    #[schema(min_items = 1)]
    pub event_types: Option<Vec<String>>,
    /// The signing secret, 24 to 128 printable ASCII characters. Absent on
    /// create: the service makes one. Not accepted on edit (rotate it).
    pub secret: Option<String>,
    pub description: Option<String>,
    /// Default true. An inactive subscription gets no new deliveries, and
    /// its pending ones wait until it is active again.
    pub active: Option<bool>,
}

/// A subscription as stored. The secret is shown only when it is made
/// (create, rotate).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Webhook {
    pub id: i64,
    pub business_id: BusinessId,
    pub url: String,
    pub event_types: Vec<String>,
    pub description: Option<String>,
    pub active: bool,
    /// Only in the answer to create and rotate-secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Until when the secret the last rotation replaced still signs beside
    /// the current one; absent once it has stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_secret_expires_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    /// Waiting for its first or next attempt.
    Pending,
    /// A receiver answered 2xx.
    Delivered,
    /// Given up after the retry period (a retry makes it pending again).
    Failed,
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Delivered => "delivered",
            Self::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Pending, Self::Delivered, Self::Failed]
            .into_iter()
            .find(|d| d.as_str() == s)
    }
}

/// One event on its way to one subscription.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Delivery {
    /// Sent as `Depot-Webhook-Id`; the same on every attempt, so receivers
    /// can drop a delivery they already took.
    pub id: String,
    pub webhook_id: i64,
    pub event_id: EventId,
    pub event_type: String,
    pub status: DeliveryStatus,
    pub attempts: u32,
    /// When a pending delivery is tried next (it may wait longer behind an
    /// older delivery of its subscription).
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub last_status_code: Option<u16>,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    /// When it was delivered or given up.
    pub finished_at: Option<DateTime<Utc>>,
}

/// One try of a delivery.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Attempt {
    /// 1 for the first attempt.
    pub number: u32,
    pub at: DateTime<Utc>,
    pub duration_ms: u64,
    /// The receiver's HTTP status, when it answered.
    pub status_code: Option<u16>,
    /// Why the attempt failed without an answer (connection, timeout).
    pub error: Option<String>,
    /// The start of the receiver's answer (at most 1024 bytes).
    pub response_body: Option<String>,
}

/// What a receiver gets: the event, as the log has it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Payload {
    /// The event's id: the same for every subscription it went to.
    pub id: EventId,
    #[serde(rename = "type")]
    pub kind: String,
    /// The version of `data`'s shape (see the event catalogue).
    pub version: u32,
    pub created_at: DateTime<Utc>,
    pub business_id: BusinessId,
    pub data: serde_json::Value,
}

/// What a create or edit asks for, each field checked on its own (the URL
/// by the caller, which knows what targets this service allows).
#[derive(Debug, Clone, Default)]
pub struct Changes {
    pub url: Option<String>,
    pub event_types: Option<Vec<String>>,
    pub secret: Option<String>,
    /// `Some(None)` clears it.
    pub description: Option<Option<String>>,
    pub active: Option<bool>,
}

impl WebhookInput {
    /// Checks the fields given; `create` requires `url` and `event_types`
    /// and refuses none of the others, edit refuses `secret`. `check_url`
    /// answers the cleaned URL or why it is refused.
    pub fn check(
        self,
        create: bool,
        check_url: impl Fn(&str) -> Result<String, String>,
    ) -> Result<Changes, Vec<FieldError>> {
        let mut c = Check::new();
        let url = match self.url.as_deref().map(str::trim) {
            None if create => {
                c.fail("url", "is required");
                None
            }
            None => None,
            Some(u) if u.len() > MAX_URL_LEN => {
                c.fail("url", format!("must be at most {MAX_URL_LEN} characters"));
                None
            }
            Some(u) => match check_url(u) {
                Ok(u) => Some(u),
                Err(e) => {
                    c.fail("url", e);
                    None
                }
            },
        };
        let event_types = match self.event_types {
            None if create => {
                c.fail("event_types", "is required");
                None
            }
            None => None,
            Some(list) => match parse_event_types(&list) {
                Ok(l) => Some(l),
                Err(errors) => {
                    c.extend("", errors);
                    None
                }
            },
        };
        let secret = match self.secret {
            Some(_) if !create => {
                c.fail("secret", "cannot be edited: rotate it with rotate-secret");
                None
            }
            Some(s) => {
                let ok = (MIN_SECRET..=MAX_SECRET).contains(&s.len())
                    && s.bytes().all(|b| b.is_ascii_graphic());
                if !ok {
                    c.fail(
                        "secret",
                        format!(
                            "must be {MIN_SECRET} to {MAX_SECRET} printable ASCII characters without spaces"
                        ),
                    );
                }
                Some(s)
            }
            None => None,
        };
        let description = self
            .description
            .map(|d| c.opt_text("description", Some(&d), MAX_DESCRIPTION));
        c.finish(Changes {
            url,
            event_types,
            secret,
            description,
            active: self.active,
        })
    }
}

/// Whether a business may be sent events of this kind: the catalogue's
/// public types only (never key events, which carry key hashes, nor kinds
/// a newer node wrote that this one does not know).
fn deliverable(kind: &str) -> bool {
    catalogue::lookup(kind).is_some_and(|t| t.audience == catalogue::Audience::Business)
}

/// Checks a subscription's event types: each a public event type of the
/// catalogue, a family with at least one (`order.*`), or `*`; at least one, at most
/// [`MAX_EVENT_TYPES`]. Repeats are dropped.
pub fn parse_event_types(list: &[String]) -> Result<Vec<String>, Vec<FieldError>> {
    let mut errors = Vec::new();
    if list.is_empty() {
        errors.push(FieldError::new(
            "event_types",
            "name at least one event type, a family such as order.*, or *",
        ));
    }
    if list.len() > MAX_EVENT_TYPES {
        errors.push(FieldError::new(
            "event_types",
            format!("must have at most {MAX_EVENT_TYPES} entries"),
        ));
    }
    let mut out: Vec<String> = Vec::new();
    for (i, t) in list.iter().enumerate() {
        let t = t.trim();
        // A family ends in `.*`: `orde*` is no family.
        let shaped = t.ends_with(".*") || !t.ends_with('*');
        let known = t == "*" || (shaped && catalogue::pattern_is_known(t));
        if !known {
            errors.push(FieldError::new(
                format!("event_types[{i}]"),
                format!("{t:?} is not an event type that can be delivered, nor a family of them"),
            ));
        } else if !out.iter().any(|o| o == t) {
            out.push(t.to_owned());
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// What `parse_event_types` takes of one entry, as a pattern (ECMA-262;
/// the `regex` crate reads it the same): `*`, a public event type, or a
/// family of them (`order.*`), with whitespace around.
pub fn event_type_pattern() -> String {
    let mut names: Vec<String> = vec!["*".to_owned()];
    for t in catalogue::public() {
        for (i, _) in t.name().match_indices('.') {
            names.push(format!("{}*", &t.name()[..=i]));
        }
        names.push(t.name().to_owned());
    }
    names.sort();
    names.dedup();
    // Names are lower-case words, dots and a star: only those two escaped.
    let escaped: Vec<String> = names
        .iter()
        .map(|n| n.replace('.', r"\.").replace('*', r"\*"))
        .collect();
    format!(r"^\s*(?:{})\s*$", escaped.join("|"))
}

/// Whether a subscription to `types` takes an event of `kind`.
pub fn matches(types: &[String], kind: &str) -> bool {
    deliverable(kind)
        && types.iter().any(|t| {
            t == "*"
                || match t.strip_suffix('*') {
                    Some(family) => kind.starts_with(family),
                    None => t == kind,
                }
        })
}

/// How a failed delivery is retried: the first wait, doubled after each
/// further failure up to `max`, for at most `give_up_after` from the
/// delivery's creation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub first: Duration,
    pub max: Duration,
    pub give_up_after: Duration,
}

impl RetryPolicy {
    /// The wait after the `failures`-th failed attempt (1 for the first):
    /// `first × 2^(failures-1)`, at most `max`, shortened by up to a
    /// quarter by `jitter` (0 to 1) so that receivers coming back are not
    /// hit by every sender at the same instant.
    pub fn delay(&self, failures: u32, jitter: f64) -> Duration {
        let doublings = failures.saturating_sub(1).min(40);
        let base = self
            .first
            .checked_mul(1u32 << doublings.min(31))
            .unwrap_or(self.max)
            .min(self.max);
        base.mul_f64(1.0 - 0.25 * jitter.clamp(0.0, 1.0))
    }

    /// When to try again after the `failures`-th failure at `now` of a
    /// delivery made at `created`, or `None` to give up: the next attempt
    /// would fall after the retry period.
    pub fn next_attempt(
        &self,
        created: Duration,
        now: Duration,
        failures: u32,
        jitter: f64,
    ) -> Option<Duration> {
        let next = now + self.delay(failures, jitter);
        (next <= created + self.give_up_after).then_some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types(list: &[&str]) -> Result<Vec<String>, Vec<String>> {
        let list: Vec<String> = list.iter().map(|s| (*s).to_owned()).collect();
        parse_event_types(&list).map_err(|e| e.into_iter().map(|e| e.name).collect())
    }

    #[test]
    fn event_types_are_known_kinds_families_or_everything() {
        assert_eq!(
            types(&["order.*", "shipment.milestone", "order.*", " * "]),
            Ok(vec![
                "order.*".into(),
                "shipment.milestone".into(),
                "*".into()
            ])
        );
        assert_eq!(types(&[]), Err(vec!["event_types".into()]));
        assert_eq!(
            types(&[
                "order.shipped",
                "key.created",
                "key.*",
                "ord*",
                "order",
                "release.*",
                "order.status_changed*"
            ]),
            Err((0..7).map(|i| format!("event_types[{i}]")).collect())
        );
        let many: Vec<&str> = ["order.created"; MAX_EVENT_TYPES + 1].to_vec();
        assert_eq!(types(&many), Err(vec!["event_types".into()]));
    }

    #[test]
    fn the_described_pattern_takes_what_the_check_takes() {
        let re = regex::Regex::new(&event_type_pattern()).expect("pattern");
        let mut drawn: Vec<String> = [
            "*",
            " order.* ",
            "\torder.created",
            "ord*",
            "order",
            "key.created",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        for t in catalogue::CATALOGUE {
            drawn.push(t.name().to_owned());
            drawn.push(format!("{}*", t.name()));
            drawn.push(format!("{}.*", t.name()));
            if let Some((family, _)) = t.name().split_once('.') {
                drawn.push(format!("{family}.*"));
                drawn.push(format!("{family}*"));
            }
        }
        for s in drawn {
            let checked = parse_event_types(std::slice::from_ref(&s)).is_ok();
            assert_eq!(re.is_match(&s), checked, "{s:?}");
        }
    }

    #[test]
    fn matching_never_takes_key_events() {
        let t = |l: &[&str]| l.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert!(matches(&t(&["order.*"]), "order.status_changed"));
        assert!(!matches(&t(&["order.*"]), "orders.x"));
        assert!(matches(&t(&["pick.scanned"]), "pick.scanned"));
        assert!(!matches(&t(&["pick.scanned"]), "pick.scanned_twice"));
        assert!(matches(&t(&["*"]), "stock.moved"));
        assert!(!matches(&t(&["*"]), "key.created"));
        assert!(!matches(&t(&["key.created"]), "key.created"));
        assert!(!matches(&t(&["*"]), "release.published"));
        assert!(!matches(&t(&["*"]), "from.a_newer_node"));
    }

    #[test]
    fn input_checks_name_every_field() {
        let ok = |u: &str| -> Result<String, String> {
            u.starts_with("https://")
                .then(|| u.to_owned())
                .ok_or_else(|| "must be https".into())
        };
        let names = |r: Result<Changes, Vec<FieldError>>| -> Vec<String> {
            r.err()
                .unwrap_or_default()
                .into_iter()
                .map(|e| e.name)
                .collect()
        };
        assert_eq!(
            names(WebhookInput::default().check(true, ok)),
            ["url", "event_types"]
        );
        assert!(names(WebhookInput::default().check(false, ok)).is_empty());
        let bad = WebhookInput {
            url: Some("http://x".into()),
            event_types: Some(vec!["nope".into()]),
            secret: Some("short".into()),
            description: Some("a\u{7}".into()),
            active: None,
        };
        assert_eq!(
            names(bad.check(true, ok)),
            ["url", "event_types[0]", "secret", "description"]
        );
        let edit = WebhookInput {
            secret: Some("x".repeat(30)),
            description: Some("  ".into()),
            ..WebhookInput::default()
        };
        assert_eq!(names(edit.check(false, ok)), ["secret"]);
        let clear = WebhookInput {
            description: Some("  ".into()),
            ..WebhookInput::default()
        };
        let c = clear.check(false, ok).expect("valid");
        assert_eq!(c.description, Some(None));
        let long = WebhookInput {
            url: Some(format!("https://x/{}", "a".repeat(MAX_URL_LEN))),
            event_types: Some(vec!["*".into()]),
            ..WebhookInput::default()
        };
        assert_eq!(names(long.check(true, ok)), ["url"]);
    }

    #[test]
    fn backoff_doubles_to_its_cap_and_jitter_only_shortens() {
        let p = RetryPolicy {
            first: Duration::from_secs(10),
            max: Duration::from_secs(3600),
            give_up_after: Duration::from_secs(86_400),
        };
        let waits: Vec<u64> = (1..=11).map(|n| p.delay(n, 0.0).as_secs()).collect();
        assert_eq!(
            waits,
            [10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600, 3600]
        );
        assert_eq!(p.delay(u32::MAX, 0.0), Duration::from_secs(3600));
        assert_eq!(p.delay(1, 1.0), Duration::from_millis(7500));
        assert!(p.delay(3, 0.5) < p.delay(3, 0.0));
    }

    #[test]
    fn retries_stop_after_the_period() {
        let p = RetryPolicy {
            first: Duration::from_secs(10),
            max: Duration::from_secs(3600),
            give_up_after: Duration::from_secs(100),
        };
        let s = Duration::from_secs;
        assert_eq!(p.next_attempt(s(0), s(0), 1, 0.0), Some(s(10)));
        assert_eq!(p.next_attempt(s(0), s(60), 3, 0.0), Some(s(100)));
        assert_eq!(p.next_attempt(s(0), s(61), 3, 0.0), None);
        // Summed, the waits never outlast the period by more than nothing.
        let mut now = s(0);
        let mut failures = 0;
        while let Some(next) = p.next_attempt(s(0), now, failures + 1, 0.3) {
            failures += 1;
            now = next;
        }
        assert!(now <= s(100) && failures >= 3, "{now:?} after {failures}");
    }
}
