//! The release-notes API (`{changelog_url}`): public reads (JSON or an HTML
//! page by `Accept`, RSS and Atom feeds) and the writes (publish, and a
//! background sync of translations from a directory). The writes check no
//! credentials here: `write_routes()` is mounted behind the OAuth guard,
//! which also tells the handlers who is calling ([`Publisher`]).

mod feeds;
mod listing;
mod openapi;
mod render;
mod routes;
mod translations;
mod words;

/// Reads a translation file as translation sync does: for checking a
/// translation source before a job runs over it.
pub use translations::parse_file as parse_translation;

use crate::settings::ChangelogSettings;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use depot_protocol::FieldError;
use depot_protocol::release::{NewRelease, normalize_locale};
use depot_wms::Wms;
use depot_wms::http::BODY_LIMIT;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Who is publishing: the subject of the bearer token, inserted as a
/// request extension by the guard in front of `write_routes()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publisher(pub String);

/// How long a running translation job may go without a step before it is
/// taken for one whose process stopped. A step is one release's files.
const STALE_AFTER: Duration = Duration::from_secs(60);

/// The state of the release-notes routes; cheap to clone.
#[derive(Clone)]
pub struct Changelog {
    inner: Arc<Inner>,
}

struct Inner {
    wms: Wms,
    base_url: String,
    locales: Vec<String>,
    default_locale: String,
    translations_dir: Option<PathBuf>,
    openapi: depot_wms::http::contract::Documents,
    /// Translation jobs asked for, per token subject: a job reads every
    /// release's files, and one token once started ten thousand in three
    /// minutes.
    job_starts: crate::ratelimit::Throttle<String>,
}

/// Translation sync requests at once, then per minute, per caller.
const JOB_STARTS_BURST: u32 = 5;
const JOB_STARTS_PER_MINUTE: u32 = 2;

impl Changelog {
    /// The settings are checked when loaded; a locale that does not parse
    /// here is kept as written rather than dropped.
    pub fn new(wms: Wms, settings: &ChangelogSettings) -> Self {
        let canonical = |l: &str| normalize_locale(l).unwrap_or_else(|| l.to_owned());
        let mut locales: Vec<String> = Vec::new();
        for l in settings.locales.iter().map(|l| canonical(l)) {
            if !locales.contains(&l) {
                locales.push(l);
            }
        }
        let inner = Arc::new(Inner {
            wms,
            base_url: settings.base_url.trim_end_matches('/').to_owned(),
            locales,
            default_locale: canonical(&settings.default_locale),
            translations_dir: settings.translations_dir.clone(),
            openapi: openapi::document(
                settings.base_url.trim_end_matches('/'),
                settings.login_url.trim_end_matches('/'),
            ),
            job_starts: crate::ratelimit::Throttle::new(JOB_STARTS_PER_MINUTE, JOB_STARTS_BURST),
        });
        crate::ratelimit::prune_while_alive(Arc::downgrade(&inner), |i: &Inner| {
            i.job_starts.prune();
        });
        Self { inner }
    }

    fn wms(&self) -> &Wms {
        &self.inner.wms
    }

    /// The link of one release: the page, filtered down to it.
    fn release_url(&self, product: &str, version: &str) -> String {
        format!(
            "{}/api/releases?product={product}&version={version}",
            self.inner.base_url
        )
    }

    /// The notes of `new` in locales this service does not offer.
    fn unsupported(&self, new: &NewRelease) -> Vec<FieldError> {
        new.notes
            .keys()
            .filter(|l| !self.inner.locales.contains(l))
            .map(|l| {
                FieldError::new(
                    format!("notes.{l}"),
                    format!(
                        "is not a supported locale ({})",
                        self.inner.locales.join(", ")
                    ),
                )
            })
            .collect()
    }
}

/// `GET /api/releases` (JSON or HTML by `Accept`), `/api/releases/rss`,
/// `/api/releases/atom` and the description `/api/openapi.json` (and in
/// OpenAPI 3.0.3, `/api/openapi-3.0.json`): open to anyone.
pub fn public_routes(changelog: &Changelog) -> Router<Changelog> {
    Router::new()
        .route("/api/releases", get(routes::list))
        .route("/api/releases/rss", get(feeds::rss))
        .route("/api/releases/atom", get(feeds::atom))
        .merge(changelog.inner.openapi.routes("/api"))
}

/// `POST /api/releases`, `POST /api/sync-translations` and
/// `GET /api/sync-translations/{job_id}`: to be mounted behind the guard
/// that requires scope `releases:write`.
pub fn write_routes() -> Router<Changelog> {
    Router::new()
        .route("/api/releases", post(routes::publish))
        .route("/api/sync-translations", post(translations::start))
        .route("/api/sync-translations/{job_id}", get(translations::status))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
}
