//! Buyers: kept as orders and contact forms name them, and searched by
//! ranges of `buyer_terms`.

#[cfg(test)]
mod tests;

use crate::error::Result;
use crate::store::{ListQuery, parse_ts, ts};
use depot_protocol::crm::buyers::{
    BuyerFilter, BuyerItem, BuyerMatch, BuyerSearch, TermScan, email_key, name_key, phone_key,
    terms,
};
use depot_protocol::{BusinessId, Page, Timestamp};
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Row, params};

/// A buyer seen somewhere: on an order, or writing through a form.
#[derive(Debug, Clone, Copy)]
pub struct Sighting<'a> {
    pub name: Option<&'a str>,
    pub email: Option<&'a str>,
    pub phone: Option<&'a str>,
    /// The order's sales channel, or `contact_form`.
    pub channel: &'a str,
    pub at: &'a Timestamp,
    /// An order (counted in `order_count`), else a thread.
    pub order: bool,
}

/// The buyer this sighting is: by email; else by phone; else by name among
/// buyers known by nothing else. An email seen with a phone that so far
/// identified a buyer without an email is that buyer.
fn find(
    conn: &Connection,
    business: BusinessId,
    name: Option<&str>,
    email: Option<&str>,
    phone: Option<&str>,
) -> Result<Option<i64>> {
    let one = |sql: &str, key: &str| -> Result<Option<i64>> {
        Ok(conn
            .prepare_cached(sql)?
            .query_row(params![business.0, key], |r| r.get(0))
            .optional()?)
    };
    if let Some(e) = email {
        let found = one(
            "SELECT id FROM buyers WHERE business_id = ?1 AND email_key = ?2",
            e,
        )?;
        if found.is_some() {
            return Ok(found);
        }
    }
    if let Some(p) = phone {
        let sql = if email.is_some() {
            "SELECT id FROM buyers WHERE business_id = ?1 AND phone_key = ?2 AND email_key IS NULL
             ORDER BY last_seen DESC, id DESC LIMIT 1"
        } else {
            "SELECT id FROM buyers WHERE business_id = ?1 AND phone_key = ?2
             ORDER BY last_seen DESC, id DESC LIMIT 1"
        };
        return one(sql, p);
    }
    match (email, name) {
        (None, Some(n)) => one(
            "SELECT id FROM buyers WHERE business_id = ?1 AND name_key = ?2
               AND email_key IS NULL AND phone_key IS NULL",
            n,
        ),
        _ => Ok(None),
    }
}

fn clean(v: Option<&str>) -> Option<&str> {
    v.map(str::trim).filter(|v| !v.is_empty())
}

/// Records a sighting: the buyer it is, updated (the latest name and phone
/// win; an email, once known, stays), or a new one. `None` when nothing in
/// it identifies anybody.
pub fn note(conn: &Connection, business: BusinessId, s: Sighting) -> Result<Option<i64>> {
    let (name, phone) = (clean(s.name), clean(s.phone));
    let (nk, ek, pk) = (
        name.and_then(name_key),
        s.email.and_then(email_key),
        phone.and_then(phone_key),
    );
    if nk.is_none() && ek.is_none() && pk.is_none() {
        return Ok(None);
    }
    let (orders, threads) = if s.order { (1, 0) } else { (0, 1) };
    let at = ts(s.at);
    let id = match find(conn, business, nk.as_deref(), ek.as_deref(), pk.as_deref())? {
        Some(id) => {
            conn.prepare_cached(
                "UPDATE buyers SET name = COALESCE(?2, name), name_key = COALESCE(?3, name_key),
                        email = COALESCE(email, ?4), email_key = COALESCE(email_key, ?4),
                        phone = COALESCE(?5, phone), phone_key = COALESCE(?6, phone_key),
                        order_count = order_count + ?7, thread_count = thread_count + ?8,
                        first_seen = MIN(first_seen, ?9), last_seen = MAX(last_seen, ?9)
                 WHERE id = ?1",
            )?
            .execute(params![id, name, nk, ek, phone, pk, orders, threads, at])?;
            id
        }
        None => {
            conn.prepare_cached(
                "INSERT INTO buyers (business_id, name, name_key, email, email_key, phone, phone_key,
                                     order_count, thread_count, first_seen, last_seen)
                 VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7, ?8, ?9, ?9)",
            )?
            .execute(params![business.0, name, nk, ek, phone, pk, orders, threads, at])?;
            conn.last_insert_rowid()
        }
    };
    index(conn, business, id)?;
    conn.prepare_cached(
        "INSERT OR IGNORE INTO buyer_channels (buyer_id, channel) VALUES (?1, ?2)",
    )?
    .execute(params![id, s.channel])?;
    Ok(Some(id))
}

/// Rewrites a buyer's search terms from its stored keys.
fn index(conn: &Connection, business: BusinessId, id: i64) -> Result<()> {
    let (nk, ek, pk): (Option<String>, Option<String>, Option<String>) = conn
        .prepare_cached("SELECT name_key, email_key, phone_key FROM buyers WHERE id = ?1")?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    conn.prepare_cached("DELETE FROM buyer_terms WHERE buyer_id = ?1")?
        .execute([id])?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO buyer_terms (business_id, kind, term, buyer_id) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for (kind, term) in terms(nk.as_deref(), ek.as_deref(), pk.as_deref()) {
        insert.execute(params![business.0, kind.as_str(), term, id])?;
    }
    Ok(())
}

const COLS: &str =
    "b.id, b.name, b.email, b.phone, b.order_count, b.thread_count, b.first_seen, b.last_seen";

fn row(r: &Row) -> rusqlite::Result<BuyerItem> {
    Ok(BuyerItem {
        id: r.get(0)?,
        name: r.get(1)?,
        email: r.get(2)?,
        phone: r.get(3)?,
        order_count: r.get(4)?,
        thread_count: r.get(5)?,
        first_seen: parse_ts(&r.get::<_, String>(6)?)?,
        last_seen: parse_ts(&r.get::<_, String>(7)?)?,
        channels: Vec::new(),
    })
}

/// The buyers a term scan finds: one fixed text, so what the caller typed
/// is only ever bound, and a range of `buyer_terms`' primary key.
pub const SCAN: &str = "b.id IN (SELECT buyer_id FROM buyer_terms
    WHERE business_id = ? AND kind IN (?, ?) AND term >= ? AND term < ? AND term LIKE ? ESCAPE '\\')";

/// The values `SCAN` binds, in order.
pub fn scan_args(business: BusinessId, scan: &TermScan) -> [Value; 6] {
    // One kind or two: a single kind is bound twice.
    let kind = |i: usize| -> Value {
        let k = scan.kinds.get(i).or(scan.kinds.first());
        k.map_or("", |k| k.as_str()).to_owned().into()
    };
    [
        business.0.into(),
        kind(0),
        kind(1),
        scan.from.clone().into(),
        scan.to.clone().into(),
        scan.like.clone().into(),
    ]
}

/// A page of the buyers a search finds, by name (nameless last).
pub fn search(
    conn: &Connection,
    business: BusinessId,
    s: &BuyerSearch,
    page: Page,
) -> Result<(Vec<BuyerItem>, u64, u64)> {
    let mut q = ListQuery::new("FROM buyers b WHERE b.business_id = ?", business);
    match &s.by {
        BuyerMatch::Id(id) => q.and("b.id = ?", [(*id).into()]),
        BuyerMatch::Terms(scan) => q.and(SCAN, scan_args(business, scan)),
    }
    match &s.filter {
        None => {}
        Some(BuyerFilter::Orders) => q.and("b.order_count > 0", []),
        Some(BuyerFilter::Crm) => q.and("b.thread_count > 0", []),
        Some(BuyerFilter::Channel(c)) => q.and(
            "EXISTS (SELECT 1 FROM buyer_channels WHERE buyer_id = b.id AND channel = ?)",
            [c.clone().into()],
        ),
    }
    let (mut buyers, total, filtered) = q.run(
        conn,
        "buyers",
        COLS,
        "b.name_key IS NULL, b.name_key, b.id",
        page,
        row,
    )?;
    fill_channels(conn, &mut buyers)?;
    Ok((buyers, total, filtered))
}

fn fill_channels(conn: &Connection, buyers: &mut [BuyerItem]) -> Result<()> {
    if buyers.is_empty() {
        return Ok(());
    }
    let marks = vec!["?"; buyers.len()].join(", ");
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT buyer_id, channel FROM buyer_channels WHERE buyer_id IN ({marks}) ORDER BY buyer_id, channel"
    ))?;
    let ids: Vec<i64> = buyers.iter().map(|b| b.id).collect();
    let mut by_buyer: std::collections::HashMap<i64, Vec<String>> = Default::default();
    for r in stmt.query_map(rusqlite::params_from_iter(ids), |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
    })? {
        let (id, channel) = r?;
        by_buyer.entry(id).or_default().push(channel);
    }
    for b in buyers {
        b.channels = by_buyer.remove(&b.id).unwrap_or_default();
    }
    Ok(())
}

/// Writes every buyer's search terms again from its keys: for the
/// migration that changed how terms are made.
pub fn reindex(conn: &Connection) -> Result<()> {
    let mut stmt = conn.prepare("SELECT business_id, id FROM buyers ORDER BY id")?;
    let buyers = stmt
        .query_map([], |r| Ok((BusinessId(r.get(0)?), r.get::<_, i64>(1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    for (business, id) in buyers {
        index(conn, business, id)?;
    }
    Ok(())
}

/// Builds the buyers of orders stored before buyers were kept (the
/// migration that adds them calls it), oldest order first.
pub fn backfill(conn: &Connection) -> Result<()> {
    let mut stmt = conn.prepare(
        "SELECT business_id, buyer_name, buyer_email, buyer_phone, channel, created_at
         FROM orders ORDER BY id",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let (name, email, phone): (Option<String>, Option<String>, Option<String>) =
            (r.get(1)?, r.get(2)?, r.get(3)?);
        let channel: String = r.get(4)?;
        let at = parse_ts(&r.get::<_, String>(5)?)?;
        note(
            conn,
            BusinessId(r.get(0)?),
            Sighting {
                name: name.as_deref(),
                email: email.as_deref(),
                phone: phone.as_deref(),
                channel: &channel,
                at: &at,
                order: true,
            },
        )?;
    }
    Ok(())
}
