//! The page in the reader's language, and a long word that wraps.

use super::*;

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
async fn publish_two(app: &TestCloud, token: &str) -> Vec<String> {
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
async fn pages(app: &TestCloud, locale: &str) -> Vec<String> {
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
    let app = spawn_cloud_configured(|s| {
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
async fn wraps_in_chromium(app: &TestCloud) {
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
