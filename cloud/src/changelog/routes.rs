//! `GET /api/releases` (a page of releases, as JSON or HTML by `Accept`)
//! and `POST /api/releases` (publish).

use super::listing::{ListQuery, ReleaseView};
use super::{Changelog, Publisher, render};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{Html, IntoResponse, Response};
use axum::{Extension, Json, extract::State};
use depot_protocol::release::{Release, ReleaseCreate};
use depot_protocol::{DataEnvelope, ErrorBody, now};
use depot_wms::http::error::ApiError;
use depot_wms::http::extract::{ApiJson, ApiQuery};
use depot_wms::http::idempotency::respond;
use depot_wms::idempotency::Answer;
use serde::Serialize;

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
