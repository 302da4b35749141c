//! Lists read by cursor: every row once, in the order `start`/`length`
//! reads them, whatever is written between two pages; a cursor that is not
//! the list's own is refused; counts past the exact threshold are reused
//! for a bounded time, smaller ones are exact on every page.

use depot_protocol::order::Order;
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, Listed, OrderStatus, Page};
use depot_testkit::seed;
use depot_wms::orders::OrderFilter;
use depot_wms::{Wms, WmsError};
use serde_json::json;
use std::time::{Duration, Instant};

struct Shop {
    wms: Wms,
    business: BusinessId,
    caller: Caller,
    _dir: tempfile::TempDir,
    _database: Option<depot_testkit::pg::PgDatabase>,
}

async fn shop() -> Shop {
    let dir = tempfile::tempdir().expect("tempdir");
    let (wms, database) = depot_testkit::pg::cloud_engine(dir.path());
    let seeded = seed::business("Σελίδες").item("ΒΙΒΛΙΟ-1").seed(&wms).await;
    Shop {
        wms,
        business: seeded.business,
        caller: seeded.caller,
        _dir: dir,
        _database: database,
    }
}

/// An order on `channel`, ordered at `at`: orders of one instant tie on
/// the list's first key, as a marketplace's batch import does.
async fn order(s: &Shop, channel: &str, r: &str, at: &str) -> Order {
    let req = serde_json::from_value(json!({"channel": channel, "external_ref": r,
        "ordered_at": at, "lines": [{"sku": "ΒΙΒΛΙΟ-1", "quantity": 1}],
        "shipping_address": {"name": "Ζωή Καλλέργη", "line1": "Πανεπιστημίου 30",
            "postal_code": "106 79", "city": "Αθήνα", "country": "GR"}}))
    .expect("order");
    s.wms.create_order(s.caller, req).await.expect("order").0
}

/// A page of the list, read both ways the engine reads it, which must
/// agree: as the API writes it (a page of ids and versions, each order
/// kept as written; on PostgreSQL by calls of the caller's own task) and
/// in full (on the read pool). The written one goes first, so that it is
/// the one to count a large result and the other reuses its count.
async fn list(s: &Shop, f: &OrderFilter, page: Page) -> Result<Listed<Order>, WmsError> {
    let written = s
        .wms
        .list_orders_json(s.business, f.clone(), page.clone())
        .await;
    let typed = s.wms.list_orders(s.business, f.clone(), page).await;
    match (&written, &typed) {
        (Ok(written), Ok(typed)) => {
            let rows: Vec<serde_json::Value> = written
                .rows
                .iter()
                .map(|j| serde_json::from_str(j).expect("json"))
                .collect();
            let orders: Vec<serde_json::Value> = typed
                .rows
                .iter()
                .map(|o| serde_json::to_value(o).expect("order"))
                .collect();
            assert_eq!(rows, orders, "{f:?}");
            assert_eq!(
                (written.total, written.filtered, &written.cursor),
                (typed.total, typed.filtered, &typed.cursor),
                "{f:?}"
            );
        }
        (Err(written), Err(typed)) => assert_eq!(written.to_string(), typed.to_string()),
        (written, typed) => panic!("written {written:?}, read in full {typed:?}"),
    }
    typed
}

fn ids(rows: &[Order]) -> Vec<i64> {
    rows.iter().map(|o| o.id.0).collect()
}

/// Every page by cursor, `length` a page.
async fn walk(s: &Shop, f: &OrderFilter, length: i64) -> Vec<i64> {
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = Page::parse_with_cursor(None, Some(length), cursor.take()).expect("page");
        let got = list(s, f, page).await.expect("page");
        assert!(got.rows.len() as i64 <= length);
        seen.extend(ids(&got.rows));
        match got.cursor {
            Some(next) => cursor = Some(next),
            None => return seen,
        }
    }
}

async fn all(s: &Shop, f: &OrderFilter) -> Vec<i64> {
    let page = Page::parse(None, Some(1000)).expect("page");
    ids(&list(s, f, page).await.expect("all").rows)
}

fn refused_field(r: Result<Listed<Order>, WmsError>) -> String {
    match r {
        Err(WmsError::Invalid { errors, .. }) => errors[0].name.clone(),
        other => panic!("not refused as invalid: {other:?}"),
    }
}

#[tokio::test]
async fn a_cursor_reads_every_row_once_in_the_lists_order() {
    let s = shop().await;
    // 23 orders over 6 instants: ties on the first key at every page edge.
    for i in 0..23 {
        let at = format!("2026-10-{:02}T08:00:00Z", 1 + i % 6);
        let channel = ["web", "pos"][i % 2];
        let o = order(&s, channel, &format!("Α-{i}"), &at).await;
        if i % 3 == 0 {
            s.wms
                .set_order_status(s.caller, o.id, OrderStatus::Cancelled, None)
                .await
                .expect("cancelled");
        }
    }
    let everything = OrderFilter::default();
    let cancelled = OrderFilter {
        status: Some(OrderStatus::Cancelled),
        ..OrderFilter::default()
    };
    for f in [&everything, &cancelled] {
        let expected = all(&s, f).await;
        assert!(expected.len() >= 8, "{expected:?}");
        for length in [1, 4, 7, 50] {
            assert_eq!(walk(&s, f, length).await, expected, "length {length}");
        }
    }
    // The last page's answer has no cursor; a full one has, even when
    // nothing follows (the next page is then empty).
    let page = Page::parse(None, Some(23)).expect("page");
    let whole = list(&s, &everything, page).await.expect("whole");
    let after = Page::parse_with_cursor(None, Some(5), whole.cursor).expect("page");
    let rest = list(&s, &everything, after).await.expect("rest");
    assert_eq!((rest.rows.len(), rest.cursor), (0, None));
    assert_eq!((rest.total, rest.filtered), (23, 23));

    // Written between two pages: a newer order, and the page's own rows
    // changing status. The walk by cursor goes on from where it was, no
    // row twice and none skipped; `start` would have shifted by one.
    let first = list(&s, &everything, Page::parse(None, Some(10)).expect("page"))
        .await
        .expect("first");
    order(&s, "web", "Α-new", "2026-10-30T08:00:00Z").await;
    let next = Page::parse_with_cursor(None, Some(100), first.cursor).expect("page");
    let second = list(&s, &everything, next).await.expect("second");
    let mut walked = ids(&first.rows);
    walked.extend(ids(&second.rows));
    assert_eq!(walked, expected_without_new(&s, &everything).await);
}

async fn expected_without_new(s: &Shop, f: &OrderFilter) -> Vec<i64> {
    let mut ids = all(s, f).await;
    ids.remove(0);
    ids
}

#[tokio::test]
async fn a_cursor_not_of_this_list_is_refused() {
    let s = shop().await;
    for i in 0..3 {
        order(&s, "web", &format!("Β-{i}"), "2026-10-01T08:00:00Z").await;
    }
    let f = OrderFilter::default();
    let raw = |v: &str| {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v)
    };
    let b64 = |v: serde_json::Value| raw(&v.to_string());
    let made_up = [
        "not a cursor".to_owned(),
        "////".to_owned(),
        b64(json!([1, 2])),
        // Another list's.
        b64(json!({"l": "items", "k": ["2026-10-01T08:00:00Z", 1]})),
        // Too few keys, too many, of the wrong types.
        b64(json!({"l": "orders", "k": [1]})),
        b64(json!({"l": "orders", "k": ["2026-10-01T08:00:00Z", 1, 2]})),
        b64(json!({"l": "orders", "k": [1, "2026-10-01T08:00:00Z"]})),
        b64(json!({"l": "orders", "k": ["2026-10-01T08:00:00Z", 1.5]})),
        b64(json!({"l": "orders", "k": ["2026-10-01T08:00:00Z", null]})),
        b64(json!({"l": "orders", "k": ["2026-10-01T08:00:00Z", "1"]})),
        raw(r#"{"l": "orders", "k": ["2026-10-01T08:00:00Z", 99999999999999999999]}"#),
    ];
    for c in made_up {
        let page = Page::parse_with_cursor(None, Some(2), Some(c.clone())).expect("page");
        assert_eq!(refused_field(list(&s, &f, page).await), "cursor", "{c}");
    }
    // An items list's real cursor is not the orders list's.
    for i in 0..3 {
        seed::item(&s.wms, s.business, &format!("ΒΙΒΛΙΟ-{}", i + 2)).await;
    }
    let page = Page::parse(None, Some(1)).expect("page");
    let items = s
        .wms
        .list_items(s.business, Default::default(), page)
        .await
        .expect("items");
    // The business's own count of its items, whatever the page.
    assert_eq!((items.total, items.filtered, items.rows.len()), (4, 4, 1));
    let page = Page::parse_with_cursor(None, Some(2), items.cursor).expect("page");
    assert_eq!(refused_field(list(&s, &f, page).await), "cursor");
}

#[tokio::test]
async fn another_business_cursor_reads_only_this_business_rows() {
    let s = shop().await;
    for i in 0..4 {
        order(&s, "web", &format!("Γ-{i}"), "2026-10-01T08:00:00Z").await;
    }
    let other = seed::business("Άλλη").item("ΒΙΒΛΙΟ-1").seed(&s.wms).await;
    let theirs = Shop {
        wms: s.wms.clone(),
        business: other.business,
        caller: other.caller,
        _dir: tempfile::tempdir().expect("tempdir"),
        _database: None,
    };
    for i in 0..4 {
        order(&theirs, "web", &format!("Δ-{i}"), "2026-10-02T08:00:00Z").await;
    }
    let f = OrderFilter::default();
    let first = list(&theirs, &f, Page::parse(None, Some(1)).expect("page"))
        .await
        .expect("theirs");
    // Their cursor, given to this business's list: a position, nothing
    // more; the rows are this business's own.
    let page = Page::parse_with_cursor(None, Some(100), first.cursor).expect("page");
    let got = list(&s, &f, page).await.expect("ours");
    assert!(!got.rows.is_empty());
    assert!(got.rows.iter().all(|o| o.business_id == s.business));
}

#[tokio::test]
async fn counts_past_the_threshold_are_reused_for_a_bounded_time() {
    let s = shop().await;
    let n = depot_wms::sql::EXACT_COUNT as usize + 2;
    let wms = &s.wms;
    let jobs = (0..n).map(|i| {
        let req =
            serde_json::from_value(json!({"channel": "web", "external_ref": format!("Ε-{i}"),
            "lines": [{"sku": "ΒΙΒΛΙΟ-1", "quantity": 1}]}))
            .expect("order");
        async move { wms.create_order(s.caller, req).await.expect("order") }
    });
    futures_util::future::join_all(jobs).await;
    for i in 0..3 {
        order(&s, "pos", &format!("Ζ-{i}"), "2026-10-01T08:00:00Z").await;
    }
    let web = OrderFilter {
        channel: Some("web".into()),
        ..OrderFilter::default()
    };
    let pos = OrderFilter {
        channel: Some("pos".into()),
        ..OrderFilter::default()
    };
    let page = || Page::parse(None, Some(5)).expect("page");
    let counted = Instant::now();
    let first = list(&s, &web, page()).await.expect("web");
    assert_eq!(first.filtered, n as u64);
    order(&s, "web", "Ε-more", "2026-10-01T08:00:00Z").await;
    order(&s, "pos", "Ζ-more", "2026-10-01T08:00:00Z").await;
    // Under the threshold: exact at once.
    assert_eq!(list(&s, &pos, page()).await.expect("pos").filtered, 4);
    // Past it: the count of a moment ago, while within the bound (the
    // page itself is fresh: the new order is on it).
    let again = list(&s, &web, page()).await.expect("web");
    assert_eq!(again.rows.len(), 5);
    if counted.elapsed() < depot_wms::sql::COUNTS_FRESH_FOR / 2 {
        assert_eq!(again.filtered, n as u64);
    }
    // And counted again after it.
    tokio::time::sleep(depot_wms::sql::COUNTS_FRESH_FOR.saturating_sub(counted.elapsed())).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        list(&s, &web, page()).await.expect("web").filtered,
        n as u64 + 1
    );
    // The business's total is exact on every page.
    assert_eq!(again.total, n as u64 + 5);
}

/// On SQLite a read is one transaction: a list's total, count and page
/// come from the same commit, even when another commits between its
/// statements. (On PostgreSQL each statement is its own: `reader.rs`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_sees_one_commit_from_its_first_statement_to_its_last() {
    let s = shop().await;
    if s._database.is_some() {
        return;
    }
    order(&s, "web", "Α-1", "2026-10-01T08:00:00Z").await;
    let (wms, caller) = (s.wms.clone(), s.caller);
    let runtime = tokio::runtime::Handle::current();
    let count = "SELECT COUNT(*) FROM orders";
    let (before, after) = s
        .wms
        .read(move |conn| {
            let before: i64 = conn.query_value(count, &[])?;
            // A commit between the read's two statements.
            let req = serde_json::from_value(json!({"channel": "web", "external_ref": "Α-2",
                "lines": [{"sku": "ΒΙΒΛΙΟ-1", "quantity": 1}]}))
            .expect("order");
            runtime.block_on(wms.create_order(caller, req))?;
            let after: i64 = conn.query_value(count, &[])?;
            Ok((before, after))
        })
        .await
        .expect("read");
    assert_eq!((before, after), (1, 1));
    let next: i64 = s
        .wms
        .read(move |conn| Ok(conn.query_value(count, &[])?))
        .await
        .expect("read");
    assert_eq!(next, 2, "the next read sees the commit");
}

/// The order list as the API writes it (each order kept as written at its
/// version) says what the orders read in full say, order by order: the
/// whole list (read through the date index) and each status's (through
/// the status index).
pub(crate) async fn written_list_is_current(wms: &Wms, business: BusinessId) {
    let page = || Page::parse(None, Some(1000)).expect("page");
    let filters =
        std::iter::once(OrderFilter::default()).chain(OrderStatus::ALL.map(|s| OrderFilter {
            status: Some(s),
            ..OrderFilter::default()
        }));
    for filter in filters {
        let typed = wms
            .list_orders(business, filter.clone(), page())
            .await
            .expect("list");
        // Twice: the second from what the first kept.
        for _ in 0..2 {
            let written = wms
                .list_orders_json(business, filter.clone(), page())
                .await
                .expect("written list");
            assert_eq!(written.rows.len(), typed.rows.len(), "{filter:?}");
            for (json, order) in written.rows.iter().zip(&typed.rows) {
                let json: serde_json::Value = serde_json::from_str(json).expect("json");
                assert_eq!(json, serde_json::to_value(order).expect("order"));
            }
            let envelope: serde_json::Value =
                serde_json::from_str(&written.envelope_json()).expect("envelope");
            assert_eq!(envelope["recordsTotal"], typed.total.to_string());
            assert_eq!(envelope["recordsFiltered"], typed.filtered.to_string());
        }
    }
}

#[tokio::test]
async fn the_list_written_once_follows_every_change() {
    let s = shop().await;
    let mut orders = Vec::new();
    for i in 0..6 {
        orders.push(order(&s, "web", &format!("Η-{i}"), "2026-10-03T08:00:00Z").await);
    }
    // Kept as written now; then every kind of change.
    written_list_is_current(&s.wms, s.business).await;
    s.wms
        .set_order_status(s.caller, orders[0].id, OrderStatus::Cancelled, None)
        .await
        .expect("cancelled");
    let change = serde_json::from_value(json!({"shipping_address": {"name": "Ζωή Καλλέργη",
        "line1": "Ακαδημίας 1", "postal_code": "106 71", "city": "Αθήνα", "country": "GR"},
        "note": "νέα διεύθυνση"}))
    .expect("change");
    s.wms
        .change_order_address(s.caller, orders[1].id, change)
        .await
        .expect("address");
    written_list_is_current(&s.wms, s.business).await;
    let listed = s
        .wms
        .list_orders_json(s.business, OrderFilter::default(), Page::default())
        .await
        .expect("list");
    let by_ref = |r: &str| {
        listed
            .rows
            .iter()
            .map(|j| serde_json::from_str::<serde_json::Value>(j).expect("json"))
            .find(|o| o["external_ref"] == r)
            .expect("listed")
    };
    assert_eq!(by_ref("Η-0")["status"], "cancelled");
    assert_eq!(by_ref("Η-1")["shipping_address"]["line1"], "Ακαδημίας 1");
}
