//! Orders sold beyond their channel's figure: flagged as they come, and
//! with a channel that may oversell, waiting as backorders that stock
//! confirms in order of arrival, whole or split. Pending orders count as
//! sold in every channel's figure, so channels sharing the last units
//! cannot both sell them unflagged, however the orders interleave.

use super::locations_sync::{down, setup};
use depot_protocol::channel::ChannelFields;
use depot_protocol::event::EventKind;
use depot_protocol::order::Order;
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, OrderStatus};
use depot_testkit::seed;
use depot_wms::Wms;
use serde_json::{Value, json};

async fn channel(wms: &Wms, b: BusinessId, w: i64, body: Value) {
    let mut body = body;
    body["name"] = json!("a channel");
    body["kind"] = json!("storefront");
    body["warehouse_ids"] = json!([w]);
    let fields: ChannelFields = serde_json::from_value(body).expect("fields");
    wms.create_channel(b, fields).await.expect("channel");
}

async fn adjust(wms: &Wms, caller: Caller, w: i64, sku: &str, n: i64) {
    let req = serde_json::from_value(json!({"warehouse_id": w, "sku": sku,
        "reason": if n > 0 { "received" } else { "damaged" }, "quantity": n}))
    .expect("adjust");
    wms.adjust(caller, req).await.expect("adjusted");
}

async fn order(wms: &Wms, caller: Caller, channel: &str, r: &str, lines: Value) -> Order {
    let req = serde_json::from_value(
        json!({"channel": channel, "external_ref": r, "lines": lines,
        "shipping_address": {"name": "Ελένη Παππά", "line1": "Ερμού 12", "postal_code": "105 63",
                             "city": "Αθήνα", "country": "GR"}}),
    )
    .expect("order");
    wms.create_order(caller, req).await.expect("order").0
}

async fn figure(wms: &Wms, b: BusinessId, code: &str, sku: &str) -> i64 {
    let page = depot_protocol::Page::parse(None, None).expect("page");
    let depot_protocol::Listed { rows, .. } = wms
        .channel_availability(b, code.into(), Some(sku.into()), page)
        .await
        .expect("availability");
    rows[0].available
}

async fn status(wms: &Wms, b: BusinessId, o: &Order) -> Order {
    wms.order(b, o.id).await.expect("order")
}

async fn kinds(wms: &Wms, kind: EventKind) -> Vec<Value> {
    let (_, events) = depot_testkit::events::own_since(wms, 0).await;
    events
        .into_iter()
        .filter(|e| e.kind == kind.as_str())
        .map(|e| e.payload)
        .collect()
}

#[tokio::test]
async fn channels_sharing_the_last_units_count_pending_orders_and_flag_what_goes_beyond() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (wms, _database) = depot_testkit::pg::cloud_engine(dir.path());
    let t = seed::business("Ω")
        .item("ΜΕΛΙ")
        .item("ΚΕΡΙ")
        .seed(&wms)
        .await;
    let (b, w) = (t.business, t.warehouse.0);
    channel(&wms, b, w, json!({"code": "web", "buffer_units": 1})).await;
    channel(&wms, b, w, json!({"code": "αγορά", "buffer_units": 1})).await;
    adjust(&wms, t.caller, w, "ΜΕΛΙ", 3).await;
    assert_eq!(figure(&wms, b, "web", "ΜΕΛΙ").await, 2);
    assert_eq!(figure(&wms, b, "αγορά", "ΜΕΛΙ").await, 2);

    // A sale on one, still pending, lowers both; confirming it moves its
    // unit to a reservation and the figures stay.
    let first = order(
        &wms,
        t.caller,
        "web",
        "1",
        json!([{"sku": "ΜΕΛΙ", "quantity": 1}]),
    )
    .await;
    assert!(!first.oversold && first.backorder.is_none());
    assert_eq!(figure(&wms, b, "αγορά", "ΜΕΛΙ").await, 1);
    wms.set_order_status(t.caller, first.id, OrderStatus::Confirmed, None)
        .await
        .expect("confirmed");
    assert_eq!(figure(&wms, b, "web", "ΜΕΛΙ").await, 1);
    assert_eq!(figure(&wms, b, "αγορά", "ΜΕΛΙ").await, 1);

    // Two units on the other, which was told 1: taken, flagged, and left
    // pending (the channel may not oversell): nothing waits.
    let beyond = order(
        &wms,
        t.caller,
        "αγορά",
        "2",
        json!([{"sku": "ΜΕΛΙ", "quantity": 2}]),
    )
    .await;
    assert!(beyond.oversold, "{beyond:?}");
    assert_eq!(beyond.status, OrderStatus::Pending);
    assert!(beyond.backorder.is_none());
    let flags = kinds(&wms, EventKind::OrderOversold).await;
    assert_eq!(flags.len(), 1);
    assert_eq!(flags[0]["order_id"], json!(beyond.id));
    assert_eq!(flags[0]["backordered"], json!(false));
    assert_eq!(flags[0]["lines"][0]["available"], json!(1));
    assert_eq!(figure(&wms, b, "web", "ΜΕΛΙ").await, 0);

    // Many orders of one unit at once, on both channels, at 3 units of
    // ΚΕΡΙ held back by 1: of those taken unflagged, never more than the
    // channels were told between them (2), whatever the interleaving.
    adjust(&wms, t.caller, w, "ΚΕΡΙ", 3).await;
    let mut sales = Vec::new();
    for i in 0..16 {
        let wms = wms.clone();
        let code = if i % 2 == 0 { "web" } else { "αγορά" };
        sales.push(tokio::spawn(async move {
            order(
                &wms,
                t.caller,
                code,
                &format!("κ-{i}"),
                json!([{"sku": "ΚΕΡΙ", "quantity": 1}]),
            )
            .await
        }));
    }
    let mut unflagged = 0;
    for s in sales {
        unflagged += i32::from(!s.await.expect("sale").oversold);
    }
    assert_eq!(unflagged, 2, "only what the figures allowed went unflagged");
    assert_eq!(kinds(&wms, EventKind::OrderOversold).await.len(), 15);
    assert!(wms.check_ledger().await.expect("ledger").is_empty());

    // Cancelling pending orders gives their units back to the figures.
    for o in [&beyond] {
        wms.set_order_status(t.caller, o.id, OrderStatus::Cancelled, None)
            .await
            .expect("cancelled");
    }
    assert_eq!(figure(&wms, b, "web", "ΜΕΛΙ").await, 1);
    assert!(wms.check_ledger().await.expect("ledger").is_empty());
}

#[tokio::test]
async fn backorders_wait_and_stock_confirms_them_in_order_of_arrival() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (wms, _database) = depot_testkit::pg::cloud_engine(dir.path());
    let t = seed::business("Ω").item("ΜΕΛΙ").seed(&wms).await;
    let (b, w) = (t.business, t.warehouse.0);
    channel(&wms, b, w, json!({"code": "web", "oversell": true})).await;

    let x = order(
        &wms,
        t.caller,
        "web",
        "X",
        json!([{"sku": "ΜΕΛΙ", "quantity": 2}]),
    )
    .await;
    let y = order(
        &wms,
        t.caller,
        "web",
        "Y",
        json!([{"sku": "ΜΕΛΙ", "quantity": 1}]),
    )
    .await;
    for o in [&x, &y] {
        assert!(o.oversold);
        let waiting = o.backorder.as_ref().expect("a backorder");
        assert_eq!(waiting.lines[0].sku, "ΜΕΛΙ");
        assert_eq!(waiting.lines[0].available, 0);
    }
    let flags = kinds(&wms, EventKind::OrderOversold).await;
    assert_eq!(flags[0]["backordered"], json!(true));
    assert_eq!(wms.fill_backorders().await.expect("fill"), 0);

    // One unit: X, first, needs two; Y, behind it, does not take it.
    adjust(&wms, t.caller, w, "ΜΕΛΙ", 1).await;
    assert_eq!(wms.fill_backorders().await.expect("fill"), 0);
    assert_eq!(status(&wms, b, &y).await.status, OrderStatus::Pending);

    // A second: X goes, confirmed by the backorders; Y waits on.
    adjust(&wms, t.caller, w, "ΜΕΛΙ", 1).await;
    assert_eq!(wms.fill_backorders().await.expect("fill"), 1);
    let x = status(&wms, b, &x).await;
    assert_eq!(x.status, OrderStatus::Confirmed);
    assert!(x.backorder.is_none() && x.oversold);
    let confirmed = x.history.last().expect("history");
    assert_eq!(confirmed.actor, "backorders");
    assert!(status(&wms, b, &y).await.backorder.is_some());

    // An order taken within the figures meanwhile is no backorder, and
    // the units it sold are not the backorders' to take.
    adjust(&wms, t.caller, w, "ΜΕΛΙ", 1).await;
    assert_eq!(wms.fill_backorders().await.expect("fill"), 1);
    assert_eq!(status(&wms, b, &y).await.status, OrderStatus::Confirmed);
    adjust(&wms, t.caller, w, "ΜΕΛΙ", 1).await;
    let z = order(
        &wms,
        t.caller,
        "web",
        "Z",
        json!([{"sku": "ΜΕΛΙ", "quantity": 1}]),
    )
    .await;
    assert!(!z.oversold && z.backorder.is_none());
    let late = order(
        &wms,
        t.caller,
        "web",
        "L",
        json!([{"sku": "ΜΕΛΙ", "quantity": 1}]),
    )
    .await;
    assert!(late.backorder.is_some());
    assert_eq!(wms.fill_backorders().await.expect("fill"), 0);
    assert!(wms.check_ledger().await.expect("ledger").is_empty());
}

#[tokio::test]
async fn a_channel_that_splits_sends_what_is_in_stock_ahead_and_the_rest_waits() {
    let s = setup().await;
    let (b, w) = (s.business, s.warehouse.0);
    seed::item(&s.cloud, b, "ΚΕΡΙ").await;
    down(&s).await;
    channel(
        &s.cloud,
        b,
        w,
        json!({"code": "web", "oversell": true, "backorders": "split"}),
    )
    .await;
    let lines = json!([{"sku": "ΦΕΤΑ", "quantity": 3, "unit_price": "2.50"},
                       {"sku": "ΚΕΡΙ", "quantity": 1, "unit_price": "4.00"}]);
    let o = order(&s.cloud, s.caller, "web", "Σ-1", lines).await;
    assert!(o.backorder.is_some());
    down(&s).await;

    // Two of the three ΦΕΤΑ arrive: they go ahead as the order itself;
    // the third and the ΚΕΡΙ wait as a new order in its place.
    adjust(&s.cloud, s.caller, w, "ΦΕΤΑ", 2).await;
    // The lists as written before the split: what they keep must follow.
    super::paging::written_list_is_current(&s.cloud, b).await;
    super::paging::written_list_is_current(&s.edge, b).await;
    assert_eq!(s.cloud.fill_backorders().await.expect("fill"), 1);
    super::paging::written_list_is_current(&s.cloud, b).await;
    let ahead = status(&s.cloud, b, &o).await;
    assert_eq!(ahead.status, OrderStatus::Confirmed);
    let q = |o: &Order| {
        o.lines
            .iter()
            .map(|l| (l.sku.clone(), l.quantity))
            .collect::<Vec<_>>()
    };
    assert_eq!(q(&ahead), vec![("ΦΕΤΑ".to_owned(), 2)]);
    assert_eq!(ahead.total.to_string(), "5.00");
    let split = kinds(&s.cloud, EventKind::OrderSplit).await;
    assert_eq!(split.len(), 1);
    let rest_id: depot_protocol::OrderId =
        serde_json::from_value(split[0]["backorder_id"].clone()).expect("rest id");
    let rest = s.cloud.order(b, rest_id).await.expect("rest");
    assert_eq!(rest.external_ref, "Σ-1-B1");
    assert_eq!(rest.split_from, Some(o.id));
    assert_eq!(rest.status, OrderStatus::Pending);
    assert_eq!(
        q(&rest),
        vec![("ΦΕΤΑ".to_owned(), 1), ("ΚΕΡΙ".to_owned(), 1)]
    );
    assert_eq!(rest.total.to_string(), "6.50");
    let waiting = rest.backorder.as_ref().expect("the rest waits");
    assert_eq!(waiting.since, o.backorder.as_ref().expect("waited").since);

    // The edge takes the split: the same two orders, the same books.
    down(&s).await;
    let at_edge = s.edge.order(b, o.id).await.expect("order at the edge");
    assert_eq!(q(&at_edge), q(&ahead));
    assert_eq!(at_edge.status, OrderStatus::Confirmed);
    let rest_at_edge = s.edge.order(b, rest_id).await.expect("rest at the edge");
    assert_eq!(q(&rest_at_edge), q(&rest));
    assert!(rest_at_edge.backorder.is_some());
    assert!(s.edge.check_ledger().await.expect("edge ledger").is_empty());
    super::paging::written_list_is_current(&s.edge, b).await;

    // The rest goes when its stock comes, and the books agree.
    adjust(&s.cloud, s.caller, w, "ΦΕΤΑ", 1).await;
    adjust(&s.cloud, s.caller, w, "ΚΕΡΙ", 1).await;
    assert_eq!(s.cloud.fill_backorders().await.expect("fill"), 1);
    assert_eq!(
        status(&s.cloud, b, &rest).await.status,
        OrderStatus::Confirmed
    );
    assert!(s.cloud.check_ledger().await.expect("ledger").is_empty());
    down(&s).await;
    assert!(s.edge.check_ledger().await.expect("edge ledger").is_empty());
}
