//! Typed settings, loaded once: defaults, then a TOML file, then `DEPOT_…`
//! environment variables (nested keys joined with `__`, as in
//! `DEPOT_RATE_LIMIT__PER_SECOND=50`).

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Address the HTTP API listens on.
    pub listen: SocketAddr,
    /// Where the database lives (`cloud.db` inside it).
    pub data_dir: PathBuf,
    /// Requests allowed per API key.
    pub rate_limit: RateLimit,
    /// Log filter, in `tracing` env-filter syntax.
    pub log: String,
    /// Per carrier code: what its webhooks are signed with.
    pub carriers: BTreeMap<String, CarrierSettings>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CarrierSettings {
    /// Shared secret of the carrier's webhook signatures (HMAC-SHA256).
    pub webhook_secret: Secret,
}

/// A secret: usable, but never printed by `Debug`.
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_empty() {
            "(unset)"
        } else {
            "(redacted)"
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RateLimit {
    /// Sustained requests per second per key.
    pub per_second: u32,
    /// Requests a key may make in a burst above the sustained rate.
    pub burst: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            data_dir: PathBuf::from("depot-data"),
            rate_limit: RateLimit::default(),
            log: "info".into(),
            carriers: BTreeMap::new(),
        }
    }
}

impl Default for RateLimit {
    fn default() -> Self {
        Self {
            per_second: 50,
            burst: 200,
        }
    }
}

impl Settings {
    /// Loads settings: defaults, the TOML file if given (it must exist), then
    /// the environment.
    pub fn load(file: Option<&Path>) -> Result<Self, Box<figment::Error>> {
        let mut fig = Figment::from(Serialized::defaults(Settings::default()));
        if let Some(file) = file {
            fig = fig.merge(Toml::file_exact(file));
        }
        let settings: Settings = fig.merge(Env::prefixed("DEPOT_").split("__")).extract()?;
        if settings.rate_limit.per_second == 0 || settings.rate_limit.burst == 0 {
            return Err(Box::new(figment::Error::from(
                "rate_limit.per_second and rate_limit.burst must be at least 1".to_owned(),
            )));
        }
        Ok(settings)
    }

    /// The webhook secrets of carriers that have one.
    pub fn webhook_secrets(&self) -> std::collections::HashMap<String, String> {
        self.carriers
            .iter()
            .filter(|(_, c)| !c.webhook_secret.0.is_empty())
            .map(|(code, c)| (code.clone(), c.webhook_secret.0.clone()))
            .collect()
    }

    pub fn database(&self) -> PathBuf {
        self.data_dir.join("cloud.db")
    }
}

#[cfg(test)]
// figment's Jail closures return figment's own (large) error type.
#[allow(clippy::result_large_err)]
mod tests {
    use super::*;

    #[test]
    fn file_then_environment() {
        figment::Jail::expect_with(|jail| {
            jail.create_file(
                "cloud.toml",
                "listen = \"127.0.0.1:9000\"\n[rate_limit]\nper_second = 5\n",
            )?;
            jail.set_env("DEPOT_RATE_LIMIT__BURST", "7");
            let s = Settings::load(Some(Path::new("cloud.toml"))).map_err(|e| *e)?;
            assert_eq!(s.listen, SocketAddr::from(([127, 0, 0, 1], 9000)));
            assert_eq!(
                s.rate_limit,
                RateLimit {
                    per_second: 5,
                    burst: 7
                }
            );
            assert_eq!(s.data_dir, PathBuf::from("depot-data"));
            Ok(())
        });
    }

    #[test]
    fn secrets_come_from_the_environment_and_never_print() {
        figment::Jail::expect_with(|jail| {
            jail.set_env("DEPOT_CARRIERS__OWN__WEBHOOK_SECRET", "hunter2");
            let s = Settings::load(None).map_err(|e| *e)?;
            assert_eq!(
                s.webhook_secrets().get("own").map(String::as_str),
                Some("hunter2")
            );
            assert!(!format!("{s:?}").contains("hunter2"));
            Ok(())
        });
    }

    #[test]
    fn unknown_keys_and_zero_limits_are_refused() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("bad.toml", "lisen = \"127.0.0.1:9000\"\n")?;
            assert!(Settings::load(Some(Path::new("bad.toml"))).is_err());
            jail.create_file("zero.toml", "[rate_limit]\nper_second = 0\n")?;
            assert!(Settings::load(Some(Path::new("zero.toml"))).is_err());
            Ok(())
        });
    }
}
