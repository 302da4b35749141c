//! The edge's settings: defaults, then a TOML file, then `DEPOT_…`
//! environment variables (nested keys joined with `__`).

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// The business this box works for.
    pub business_id: i64,
    /// This edge's id, as registered in the cloud (`depot-cloud edge register`).
    pub edge_id: String,
    /// The node number the cloud gave it at registration.
    pub node: u32,
    /// Where stations reach the API.
    pub listen: SocketAddr,
    /// Where the database lives (`edge.db` inside it).
    pub data_dir: PathBuf,
    pub broker: Broker,
    /// Log filter, in `tracing` env-filter syntax.
    pub log: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Broker {
    /// `mqtt://host:1883` or `mqtts://user:password@host:8883`.
    pub url: String,
    /// Events in flight beyond the cloud's acknowledgement.
    pub window: i64,
    /// Seconds without an acknowledgement before sending again.
    pub resend_after_secs: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            business_id: 0,
            edge_id: String::new(),
            node: 0,
            listen: SocketAddr::from(([127, 0, 0, 1], 8081)),
            data_dir: PathBuf::from("depot-edge-data"),
            broker: Broker::default(),
            log: "info".into(),
        }
    }
}

impl Default for Broker {
    fn default() -> Self {
        Self {
            url: "mqtt://127.0.0.1:1883".into(),
            window: 2000,
            resend_after_secs: 15,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error(transparent)]
    Load(#[from] Box<figment::Error>),
    #[error("{0}")]
    Invalid(String),
}

impl Settings {
    pub fn load(file: Option<&Path>) -> Result<Self, SettingsError> {
        let mut fig = Figment::from(Serialized::defaults(Settings::default()));
        if let Some(file) = file {
            fig = fig.merge(Toml::file_exact(file));
        }
        let s: Settings = fig.merge(settings_env()).extract().map_err(Box::new)?;
        s.check()?;
        Ok(s)
    }

    /// What an edge cannot run without: its identity from the cloud.
    pub fn check(&self) -> Result<(), SettingsError> {
        let bad = |m: &str| Err(SettingsError::Invalid(m.to_owned()));
        if self.business_id <= 0 || i32::try_from(self.business_id).is_err() {
            return bad(
                "business_id must be the id of the business this edge works for (DEPOT_BUSINESS_ID)",
            );
        }
        if depot_protocol::sync::EdgeId::parse(&self.edge_id).is_err() {
            return bad(
                "edge_id must be the edge's registered id: letters, digits, '-' or '_' (DEPOT_EDGE_ID)",
            );
        }
        if self.node == 0 || self.node > depot_wms::store::ids::MAX_NODE {
            return bad("node must be the number `depot-cloud edge register` printed (DEPOT_NODE)");
        }
        if depot_mqtt::MqttUrl::parse(&self.broker.url).is_err() {
            return bad(
                "broker.url must be mqtt://host:port or mqtts://host:port (DEPOT_BROKER__URL)",
            );
        }
        if self.broker.window < 1 || self.broker.resend_after_secs == 0 {
            return bad("broker.window and broker.resend_after_secs must be at least 1");
        }
        Ok(())
    }

    pub fn database(&self) -> PathBuf {
        self.data_dir.join("edge.db")
    }

    pub fn origin(&self) -> String {
        format!("edge:{}", self.edge_id)
    }
}

/// The top-level settings the environment may set. Other `DEPOT_…`
/// variables (`DEPOT_CONFIG`, test switches) belong to other readers and are
/// not settings, so they are left alone rather than refused.
const FIELDS: [&str; 7] = [
    "business_id",
    "edge_id",
    "node",
    "listen",
    "data_dir",
    "broker",
    "log",
];

fn settings_env() -> Env {
    Env::prefixed("DEPOT_")
        .filter(|key| {
            let key = key.as_str().to_ascii_lowercase();
            FIELDS
                .iter()
                .any(|f| key == *f || key.starts_with(&format!("{f}__")))
        })
        .split("__")
}

#[cfg(test)]
// figment's Jail closures return figment's own (large) error type.
#[allow(clippy::result_large_err)]
mod tests {
    use super::*;

    #[test]
    fn identity_comes_from_file_and_environment() {
        figment::Jail::expect_with(|jail| {
            jail.create_file(
                "edge.toml",
                "business_id = 3\nedge_id = \"mad-1\"\n[broker]\nurl = \"mqtt://broker:1883\"\n",
            )?;
            jail.set_env("DEPOT_NODE", "2");
            let s = Settings::load(Some(Path::new("edge.toml")))
                .map_err(|e| figment::Error::from(e.to_string()))?;
            assert_eq!((s.business_id, s.edge_id.as_str(), s.node), (3, "mad-1", 2));
            assert_eq!(s.origin(), "edge:mad-1");
            Ok(())
        });
    }

    #[test]
    fn a_box_without_identity_says_what_is_missing() {
        figment::Jail::expect_with(|_| {
            let e = Settings::load(None)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains("DEPOT_BUSINESS_ID"), "{e}");
            Ok(())
        });
        let s = Settings {
            business_id: 1,
            edge_id: "a/b".into(),
            node: 1,
            ..Settings::default()
        };
        assert!(s.check().is_err());
        let s = Settings {
            business_id: 1,
            edge_id: "a".into(),
            node: 1,
            ..Settings::default()
        };
        assert!(s.check().is_ok());
    }
}
