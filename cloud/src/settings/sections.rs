//! The sections of the settings: the release-notes API, its OAuth server,
//! the broker, carriers, the database, secrets and rate limits.

use crate::broker::{BrokerError, MqttUrl};
use depot_mqtt::{Tls, TlsFiles};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;

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
    pub(super) fn check_locales(&self) -> Result<(), String> {
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

impl Default for RateLimit {
    fn default() -> Self {
        Self {
            per_second: 50,
            burst: 200,
        }
    }
}
