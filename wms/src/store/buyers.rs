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
use depot_sql::Value;
use depot_sql::{Db, Row, params};

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

/// A buyer found, with its keys as stored.
type Found = (i64, Keys);

fn found_row(r: &Row) -> depot_sql::Result<Found> {
    Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?)))
}

/// The reads that find the buyer a sighting is: by email; else by phone;
/// else by name among buyers known by nothing else. An email seen with a
/// phone that so far identified a buyer without an email is that buyer.
///
/// Made before the sighting is noted ([`look_up`], then [`note_found`]),
/// so that an order's reads send it with theirs. On PostgreSQL every
/// read the sighting's keys call for goes out at once (one round trip
/// where the cascade was up to three); on SQLite each is run only when
/// the one before found nobody.
#[must_use = "a look-up is noted with `note_found`"]
pub struct Lookup {
    business: BusinessId,
    keys: Keys,
    /// By email, by phone, by name: sent, or to send when needed.
    sent: [Option<depot_sql::Later<Found>>; 3],
}

/// What identifies a buyer seen: its name, email and phone keys.
fn keys_of(name: Option<&str>, email: Option<&str>, phone: Option<&str>) -> Keys {
    (
        clean(name).and_then(name_key),
        email.and_then(email_key),
        clean(phone).and_then(phone_key),
    )
}

impl Lookup {
    /// The read by key `k` (0 email, 1 phone, 2 name), if the sighting's
    /// keys call for it.
    fn send(&self, conn: &Db, k: usize) -> Result<Option<depot_sql::Later<Found>>> {
        let (name, email, phone) = &self.keys;
        let (sql, key) = match k {
            0 => (
                "SELECT id, name_key, email_key, phone_key FROM buyers
                 WHERE business_id = ?1 AND email_key = ?2",
                email,
            ),
            1 if email.is_some() => (
                "SELECT id, name_key, email_key, phone_key FROM buyers
                 WHERE business_id = ?1 AND phone_key = ?2 AND email_key IS NULL
                 ORDER BY last_seen DESC, id DESC LIMIT 1",
                phone,
            ),
            1 => (
                "SELECT id, name_key, email_key, phone_key FROM buyers
                 WHERE business_id = ?1 AND phone_key = ?2
                 ORDER BY last_seen DESC, id DESC LIMIT 1",
                phone,
            ),
            // By name only when neither an email nor a phone was seen.
            _ if email.is_some() || phone.is_some() => return Ok(None),
            _ => (
                "SELECT id, name_key, email_key, phone_key FROM buyers
                 WHERE business_id = ?1 AND name_key = ?2
                   AND email_key IS NULL AND phone_key IS NULL",
                name,
            ),
        };
        let Some(key) = key else {
            return Ok(None);
        };
        Ok(Some(conn.query_later(
            sql,
            params![self.business.0, key],
            found_row,
        )?))
    }

    /// The buyer found, taking the reads in their order.
    fn found(mut self, conn: &Db) -> Result<Option<Found>> {
        for k in 0..3 {
            let sent = match self.sent[k].take() {
                Some(sent) => Some(sent),
                None => self.send(conn, k)?,
            };
            let Some(sent) = sent else {
                continue;
            };
            let found = sent.first(conn)?;
            // A phone seen decides: the name is not asked after it.
            if found.is_some() || k == 1 {
                return Ok(found);
            }
        }
        Ok(None)
    }
}

/// Sends the reads finding the buyer seen with this name, email and phone
/// (see [`Lookup`]); `None` when nothing identifies anybody.
pub fn look_up(
    conn: &Db,
    business: BusinessId,
    name: Option<&str>,
    email: Option<&str>,
    phone: Option<&str>,
) -> Result<Option<Lookup>> {
    let keys = keys_of(name, email, phone);
    if keys.0.is_none() && keys.1.is_none() && keys.2.is_none() {
        return Ok(None);
    }
    let mut lookup = Lookup {
        business,
        keys,
        sent: [None, None, None],
    };
    let together = conn.dialect() == depot_sql::Dialect::Postgres;
    for k in 0..3 {
        lookup.sent[k] = lookup.send(conn, k)?;
        if lookup.sent[k].is_some() && !together {
            break;
        }
    }
    Ok(Some(lookup))
}

fn clean(v: Option<&str>) -> Option<&str> {
    v.map(str::trim).filter(|v| !v.is_empty())
}

/// Records a sighting: the buyer it is, updated (the latest name and phone
/// win; an email, once known, stays), or a new one. `None` when nothing in
/// it identifies anybody.
pub fn note(conn: &Db, business: BusinessId, s: Sighting) -> Result<Option<i64>> {
    match look_up(conn, business, s.name, s.email, s.phone)? {
        Some(lookup) => note_found(conn, s, lookup).map(Some),
        None => Ok(None),
    }
}

/// [`note`] of the buyer `lookup` (sent for `s`) finds.
pub fn note_found(conn: &Db, s: Sighting, lookup: Lookup) -> Result<i64> {
    let business = lookup.business;
    let (name, phone) = (clean(s.name), clean(s.phone));
    let (nk, ek, pk) = lookup.keys.clone();
    let (orders, threads) = if s.order { (1, 0) } else { (0, 1) };
    let at = ts(s.at);
    let id = match lookup.found(conn)? {
        Some((id, old)) => {
            // The keys as the sighting leaves them (`COALESCE` as below).
            let new = (
                nk.clone().or(old.0.clone()),
                old.1.clone().or(ek.clone()),
                pk.clone().or(old.2.clone()),
            );
            // A buyer seen again as before (most orders) keeps its keys:
            // a statement that sets them, even to what they were, has
            // SQLite write their index entries and its search terms again,
            // dirtying those pages in every commit.
            if new == old {
                conn.execute_later(
                    "UPDATE buyers SET name = COALESCE(?2, name), email = COALESCE(email, ?3),
                            phone = COALESCE(?4, phone),
                            order_count = order_count + ?5, thread_count = thread_count + ?6,
                            first_seen = CASE WHEN ?7 < first_seen THEN ?7 ELSE first_seen END,
                            last_seen = CASE WHEN ?7 > last_seen THEN ?7 ELSE last_seen END
                     WHERE id = ?1",
                    params![id, name, ek, phone, orders, threads, at],
                )?;
            } else {
                conn.execute_later(
                    "UPDATE buyers SET name = COALESCE(?2, name), name_key = COALESCE(?3, name_key),
                            email = COALESCE(email, ?4), email_key = COALESCE(email_key, ?4),
                            phone = COALESCE(?5, phone), phone_key = COALESCE(?6, phone_key),
                            order_count = order_count + ?7, thread_count = thread_count + ?8,
                            first_seen = CASE WHEN ?9 < first_seen THEN ?9 ELSE first_seen END,
                            last_seen = CASE WHEN ?9 > last_seen THEN ?9 ELSE last_seen END
                     WHERE id = ?1",
                    params![id, name, nk, ek, phone, pk, orders, threads, at],
                )?;
                index(conn, business, id, &new, false)?;
            }
            id
        }
        None => {
            let inserted: i64 = conn.query_value("INSERT INTO buyers (business_id, name, name_key, email, email_key, phone, phone_key,
                                     order_count, thread_count, first_seen, last_seen)
                 VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7, ?8, ?9, ?9) RETURNING id", params![business.0, name, nk, ek, phone, pk, orders, threads, at])?;
            index(conn, business, inserted, &(nk, ek, pk), true)?;
            inserted
        }
    };
    conn.execute_later(
        "INSERT INTO buyer_channels (buyer_id, channel) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
        params![id, s.channel],
    )?;
    Ok(id)
}

/// A buyer's name, email and phone keys.
type Keys = (Option<String>, Option<String>, Option<String>);

/// Rewrites a buyer's search terms from its keys (as stored); a buyer
/// just inserted (`new`) has none to delete.
fn index(conn: &Db, business: BusinessId, id: i64, (nk, ek, pk): &Keys, new: bool) -> Result<()> {
    if !new {
        conn.execute_later("DELETE FROM buyer_terms WHERE buyer_id = ?1", params![id])?;
    }
    // In blocks of rows (`store::rows`): a statement a block, not a term.
    let terms = terms(nk.as_deref(), ek.as_deref(), pk.as_deref());
    Ok(super::rows::insert_later(
        conn,
        "buyer_terms (business_id, kind, term, buyer_id)",
        &terms,
        |(kind, term)| {
            [
                business.0.into(),
                kind.as_str().into(),
                term.clone().into(),
                id.into(),
            ]
        },
    )?)
}

const COLS: &str =
    "b.id, b.name, b.email, b.phone, b.order_count, b.thread_count, b.first_seen, b.last_seen";

fn row(r: &Row) -> depot_sql::Result<BuyerItem> {
    Ok(BuyerItem {
        id: r.get(0)?,
        name: r.get(1)?,
        email: r.get(2)?,
        phone: r.get(3)?,
        order_count: r.get(4)?,
        thread_count: r.get(5)?,
        first_seen: parse_ts(&r.get::<String>(6)?)?,
        last_seen: parse_ts(&r.get::<String>(7)?)?,
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
    conn: &Db,
    business: BusinessId,
    s: &BuyerSearch,
    page: Page,
) -> Result<depot_protocol::Listed<BuyerItem>> {
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
    let mut listed = q.run(
        conn,
        "buyers",
        COLS,
        super::Order::asc(&[
            super::Key::Int("(CASE WHEN b.name_key IS NULL THEN 1 ELSE 0 END)"),
            super::Key::Text("COALESCE(b.name_key, '')"),
            super::Key::Int("b.id"),
        ]),
        page,
        row,
    )?;
    fill_channels(conn, &mut listed.rows)?;
    Ok(listed)
}

fn fill_channels(conn: &Db, buyers: &mut [BuyerItem]) -> Result<()> {
    if buyers.is_empty() {
        return Ok(());
    }
    let marks = vec!["?"; buyers.len()].join(", ");
    let stmt = &format!(
        "SELECT buyer_id, channel FROM buyer_channels WHERE buyer_id IN ({marks}) ORDER BY buyer_id, channel"
    );
    let ids: Vec<i64> = buyers.iter().map(|b| b.id).collect();
    let mut by_buyer: std::collections::HashMap<i64, Vec<String>> = Default::default();
    for r in conn.query_map(stmt, &depot_sql::params_from_iter(&ids), |r| {
        Ok((r.get::<i64>(0)?, r.get::<String>(1)?))
    })? {
        let (id, channel) = r;
        by_buyer.entry(id).or_default().push(channel);
    }
    for b in buyers {
        b.channels = by_buyer.remove(&b.id).unwrap_or_default();
    }
    Ok(())
}

/// Writes every buyer's search terms again from its keys: for the
/// migration that changed how terms are made.
pub fn reindex(conn: &Db) -> Result<()> {
    let stmt = "SELECT business_id, id, name_key, email_key, phone_key FROM buyers ORDER BY id";
    let buyers = conn.query_map(stmt, params![], |r| {
        Ok((
            BusinessId(r.get(0)?),
            r.get::<i64>(1)?,
            (r.get(2)?, r.get(3)?, r.get(4)?),
        ))
    })?;
    for (business, id, keys) in buyers {
        index(conn, business, id, &keys, false)?;
    }
    Ok(())
}

/// Builds the buyers of orders stored before buyers were kept (the
/// migration that adds them calls it), oldest order first.
pub fn backfill(conn: &Db) -> Result<()> {
    let stmt = "SELECT business_id, buyer_name, buyer_email, buyer_phone, channel, created_at
         FROM orders ORDER BY id";
    type Seen = (
        i64,
        Option<String>,
        Option<String>,
        Option<String>,
        String,
        String,
    );
    let rows: Vec<Seen> = conn.query_map(stmt, params![], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
        ))
    })?;
    for (business, name, email, phone, channel, at) in rows {
        let at = parse_ts(&at)?;
        note(
            conn,
            BusinessId(business),
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
