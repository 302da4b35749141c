//! The edge's settings: defaults, then a TOML file, then `DEPOT_…`
//! environment variables (nested keys joined with `__`).

use crate::devices::config::{self, DevicesConfig, StationConfig};
use depot_mqtt::{MqttUrl, Tls, TlsFiles};
use depot_protocol::BusinessId;
use depot_wms::Wms;
use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
    /// How long a caller may take to send a request, how long a kept-alive
    /// connection may wait for its next one, and how many connections are
    /// served at once.
    pub http: depot_wms::http::server::HttpSettings,
    /// Where the database lives (`edge.db` inside it).
    pub data_dir: PathBuf,
    /// Free space on the data directory's disk, in MiB, below which the box
    /// warns that it is running out: on its status, in `depot-edge status`
    /// and `doctor`, on the systemd status line and in `/metrics`. When the
    /// disk is full every write is refused (507) until space is freed.
    pub low_disk_mib: u64,
    /// The MQTT broker the box syncs with the cloud through.
    pub broker: Broker,
    /// Keys the box accepts besides those the cloud sends down, so that a
    /// box that has never been online can serve the stations: each the
    /// SHA-256 of a key in 64 hex digits, or the key itself (16 to 256
    /// visible ASCII characters). Bound to `business_id`, stored as hashes
    /// only, never sent to the cloud.
    pub local_keys: Vec<LocalKey>,
    /// Printers, scales and scanners attached to the box (none by default).
    pub devices: DevicesConfig,
    /// The stations on the floor and the devices each uses.
    pub stations: Vec<StationConfig>,
    /// Log filter, in `tracing` env-filter syntax.
    pub log: String,
    /// `Idempotency-Key` on writes (the station page sends one with every
    /// scan): how long a key and its answer are kept.
    pub idempotency: depot_wms::idempotency::IdempotencySettings,
    /// The largest piece each service of the own fleet takes: a package
    /// beyond them is refused at packing.
    pub own_fleet: depot_wms::carriers::OwnFleetSettings,
}

/// How the reference of these settings (docs/edge-configuration.md) is
/// made and introduced.
pub const REFERENCE: depot_settings_doc::Reference<'static> = depot_settings_doc::Reference {
    title: "Edge configuration",
    intro: "\
The settings of `depot-edge`. Installed from the Debian package, they are in
`/etc/depot/edge.toml`: the systemd unit runs `depot-edge --config
/etc/depot/edge.toml serve` and sets `DEPOT_DATA_DIR=/var/lib/depot`, which
wins over `data_dir` in the file. An edge with one station (a scanner, a
scale and a printer): [`examples/edge.toml`](../examples/edge.toml).
`depot-edge doctor` loads the file and checks its devices, the broker, the
cloud's state on it and the clock.",
    command: "depot-edge config reference",
    regenerate: "`DEPOT_BLESS=1 cargo test -p depot-edge --test it configuration_reference`",
};

/// The configuration reference, made from these types: every setting with
/// its type, default, environment variable and doc comment. Fails naming
/// the settings that have no doc comment.
pub fn reference_markdown() -> Result<String, String> {
    let schema = schemars::schema_for!(Settings);
    let defaults = serde_json::to_value(Settings::default()).map_err(|e| e.to_string())?;
    depot_settings_doc::markdown(schema.as_value(), &defaults, &REFERENCE)
}

/// A key provisioned in configuration: 64 hex digits are its SHA-256 (what
/// `printf %s "$KEY" | sha256sum` prints for a key `depot-cloud key create`
/// made); anything else is the key itself, 16 to 256 visible ASCII
/// characters, hashed as it is read.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct LocalKey(pub String);

// By hand: a plain key is a secret, and even a hash is more than logs need.
impl fmt::Debug for LocalKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.stored() {
            Ok(k) => f.write_str(&k.prefix),
            Err(_) => f.write_str("(invalid)"),
        }
    }
}

impl LocalKey {
    /// What the database keeps of it: the hash, and a prefix of the hash
    /// (never of the key) to tell keys apart.
    pub fn stored(&self) -> Result<depot_wms::sync::LocalKey, String> {
        let v = self.0.trim();
        let hash = match parse_sha256(v) {
            Some(hash) => hash,
            None if (16..=256).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_graphic()) => {
                depot_wms::tenants::hash_key(v)
            }
            None => {
                return Err(
                    "a local key must be its SHA-256 in 64 hex digits, or the key itself: 16 to 256 visible ASCII characters"
                        .into(),
                );
            }
        };
        let prefix = format!("sha256:{}", hex(&hash[..4]));
        Ok(depot_wms::sync::LocalKey { hash, prefix })
    }
}

fn parse_sha256(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in s.as_bytes().chunks(2).enumerate() {
        let digit = |b: u8| char::from(b).to_digit(16);
        let byte = digit(pair[0])? * 16 + digit(pair[1])?;
        out[i] = u8::try_from(byte).ok()?;
    }
    Some(out)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Broker {
    /// `mqtt://host:1883` or `mqtts://user:password@host:8883`.
    pub url: String,
    /// Events in flight beyond the cloud's acknowledgement.
    pub window: i64,
    /// Seconds without an acknowledgement before sending again.
    pub resend_after_secs: u64,
    /// With `mqtts://`: a PEM file of the CA certificates that sign the
    /// broker's certificate, trusted instead of the public web roots (a
    /// broker on the site's own CA). Unset: the public roots.
    pub ca_file: Option<PathBuf>,
    /// With `mqtts://`, for brokers that require one: this box's client
    /// certificate (PEM, intermediates after it), with `client_key_file`.
    pub client_cert_file: Option<PathBuf>,
    /// The private key of `client_cert_file` (PEM: PKCS#8, PKCS#1 or SEC1).
    pub client_key_file: Option<PathBuf>,
}

impl Broker {
    /// The broker's URL and what TLS to it trusts and shows, the files
    /// read now.
    pub fn connection(&self) -> Result<(MqttUrl, Tls), depot_mqtt::MqttError> {
        let url = MqttUrl::parse(&self.url)?;
        let files = TlsFiles {
            ca_file: self.ca_file.clone(),
            client_cert_file: self.client_cert_file.clone(),
            client_key_file: self.client_key_file.clone(),
        };
        let tls = Tls::load(&url, &files)?;
        Ok((url, tls))
    }
}

// By hand: the URL may carry a password.
impl fmt::Debug for Broker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Broker")
            .field("url", &depot_mqtt::redact(&self.url))
            .field("window", &self.window)
            .field("resend_after_secs", &self.resend_after_secs)
            .field("ca_file", &self.ca_file)
            .field("client_cert_file", &self.client_cert_file)
            .field("client_key_file", &self.client_key_file)
            .finish()
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            business_id: 0,
            edge_id: String::new(),
            node: 0,
            listen: SocketAddr::from(([127, 0, 0, 1], 8081)),
            http: Default::default(),
            data_dir: PathBuf::from("depot-edge-data"),
            low_disk_mib: 512,
            broker: Broker::default(),
            local_keys: Vec::new(),
            devices: DevicesConfig::default(),
            stations: Vec::new(),
            log: "info".into(),
            idempotency: Default::default(),
            own_fleet: Default::default(),
        }
    }
}

impl Default for Broker {
    fn default() -> Self {
        Self {
            url: "mqtt://127.0.0.1:1883".into(),
            window: 4000,
            resend_after_secs: 15,
            ca_file: None,
            client_cert_file: None,
            client_key_file: None,
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
        if self.node == 0 || self.node > depot_wms::database::MAX_NODE {
            return bad("node must be the number `depot-cloud edge register` printed (DEPOT_NODE)");
        }
        if MqttUrl::parse(&self.broker.url).is_err() {
            return bad(
                "broker.url must be mqtt://host:port or mqtts://host:port (DEPOT_BROKER__URL)",
            );
        }
        // The TLS files are read at start, not at the first connect.
        if let Err(e) = self.broker.connection() {
            return bad(&format!(
                "{e} (DEPOT_BROKER__CA_FILE, DEPOT_BROKER__CLIENT_CERT_FILE, DEPOT_BROKER__CLIENT_KEY_FILE)"
            ));
        }
        if self.broker.window < 1 || self.broker.resend_after_secs == 0 {
            return bad("broker.window and broker.resend_after_secs must be at least 1");
        }
        if let Err(e) = self.idempotency.check() {
            return bad(&format!("{e} (DEPOT_IDEMPOTENCY__RETENTION_HOURS)"));
        }
        if let Err(e) = self.own_fleet.check() {
            return bad(&e);
        }
        if let Err(e) = self.http.check() {
            return bad(&e);
        }
        for (i, k) in self.local_keys.iter().enumerate() {
            if let Err(e) = k.stored() {
                return bad(&format!("local_keys[{i}]: {e} (DEPOT_LOCAL_KEYS)"));
            }
        }
        config::check(&self.devices, &self.stations).map_err(SettingsError::Invalid)
    }

    /// Installs `local_keys` in the database (and removes keys provisioned
    /// before and no longer listed); answers how many are live. Run at start,
    /// before the API serves.
    pub async fn install_local_keys(&self, wms: &Wms) -> depot_wms::Result<usize> {
        let mut keys: Vec<depot_wms::sync::LocalKey> = Vec::new();
        // `check` refused invalid ones; a key listed twice is one key.
        for k in self.local_keys.iter().filter_map(|k| k.stored().ok()) {
            if !keys.iter().any(|known| known.hash == k.hash) {
                keys.push(k);
            }
        }
        wms.install_local_keys(BusinessId(self.business_id), keys)
            .await
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
const FIELDS: [&str; 14] = [
    "business_id",
    "edge_id",
    "node",
    "listen",
    "http",
    "data_dir",
    "low_disk_mib",
    "broker",
    "local_keys",
    "devices",
    "stations",
    "log",
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
        for (hours, ok) in [(0, false), (1, true), (720, true), (721, false)] {
            let mut s = s.clone();
            s.idempotency.retention_hours = hours;
            assert_eq!(s.check().is_ok(), ok, "{hours}");
        }
    }

    #[test]
    fn broker_tls_files_are_read_at_load() {
        let with = |url: &str, ca: &str, cert: Option<&str>| Settings {
            business_id: 1,
            edge_id: "a".into(),
            node: 1,
            broker: Broker {
                url: url.into(),
                ca_file: Some(PathBuf::from(ca)),
                client_cert_file: cert.map(PathBuf::from),
                ..Broker::default()
            },
            ..Settings::default()
        };
        let why = |s: Settings| s.check().err().map(|e| e.to_string()).unwrap_or_default();
        let e = why(with("mqtt://h", "/nonexistent/ca.pem", None));
        assert!(e.contains("use mqtts://"), "{e}");
        let e = why(with("mqtts://h", "/nonexistent/ca.pem", None));
        assert!(
            e.contains("broker.ca_file (/nonexistent/ca.pem): cannot read it")
                && e.contains("DEPOT_BROKER__CA_FILE"),
            "{e}"
        );
        let e = why(with("mqtts://h", "/nonexistent/ca.pem", Some("/c.pem")));
        assert!(e.contains("cannot read it"), "{e}");
    }

    #[test]
    fn local_keys_come_from_file_and_environment_and_never_show() {
        let key = "dpk_0123456789abcdef0123456789abcdef0123456789abcdef";
        let hash = hex(&depot_wms::tenants::hash_key(key));
        figment::Jail::expect_with(|jail| {
            jail.create_file(
                "edge.toml",
                &format!(
                    "business_id = 3\nedge_id = \"mad-1\"\nnode = 2\nlocal_keys = [\"{hash}\"]\n[broker]\nurl = \"mqtt://u:pw@broker:1883\"\n"
                ),
            )?;
            let s = Settings::load(Some(Path::new("edge.toml")))
                .map_err(|e| figment::Error::from(e.to_string()))?;
            assert_eq!(s.local_keys, [LocalKey(hash.clone())]);
            let shown = format!("{s:?}");
            assert!(!shown.contains(&hash) && !shown.contains("pw"), "{shown}");
            assert!(shown.contains(&format!("sha256:{}", &hash[..8])), "{shown}");
            // The environment replaces the list: a hash and a plain key.
            jail.set_env(
                "DEPOT_LOCAL_KEYS",
                format!("[\"{}\", \"{key}\"]", hash.to_uppercase()),
            );
            let s = Settings::load(Some(Path::new("edge.toml")))
                .map_err(|e| figment::Error::from(e.to_string()))?;
            let stored: Vec<[u8; 32]> = s
                .local_keys
                .iter()
                .filter_map(|k| k.stored().ok())
                .map(|k| k.hash)
                .collect();
            // The same key twice, once by hash and once as itself.
            assert_eq!(stored, [depot_wms::tenants::hash_key(key); 2]);
            assert!(!format!("{s:?}").contains(key));
            Ok(())
        });
    }

    #[test]
    fn a_local_key_that_is_neither_a_hash_nor_a_usable_key_is_refused() {
        for bad in [
            "short",
            "has a space in it ok",
            &"é".repeat(20),
            &"a".repeat(257),
        ] {
            let s = Settings {
                business_id: 1,
                edge_id: "a".into(),
                node: 1,
                local_keys: vec![LocalKey(bad.to_owned())],
                ..Settings::default()
            };
            let e = s.check().err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains("local_keys[0]"), "{bad}: {e}");
            assert!(!e.contains(bad), "the message repeats the key: {e}");
        }
        // 64 characters that are not all hex are a plain key, not a hash.
        let k = LocalKey("g".repeat(64));
        assert_eq!(
            k.stored().map(|s| s.hash).ok(),
            Some(depot_wms::tenants::hash_key(&"g".repeat(64)))
        );
    }
}
