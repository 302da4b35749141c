//! `[connectors]`: how the cloud runs channels' connectors.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ConnectorSettings {
    /// Whether this instance runs connectors (every instance may: a lease
    /// keeps each connector to one at a time).
    pub run: bool,
    /// How long one call to a platform may take, connecting included
    /// (seconds; fractions allowed).
    pub call_timeout_secs: f64,
    /// The wait after a connector's first failed run (seconds); each
    /// further failure doubles it.
    pub first_retry_secs: f64,
    /// The longest wait between two runs of a failing connector (seconds).
    pub max_retry_secs: f64,
    /// Whether connectors may reach plain `http://` platforms and private,
    /// loopback or link-local addresses. Off: only `https://` to public
    /// addresses, checked again when the name is resolved. Turn on only
    /// where every tenant is trusted (tests, one company's own
    /// installation).
    pub allow_private_targets: bool,
}

impl Default for ConnectorSettings {
    fn default() -> Self {
        Self {
            run: true,
            call_timeout_secs: 20.0,
            first_retry_secs: 2.0,
            max_retry_secs: 300.0,
            allow_private_targets: false,
        }
    }
}

fn secs(name: &str, v: f64) -> Result<Duration, String> {
    Duration::try_from_secs_f64(v)
        .ok()
        .filter(|d| !d.is_zero() && v <= 86_400.0)
        .ok_or_else(|| {
            format!("connectors.{name} must be a number of seconds above 0, at most a day")
        })
}

impl ConnectorSettings {
    /// The call timeout and the retry bounds, or what is wrong with them.
    pub fn check(&self) -> Result<(Duration, super::runner::Backoff), String> {
        let timeout = secs("call_timeout_secs", self.call_timeout_secs)?;
        let backoff = super::runner::Backoff {
            first: secs("first_retry_secs", self.first_retry_secs)?,
            max: secs("max_retry_secs", self.max_retry_secs)?,
        };
        if backoff.first > backoff.max {
            return Err(
                "connectors.first_retry_secs must not exceed connectors.max_retry_secs".into(),
            );
        }
        Ok((timeout, backoff))
    }
}
