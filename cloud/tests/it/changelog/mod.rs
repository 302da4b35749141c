//! The release-notes API as readers and publishers meet it: JSON or an HTML
//! page by `Accept`, RSS and Atom feeds, filters and locales, publishing,
//! and translation sync from a directory, followed to its end. The page's
//! own words follow `locale`, and a long unbroken word wraps inside its
//! column (measured in headless Chromium when `DEPOT_TEST_CHROMEDRIVER`
//! names a chromedriver).

#[allow(dead_code)]
#[path = "../../../../edge/tests/it/station_page/webdriver.rs"]
mod webdriver;

mod description;
mod language;
mod reading;
mod translations;

use depot_testkit::cloud::{TestCloud, spawn_cloud_configured};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;

/// A token with `releases:write`, for a client an operator created.
async fn writer_token(app: &TestCloud) -> String {
    let (id, secret) =
        depot_cloud::oauth::admin::create_client(&app.wms, "Release bot", "releases:write")
            .await
            .expect("client");
    let r = app
        .http
        .raw("POST", "/oauth/token")
        .basic_auth(&id, Some(&secret))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await;
    assert_eq!(r.status, 200);
    r.body["access_token"]
        .as_str()
        .expect("access token")
        .to_owned()
}

async fn post(app: &TestCloud, token: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut req = app
        .http
        .raw("POST", path)
        .header("authorization", format!("Bearer {token}"));
    if let Some(b) = body {
        req = req.json(&b);
    }
    let r = req.send().await;
    (
        r.status,
        serde_json::from_slice(&r.bytes).unwrap_or(Value::Null),
    )
}

/// A GET with an `Accept` header: the status, the content type and the text.
async fn get(app: &TestCloud, path: &str, accept: &str) -> (u16, String, String) {
    let r = app
        .http
        .raw("GET", path)
        .header("accept", accept)
        .send()
        .await;
    let ctype = r.header("content-type").unwrap_or("").to_owned();
    (r.status, ctype, r.text())
}

async fn list(app: &TestCloud, query: &str) -> Value {
    let (s, ctype, text) = get(app, &format!("/api/releases{query}"), "application/json").await;
    assert_eq!(s, 200, "{text}");
    assert!(ctype.starts_with("application/json"), "{ctype}");
    serde_json::from_str(&text).expect("json")
}

fn versions(list: &Value) -> Vec<String> {
    list["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|r| format!("{} {}", r["product"].as_str().unwrap_or("?"), r["version"]))
        .map(|s| s.replace('"', ""))
        .collect()
}

/// Three releases: two of the WMS (one in two locales), one of the app.
async fn publish_three(app: &TestCloud, token: &str) {
    for body in [
        json!({"product": "wms", "version": "1.4.0", "date": "2026-10-01",
               "notes": {"en": {"title": "Faster picking", "body": "- Scans take **half** the time."}}}),
        json!({"product": "app", "version": "2.0.0", "date": "2026-10-15",
               "notes": {"en": {"title": "New app", "body": "Dark mode <script>alert(1)</script>"}}}),
        json!({"product": "wms", "version": "1.5.0", "date": "2026-11-01", "default_locale": "en",
               "notes": {"en": {"title": "Waves by zone", "body": "Zones & aisles."},
                         "es": {"title": "Oleadas por zona", "body": "Zonas y pasillos."}}}),
    ] {
        let (s, b) = post(app, token, "/api/releases", Some(body)).await;
        assert_eq!(s, 201, "{b}");
    }
}
