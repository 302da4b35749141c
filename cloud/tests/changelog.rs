//! The release-notes API as readers and publishers meet it: JSON or an HTML
//! page by `Accept`, RSS and Atom feeds, filters and locales, publishing,
//! and translation sync from a directory, followed to its end. The page's
//! own words follow `locale`, and a long unbroken word wraps inside its
//! column (measured in headless Chromium when `DEPOT_TEST_CHROMEDRIVER`
//! names a chromedriver).

mod common;
#[allow(dead_code)]
#[path = "../../edge/tests/station_page/webdriver.rs"]
mod webdriver;

use common::{TestApp, spawn_app_configured};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

/// A token with `releases:write`, for a client an operator created.
async fn writer_token(app: &TestApp) -> String {
    let (id, secret) =
        depot_cloud::oauth::admin::create_client(&app.wms, "Release bot", "releases:write")
            .await
            .expect("client");
    let r = app
        .client
        .post(format!("{}/oauth/token", app.base))
        .basic_auth(id, Some(secret))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .expect("token");
    assert_eq!(r.status(), 200);
    let b: Value = r.json().await.expect("json");
    b["access_token"].as_str().expect("access token").to_owned()
}

async fn post(app: &TestApp, token: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut req = app
        .client
        .post(format!("{}{path}", app.base))
        .bearer_auth(token);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let r = req.send().await.expect("post");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// A GET with an `Accept` header: the status, the content type and the text.
async fn get(app: &TestApp, path: &str, accept: &str) -> (u16, String, String) {
    let r = app
        .client
        .get(format!("{}{path}", app.base))
        .header("accept", accept)
        .send()
        .await
        .expect("get");
    let status = r.status().as_u16();
    let ctype = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    (status, ctype, r.text().await.expect("text"))
}

async fn list(app: &TestApp, query: &str) -> Value {
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
async fn publish_three(app: &TestApp, token: &str) {
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

#[tokio::test]
async fn readers_get_json_html_and_feeds_without_credentials() {
    let app = spawn_app_configured(|_| {}).await;
    let token = writer_token(&app).await;
    publish_three(&app, &token).await;

    let all = list(&app, "").await;
    assert_eq!(all["recordsTotal"], "3");
    assert_eq!(all["recordsFiltered"], "3");
    assert_eq!(versions(&all), ["wms 1.5.0", "app 2.0.0", "wms 1.4.0"]);
    let newest = &all["data"][0];
    assert_eq!(newest["title"], "Waves by zone");
    assert_eq!(newest["locale"], "en");
    assert_eq!(newest["locales"], json!(["en", "es"]));
    assert_eq!(newest["date"], "2026-11-01");

    let wms = list(&app, "?product=wms&since=2026-10-02").await;
    assert_eq!(versions(&wms), ["wms 1.5.0"]);
    assert_eq!(wms["recordsTotal"], "3");
    assert_eq!(wms["recordsFiltered"], "1");
    let paged = list(&app, "?start=1&length=1").await;
    assert_eq!(versions(&paged), ["app 2.0.0"]);
    assert_eq!(paged["recordsFiltered"], "3");

    // Spanish where there is Spanish, English otherwise, and said so.
    let es = list(&app, "?locale=es-MX").await;
    assert_eq!(es["data"][0]["title"], "Oleadas por zona");
    assert_eq!(es["data"][0]["fallback"], true);
    assert_eq!(es["data"][1]["locale"], "en");
    assert_eq!(es["data"][1]["fallback"], true);
    let exact = list(&app, "?locale=es").await;
    assert_eq!(exact["data"][0]["fallback"], false);

    // A browser gets the page: escaped, and it names what it shows.
    let (s, ctype, html) = get(
        &app,
        "/api/releases",
        "text/html,application/xhtml+xml,*/*;q=0.8",
    )
    .await;
    assert_eq!(s, 200);
    assert!(ctype.starts_with("text/html"), "{ctype}");
    for shown in [
        "Waves by zone",
        "Faster picking",
        "<strong>half</strong>",
        "Zones &amp; aisles.",
    ] {
        assert!(html.contains(shown), "{shown} missing from the page");
    }
    assert!(
        !html.contains("<script>"),
        "markup in notes must be escaped"
    );
    assert!(html.contains("&lt;script&gt;"));

    let (s, ctype, xml) = get(&app, "/api/releases/rss?product=wms", "*/*").await;
    assert_eq!(s, 200);
    assert!(ctype.starts_with("application/rss+xml"), "{ctype}");
    let channel = rss::Channel::read_from(xml.as_bytes()).expect("rss");
    let titles: Vec<_> = channel.items().iter().filter_map(|i| i.title()).collect();
    assert_eq!(
        titles,
        ["WMS 1.5.0: Waves by zone", "WMS 1.4.0: Faster picking"]
    );
    let link = channel.items()[0].link().expect("link");
    assert!(
        link.ends_with("/api/releases?product=wms&version=1.5.0"),
        "{link}"
    );
    assert!(
        channel.items()[1]
            .description()
            .expect("description")
            .contains("<strong>half</strong>")
    );

    let (s, ctype, xml) = get(&app, "/api/releases/atom?locale=es", "*/*").await;
    assert_eq!(s, 200);
    assert!(ctype.starts_with("application/atom+xml"), "{ctype}");
    let feed = atom_syndication::Feed::read_from(xml.as_bytes()).expect("atom");
    assert_eq!(feed.entries().len(), 3);
    assert_eq!(
        feed.entries()[0].title().as_str(),
        "WMS 1.5.0: Oleadas por zona"
    );
    assert!(
        feed.links()
            .iter()
            .any(|l| l.rel() == "self" && l.href().contains("/api/releases/atom"))
    );
}

#[tokio::test]
async fn bad_queries_and_bad_releases_are_refused_whole() {
    let app = spawn_app_configured(|_| {}).await;
    let token = writer_token(&app).await;
    publish_three(&app, &token).await;

    let (s, _, text) = get(
        &app,
        "/api/releases?product=tv&since=yesterday&locale=english!&length=0",
        "application/json",
    )
    .await;
    assert_eq!(s, 422, "{text}");
    let b: Value = serde_json::from_str(&text).expect("json");
    let mut names: Vec<&str> = b["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .filter_map(|e| e["name"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["length", "locale", "product", "since"]);

    for (body, field) in [
        (
            json!({"product": "wms", "version": "1.5.0", "notes": {"en": {"title": "Again", "body": ""}}}),
            "version",
        ),
        (
            json!({"product": "wms", "version": "v2", "notes": {"en": {"title": "T", "body": ""}}}),
            "version",
        ),
        (
            json!({"product": "wms", "version": "2.0.0", "notes": {"fr": {"title": "T", "body": ""}}}),
            "notes.fr",
        ),
        (
            json!({"product": "wms", "version": "2.0.0", "notes": {"en": {"title": "T", "body": ""}, "es": {"title": "T", "body": ""}}}),
            "default_locale",
        ),
        (
            json!({"product": "wms", "version": "2.0.0", "date": "2026-13-01", "notes": {"en": {"title": "T", "body": ""}}}),
            "date",
        ),
    ] {
        let (s, b) = post(&app, &token, "/api/releases", Some(body.clone())).await;
        assert!(s == 409 || s == 422, "{body}: {s} {b}");
        assert_eq!(b["error"], 1, "{b}");
        let named = b["errors"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|e| e["name"] == field);
        assert!(named, "{body}: {b}");
    }
    assert_eq!(list(&app, "").await["recordsTotal"], "3");
}

fn write(dir: &Path, locale: &str, product: &str, version: &str, text: &str) {
    let d = dir.join(locale).join(product);
    std::fs::create_dir_all(&d).expect("dir");
    std::fs::write(d.join(format!("{version}.md")), text).expect("file");
}

async fn follow(app: &TestApp, token: &str, location: &str) -> Value {
    for _ in 0..200 {
        let r = app
            .client
            .get(format!("{}{location}", app.base))
            .bearer_auth(token)
            .send()
            .await
            .expect("job");
        assert_eq!(r.status(), 200);
        let job: Value = r.json().await.expect("json");
        if job["status"] != "running" {
            return job;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the translation job did not end");
}

#[tokio::test]
async fn translation_sync_fills_missing_locales_and_reports_each_file() {
    let source = tempfile::tempdir().expect("tempdir");
    let dir = source.path().to_owned();
    let app = spawn_app_configured(|s| {
        s.changelog.translations_dir = Some(dir.clone());
    })
    .await;
    let token = writer_token(&app).await;
    publish_three(&app, &token).await;
    // Wanted: es and pt-BR for three releases, less the es 1.5.0 has: 5.
    write(
        &dir,
        "es",
        "wms",
        "1.4.0",
        "# Picking más rápido\n\n- Los escaneos tardan la mitad.\n",
    );
    write(
        &dir,
        "pt-BR",
        "wms",
        "1.4.0",
        "# Separação mais rápida\n- Metade do tempo.",
    );
    write(&dir, "pt-BR", "app", "2.0.0", "no title line here");
    // The Spanish of 1.5.0 exists already: a file for it is not read.
    write(&dir, "es", "wms", "1.5.0", "# Otro título\n");

    let (s, job) = post(&app, &token, "/api/sync-translations", None).await;
    assert_eq!(s, 202, "{job}");
    let location = format!("/api/sync-translations/{}", job["job_id"]);
    let done = follow(&app, &token, &location).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["total"], 5);
    assert_eq!(done["done"], 5);
    assert_eq!(done["filled"], 2);
    assert_eq!(done["failed"], 1);
    assert_eq!(done["skipped"], 2);
    let err = &done["errors"][0];
    assert_eq!(
        (err["product"].as_str(), err["locale"].as_str()),
        (Some("app"), Some("pt-BR"))
    );
    assert!(
        err["reason"].as_str().unwrap_or("").contains("first line"),
        "{err}"
    );
    assert!(done["finished_at"].is_string());

    let es = list(&app, "?product=wms&version=1.4.0&locale=es").await;
    assert_eq!(es["data"][0]["title"], "Picking más rápido");
    assert_eq!(es["data"][0]["fallback"], false);
    assert_eq!(es["data"][0]["locales"], json!(["en", "es", "pt-BR"]));
    let kept = list(&app, "?product=wms&version=1.5.0&locale=es").await;
    assert_eq!(
        kept["data"][0]["title"], "Oleadas por zona",
        "never replaced"
    );

    // Mended, a second run fills what failed and finds nothing else to do.
    write(&dir, "pt-BR", "app", "2.0.0", "# Novo app\nModo escuro.");
    let (s, job) = post(&app, &token, "/api/sync-translations", None).await;
    assert_eq!(s, 202, "{job}");
    let again = follow(
        &app,
        &token,
        &format!("/api/sync-translations/{}", job["job_id"]),
    )
    .await;
    assert_eq!(
        (
            again["status"].as_str(),
            again["total"].as_u64(),
            again["filled"].as_u64()
        ),
        (Some("completed"), Some(3), Some(1)),
        "{again}"
    );
    assert_eq!(
        list(&app, "?product=app&locale=pt-BR").await["data"][0]["title"],
        "Novo app"
    );

    // Jobs are the writers' business, and unknown ones are not found.
    let anon = app
        .client
        .get(format!("{}{location}", app.base))
        .send()
        .await
        .expect("anon");
    assert_eq!(anon.status(), 401);
    let missing = app
        .client
        .get(format!("{}/api/sync-translations/999999", app.base))
        .bearer_auth(&token)
        .send()
        .await
        .expect("missing");
    assert_eq!(missing.status(), 404);
}

#[tokio::test]
async fn translation_sync_without_a_source_is_a_conflict() {
    let app = spawn_app_configured(|_| {}).await;
    let token = writer_token(&app).await;
    let (s, b) = post(&app, &token, "/api/sync-translations", None).await;
    assert_eq!(s, 409, "{b}");
    assert!(
        b["message"]
            .as_str()
            .unwrap_or("")
            .contains("translations_dir"),
        "{b}"
    );
}

/// Every `$ref` in `v`, e.g. `#/components/schemas/ReleaseView`.
fn refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                match (k.as_str(), v.as_str()) {
                    ("$ref", Some(r)) => out.push(r.to_owned()),
                    _ => refs(v, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[tokio::test]
async fn the_release_notes_api_is_described() {
    let app = spawn_app_configured(|_| {}).await;
    let (s, ctype, text) = get(&app, "/api/openapi.json", "application/json").await;
    assert_eq!(s, 200);
    assert!(ctype.starts_with("application/json"), "{ctype}");
    let doc: Value = serde_json::from_str(&text).expect("json");
    let mut described: Vec<String> = Vec::new();
    for (path, ops) in doc["paths"].as_object().expect("paths") {
        for method in ops.as_object().expect("ops").keys() {
            described.push(format!("{} {path}", method.to_uppercase()));
        }
    }
    described.sort();
    let mut served = [
        "GET /api/releases",
        "POST /api/releases",
        "GET /api/releases/rss",
        "GET /api/releases/atom",
        "POST /api/sync-translations",
        "GET /api/sync-translations/{job_id}",
        "GET /.well-known/oauth-protected-resource",
        "GET /.well-known/oauth-authorization-server",
        "GET /.well-known/openid-configuration",
        "GET /.well-known/jwks.json",
    ];
    served.sort_unstable();
    assert_eq!(described, served);
    // Each described route is served (the writes answer 401 here).
    for route in served {
        let (method, path) = route.split_once(' ').expect("route");
        let path = path.replace("{job_id}", "1");
        let r = app
            .client
            .request(
                method.parse().expect("method"),
                format!("{}{path}", app.base),
            )
            .send()
            .await
            .expect("send");
        assert!(
            ![404, 405].contains(&r.status().as_u16()),
            "{route}: {}",
            r.status()
        );
    }

    let mut found = Vec::new();
    refs(&doc, &mut found);
    assert!(!found.is_empty());
    for r in found {
        let pointer = r.strip_prefix('#').expect("local ref");
        assert!(doc.pointer(pointer).is_some(), "{r} does not resolve");
    }
    let flows = &doc["components"]["securitySchemes"]["oauth2"]["flows"];
    assert_eq!(
        flows["clientCredentials"]["tokenUrl"],
        format!("{}/oauth/token", "http://127.0.0.1:8080")
    );
    assert!(flows["clientCredentials"]["scopes"]["releases:write"].is_string());
    assert_eq!(
        doc["paths"]["/api/releases"]["post"]["security"][0]["oauth2"],
        json!(["releases:write"])
    );
}

/// The words of a page's text (its title included, its style not), each
/// lowercased: what a reader reads.
fn words_of(html: &str) -> BTreeSet<String> {
    let mut text = html.to_owned();
    if let (Some(a), Some(b)) = (text.find("<style>"), text.find("</style>")) {
        text.replace_range(a..b, "");
    }
    let mut plain = String::new();
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                plain.push(' ');
            }
            c if !in_tag => plain.push(c),
            _ => {}
        }
    }
    plain
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Names, not words: the product's and its products', the feeds' formats,
/// locale tags and the languages' own names.
const NAMES: &[&str] = &[
    "depot",
    "wms",
    "app",
    "rss",
    "atom",
    "en",
    "es",
    "pt",
    "br",
    "fr",
    "de",
    "it",
    "mx",
    "english",
    "español",
    "português",
    "brasil",
    "français",
    "deutsch",
];

/// A word far wider than any column.
fn long_word() -> String {
    "Zq".repeat(150)
}

/// Two WMS releases: 1.0.0 in English only, with a 300-character word;
/// 1.1.0 in English and French.
async fn publish_two(app: &TestApp, token: &str) -> Vec<String> {
    let notes = [
        ("Kwyjibo", format!("Frobnicated {}", long_word())),
        ("Snorklewacker", "Blorft.".to_owned()),
        ("Snorklewacker", "Blorft.".to_owned()),
    ];
    for body in [
        json!({"product": "wms", "version": "1.0.0", "date": "2026-10-01",
               "notes": {"en": {"title": notes[0].0, "body": notes[0].1}}}),
        json!({"product": "wms", "version": "1.1.0", "date": "2026-11-01", "default_locale": "en",
               "notes": {"en": {"title": notes[1].0, "body": notes[1].1},
                         "fr": {"title": notes[2].0, "body": notes[2].1}}}),
    ] {
        let (s, b) = post(app, token, "/api/releases", Some(body)).await;
        assert_eq!(s, 201, "{b}");
    }
    notes
        .iter()
        .flat_map(|(t, b)| [(*t).to_owned(), b.clone()])
        .collect()
}

/// The page in `locale`, in the views that show every word it has: the
/// newest release (with the link to older ones), the oldest (a fallback,
/// and the link to newer ones), and a product without releases.
async fn pages(app: &TestApp, locale: &str) -> Vec<String> {
    let mut out = Vec::new();
    for q in ["&length=1", "&length=1&start=1", "&product=signage"] {
        let (s, ctype, html) = get(
            app,
            &format!("/api/releases?locale={locale}{q}"),
            "text/html",
        )
        .await;
        assert_eq!(s, 200, "{html}");
        assert!(ctype.starts_with("text/html"), "{ctype}");
        out.push(html);
    }
    out
}

#[tokio::test]
async fn the_page_speaks_the_readers_language_and_a_long_word_wraps() {
    let app = spawn_app_configured(|s| {
        s.changelog.locales = ["en", "es", "pt-BR", "fr", "de"].map(String::from).to_vec();
    })
    .await;
    let token = writer_token(&app).await;
    let notes = publish_two(&app, &token).await;
    let of_notes: BTreeSet<String> = notes.iter().flat_map(|n| words_of(n)).collect();
    let chrome = |html: &[String]| -> BTreeSet<String> {
        html.iter()
            .flat_map(|h| words_of(h))
            .filter(|w| !of_notes.contains(w) && !NAMES.contains(&w.as_str()))
            .collect()
    };

    // The English page's own words, including its fallback note (a
    // locale it has no words for reads English).
    let mut english = pages(&app, "en").await;
    english.extend(pages(&app, "it").await);
    assert!(english[3].contains(r#"<html lang="en">"#), "{}", english[3]);
    let english = chrome(&english);
    for said in [
        "release",
        "notes",
        "product",
        "all",
        "language",
        "feeds",
        "newer",
        "older",
        "no",
        "releases",
        "translation",
        "yet",
        "signage",
    ] {
        assert!(english.contains(said), "{said} not in {english:?}");
    }

    // Every other language the page speaks: none of them.
    for (locale, lang, heading) in [
        ("fr", "fr", "Nouveautés de chaque version"),
        ("de", "de", "Versionshinweise"),
        ("es", "es", "Novedades de cada versión"),
        ("es-MX", "es-MX", "Novedades de cada versión"),
        ("pt-BR", "pt-BR", "Novidades de cada versão"),
    ] {
        let html = pages(&app, locale).await;
        assert!(
            html[0].contains(&format!(r#"<html lang="{lang}">"#))
                && html[0].contains(&format!("<h1>{heading}</h1>")),
            "{locale}: {}",
            html[0]
        );
        let english_here: Vec<_> = chrome(&html).intersection(&english).cloned().collect();
        assert!(
            english_here.is_empty(),
            "{locale}: {english_here:?} in {html:?}"
        );
    }
    // The French page says the English release is not in French yet, in
    // French; the French release is shown as it is.
    let fr = pages(&app, "fr").await;
    assert!(fr[0].contains("Snorklewacker"), "{}", fr[0]);
    assert!(
        fr[1].contains("en en (pas encore traduit en fr)"),
        "{}",
        fr[1]
    );

    // A long word breaks inside its column.
    assert!(fr[1].contains(&long_word()));
    let style = &fr[1][fr[1].find("<style>").unwrap_or(0)..];
    assert!(
        style.contains("overflow-wrap:anywhere") && style.contains("word-break:break-word"),
        "{style}"
    );
    wraps_in_chromium(&app).await;
}

/// At a phone's width and a desktop's, the page with the long word: no
/// sideways scrolling, and every paragraph and heading within the body's
/// column. Skipped without `DEPOT_TEST_CHROMEDRIVER`.
async fn wraps_in_chromium(app: &TestApp) {
    let Some(chromedriver) = std::env::var("DEPOT_TEST_CHROMEDRIVER")
        .ok()
        .filter(|s| !s.is_empty())
    else {
        eprintln!(
            "browser check skipped: set DEPOT_TEST_CHROMEDRIVER to a chromedriver binary (Debian: chromium-driver)"
        );
        return;
    };
    let chromium =
        std::env::var("DEPOT_TEST_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let scratch = tempfile::tempdir().expect("tempdir");
    let driver = webdriver::Driver::start(&chromedriver, scratch.path()).await;
    let session = driver
        .session(&chromium, &scratch.path().join("profile"))
        .await;
    session
        .goto(&format!("{}/api/releases?locale=de&product=wms", app.base))
        .await;
    for (width, height) in [(360, 640), (1280, 800)] {
        session.viewport(width, height).await;
        let m = session
            .run(
                r#"
const body = document.body.getBoundingClientRect();
const out = Array.from(document.querySelectorAll('h1, h2, p, li'))
  .filter((el) => {
    const r = el.getBoundingClientRect();
    return r.left < body.left - 0.5 || r.right > body.right + 0.5 || el.scrollWidth > el.clientWidth + 1;
  })
  .map((el) => el.tagName + ': ' + el.textContent.slice(0, 40));
return {
  scroll: document.documentElement.scrollWidth,
  width: window.innerWidth,
  out,
  words: document.body.innerText.includes('ZqZqZq'),
};
"#,
            )
            .await;
        assert_eq!(m["words"], true, "the long word is on the page: {m}");
        assert!(
            m["scroll"].as_i64() <= m["width"].as_i64() && m["out"] == json!([]),
            "at {width}x{height}: {m}"
        );
    }
    session.close().await;
}
