//! RSS 2.0 and Atom feeds of the release notes, built with the `rss` and
//! `atom_syndication` crates. The query is the list's (`product`,
//! `locale`, `since`, paging). Item bodies are the page's HTML rendering
//! of the notes: feed readers show descriptions as HTML, so raw Markdown
//! would let the notes' markup through.

use super::Changelog;
use super::listing::{ListQuery, ReleaseView};
use super::render::markdown;
use atom_syndication as atom;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, FixedOffset, NaiveDate, Utc};
use depot_protocol::release::Product;
use depot_wms::WmsError;
use depot_wms::http::error::ApiError;
use depot_wms::http::extract::ApiQuery;

/// The feeds' own address and the page's, for a product filter.
fn addresses(
    cl: &Changelog,
    feed: &str,
    product: Option<Product>,
    locale: &str,
) -> (String, String) {
    let base = &cl.inner.base_url;
    let mut q = format!("locale={locale}");
    if let Some(p) = product {
        q = format!("product={}&{q}", p.as_str());
    }
    (
        format!("{base}/api/releases/{feed}?{q}"),
        format!("{base}/api/releases?{q}"),
    )
}

fn title(product: Option<Product>) -> String {
    match product {
        Some(p) => format!("Depot {} release notes", p.label()),
        None => "Depot release notes".to_owned(),
    }
}

fn entry_title(r: &ReleaseView) -> String {
    format!("{} {}: {}", r.product.label(), r.version, r.title)
}

/// A release's date as a moment: midnight UTC of that day.
fn midnight(d: NaiveDate) -> DateTime<Utc> {
    d.and_time(chrono::NaiveTime::MIN).and_utc()
}

fn fixed(t: DateTime<Utc>) -> DateTime<FixedOffset> {
    t.fixed_offset()
}

fn xml(body: Vec<u8>, content_type: &'static str) -> Response {
    let mut resp = body.into_response();
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp
}

/// The releases as an RSS 2.0 feed, bodies as HTML; the list's filters.
#[utoipa::path(get, path = "/api/releases/rss", tag = "releases", params(ListQuery),
    responses((status = 200, description = "RSS 2.0", content_type = "application/rss+xml", body = String),
        (status = 422, body = depot_protocol::ErrorBody)))]
pub async fn rss(
    State(cl): State<Changelog>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> Result<Response, ApiError> {
    let listing = cl.listing(q)?;
    let (views, _, _) = cl.views(&listing).await?;
    let product = listing.filter.product;
    let (_, page) = addresses(&cl, "rss", product, &listing.locale);
    let items = views
        .iter()
        .map(|r| rss::Item {
            title: Some(entry_title(r)),
            link: Some(r.url.clone()),
            description: Some(markdown(&r.body)),
            guid: Some(rss::Guid {
                value: r.url.clone(),
                permalink: true,
            }),
            pub_date: Some(midnight(r.date).to_rfc2822()),
            categories: vec![rss::Category {
                name: r.product.as_str().to_owned(),
                domain: None,
            }],
            ..Default::default()
        })
        .collect();
    let channel = rss::Channel {
        title: title(product),
        link: page,
        description: "What changed in each release of Depot".to_owned(),
        language: Some(listing.locale.clone()),
        last_build_date: views
            .iter()
            .map(|r| r.updated_at)
            .max()
            .map(|t| t.to_rfc2822()),
        generator: Some("depot-cloud".to_owned()),
        items,
        ..Default::default()
    };
    let body = channel
        .write_to(Vec::new())
        .map_err(|e| WmsError::Internal(format!("writing the RSS feed: {e}")))?;
    Ok(xml(body, "application/rss+xml; charset=utf-8"))
}

/// The releases as an Atom feed, bodies as HTML; the list's filters.
#[utoipa::path(get, path = "/api/releases/atom", tag = "releases", params(ListQuery),
    responses((status = 200, description = "Atom", content_type = "application/atom+xml", body = String),
        (status = 422, body = depot_protocol::ErrorBody)))]
pub async fn atom(
    State(cl): State<Changelog>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> Result<Response, ApiError> {
    let listing = cl.listing(q)?;
    let (views, _, _) = cl.views(&listing).await?;
    let product = listing.filter.product;
    let (own, page) = addresses(&cl, "atom", product, &listing.locale);
    let link = |href: &str, rel: &str, mime: &str| atom::Link {
        href: href.to_owned(),
        rel: rel.to_owned(),
        mime_type: Some(mime.to_owned()),
        ..Default::default()
    };
    let entries = views
        .iter()
        .map(|r| atom::Entry {
            title: atom::Text::plain(entry_title(r)),
            id: r.url.clone(),
            updated: fixed(r.updated_at),
            published: Some(fixed(midnight(r.date))),
            links: vec![link(&r.url, "alternate", "text/html")],
            categories: vec![atom::Category {
                term: r.product.as_str().to_owned(),
                label: Some(r.product.label().to_owned()),
                ..Default::default()
            }],
            content: Some(atom::Content {
                lang: Some(r.locale.clone()),
                value: Some(markdown(&r.body)),
                content_type: Some("html".to_owned()),
                ..Default::default()
            }),
            ..Default::default()
        })
        .collect();
    let feed = atom::Feed {
        title: atom::Text::plain(title(product)),
        id: own.clone(),
        updated: fixed(
            views
                .iter()
                .map(|r| r.updated_at)
                .max()
                .unwrap_or(DateTime::UNIX_EPOCH),
        ),
        authors: vec![atom::Person {
            name: "Depot".to_owned(),
            ..Default::default()
        }],
        links: vec![
            link(&own, "self", "application/atom+xml"),
            link(&page, "alternate", "text/html"),
        ],
        lang: Some(listing.locale.clone()),
        entries,
        ..Default::default()
    };
    let body = feed
        .write_to(Vec::new())
        .map_err(|e| WmsError::Internal(format!("writing the Atom feed: {e}")))?;
    Ok(xml(body, "application/atom+xml; charset=utf-8"))
}
