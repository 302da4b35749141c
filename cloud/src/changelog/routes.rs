//! `GET /api/releases` (a page of releases, as JSON or HTML by `Accept`)
//! and `POST /api/releases` (publish).

use super::{Changelog, Publisher, render};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{Html, IntoResponse, Response};
use axum::{Extension, Json, extract::State};
use chrono::{DateTime, NaiveDate, Utc};
use depot_protocol::release::{Product, Release, ReleaseCreate, normalize_locale};
use depot_protocol::{DataEnvelope, ErrorBody, FieldError, Page, now};
use depot_wms::http::error::ApiError;
use depot_wms::http::extract::{ApiJson, ApiQuery};
use depot_wms::http::idempotency::respond;
use depot_wms::idempotency::Answer;
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
        let (releases, total, filtered) = self.wms().release_page(l.filter.clone(), l.page).await?;
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

/// The JSON answer: the spec's list envelope (counts as strings) and the
/// locale asked for.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ReleaseList {
    data: Vec<ReleaseView>,
    #[serde(rename = "recordsTotal")]
    records_total: String,
    #[serde(rename = "recordsFiltered")]
    records_filtered: String,
    locale: String,
}

/// JSON when the client names `application/json` (or a `+json` type) at
/// least as highly as HTML; otherwise the page. A wildcard never outranks
/// JSON, so `application/json, */*` is JSON, and a browser's
/// `text/html,…,*/*;q=0.8` is HTML.
pub fn wants_json(headers: &HeaderMap) -> bool {
    let mut json = 0.0f32;
    let mut html = 0.0f32;
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else { continue };
        for range in value.split(',') {
            let mut parts = range.split(';');
            let mime = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0)
                .clamp(0.0, 1.0);
            if mime == "application/json"
                || (mime.starts_with("application/") && mime.ends_with("+json"))
            {
                json = json.max(q);
            } else if mime == "text/html" || mime == "application/xhtml+xml" {
                html = html.max(q);
            }
        }
    }
    json > 0.0 && json >= html
}

/// Release notes, newest first: JSON when `Accept` names
/// `application/json` at least as highly as HTML, an HTML page otherwise.
/// No credentials.
#[utoipa::path(get, path = "/api/releases", tag = "releases", params(ListQuery),
    responses(
        (status = 200, description = "The page of releases", content(
            (ReleaseList = "application/json"),
            (String = "text/html"))),
        (status = 422, description = "A parameter is wrong; each is named", body = ErrorBody)))]
pub async fn list(
    State(cl): State<Changelog>,
    headers: HeaderMap,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> Result<Response, ApiError> {
    let listing = cl.listing(q)?;
    let (views, total, filtered) = cl.views(&listing).await?;
    let mut resp = if wants_json(&headers) {
        Json(ReleaseList {
            data: views,
            records_total: total.to_string(),
            records_filtered: filtered.to_string(),
            locale: listing.locale,
        })
        .into_response()
    } else {
        let page = render::Page {
            base_url: &cl.inner.base_url,
            locales: &cl.inner.locales,
            listing: &listing,
            releases: &views,
            filtered,
        };
        let mut resp = Html(render::page(&page)).into_response();
        // The page runs no script and loads nothing: say so, so that
        // anything that slipped through escaping still cannot run.
        resp.headers_mut().insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'"),
        );
        resp
    };
    resp.headers_mut()
        .insert(header::VARY, HeaderValue::from_static("Accept"));
    resp.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    Ok(resp)
}

/// Publishes a release: once per product and version. `Location` is the
/// release's page.
#[utoipa::path(post, path = "/api/releases", tag = "releases", request_body = ReleaseCreate,
    responses(
        (status = 201, description = "Published", body = DataEnvelope<Release>),
        (status = 400, body = ErrorBody), (status = 401, description = "No valid token", body = ErrorBody),
        (status = 403, description = "The token lacks releases:write", body = ErrorBody),
        (status = 409, description = "This version is published already", body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("oauth2" = ["releases:write"])))]
pub async fn publish(
    State(cl): State<Changelog>,
    publisher: Option<Extension<Publisher>>,
    ApiJson(req): ApiJson<ReleaseCreate>,
) -> Result<Response, ApiError> {
    let new = req.parse(now().date_naive()).map_err(ApiError::invalid)?;
    let unsupported = cl.unsupported(&new);
    if !unsupported.is_empty() {
        return Err(ApiError::invalid(unsupported));
    }
    let by = publisher.map(|Extension(Publisher(p))| p);
    let page = cl.clone();
    let published = move |r: &Release| {
        Answer::json(201, &DataEnvelope { data: r })
            .with_location(page.release_url(r.product.as_str(), &r.version))
    };
    Ok(respond(published, cl.wms().publish_release(new, by))
        .await?
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            if let Ok(v) = HeaderValue::from_str(v) {
                h.append(header::ACCEPT, v);
            }
        }
        h
    }

    #[test]
    fn json_only_when_asked_for() {
        for (given, json) in [
            (&[][..], false),
            (&["*/*"][..], false),
            (&["application/json"][..], true),
            (&["application/json; charset=utf-8"][..], true),
            (&["application/vnd.api+json"][..], true),
            (&["application/json, */*;q=0.1"][..], true),
            (&["text/html, application/json;q=0.9"][..], false),
            (&["text/html;q=0.5, application/json"][..], true),
            (&["application/json;q=0"][..], false),
            (
                &["text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"][..],
                false,
            ),
            (&["text/plain", "application/json"][..], true),
        ] {
            assert_eq!(wants_json(&accept(given)), json, "{given:?}");
        }
    }
}
