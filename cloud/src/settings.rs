//! Typed settings, loaded once: defaults, then a TOML file, then `DEPOT_…`
//! environment variables (nested keys joined with `__`, as in
//! `DEPOT_RATE_LIMIT__PER_SECOND=50`).

use crate::broker::{BrokerError, MqttUrl};
use depot_mqtt::{Tls, TlsFiles};
use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

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

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ChangelogSettings {
    /// The public address of the release-notes API (`{changelog_url}`):
    /// the OAuth issuer and protected resource, and the base of feed links.
    pub base_url: String,
    /// The public address of the OAuth endpoints (`{login_url}`).
    pub login_url: String,
    /// Where translation sync reads translations:
    /// `<dir>/<locale>/<product>/<version>.md`, whose first line is
    /// `# Title`. Unset: `POST /api/sync-translations` answers 409.
    pub translations_dir: Option<PathBuf>,
    /// The locales release notes are written and translated in.
    pub locales: Vec<String>,
    /// The locale readers get when they ask for none.
    pub default_locale: String,
}

impl ChangelogSettings {
    /// Every locale is a tag (`en`, `pt-BR`), and the default is one of them.
    fn check_locales(&self) -> Result<(), String> {
        if let Some(bad) = self
            .locales
            .iter()
            .find(|l| depot_protocol::release::normalize_locale(l).is_none())
        {
            return Err(format!(
                "changelog.locales: {bad:?} is not a locale tag such as en or pt-BR"
            ));
        }
        let default = depot_protocol::release::normalize_locale(&self.default_locale);
        let listed = self
            .locales
            .iter()
            .any(|l| depot_protocol::release::normalize_locale(l) == default);
        if default.is_none() || !listed {
            return Err(format!(
                "changelog.default_locale {:?} must be one of changelog.locales",
                self.default_locale
            ));
        }
        Ok(())
    }
}

impl Default for ChangelogSettings {
    fn default() -> Self {
        Self {
            base_url: "http://127.0.0.1:8080".into(),
            login_url: "http://127.0.0.1:8080".into(),
            translations_dir: None,
            locales: vec!["en".into(), "es".into(), "pt-BR".into()],
            default_locale: "en".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct OAuthSettings {
    /// How long an access token lives.
    pub token_ttl_secs: u64,
    /// How long a signing key signs before the next one takes over (it
    /// stays published until its last token has expired).
    pub key_rotation_days: u64,
    /// Whether anyone may register a client at `/oauth/register`. Such a
    /// client holds no scope until a person claims it.
    pub open_registration: bool,
    /// Identity providers whose assertions (ID-JAG) are accepted, each
    /// `{issuer, jwks_uri, scopes}`.
    pub trusted_issuers: Vec<crate::oauth::trust::TrustedIssuer>,
}

impl Default for OAuthSettings {
    fn default() -> Self {
        Self {
            token_ttl_secs: 3600,
            key_rotation_days: 30,
            open_registration: true,
            trusted_issuers: Vec::new(),
        }
    }
}

#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BrokerSettings {
    /// An external broker (`mqtt://[user:password@]host[:port]` or
    /// `mqtts://…`). When set, the embedded broker is not started.
    pub url: Option<String>,
    /// Where the embedded broker (MQTT 3.1.1, no authentication, no TLS)
    /// listens when `url` is unset. Loopback by default: expose it beyond a
    /// trusted network only behind something that authenticates.
    pub embedded_listen: SocketAddr,
    /// With an external broker: the MQTT shared-subscription group of the
    /// cloud instances that serve the same database, which then share the
    /// edges' messages (`$share/<group>/...`). Unset: one instance.
    pub share_group: Option<String>,
    /// With an external `mqtts://` broker: a PEM file of the CA
    /// certificates that sign its certificate, trusted instead of the
    /// public web roots. Unset: the public roots.
    pub ca_file: Option<PathBuf>,
    /// With an external `mqtts://` broker that requires one: the cloud's
    /// client certificate (PEM, intermediates after it), with
    /// `client_key_file`.
    pub client_cert_file: Option<PathBuf>,
    /// The private key of `client_cert_file` (PEM: PKCS#8, PKCS#1 or SEC1).
    pub client_key_file: Option<PathBuf>,
}

// By hand: the URL may carry a password.
impl fmt::Debug for BrokerSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BrokerSettings")
            .field("url", &self.url.as_deref().map(crate::broker::redact))
            .field("embedded_listen", &self.embedded_listen)
            .field("share_group", &self.share_group)
            .field("ca_file", &self.ca_file)
            .field("client_cert_file", &self.client_cert_file)
            .field("client_key_file", &self.client_key_file)
            .finish()
    }
}

impl Default for BrokerSettings {
    fn default() -> Self {
        Self {
            url: None,
            embedded_listen: SocketAddr::from(([127, 0, 0, 1], 1883)),
            share_group: None,
            ca_file: None,
            client_cert_file: None,
            client_key_file: None,
        }
    }
}

impl BrokerSettings {
    /// The external broker to connect to, or `None` to start the embedded
    /// one on `embedded_listen`. An empty URL counts as unset, so that
    /// `DEPOT_BROKER__URL=` in a deployment's environment means "embedded".
    pub fn external(&self) -> Result<Option<MqttUrl>, BrokerError> {
        self.url
            .as_deref()
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(MqttUrl::parse)
            .transpose()
            .map_err(BrokerError::from)
    }

    /// What TLS to the external broker trusts and shows, the files read
    /// now. The embedded broker has no TLS, so files without a URL are an
    /// error rather than ignored.
    pub fn tls(&self) -> Result<Tls, BrokerError> {
        let files = TlsFiles {
            ca_file: self.ca_file.clone(),
            client_cert_file: self.client_cert_file.clone(),
            client_key_file: self.client_key_file.clone(),
        };
        match self.external()? {
            Some(url) => Ok(Tls::load(&url, &files)?),
            None if files.is_empty() => Ok(Tls::default()),
            None => Err(BrokerError::Mqtt(depot_mqtt::MqttError::TlsFile {
                setting: "broker.url",
                path: None,
                reason: "TLS files are set, but no external broker: the embedded one has no TLS"
                    .into(),
            })),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CarrierSettings {
    /// Shared secret of the carrier's webhook signatures (HMAC-SHA256).
    pub webhook_secret: Secret,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct DatabaseSettings {
    /// PostgreSQL to keep the cloud's data in, as a URL:
    /// `postgres://user:password@host:5432/depot?sslmode=require` (TLS by
    /// the Mozilla roots; `sslmode=disable` for none, `prefer` by default).
    /// Several instances may share one database. Empty: SQLite, `cloud.db`
    /// in the data directory.
    pub url: Secret,
}

impl DatabaseSettings {
    /// The PostgreSQL URL, when one is set.
    pub fn postgres(&self) -> Option<&str> {
        Some(self.url.0.trim()).filter(|u| !u.is_empty())
    }
}

/// A secret: usable, but never printed by `Debug`.
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
    fn the_own_fleets_limits_from_the_environment() {
        figment::Jail::expect_with(|jail| {
            jail.set_env("DEPOT_OWN_FLEET__STANDARD__MAX_WEIGHT_G", "5000");
            jail.set_env("DEPOT_OWN_FLEET__EXPRESS__MAX_SIDES_MM", "[500, 400, 300]");
            let s = Settings::load(None).map_err(|e| *e)?;
            assert_eq!(s.own_fleet.standard.max_weight_g, 5000);
            assert_eq!(s.own_fleet.standard.max_sides_mm, [1200, 600, 600]);
            assert_eq!(s.own_fleet.express.max_sides_mm, [500, 400, 300]);
            jail.set_env("DEPOT_OWN_FLEET__STANDARD__MAX_WEIGHT_G", "0");
            let e = Settings::load(None).err().map(|e| e.to_string());
            assert!(e.is_some_and(|e| e.contains("own_fleet.standard.max_weight_g")));
            Ok(())
        });
    }

    #[test]
    fn idempotency_keys_are_kept_1_to_720_hours() {
        figment::Jail::expect_with(|jail| {
            assert_eq!(
                Settings::load(None)
                    .map_err(|e| *e)?
                    .idempotency
                    .retention_hours,
                24
            );
            jail.set_env("DEPOT_IDEMPOTENCY__RETENTION_HOURS", "48");
            assert_eq!(
                Settings::load(None)
                    .map_err(|e| *e)?
                    .idempotency
                    .retention_hours,
                48
            );
            for bad in ["0", "721"] {
                jail.set_env("DEPOT_IDEMPOTENCY__RETENTION_HOURS", bad);
                let e = Settings::load(None).err().map(|e| e.to_string());
                assert!(e.is_some_and(|e| e.contains("retention_hours")), "{bad}");
            }
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
    fn broker_from_file_and_environment() {
        figment::Jail::expect_with(|jail| {
            let s = Settings::load(None).map_err(|e| *e)?;
            assert_eq!(s.broker, BrokerSettings::default());
            assert!(matches!(s.broker.external(), Ok(None)));

            jail.create_file(
                "cloud.toml",
                "[broker]\nembedded_listen = \"0.0.0.0:1884\"\n",
            )?;
            jail.set_env("DEPOT_BROKER__EMBEDDED_LISTEN", "127.0.0.1:1999");
            jail.set_env("DEPOT_BROKER__URL", "mqtts://edge:hunter2@broker.example");
            let s = Settings::load(Some(Path::new("cloud.toml"))).map_err(|e| *e)?;
            assert_eq!(
                s.broker.embedded_listen,
                SocketAddr::from(([127, 0, 0, 1], 1999))
            );
            let url = s.broker.external().map_err(|e| e.to_string())?;
            let url = url.ok_or("an external broker")?;
            assert_eq!(
                (url.host.as_str(), url.port, url.tls),
                ("broker.example", 8883, true)
            );
            assert_eq!(url.password.as_deref(), Some("hunter2"));
            assert!(!format!("{s:?}").contains("hunter2"));

            jail.set_env("DEPOT_BROKER__URL", "");
            let s = Settings::load(None).map_err(|e| *e)?;
            assert!(matches!(s.broker.external(), Ok(None)));

            jail.set_env("DEPOT_BROKER__URL", "http://edge:hunter2@broker.example");
            let e = Settings::load(None).err().ok_or("a bad URL is refused")?;
            assert!(e.to_string().contains("unknown scheme"), "{e}");
            assert!(!e.to_string().contains("hunter2"), "{e}");
            Ok(())
        });
    }

    #[test]
    fn broker_tls_files_are_read_at_load() {
        figment::Jail::expect_with(|jail| {
            // A CA file for the embedded broker, which has no TLS.
            jail.set_env("DEPOT_BROKER__CA_FILE", "site-ca.pem");
            let e = Settings::load(None).err().ok_or("files without a URL")?;
            assert!(e.to_string().contains("the embedded one has no TLS"), "{e}");

            jail.set_env("DEPOT_BROKER__URL", "mqtts://broker.example");
            let e = Settings::load(None).err().ok_or("a missing CA file")?;
            assert!(
                e.to_string()
                    .contains("broker.ca_file (site-ca.pem): cannot read it"),
                "{e}"
            );

            jail.create_file("site-ca.pem", "no certificate here\n")?;
            let e = Settings::load(None)
                .err()
                .ok_or("a file without a certificate")?;
            assert!(e.to_string().contains("no certificate in it"), "{e}");
            Ok(())
        });
    }

    #[test]
    fn the_environment_reaches_every_setting() {
        let json = serde_json::to_value(Settings::default()).expect("settings");
        let mut keys: Vec<&str> = json
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        let mut fields = FIELDS.to_vec();
        keys.sort_unstable();
        fields.sort_unstable();
        assert_eq!(keys, fields);
    }

    #[test]
    fn the_database_on_a_server_from_the_environment_never_prints() {
        figment::Jail::expect_with(|jail| {
            assert_eq!(
                Settings::load(None).map_err(|e| *e)?.database.postgres(),
                None
            );
            let url = "postgres://depot:s3cr%C3%A9t@db.internal:5432/depot?sslmode=require";
            jail.set_env("DEPOT_DATABASE__URL", url);
            let s = Settings::load(None).map_err(|e| *e)?;
            assert_eq!(s.database.postgres(), Some(url));
            assert!(!format!("{s:?}").contains("s3cr"), "{s:?}");
            for bad in ["mysql://h/db", "postgres://h:notaport/db", "/var/lib/depot"] {
                jail.set_env("DEPOT_DATABASE__URL", bad);
                let e = Settings::load(None).expect_err(bad).to_string();
                assert!(e.contains("database.url"), "{bad}: {e}");
            }
            Ok(())
        });
    }

    #[test]
    fn oauth_from_the_environment() {
        figment::Jail::expect_with(|jail| {
            jail.set_env("DEPOT_OAUTH__TOKEN_TTL_SECS", "600");
            jail.set_env("DEPOT_OAUTH__OPEN_REGISTRATION", "false");
            // The admin CLI's password variable is not a setting.
            jail.set_env("DEPOT_OAUTH_PASSWORD", "not a setting at all");
            let s = Settings::load(None).map_err(|e| *e)?;
            assert_eq!(s.oauth.token_ttl_secs, 600);
            assert!(!s.oauth.open_registration);
            jail.set_env("DEPOT_OAUTH__TOKEN_TTL_SECS", "0");
            assert!(Settings::load(None).is_err());
            Ok(())
        });
    }

    #[test]
    fn changelog_from_file_and_environment() {
        figment::Jail::expect_with(|jail| {
            let s = Settings::load(None).map_err(|e| *e)?;
            assert_eq!(s.changelog, ChangelogSettings::default());
            jail.create_file(
                "cloud.toml",
                "[changelog]\nlocales = [\"en\", \"de\"]\ntranslations_dir = \"/srv/tr\"\n",
            )?;
            jail.set_env("DEPOT_CHANGELOG__BASE_URL", "https://changelog.example.com");
            jail.set_env("DEPOT_CHANGELOG__DEFAULT_LOCALE", "de");
            let s = Settings::load(Some(Path::new("cloud.toml"))).map_err(|e| *e)?;
            assert_eq!(s.changelog.base_url, "https://changelog.example.com");
            assert_eq!(s.changelog.locales, ["en", "de"]);
            assert_eq!(s.changelog.default_locale, "de");
            assert_eq!(s.changelog.translations_dir, Some(PathBuf::from("/srv/tr")));

            jail.set_env("DEPOT_CHANGELOG__DEFAULT_LOCALE", "fr");
            let e = Settings::load(Some(Path::new("cloud.toml"))).err();
            assert!(e.is_some_and(|e| e.to_string().contains("default_locale")));
            jail.set_env("DEPOT_CHANGELOG__DEFAULT_LOCALE", "en");
            jail.set_env("DEPOT_CHANGELOG__LOCALES", "[\"en\", \"english\"]");
            let e = Settings::load(None).err();
            assert!(e.is_some_and(|e| e.to_string().contains("english")));
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
