//! The buyer store against real SQLite: identity, backfill, the plans the
//! searches run with, and patterns that must stay literal.

use super::{SCAN, Sighting, backfill, note, scan_args, search};
use crate::error::Result;
use depot_protocol::crm::buyers::{BuyerFilter, BuyerItem, BuyerMatch, parse_search};
use depot_protocol::{BusinessId, Page, Timestamp};
use depot_sql::{Db, params};
use proptest::prelude::*;

const B: BusinessId = BusinessId(1);

fn db() -> Result<Db> {
    crate::store::two_businesses()
}

fn at(s: &str) -> Timestamp {
    s.parse().unwrap_or_default()
}

fn seen(
    conn: &Db,
    b: BusinessId,
    (name, email, phone): (Option<&str>, Option<&str>, Option<&str>),
    channel: &str,
    when: &str,
) -> Result<Option<i64>> {
    note(
        conn,
        b,
        Sighting {
            name,
            email,
            phone,
            channel,
            at: &at(when),
            order: channel != "contact_form",
        },
    )
}

fn find(conn: &Db, key_type: &str, key: &str, filter: Option<&str>) -> Result<Vec<BuyerItem>> {
    let s = parse_search(key_type, Some(key), filter)
        .map_err(|e| crate::WmsError::Internal(format!("{key:?} refused: {e:?}")))?;
    Ok(search(conn, B, &s, Page::default())?.rows)
}

fn buyer(conn: &Db, id: Option<i64>) -> Result<Option<BuyerItem>> {
    Ok(find(conn, "by_id", &id.unwrap_or_default().to_string(), None)?.pop())
}

fn names(found: &[BuyerItem]) -> Vec<&str> {
    found.iter().filter_map(|b| b.name.as_deref()).collect()
}

#[test]
fn one_buyer_per_email_then_phone_then_name() -> Result<()> {
    let conn = db()?;
    let ana = seen(
        &conn,
        B,
        (Some("Ana López"), Some("ana@x.com"), None),
        "web",
        "2024-05-02T10:00:00Z",
    )?;
    let again = seen(
        &conn,
        B,
        (
            Some("Ana M. López"),
            Some("ana@x.com"),
            Some("+34 600 11 22 33"),
        ),
        "market",
        "2024-05-01T09:00:00Z",
    )?;
    assert_eq!(ana, again);
    let by_phone = seen(
        &conn,
        B,
        (Some("A. López"), None, Some("0034600112233")),
        "web",
        "2024-05-03T09:00:00Z",
    )?;
    assert_eq!(by_phone, ana, "the same phone, written otherwise");
    let Some(a) = buyer(&conn, ana)? else {
        panic!("no buyer")
    };
    assert_eq!((a.order_count, a.thread_count), (3, 0));
    assert_eq!(a.name.as_deref(), Some("A. López"));
    assert_eq!(a.email.as_deref(), Some("ana@x.com"));
    assert_eq!(a.channels, ["market", "web"]);
    assert_eq!(
        (a.first_seen, a.last_seen),
        (at("2024-05-01T09:00:00Z"), at("2024-05-03T09:00:00Z"))
    );

    // A phone known without an email takes the email when one comes.
    let p = seen(
        &conn,
        B,
        (None, None, Some("+1 555 0100")),
        "web",
        "2024-05-01T00:00:00Z",
    )?;
    let pe = seen(
        &conn,
        B,
        (Some("Bob"), Some("bob@y.com"), Some("+1 555 0100")),
        "contact_form",
        "2024-05-02T00:00:00Z",
    )?;
    assert_eq!(p, pe);
    // Names identify only those known by nothing else.
    let n1 = seen(
        &conn,
        B,
        (Some("Carla  Ruiz"), None, None),
        "web",
        "2024-05-01T00:00:00Z",
    )?;
    let n2 = seen(
        &conn,
        B,
        (Some("carla ruiz"), None, None),
        "web",
        "2024-05-01T00:00:00Z",
    )?;
    let n3 = seen(
        &conn,
        B,
        (Some("Carla Ruiz"), Some("carla@z.com"), None),
        "web",
        "2024-05-01T00:00:00Z",
    )?;
    assert_eq!(n1, n2);
    assert_ne!(n1, n3);
    assert_eq!(
        seen(
            &conn,
            B,
            (Some(" "), Some(""), Some("12")),
            "web",
            "2024-05-01T00:00:00Z"
        )?,
        None
    );
    // Another business has its own buyers.
    let other = seen(
        &conn,
        BusinessId(2),
        (Some("Ana López"), Some("ana@x.com"), None),
        "web",
        "2024-05-01T00:00:00Z",
    )?;
    assert_ne!(other, ana);
    let Some(bob) = buyer(&conn, pe)? else {
        panic!("no buyer")
    };
    assert_eq!((bob.order_count, bob.thread_count), (1, 1));
    Ok(())
}

#[test]
fn searches_by_name_id_and_wildcard() -> Result<()> {
    let conn = db()?;
    let when = "2024-05-01T00:00:00Z";
    let ana = seen(
        &conn,
        B,
        (
            Some("Ana María López"),
            Some("ana@x.com"),
            Some("+34600112233"),
        ),
        "web",
        when,
    )?;
    seen(
        &conn,
        B,
        (Some("Juana Pérez"), Some("juana@example.com"), None),
        "contact_form",
        when,
    )?;
    seen(
        &conn,
        B,
        (Some("Anabel Gil"), Some("gil@example.com"), None),
        "market",
        when,
    )?;
    seen(
        &conn,
        BusinessId(2),
        (Some("Ana Other"), Some("ana@other.com"), None),
        "web",
        when,
    )?;
    assert_eq!(
        names(&find(&conn, "by_name", "ana", None)?),
        ["Ana María López", "Anabel Gil"]
    );
    assert_eq!(
        names(&find(&conn, "by_name", "LÓP", None)?),
        ["Ana María López"]
    );
    assert_eq!(
        names(&find(&conn, "by_name", "maría ló", None)?),
        ["Ana María López"]
    );
    assert!(
        find(&conn, "by_name", "uana", None)?.is_empty(),
        "words are matched from their start"
    );
    assert_eq!(
        names(&find(&conn, "by_name", "an", Some("channel:market"))?),
        ["Anabel Gil"]
    );
    assert_eq!(
        names(&find(&conn, "by_name", "ju", Some("crm"))?),
        ["Juana Pérez"]
    );
    assert!(find(&conn, "by_name", "ju", Some("orders"))?.is_empty());
    let id = ana.unwrap_or_default().to_string();
    assert_eq!(
        names(&find(&conn, "by_id", &id, None)?),
        ["Ana María López"]
    );
    assert_eq!(
        names(&find(&conn, "by_wildcard", "*@example.com", None)?),
        ["Anabel Gil", "Juana Pérez"]
    );
    assert_eq!(
        names(&find(&conn, "by_wildcard", "ana*", None)?),
        ["Ana María López", "Anabel Gil"]
    );
    assert_eq!(
        names(&find(&conn, "by_wildcard", "+34600*", None)?),
        ["Ana María López"]
    );
    assert_eq!(
        names(&find(&conn, "by_wildcard", "juan?@*", None)?),
        ["Juana Pérez"]
    );
    assert_eq!(
        names(&find(&conn, "by_wildcard", "lópez", None)?),
        ["Ana María López"]
    );
    assert!(
        find(&conn, "by_wildcard", "ana@x.co", None)?.is_empty(),
        "patterns match whole"
    );
    let s = parse_search("by_wildcard", Some("ana*"), None)
        .map_err(|_| crate::WmsError::Internal("refused".into()))?;
    let depot_protocol::Listed {
        total, filtered, ..
    } = search(
        &conn,
        B,
        &s,
        Page {
            start: 1,
            length: 1,
            cursor: None,
        },
    )?;
    assert_eq!((total, filtered), (3, 2));
    Ok(())
}

#[test]
fn like_metacharacters_and_quotes_stay_literal() -> Result<()> {
    let conn = db()?;
    let when = "2024-05-01T00:00:00Z";
    for name in [
        "100% cotton",
        "100x cotton",
        "a_b shop",
        "axb shop",
        "o'brien",
        "x'; drop table buyers; --",
    ] {
        seen(&conn, B, (Some(name), None, None), "web", when)?;
    }
    assert_eq!(
        names(&find(&conn, "by_wildcard", "100%*", None)?),
        ["100% cotton"]
    );
    assert_eq!(
        names(&find(&conn, "by_name", "100%", None)?),
        ["100% cotton"]
    );
    assert_eq!(
        names(&find(&conn, "by_wildcard", "a_b*", None)?),
        ["a_b shop"]
    );
    assert_eq!(
        names(&find(&conn, "by_wildcard", "o'b*", None)?),
        ["o'brien"]
    );
    assert_eq!(
        names(&find(
            &conn,
            "by_wildcard",
            "x'; drop table buyers; --",
            None
        )?),
        ["x'; drop table buyers; --"]
    );
    let n: i64 = conn.query_row("SELECT COUNT(*) FROM buyers", params![], |r| r.get(0))?;
    assert_eq!(n, 6);
    Ok(())
}

#[test]
fn every_search_is_a_range_of_the_index() -> Result<()> {
    let conn = db()?;
    for (key_type, key) in [
        ("by_name", "ana"),
        ("by_wildcard", "ana*"),
        ("by_wildcard", "*@x.com"),
    ] {
        let s = parse_search(key_type, Some(key), None)
            .map_err(|_| crate::WmsError::Internal("refused".into()))?;
        let BuyerMatch::Terms(scan) = s.by else {
            panic!("{key_type} is not a scan")
        };
        let stmt = &format!(
            "EXPLAIN QUERY PLAN SELECT b.id FROM buyers b WHERE b.business_id = ? AND {SCAN}"
        );
        let mut args = vec![depot_sql::Value::from(B.0)];
        args.extend(scan_args(B, &scan));
        let plan: Vec<String> =
            conn.query_map(stmt, &depot_sql::params_from_iter(&args), |r| r.get(3))?;
        assert!(
            plan.iter()
                .any(|p| p.contains("PRIMARY KEY (business_id=? AND kind=? AND term>? AND term<?)")),
            "{key_type} {key}: {plan:?}"
        );
        assert!(
            !plan.iter().any(|p| p.starts_with("SCAN")),
            "{key_type} {key}: {plan:?}"
        );
    }
    Ok(())
}

#[test]
fn buyers_are_built_from_orders_already_stored() -> Result<()> {
    let conn = db()?;
    conn.execute_batch(
        "INSERT INTO warehouses (id, business_id, code, name, address, is_visible_sales, created_at)
         VALUES (1, 1, 'W', 'W', '{}', 0, 'x');
         INSERT INTO orders (business_id, warehouse_id, channel, external_ref, status, buyer_name, buyer_email,
                             buyer_phone, shipping_address, payments, currency, total_cents, created_at, updated_at)
         VALUES (1, 1, 'web', 'A', 'pending', 'Ana', 'ana@x.com', NULL, '{}', '[]', 'EUR', 0, '2024-01-01T00:00:00Z', 'x'),
                (1, 1, 'market', 'B', 'pending', 'Ana L', 'ana@x.com', NULL, '{}', '[]', 'EUR', 0, '2024-02-01T00:00:00Z', 'x'),
                (1, 1, 'web', 'C', 'pending', NULL, NULL, NULL, '{}', '[]', 'EUR', 0, '2024-03-01T00:00:00Z', 'x');",
    )?;
    backfill(&conn)?;
    let found = find(&conn, "by_wildcard", "ana@x.com", Some("orders"))?;
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].order_count, found[0].channels.len()), (2, 2));
    assert_eq!(found[0].last_seen, at("2024-02-01T00:00:00Z"));
    let total: i64 = conn.query_row(
        "SELECT n FROM row_counts WHERE business_id = 1 AND tbl = 'buyers'",
        params![],
        |r| r.get(0),
    )?;
    assert_eq!(total, 1);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_name_is_found_by_itself_as_a_pattern(name in "[a-zA-Z0-9%_\\\\'\";*?@. -]{3,30}") {
        let (Ok(conn), Some(key)) = (db(), depot_protocol::crm::buyers::name_key(&name)) else {
            return Ok(());
        };
        prop_assume!(key.chars().count() >= 3 && !key.contains(['*', '?']));
        seen(&conn, B, (Some(&name), None, None), "web", "2024-05-01T00:00:00Z").map_err(|e| TestCaseError::fail(e.to_string()))?;
        seen(&conn, B, (Some(&format!("{name}x")), None, None), "web", "2024-05-01T00:00:00Z").map_err(|e| TestCaseError::fail(e.to_string()))?;
        let found = find(&conn, "by_wildcard", &name, None).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(found.len(), 1);
        let named = find(&conn, "by_name", &name, Some("channel:web")).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(named.len(), 2);
    }
}

/// A buyer's search terms as (kind, term), in order.
type Terms = Vec<(String, String)>;

/// Every buyer's stored terms, and the terms its stored keys make.
fn terms_as_kept(conn: &Db) -> Result<Vec<(Terms, Terms)>> {
    let buyers = conn.query_map(
        "SELECT id, name_key, email_key, phone_key FROM buyers ORDER BY id",
        params![],
        |r| {
            Ok((
                r.get::<i64>(0)?,
                r.get::<Option<String>>(1)?,
                r.get::<Option<String>>(2)?,
                r.get::<Option<String>>(3)?,
            ))
        },
    )?;
    let mut out = Vec::new();
    for (id, n, e, p) in buyers {
        let stored = conn.query_map(
            "SELECT kind, term FROM buyer_terms WHERE buyer_id = ?1 ORDER BY kind, term",
            params![id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let made = depot_protocol::crm::buyers::terms(n.as_deref(), e.as_deref(), p.as_deref())
            .into_iter()
            .map(|(k, t)| (k.as_str().to_owned(), t))
            .collect();
        out.push((stored, made));
    }
    Ok(out)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A buyer seen again keeps its terms unwritten when its keys stay
    /// as they were: whatever the sightings, each buyer's terms are those
    /// of its keys as they end up.
    #[test]
    fn terms_follow_the_keys_however_a_buyer_is_seen(
        sightings in prop::collection::vec(
            (prop::option::of(0..3usize), prop::option::of(0..3usize), prop::option::of(0..3usize)),
            1..12,
        )
    ) {
        const NAMES: [&str; 3] = ["Ana López", "Βασίλης Παπαδόπουλος", "李 小龍"];
        const EMAILS: [&str; 3] = ["ana@x.com", "b@y.gr", "li@z.cn"];
        const PHONES: [&str; 3] = ["+34600112233", "+302101234567", "+8613800138000"];
        let fail = |e: crate::WmsError| TestCaseError::fail(e.to_string());
        let conn = db().map_err(fail)?;
        for (n, e, p) in sightings {
            let who = (n.map(|i| NAMES[i]), e.map(|i| EMAILS[i]), p.map(|i| PHONES[i]));
            seen(&conn, B, who, "web", "2024-05-01T00:00:00Z").map_err(fail)?;
            for (stored, made) in terms_as_kept(&conn).map_err(fail)? {
                prop_assert_eq!(stored, made);
            }
        }
    }
}

#[test]
fn filters_by_channel_are_exact() -> Result<()> {
    let conn = db()?;
    seen(
        &conn,
        B,
        (Some("Ana"), Some("ana@x.com"), None),
        "web%",
        "2024-05-01T00:00:00Z",
    )?;
    let s = parse_search("by_name", Some("ana"), Some("channel:web_"))
        .map_err(|_| crate::WmsError::Internal("refused".into()))?;
    assert_eq!(s.filter, Some(BuyerFilter::Channel("web_".into())));
    assert!(search(&conn, B, &s, Page::default())?.rows.is_empty());
    assert_eq!(
        find(&conn, "by_name", "ana", Some("channel:web%"))?.len(),
        1
    );
    Ok(())
}

#[test]
fn names_are_found_however_they_are_accented() -> Result<()> {
    let conn = db()?;
    for (name, email) in [
        ("Ana Muñoz", "ana@x.com"),
        ("José Pérez", "jose@x.com"),
        ("Jörg Straße", "jorg@x.com"),
        ("Jose Perez", "other-jose@x.com"),
    ] {
        seen(
            &conn,
            B,
            (Some(name), Some(email), None),
            "web",
            "2024-05-01T00:00:00Z",
        )?;
    }
    assert_eq!(
        names(&find(&conn, "by_name", "munoz", None)?),
        ["Ana Muñoz"]
    );
    assert_eq!(names(&find(&conn, "by_name", "MUÑ", None)?), ["Ana Muñoz"]);
    assert_eq!(
        names(&find(&conn, "by_name", "pérez", None)?),
        ["Jose Perez", "José Pérez"]
    );
    assert_eq!(
        names(&find(&conn, "by_name", "strasse", None)?),
        ["Jörg Straße"]
    );
    assert_eq!(
        names(&find(&conn, "by_wildcard", "*perez", None)?),
        ["Jose Perez", "José Pérez"]
    );
    assert_eq!(
        names(&find(&conn, "by_wildcard", "jörg@*", None)?),
        ["Jörg Straße"]
    );
    Ok(())
}

/// A database whose terms were written before search folded accents gets
/// them written again by its migration.
#[test]
fn the_migration_folds_the_terms_already_written() -> Result<()> {
    let before_folding = 26;
    let conn = crate::store::memory(before_folding)?;
    conn.execute_batch(
        "INSERT INTO businesses (id, name, currency, timezone, created_at)
         VALUES (1, 'a', 'EUR', 'UTC', 'x');
         INSERT INTO buyers (id, business_id, name, name_key, email, email_key,
                             order_count, thread_count, first_seen, last_seen)
         VALUES (7, 1, 'Ana Muñoz', 'ana muñoz', 'ana@x.com', 'ana@x.com', 1, 0,
                 '2024-05-01T00:00:00Z', '2024-05-01T00:00:00Z');
         INSERT INTO buyer_terms (business_id, kind, term, buyer_id)
         VALUES (1, 'n', 'ana muñoz', 7), (1, 'n', 'muñoz', 7);",
    )?;
    assert!(find(&conn, "by_name", "munoz", None)?.is_empty());
    crate::store::migrate(&conn)?;
    assert_eq!(
        names(&find(&conn, "by_name", "munoz", None)?),
        ["Ana Muñoz"]
    );
    assert_eq!(
        names(&find(&conn, "by_name", "muñoz", None)?),
        ["Ana Muñoz"]
    );
    let terms: i64 = conn.query_row("SELECT count(*) FROM buyer_terms", params![], |r| r.get(0))?;
    assert_eq!(terms, 5, "ana munoz, munoz, ana@x.com, and both reversed");
    Ok(())
}
