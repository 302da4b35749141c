//! Reading the notes: JSON, HTML and feeds without credentials, and bad queries and releases refused whole.

use super::*;

#[tokio::test]
async fn readers_get_json_html_and_feeds_without_credentials() {
    let app = spawn_cloud_configured(|_| {}).await;
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
    let app = spawn_cloud_configured(|_| {}).await;
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
