//! Typed settings, loaded once: defaults, then a TOML file, then `DEPOT_…`
//! environment variables (nested keys joined with `__`, as in
//! `DEPOT_RATE_LIMIT__PER_SECOND=50`).

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

mod sections;
pub use sections::{
    BrokerSettings, CarrierSettings, ChangelogSettings, DatabaseSettings, OAuthSettings, RateLimit,
    Secret,
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Address the HTTP API listens on.
    pub listen: SocketAddr,
    /// How long a caller may take to send a request, how long a kept-alive
    /// connection may wait for its next one, and how many connections are
    /// served at once.
    pub http: depot_wms::http::server::HttpSettings,
    /// Where the database lives (`cloud.db` inside it, unless
    /// `database.url` names a server) and the documents.
    pub data_dir: PathBuf,
    /// The database on a server, for a cloud past one machine.
    pub database: DatabaseSettings,
    /// Free space on the data directory's disk, in MiB, below which the
    /// server warns that it is running out: in its log at start and in
    /// `/metrics` (`depot_storage_low`). When the disk is full every
    /// write is refused (507) until space is freed.
    pub low_disk_mib: u64,
    /// Requests allowed per API key.
    pub rate_limit: RateLimit,
    /// Log filter, in `tracing` env-filter syntax.
    pub log: String,
    /// Per carrier code: what its webhooks are signed with.
    pub carriers: BTreeMap<String, CarrierSettings>,
    /// The MQTT broker edges sync through.
    pub broker: BrokerSettings,
    /// The release-notes API and where it is reached.
    pub changelog: ChangelogSettings,
    /// The authorization server of the release-notes API.
    pub oauth: OAuthSettings,
    /// Outbound webhooks: timeouts, retries, which targets are allowed.
    pub webhooks: crate::webhooks::settings::WebhookSettings,
    /// Sales channels' connectors: timeouts, retries, which platforms may
    /// be reached.
    pub connectors: crate::connectors::settings::ConnectorSettings,
    /// `Idempotency-Key` on writes: how long a key and its answer are kept.
    pub idempotency: depot_wms::idempotency::IdempotencySettings,
    /// The largest piece each service of the own fleet takes: a package
    /// beyond them is refused at packing.
    pub own_fleet: depot_wms::carriers::OwnFleetSettings,
}

/// How the reference of these settings (docs/cloud-configuration.md) is
/// made and introduced.
pub const REFERENCE: depot_settings_doc::Reference<'static> = depot_settings_doc::Reference {
    title: "Cloud configuration",
    intro: "\
The settings of `depot-cloud`. Installed from the Debian package, they are
in `/etc/depot/cloud.toml`: the systemd unit runs `depot-cloud --config
/etc/depot/cloud.toml serve` and sets `DEPOT_DATA_DIR=/var/lib/depot`, which
wins over `data_dir` in the file; the admin commands' `--data-dir` wins over
both. An example: [`examples/cloud.toml`](../examples/cloud.toml).",
    command: "depot-cloud config reference",
    regenerate: "`DEPOT_BLESS=1 cargo test -p depot-cloud --test it configuration_reference`",
};

/// The configuration reference, made from these types: every setting with
/// its type, default, environment variable and doc comment. Fails naming
/// the settings that have no doc comment.
pub fn reference_markdown() -> Result<String, String> {
    let schema = schemars::schema_for!(Settings);
    let defaults = serde_json::to_value(Settings::default()).map_err(|e| e.to_string())?;
    depot_settings_doc::markdown(schema.as_value(), &defaults, &REFERENCE)
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            http: Default::default(),
            data_dir: PathBuf::from("depot-data"),
            database: DatabaseSettings::default(),
            low_disk_mib: 1024,
            rate_limit: RateLimit::default(),
            log: "info".into(),
            carriers: BTreeMap::new(),
            broker: BrokerSettings::default(),
            changelog: ChangelogSettings::default(),
            oauth: OAuthSettings::default(),
            webhooks: Default::default(),
            connectors: Default::default(),
            idempotency: Default::default(),
            own_fleet: Default::default(),
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
        let settings: Settings = fig.merge(settings_env()).extract()?;
        if settings.rate_limit.per_second == 0 || settings.rate_limit.burst == 0 {
            return Err(Box::new(figment::Error::from(
                "rate_limit.per_second and rate_limit.burst must be at least 1".to_owned(),
            )));
        }
        for (name, url) in [
            ("changelog.base_url", &settings.changelog.base_url),
            ("changelog.login_url", &settings.changelog.login_url),
        ] {
            let ok = reqwest::Url::parse(url)
                .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some());
            if !ok || url.ends_with('/') {
                return Err(Box::new(figment::Error::from(format!(
                    "{name} must be an http(s) URL without a trailing slash, got {url:?}"
                ))));
            }
        }
        if let Err(e) = settings.changelog.check_locales() {
            return Err(Box::new(figment::Error::from(e)));
        }
        let o = &settings.oauth;
        if o.token_ttl_secs == 0 || o.token_ttl_secs > 86_400 || o.key_rotation_days == 0 {
            return Err(Box::new(figment::Error::from(
                "oauth.token_ttl_secs must be 1 to 86400 and oauth.key_rotation_days at least 1"
                    .to_owned(),
            )));
        }
        if let Some(url) = settings.database.postgres() {
            if let Err(e) = depot_sql::check_postgres_url(url) {
                return Err(Box::new(figment::Error::from(format!("database.url: {e}"))));
            }
        }
        if let Err(e) = settings.http.check() {
            return Err(Box::new(figment::Error::from(e)));
        }
        if let Err(e) = settings.idempotency.check() {
            return Err(Box::new(figment::Error::from(e)));
        }
        if let Err(e) = settings.own_fleet.check() {
            return Err(Box::new(figment::Error::from(e)));
        }
        if let Err(e) = settings.webhooks.check() {
            return Err(Box::new(figment::Error::from(e)));
        }
        if let Err(e) = settings.connectors.check() {
            return Err(Box::new(figment::Error::from(e)));
        }
        // A bad broker URL fails at startup, not at the first connect.
        if let Err(e) = settings.broker.external() {
            return Err(Box::new(figment::Error::from(format!("broker.url: {e}"))));
        }
        if let Err(e) = settings.broker.tls() {
            return Err(Box::new(figment::Error::from(e.to_string())));
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

    pub fn oauth_config(&self) -> crate::oauth::OAuthConfig {
        let days = std::time::Duration::from_secs(86_400);
        crate::oauth::OAuthConfig {
            issuer: self.changelog.base_url.clone(),
            login_url: self.changelog.login_url.clone(),
            token_ttl: std::time::Duration::from_secs(self.oauth.token_ttl_secs),
            rotate_every: days
                .saturating_mul(u32::try_from(self.oauth.key_rotation_days).unwrap_or(u32::MAX)),
            open_registration: self.oauth.open_registration,
            trusted_issuers: self.oauth.trusted_issuers.clone(),
        }
    }

    pub fn database(&self) -> PathBuf {
        self.data_dir.join("cloud.db")
    }

    /// The data directory's disk, with the warning threshold.
    pub fn storage(&self) -> depot_wms::disk::Probe {
        depot_wms::disk::Probe::new(&self.data_dir, &self.database(), self.low_disk_mib)
    }
}

/// The top-level settings the environment may set. Other `DEPOT_…`
/// variables (`DEPOT_CONFIG`, test switches) belong to other readers and are
/// not settings, so they are left alone rather than refused.
const FIELDS: [&str; 15] = [
    "listen",
    "http",
    "data_dir",
    "database",
    "low_disk_mib",
    "rate_limit",
    "log",
    "carriers",
    "broker",
    "changelog",
    "oauth",
    "webhooks",
    "connectors",
    "idempotency",
    "own_fleet",
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
mod tests;
