//! The station page: one screen per station for picking and packing, served
//! by the edge itself so that it works without the internet. The page is
//! plain HTML, CSS and JS embedded in the binary (no build step, nothing
//! from elsewhere); it reads the station through the edge's REST routes and
//! the live event stream, with the API key the operator gives it once in
//! the URL's fragment (docs/station-page.md).
//!
//! The page itself holds no data, so it needs no key: it only tells an
//! unknown station apart. The assets' URLs carry a hash of their content,
//! so a browser may keep them until the binary serves others.

use crate::devices::Devices;
use axum::Extension;
use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

const PAGE: &str = include_str!("index.html");
const APP_JS: &str = include_str!("app.js");
const STYLE_CSS: &str = include_str!("style.css");
const NOT_FOUND: &str = include_str!("not_found.html");

/// Everything from the edge itself; the websocket is on the same host.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                   connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

/// The page's routes: `/stations/{station}` and its assets.
pub fn routes() -> Router {
    Router::new()
        .route("/stations/{station}", get(page))
        .route("/stations/assets/{file}", get(asset))
}

async fn page(Extension(devices): Extension<Devices>, Path(name): Path<String>) -> Response {
    if devices.station(&name).is_none() {
        let body = NOT_FOUND.replace("{station}", &escape(&name));
        return html(StatusCode::NOT_FOUND, body);
    }
    let body = PAGE
        .replace("{station}", &escape(&name))
        .replace("{app_js}", &versioned("app.js", APP_JS))
        .replace("{style_css}", &versioned("style.css", STYLE_CSS));
    html(StatusCode::OK, body)
}

async fn asset(Path(file): Path<String>) -> Response {
    let (body, kind) = match file.as_str() {
        "app.js" => (APP_JS, "text/javascript; charset=utf-8"),
        "style.css" => (STYLE_CSS, "text/css; charset=utf-8"),
        _ => return (StatusCode::NOT_FOUND, "no such asset\n").into_response(),
    };
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    // The page asks for them by content hash: a new binary, new URLs.
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=31536000, immutable"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

fn html(status: StatusCode, body: String) -> Response {
    let mut r = (status, body).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    // Always asked again, so a new binary's page (and asset hashes) shows.
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    r
}

/// `assets/<file>?v=<hash of its content>`, relative to the page, so the
/// page also works behind a proxy that serves the edge under a prefix.
fn versioned(file: &str, content: &str) -> String {
    format!("assets/{file}?v={:016x}", fnv1a(content.as_bytes()))
}

/// FNV-1a: stable across builds and Rust versions, unlike std's hasher.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Station names are free text in the configuration.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_escaped_and_assets_versioned_by_content() {
        assert_eq!(
            escape(r#"<a href="x">'&"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;"
        );
        assert_ne!(versioned("app.js", "a"), versioned("app.js", "b"));
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn the_page_loads_nothing_from_elsewhere() {
        for text in [PAGE, APP_JS, STYLE_CSS, NOT_FOUND] {
            for outside in ["http://", "https://", "=\"//", "url(", "@import"] {
                assert!(!text.contains(outside), "{outside} in the station page");
            }
        }
    }
}
