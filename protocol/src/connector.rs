//! Connectors: what links a sales channel to the platform it sells on
//! (a storefront, a marketplace). The cloud runs each one: it brings the
//! platform's new orders in as the channel's orders, pushes the channel's
//! figures to the platform's stock, and tells the platform what was
//! dispatched, with its tracking number. This is its record and its
//! status; the platforms' protocols live in the cloud.

use crate::FieldError;
use crate::validate::Check;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The platforms a connector speaks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConnectorKind {
    /// django-oscar with django-oscar-api: orders and stock through its
    /// REST API, shipments through its dashboard.
    Oscar,
}

impl ConnectorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Oscar => "oscar",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        (s == "oscar").then_some(Self::Oscar)
    }
}

/// The most SKUs a connector maps to other names.
pub const MAX_SKU_MAP: usize = 10_000;

/// Body of `PUT /v1/channels/{business_id}/{channel}/connector`: the
/// channel's connector, whole (secrets absent are kept).
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectorFields {
    pub kind: ConnectorKind,
    /// The platform's address, `https://…` (plain `http://` and private
    /// addresses only where the service allows them).
    #[schema(format = "iri", pattern = "^https?://", max_length = 500)]
    pub base_url: String,
    /// The API token (Oscar: a REST framework token of a staff user), 1
    /// to 500 characters; absent keeps the one set.
    #[schema(max_length = 500)]
    pub token: Option<String>,
    /// The staff user's login for what the API cannot do (Oscar: its
    /// email, for the dashboard's shipping events).
    #[schema(max_length = 200)]
    pub user: Option<String>,
    /// Its password; absent keeps the one set.
    #[schema(max_length = 500)]
    pub password: Option<String>,
    /// Oscar: the code of the partner whose stock records carry the
    /// figures (default: the first partner).
    #[schema(max_length = 128)]
    pub partner: Option<String>,
    /// Depot SKU → the platform's, where they differ (up to 10000).
    #[serde(default)]
    pub sku_map: BTreeMap<String, String>,
    /// Seconds between two runs, 1 to 3600 (default 5).
    #[schema(minimum = 1, maximum = 3600)]
    pub every_secs: Option<i64>,
    /// Default true; false stops it, keeping its cursors.
    pub enabled: Option<bool>,
}

/// A connector's fields, checked (the URL by the caller's policy).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectorSettings {
    pub kind: ConnectorKind,
    pub base_url: String,
    pub token: Option<String>,
    pub user: Option<String>,
    pub password: Option<String>,
    pub partner: Option<String>,
    pub sku_map: BTreeMap<String, String>,
    pub every_secs: i64,
    pub enabled: bool,
}

impl ConnectorSettings {
    /// The platform's SKU for a Depot SKU.
    pub fn outward<'a>(&'a self, sku: &'a str) -> &'a str {
        self.sku_map.get(sku).map_or(sku, String::as_str)
    }

    /// The Depot SKU for a platform's SKU.
    pub fn inward<'a>(&'a self, sku: &'a str) -> &'a str {
        self.sku_map
            .iter()
            .find(|(_, theirs)| theirs.as_str() == sku)
            .map_or(sku, |(ours, _)| ours.as_str())
    }
}

impl ConnectorFields {
    /// Checks every field; `url` checks the address by the service's
    /// policy and answers it as it is kept.
    pub fn parse(
        self,
        url: impl FnOnce(&str) -> Result<String, String>,
    ) -> Result<ConnectorSettings, Vec<FieldError>> {
        let mut c = Check::new();
        let base_url = match url(self.base_url.trim()) {
            Ok(u) if u.len() <= 500 => u,
            Ok(_) => {
                c.fail("base_url", "at most 500 characters");
                String::new()
            }
            Err(e) => {
                c.fail("base_url", e);
                String::new()
            }
        };
        let token = self.token.as_deref().map(|t| c.text("token", t, 500));
        let user = c.opt_text("user", self.user.as_deref(), 200);
        let password = self.password.as_deref().map(|p| c.text("password", p, 500));
        let partner = c.opt_text("partner", self.partner.as_deref(), 128);
        c.bounded(
            "sku_map",
            &self.sku_map.keys().collect::<Vec<_>>(),
            MAX_SKU_MAP,
        );
        for (ours, theirs) in &self.sku_map {
            if crate::validate::blank(ours) || crate::validate::blank(theirs) || theirs.len() > 200
            {
                c.fail(
                    format!("sku_map.{ours}"),
                    "both SKUs must be 1 to 200 characters",
                );
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for theirs in self.sku_map.values() {
            if !seen.insert(theirs) {
                c.fail(
                    "sku_map",
                    format!("{theirs} is the platform's SKU of two items"),
                );
            }
        }
        let every_secs = c.opt_range("every_secs", self.every_secs, 1, 3600);
        c.finish(ConnectorSettings {
            kind: self.kind,
            base_url,
            token,
            user,
            password,
            partner,
            sku_map: self.sku_map,
            every_secs: every_secs.unwrap_or(5),
            enabled: self.enabled.unwrap_or(true),
        })
    }
}

/// How a connector is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConnectorState {
    /// Set, not run yet.
    Starting,
    /// Its last run went through.
    Ok,
    /// Its last run failed: it is tried again at `next_attempt_at`.
    Failing,
    /// Turned off.
    Disabled,
}

impl ConnectorState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Ok => "ok",
            Self::Failing => "failing",
            Self::Disabled => "disabled",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Starting, Self::Ok, Self::Failing, Self::Disabled]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

/// A channel's connector as the API shows it: its settings (secrets only
/// as whether they are set), where it is, and how it is doing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Connector {
    pub channel: String,
    pub kind: ConnectorKind,
    pub base_url: String,
    pub token_set: bool,
    pub user: Option<String>,
    pub password_set: bool,
    pub partner: Option<String>,
    pub sku_map: BTreeMap<String, String>,
    pub every_secs: i64,
    pub enabled: bool,
    pub state: ConnectorState,
    /// Runs failed in a row.
    pub failures: i64,
    pub last_error: Option<String>,
    pub last_ok_at: Option<DateTime<Utc>>,
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// The platform's position of the last order brought in.
    pub orders_cursor: String,
    /// The change feed's cursor of the last figure pushed.
    pub availability_cursor: i64,
    /// The event log's position of the last dispatch told.
    pub fulfilment_cursor: i64,
    /// Orders brought in.
    pub orders_in: i64,
    /// Orders of the platform Depot refused (an unknown SKU, a bad
    /// address): passed over, the last one said in `last_refusal`.
    pub orders_refused: i64,
    pub last_refusal: Option<String>,
    /// Figures pushed.
    pub figures_out: i64,
    /// Dispatches told.
    pub fulfilments_out: i64,
    pub updated_at: DateTime<Utc>,
}
