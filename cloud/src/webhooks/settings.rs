//! `[webhooks]`: how outbound webhook deliveries are sent and retried.

use depot_protocol::webhook::RetryPolicy;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct WebhookSettings {
    /// How long one attempt may take, connecting included, before it
    /// counts as failed (seconds; fractions allowed).
    pub attempt_timeout_secs: f64,
    /// The wait after a delivery's first failed attempt (seconds); each
    /// further failure doubles it, less up to a quarter of random jitter.
    pub first_retry_secs: f64,
    /// The longest wait between two attempts (seconds).
    pub max_retry_secs: f64,
    /// How long a delivery is retried, from when it was made (or retried
    /// by hand), before it is marked failed (seconds).
    pub retry_for_secs: f64,
    /// Attempts in flight at once across all subscriptions (each
    /// subscription has at most one).
    pub concurrency: u32,
    /// Whether subscriptions may target plain `http://` URLs and private,
    /// loopback or link-local addresses. Off: only `https://` to public
    /// addresses, checked again when the name is resolved for each
    /// attempt. Turn on only where every tenant is trusted (tests, one
    /// company's own installation).
    pub allow_private_targets: bool,
    /// Days a delivered or failed delivery, with its attempts, stays
    /// visible through the API before it is deleted (1 to 3650). Pending
    /// deliveries are kept however old.
    pub keep_finished_days: u32,
}

impl Default for WebhookSettings {
    fn default() -> Self {
        Self {
            attempt_timeout_secs: 10.0,
            first_retry_secs: 10.0,
            max_retry_secs: 3600.0,
            retry_for_secs: 86_400.0,
            concurrency: 16,
            allow_private_targets: false,
            keep_finished_days: 30,
        }
    }
}

fn secs(name: &str, v: f64) -> Result<Duration, String> {
    Duration::try_from_secs_f64(v)
        .ok()
        .filter(|d| !d.is_zero() && v <= 31_536_000.0)
        .ok_or_else(|| {
            format!("webhooks.{name} must be a number of seconds above 0, at most a year")
        })
}

impl WebhookSettings {
    /// The timeout and the retry policy, or what is wrong with them.
    pub fn check(&self) -> Result<(Duration, RetryPolicy), String> {
        let timeout = secs("attempt_timeout_secs", self.attempt_timeout_secs)?;
        let policy = RetryPolicy {
            first: secs("first_retry_secs", self.first_retry_secs)?,
            max: secs("max_retry_secs", self.max_retry_secs)?,
            give_up_after: secs("retry_for_secs", self.retry_for_secs)?,
        };
        if policy.first > policy.max {
            return Err("webhooks.first_retry_secs must not exceed webhooks.max_retry_secs".into());
        }
        if self.concurrency == 0 || self.concurrency > 1024 {
            return Err("webhooks.concurrency must be 1 to 1024".into());
        }
        if !(1..=3650).contains(&self.keep_finished_days) {
            return Err("webhooks.keep_finished_days must be 1 to 3650".into());
        }
        Ok((timeout, policy))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_hold_and_nonsense_is_named() {
        let (timeout, policy) = WebhookSettings::default().check().expect("defaults");
        assert_eq!(timeout, Duration::from_secs(10));
        assert_eq!(policy.max, Duration::from_secs(3600));
        for (bad, says) in [
            (
                WebhookSettings {
                    first_retry_secs: 0.0,
                    ..Default::default()
                },
                "first_retry_secs",
            ),
            (
                WebhookSettings {
                    retry_for_secs: f64::NAN,
                    ..Default::default()
                },
                "retry_for_secs",
            ),
            (
                WebhookSettings {
                    attempt_timeout_secs: -1.0,
                    ..Default::default()
                },
                "attempt_timeout_secs",
            ),
            (
                WebhookSettings {
                    first_retry_secs: 7200.0,
                    ..Default::default()
                },
                "exceed",
            ),
            (
                WebhookSettings {
                    concurrency: 0,
                    ..Default::default()
                },
                "concurrency",
            ),
            (
                WebhookSettings {
                    keep_finished_days: 0,
                    ..Default::default()
                },
                "keep_finished_days",
            ),
        ] {
            let e = bad.check().expect_err(says);
            assert!(e.contains(says), "{e}");
        }
    }
}
