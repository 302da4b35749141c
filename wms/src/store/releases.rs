//! Releases and their notes per locale.

use super::{parse_ts, ts};
use crate::error::Result;
use depot_protocol::release::{NewRelease, Note, Product, Release};
use depot_protocol::{Page, Timestamp};
use depot_sql::Value;
use depot_sql::{Db, Row, params, params_from_iter};
use std::collections::BTreeMap;

pub fn insert(
    conn: &Db,
    r: &NewRelease,
    published_by: Option<&str>,
    at: &Timestamp,
) -> Result<i64> {
    let inserted: i64 = conn.query_value("INSERT INTO releases (product, version, date, default_locale, published_by, published_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6) RETURNING id", params![
        r.product.as_str(),
        r.version,
        r.date.to_string(),
        r.default_locale,
        published_by,
        ts(at)
    ])?;
    let id = inserted;
    for (locale, note) in &r.notes {
        insert_note(conn, id, locale, note)?;
    }
    Ok(id)
}

/// Adds a locale's notes unless the release has that locale already;
/// answers whether it did.
pub fn insert_note(conn: &Db, release: i64, locale: &str, note: &Note) -> Result<bool> {
    let n = conn.execute(
        "INSERT INTO release_notes (release_id, locale, title, body) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (release_id, locale) DO NOTHING",
        params![release, locale, note.title, note.body],
    )?;
    Ok(n == 1)
}

/// A translation arrived: the release changed at `at` (never back in time).
pub fn touch(conn: &Db, release: i64, at: &Timestamp) -> Result<()> {
    conn.execute("UPDATE releases SET updated_at = CASE WHEN updated_at > ?2 THEN updated_at ELSE ?2 END WHERE id = ?1", params![release, ts(at)])?;
    Ok(())
}

/// A release published in the cloud, with the cloud's id; a second
/// delivery changes nothing.
pub fn insert_replica(conn: &Db, r: &Release) -> Result<()> {
    conn.execute("INSERT INTO releases (id, product, version, date, default_locale, published_by, published_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (id) DO NOTHING", params![
        r.id,
        r.product.as_str(),
        r.version,
        r.date.to_string(),
        r.default_locale,
        r.published_by,
        ts(&r.published_at),
        ts(&r.updated_at)
    ])?;
    for (locale, note) in &r.notes {
        insert_note(conn, r.id, locale, note)?;
    }
    Ok(())
}

const COLS: &str =
    "id, product, version, date, default_locale, published_by, published_at, updated_at";

/// A release without its notes (`with_notes` adds them).
fn row(r: &Row) -> depot_sql::Result<Release> {
    let product: String = r.get(1)?;
    let date: String = r.get(3)?;
    let bad = |what: String| depot_sql::Error::conversion(0, what);
    Ok(Release {
        id: r.get(0)?,
        product: Product::parse(&product).ok_or_else(|| bad(format!("product {product}")))?,
        version: r.get(2)?,
        date: date.parse().map_err(|_| bad(format!("date {date}")))?,
        default_locale: r.get(4)?,
        notes: BTreeMap::new(),
        published_by: r.get(5)?,
        published_at: parse_ts(&r.get::<String>(6)?)?,
        updated_at: parse_ts(&r.get::<String>(7)?)?,
    })
}

/// Reads the notes of `releases`, in one query.
fn with_notes(conn: &Db, mut releases: Vec<Release>) -> Result<Vec<Release>> {
    if releases.is_empty() {
        return Ok(releases);
    }
    let ids: Vec<i64> = releases.iter().map(|r| r.id).collect();
    let marks = vec!["?"; ids.len()].join(", ");
    let stmt = format!(
        "SELECT release_id, locale, title, body FROM release_notes WHERE release_id IN ({marks})"
    );
    let rows = conn.query_map(&stmt, &params_from_iter(&ids), |r| {
        Ok((
            r.get::<i64>(0)?,
            r.get::<String>(1)?,
            Note {
                title: r.get(2)?,
                body: r.get(3)?,
            },
        ))
    })?;
    let mut by_release: BTreeMap<i64, BTreeMap<String, Note>> = BTreeMap::new();
    for row in rows {
        let (id, locale, note) = row;
        by_release.entry(id).or_default().insert(locale, note);
    }
    for r in &mut releases {
        r.notes = by_release.remove(&r.id).unwrap_or_default();
    }
    Ok(releases)
}

pub fn by_id(conn: &Db, id: i64) -> Result<Option<Release>> {
    let head = conn.query_opt(
        &format!("SELECT {COLS} FROM releases WHERE id = ?1"),
        params![id],
        row,
    )?;
    Ok(with_notes(conn, head.into_iter().collect())?.pop())
}

pub fn by_version(conn: &Db, product: Product, version: &str) -> Result<Option<Release>> {
    let head = conn.query_opt(
        &format!("SELECT {COLS} FROM releases WHERE product = ?1 AND version = ?2"),
        params![product.as_str(), version],
        row,
    )?;
    Ok(with_notes(conn, head.into_iter().collect())?.pop())
}

/// Which releases a list shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    pub product: Option<Product>,
    /// Released on or after.
    pub since: Option<chrono::NaiveDate>,
    pub version: Option<String>,
}

/// A page of releases, newest first (by date, then publication), with the
/// count of all releases and of those the filter matches.
pub fn page(conn: &Db, filter: &Filter, page: Page) -> Result<depot_protocol::Listed<Release>> {
    let mut clauses = Vec::new();
    let mut args: Vec<Value> = Vec::new();
    if let Some(p) = filter.product {
        clauses.push("product = ?");
        args.push(p.as_str().to_owned().into());
    }
    if let Some(d) = filter.since {
        clauses.push("date >= ?");
        args.push(d.to_string().into());
    }
    if let Some(v) = &filter.version {
        clauses.push("version = ?");
        args.push(v.clone().into());
    }
    let from = if clauses.is_empty() {
        " FROM releases".to_owned()
    } else {
        format!(" FROM releases WHERE {}", clauses.join(" AND "))
    };
    let total: i64 = conn.query_row("SELECT COUNT(*) FROM releases", params![], |r| r.get(0))?;
    let filtered: i64 = if clauses.is_empty() {
        total
    } else {
        conn.query_row(
            &format!("SELECT COUNT(*){from}"),
            &params_from_iter(&args),
            |r| r.get(0),
        )?
    };
    args.push(i64::try_from(page.length).unwrap_or(i64::MAX).into());
    args.push(i64::try_from(page.start).unwrap_or(i64::MAX).into());
    let stmt = &format!(
        "SELECT {COLS}{from} ORDER BY date DESC, published_at DESC, id DESC LIMIT ? OFFSET ?"
    );
    let heads = conn.query_map(stmt, &params_from_iter(&args), row)?;
    Ok(depot_protocol::Listed {
        rows: with_notes(conn, heads)?,
        total: total as u64,
        filtered: filtered as u64,
        cursor: None,
    })
}

/// A release and the locales it has notes in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coverage {
    pub id: i64,
    pub product: Product,
    pub version: String,
    pub locales: Vec<String>,
}

/// Every release's locales, oldest release first: what a translation sync
/// walks.
pub fn coverage(conn: &Db) -> Result<Vec<Coverage>> {
    let stmt = &format!("SELECT {COLS} FROM releases ORDER BY id");
    let heads = conn.query_map(stmt, params![], row)?;
    let stmt = "SELECT release_id, locale FROM release_notes";
    let mut by_release: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for pair in conn.query_map(stmt, params![], |r| {
        Ok((r.get::<i64>(0)?, r.get::<String>(1)?))
    })? {
        let (id, locale) = pair;
        by_release.entry(id).or_default().push(locale);
    }
    Ok(heads
        .into_iter()
        .map(|r| Coverage {
            locales: by_release.remove(&r.id).unwrap_or_default(),
            id: r.id,
            product: r.product,
            version: r.version,
        })
        .collect())
}
