//! Typed settings, loaded once: defaults, then a TOML file, then `DEPOT_…`
//! environment variables (nested keys joined with `__`, as in
//! `DEPOT_RATE_LIMIT__PER_SECOND=50`).

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};
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
