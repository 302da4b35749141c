//! The HTML page of the release notes. Everything that comes from a release
//! or a request is escaped; Markdown is shown through a small subset
//! (headings, bullet lists, paragraphs, fenced code, `code` and **bold**)
//! whose every tag is written here, so the notes can never bring their own
//! markup, links or scripts. The page's own words follow its `locale`
//! ([`super::words`]), and any text wraps where it must: a long unbroken
//! word (a hash, a URL, a language without spaces) breaks inside its
//! column instead of running out of it.

use super::listing::{Listing, ReleaseView};
use super::words::{endonym, words};
use crate::html::escape;
use depot_protocol::release::Product;
use std::fmt::Write;

/// What the page shows.
pub struct Page<'a> {
    pub base_url: &'a str,
    pub locales: &'a [String],
    pub listing: &'a Listing,
    pub releases: &'a [ReleaseView],
    /// Releases the filter matches (the page is a window on them).
    pub filtered: u64,
}

/// Wraps the pieces between pairs of `mark` in `tag`, escaping all text
/// and rendering what lies outside with `rest`. An unpaired mark stays
/// as it was written.
fn spans(text: &str, mark: &str, tag: &str, rest: fn(&str) -> String) -> String {
    let parts: Vec<&str> = text.split(mark).collect();
    let paired_through = if parts.len() % 2 == 0 {
        parts.len() - 1
    } else {
        parts.len()
    };
    let mut out = String::new();
    for (i, part) in parts.iter().enumerate() {
        if i % 2 == 1 && i < paired_through {
            let _ = write!(out, "<{tag}>{}</{tag}>", escape(part));
        } else {
            if i > 0 && i % 2 == 1 {
                out.push_str(&escape(mark));
            }
            out.push_str(&rest(part));
        }
    }
    out
}

fn inline(text: &str) -> String {
    spans(text, "`", "code", |t| spans(t, "**", "strong", escape))
}

/// `#` to `######` and a space: the level and the text.
fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.bytes().take_while(|b| *b == b'#').count();
    let text = line.get(level..)?.strip_prefix(' ')?;
    (1..=6).contains(&level).then_some((level, text.trim()))
}

/// Renders Markdown through the safe subset.
pub fn markdown(src: &str) -> String {
    let mut out = String::new();
    let mut para: Vec<&str> = Vec::new();
    let mut in_list = false;
    let mut fence: Option<Vec<&str>> = None;
    let close = |out: &mut String, para: &mut Vec<&str>, in_list: &mut bool| {
        if !para.is_empty() {
            let lines: Vec<String> = para.iter().map(|l| inline(l)).collect();
            let _ = writeln!(out, "<p>{}</p>", lines.join("\n"));
            para.clear();
        }
        if *in_list {
            out.push_str("</ul>\n");
            *in_list = false;
        }
    };
    for line in src.lines() {
        let t = line.trim();
        if let Some(code) = fence.as_mut() {
            if t.starts_with("```") {
                let _ = writeln!(out, "<pre><code>{}</code></pre>", escape(&code.join("\n")));
                fence = None;
            } else {
                code.push(line);
            }
            continue;
        }
        if t.starts_with("```") {
            close(&mut out, &mut para, &mut in_list);
            fence = Some(Vec::new());
        } else if t.is_empty() {
            close(&mut out, &mut para, &mut in_list);
        } else if let Some((level, text)) = heading(t) {
            close(&mut out, &mut para, &mut in_list);
            let h = (level + 2).min(6);
            let _ = writeln!(out, "<h{h}>{}</h{h}>", inline(text));
        } else if let Some(item) = ["- ", "* ", "+ "].iter().find_map(|m| t.strip_prefix(m)) {
            if !para.is_empty() {
                close(&mut out, &mut para, &mut in_list);
            }
            if !in_list {
                out.push_str("<ul>\n");
                in_list = true;
            }
            let _ = writeln!(out, "<li>{}</li>", inline(item.trim()));
        } else {
            if in_list {
                close(&mut out, &mut para, &mut in_list);
            }
            para.push(t);
        }
    }
    if let Some(code) = fence {
        let _ = writeln!(out, "<pre><code>{}</code></pre>", escape(&code.join("\n")));
    }
    close(&mut out, &mut para, &mut in_list);
    out
}

/// The query string of a view of the page, escaped for an attribute.
fn query(l: &Listing, product: Option<Product>, locale: &str, start: u64) -> String {
    let mut q = vec![format!("locale={locale}")];
    if let Some(p) = product {
        q.push(format!("product={}", p.as_str()));
    }
    if let Some(since) = l.filter.since {
        q.push(format!("since={since}"));
    }
    if let Some(v) = &l.filter.version {
        q.push(format!("version={}", encode(v)));
    }
    if start > 0 {
        q.push(format!("start={start}"));
    }
    if l.page.length != depot_protocol::Page::DEFAULT_LENGTH {
        q.push(format!("length={}", l.page.length));
    }
    escape(&format!("?{}", q.join("&")))
}

/// Percent-encodes a query value (a version filter is whatever was asked).
fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

fn link(out: &mut String, href: &str, text: &str, current: bool) {
    let current = if current {
        r#" aria-current="page""#
    } else {
        ""
    };
    let _ = write!(out, r#"<a href="{href}"{current}>{}</a> "#, escape(text));
}

/// `overflow-wrap: anywhere` breaks a word too long for its line (and lets
/// a column shrink below it); `word-break: break-word` is the same for
/// older engines. Code blocks keep their lines and scroll inside.
const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;\
padding:0 1rem;line-height:1.5;color:#222;overflow-wrap:anywhere;word-break:break-word}\
article{border-top:1px solid #ddd;padding:.5rem 0;min-width:0}\
.meta{color:#555;font-size:.9rem}nav{margin:.3rem 0}nav a{margin-right:.4rem}\
a[aria-current]{font-weight:bold}pre{background:#f4f4f4;padding:.5rem;overflow-x:auto;\
overflow-wrap:normal;word-break:normal}";

/// The whole page.
pub fn page(p: &Page) -> String {
    let l = p.listing;
    let base = escape(p.base_url);
    let product = l.filter.product;
    let locale = &l.locale;
    let w = words(locale);
    let mut out = String::new();
    // The page's lang is the locale asked for when its words are in that
    // language, else the language they are in (English).
    let lang = if depot_protocol::release::language(locale) == w.lang {
        locale.as_str()
    } else {
        w.lang
    };
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"{lang}\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n\
         <link rel=\"alternate\" type=\"application/rss+xml\" title=\"RSS\" href=\"{base}/api/releases/rss{q}\">\n\
         <link rel=\"alternate\" type=\"application/atom+xml\" title=\"Atom\" href=\"{base}/api/releases/atom{q}\">\n\
         </head>\n<body>\n<h1>{heading}</h1>\n",
        lang = escape(lang),
        title = escape(w.title),
        heading = escape(w.heading),
        q = query(l, product, locale, 0),
    );
    let _ = write!(out, "<nav>{}: ", escape(w.product));
    link(
        &mut out,
        &query(l, None, locale, 0),
        w.all,
        product.is_none(),
    );
    for p in Product::ALL {
        link(
            &mut out,
            &query(l, Some(p), locale, 0),
            w.product_label(p),
            product == Some(p),
        );
    }
    let _ = write!(out, "</nav>\n<nav>{}: ", escape(w.language));
    for tag in p.locales {
        link(
            &mut out,
            &query(l, product, tag, 0),
            endonym(tag),
            tag == locale,
        );
    }
    let _ = write!(out, "</nav>\n<nav>{}: ", escape(w.feeds));
    let q = query(l, product, locale, 0);
    link(
        &mut out,
        &format!("{base}/api/releases/rss{q}"),
        "RSS",
        false,
    );
    link(
        &mut out,
        &format!("{base}/api/releases/atom{q}"),
        "Atom",
        false,
    );
    out.push_str("</nav>\n");
    if p.releases.is_empty() {
        let _ = writeln!(out, "<p>{}</p>", escape(w.none));
    }
    for r in p.releases {
        let _ = write!(
            out,
            "<article id=\"{id}\" lang=\"{lang}\">\n<h2><a href=\"{url}\">{product} {version}</a>: {title}</h2>\n\
             <p class=\"meta\"><time datetime=\"{date}\">{date}</time>",
            id = escape(&format!("{}-{}", r.product.as_str(), r.version)),
            lang = escape(&r.locale),
            url = escape(&r.url),
            product = escape(w.product_label(r.product)),
            version = escape(&r.version),
            title = escape(&r.title),
            date = r.date,
        );
        if r.fallback {
            let said = w
                .fallback
                .replace("{shown}", &r.locale)
                .replace("{wanted}", locale);
            let _ = write!(out, " · {}", escape(&said));
        }
        let _ = write!(out, "</p>\n{}</article>\n", markdown(&r.body));
    }
    let start = l.page.start;
    let end = start + p.releases.len() as u64;
    if start > 0 || end < p.filtered {
        out.push_str("<nav>");
        if start > 0 {
            let newer = start.saturating_sub(l.page.length);
            link(&mut out, &query(l, product, locale, newer), w.newer, false);
        }
        if end < p.filtered {
            link(&mut out, &query(l, product, locale, end), w.older, false);
        }
        out.push_str("</nav>\n");
    }
    out.push_str("</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_subset() {
        let html = markdown(
            "# New\n\nFaster **picking** with `scan`.\nSecond line.\n\n- one\n* two <b>\n\n```\n<raw> & code\n```\ntail",
        );
        assert_eq!(
            html,
            "<h3>New</h3>\n<p>Faster <strong>picking</strong> with <code>scan</code>.\nSecond line.</p>\n\
             <ul>\n<li>one</li>\n<li>two &lt;b&gt;</li>\n</ul>\n\
             <pre><code>&lt;raw&gt; &amp; code</code></pre>\n<p>tail</p>\n"
        );
    }

    #[test]
    fn markdown_never_passes_markup_through() {
        let hostile = "<script>alert(1)</script>\n# <img src=x onerror=alert(1)>\n\
                       - [x](javascript:alert(1))\n**<i>** `</code><script>` `unpaired **also";
        let html = markdown(hostile);
        for bad in ["<script", "<img", "<i>", "<a", "</code><"] {
            assert!(!html.contains(bad), "{bad} in {html}");
        }
        assert!(html.contains("<strong>&lt;i&gt;</strong>"), "{html}");
        assert!(
            html.contains("<code>&lt;/code&gt;&lt;script&gt;</code>"),
            "{html}"
        );
        assert!(html.contains("`unpaired **also"), "{html}");
    }

    #[test]
    fn values_in_links_are_encoded() {
        assert_eq!(encode("1.0.0-rc.1"), "1.0.0-rc.1");
        assert_eq!(encode("\"><script>"), "%22%3E%3Cscript%3E");
    }
}
