//! What a reader asks the release notes for (the list's and the feeds'
//! query, checked into a `Listing`) and what each release shows them
//! (`ReleaseView`: one locale of it). The routes, the HTML page and the
//! feeds all read these.

use super::Changelog;
use chrono::{DateTime, NaiveDate, Utc};
use depot_protocol::release::{Product, Release, normalize_locale};
use depot_protocol::{FieldError, Page};
use depot_wms::http::error::ApiError;
use depot_wms::releases::ReleaseFilter;
use serde::{Deserialize, Serialize};

/// The query of the list and the feeds.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// `wms`, `app` or `signage`.
    #[param(value_type = Option<depot_protocol::release::Product>)]
    pub product: Option<String>,
    /// The locale to read (`en`, `es`, `pt-BR`); a release without it is
    /// shown in the nearest it has (same language, then its default), with
    /// `fallback: true`. Default: the service's default locale.
    #[param(pattern = r"^[A-Za-z]{2,3}([-_][A-Za-z]{4})?([-_]([A-Za-z]{2}|[0-9]{3}))?$")]
    pub locale: Option<String>,
    /// `YYYY-MM-DD`: releases of that day or later.
    #[param(value_type = Option<chrono::NaiveDate>)]
    pub since: Option<String>,
    /// One version only.
    pub version: Option<String>,
    /// Releases to skip (default 0).
    #[param(minimum = 0)]
    pub start: Option<i64>,
    /// Releases to answer (default 50, at most 1000).
    #[param(minimum = 1, maximum = 1000)]
    pub length: Option<i64>,
}

/// A checked query.
#[derive(Debug, Clone)]
pub struct Listing {
    pub filter: ReleaseFilter,
    pub page: Page,
    /// The locale asked for, or the service's default.
    pub locale: String,
}

impl Changelog {
    /// Checks a list query; every violation is a 422 naming its parameter.
    pub(super) fn listing(&self, q: ListQuery) -> Result<Listing, ApiError> {
        let (page, mut errors) = match Page::parse(q.start, q.length) {
            Ok(page) => (page, Vec::new()),
            Err(errors) => (Page::default(), errors),
        };
        let mut filter = ReleaseFilter::default();
        if let Some(p) = q.product.as_deref().filter(|p| !p.is_empty()) {
            match Product::parse(p) {
                Some(p) => filter.product = Some(p),
                None => errors.push(FieldError::new(
                    "product",
                    "must be one of wms, app, signage",
                )),
            }
        }
        if let Some(s) = q.since.as_deref().filter(|s| !s.is_empty()) {
            match NaiveDate::parse_from_str(s, "%Y-%m-%d") {
                Ok(d) => filter.since = Some(d),
                Err(_) => errors.push(FieldError::new("since", "must be a date, YYYY-MM-DD")),
            }
        }
        filter.version = q.version.filter(|v| !v.is_empty());
        let locale = match q.locale.as_deref().filter(|l| !l.is_empty()) {
            None => self.inner.default_locale.clone(),
            Some(l) => normalize_locale(l).unwrap_or_else(|| {
                errors.push(FieldError::new(
                    "locale",
                    "must be a locale tag such as en or pt-BR",
                ));
                String::new()
            }),
        };
        if errors.is_empty() {
            Ok(Listing {
                filter,
                page,
                locale,
            })
        } else {
            Err(ApiError::invalid(errors))
        }
    }

    /// The page `l` asks for, each release in the locale it asks for.
    pub(super) async fn views(
        &self,
        l: &Listing,
    ) -> Result<(Vec<ReleaseView>, u64, u64), ApiError> {
        let page = self
            .wms()
            .release_page(l.filter.clone(), l.page.clone())
            .await?;
        let (releases, total, filtered) = (page.rows, page.total, page.filtered);
        let views = releases
            .iter()
            .filter_map(|r| ReleaseView::new(self, r, &l.locale))
            .collect();
        Ok((views, total, filtered))
    }
}

/// A release as a reader sees it: in one locale.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ReleaseView {
    pub id: i64,
    pub product: Product,
    pub version: String,
    pub date: NaiveDate,
    /// The locale of `title` and `body`.
    pub locale: String,
    /// The locale asked for has no notes: these are in another.
    pub fallback: bool,
    pub title: String,
    /// Markdown.
    pub body: String,
    pub default_locale: String,
    /// Every locale the release has notes in.
    pub locales: Vec<String>,
    /// The release's own page.
    pub url: String,
    pub published_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl ReleaseView {
    fn new(cl: &Changelog, r: &Release, wanted: &str) -> Option<Self> {
        let (locale, note) = r.note_for(wanted)?;
        Some(Self {
            id: r.id,
            product: r.product,
            version: r.version.clone(),
            date: r.date,
            locale: locale.to_owned(),
            fallback: locale != wanted,
            title: note.title.clone(),
            body: note.body.clone(),
            default_locale: r.default_locale.clone(),
            locales: r.notes.keys().cloned().collect(),
            url: cl.release_url(r.product.as_str(), &r.version),
            published_at: r.published_at,
            updated_at: r.updated_at,
        })
    }
}
