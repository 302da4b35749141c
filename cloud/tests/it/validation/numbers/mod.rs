//! Numbers that cannot overflow (issue 25): every numeric field of every
//! write route, sent the extremes (`i64::MIN`, -1, 0, the documented
//! maximum plus one, `i64::MAX`, `u64::MAX`, `1e300`, `1.5`, strings), is
//! answered with a 4xx and the spec's error body (the automation routes:
//! 201 `{fieldErrors}`, as the spec has them) and writes nothing: the event
//! log and the lists the route would change stay as they were. Ids in
//! paths and query-string numbers of the list routes get 4xx, never 500.
//! Stock driven to its ceiling refuses the next unit with 422 naming the
//! field, and keeps moving down afterwards.

mod cases;
mod fields;
mod paths;
mod stock;

use depot_protocol::Money;
use depot_protocol::stock::MAX_QUANTITY;
pub(super) use depot_testkit::cloud::field_names;
use depot_testkit::cloud::{TestCloud, assert_error};
use serde_json::{Value, json};

/// What a numeric field takes: the values the test must not send (they
/// would be written), by the range the field documents.
#[derive(Clone, Copy)]
pub(super) enum Takes {
    /// An integer within the range.
    Int(i64, i64),
    /// An integer within the range, but not this one.
    IntBut(i64, i64, i64),
    /// An amount of money within the range, in cents.
    Money(i64, i64),
    /// An id: what might name a record (1 to 1000000) is not sent; the
    /// rest names nothing, or is no id.
    Id,
    /// Text: no number is.
    Text,
    /// An amount written as text, within the range, in cents.
    AmountText(i64, i64),
    /// A number with at most this many decimals, within the range, not 0.
    Decimal(u32, f64, f64),
}

impl Takes {
    fn accepts(self, v: &Value) -> bool {
        // JSON has one kind of number: `-0.0` and `3.0` are whole numbers
        // (the servers read them so, as JSON Schema's `integer` does).
        let whole = v.as_i64().or_else(|| {
            v.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0)
                .map(|f| f as i64)
        });
        let int = |min: i64, max: i64| whole.is_some_and(|n| (min..=max).contains(&n));
        match self {
            Takes::Int(min, max) => int(min, max),
            Takes::IntBut(min, max, not) => int(min, max) && whole != Some(not),
            Takes::Money(min, max) => serde_json::from_value::<Money>(v.clone())
                .is_ok_and(|m| (min..=max).contains(&m.cents())),
            Takes::Id => int(1, 1_000_000),
            Takes::Text => v.is_string(),
            Takes::AmountText(min, max) => v
                .as_str()
                .is_some_and(|s| Money::parse(s).is_ok_and(|m| (min..=max).contains(&m.cents()))),
            Takes::Decimal(decimals, min, max) => {
                let Value::Number(n) = v else { return false };
                let text = n.to_string();
                let unsigned = text.trim_start_matches('-');
                let (whole, frac) = unsigned.split_once('.').unwrap_or((unsigned, ""));
                let f = n.as_f64().unwrap_or(0.0);
                whole.bytes().all(|b| b.is_ascii_digit())
                    && frac.bytes().all(|b| b.is_ascii_digit())
                    && frac.len() <= decimals as usize
                    && f != 0.0
                    && (min..=max).contains(&f)
            }
        }
    }
}

/// The values every field is sent, less those it takes.
pub(super) fn extremes(takes: Takes) -> Vec<Value> {
    let raw = |s: &str| serde_json::from_str::<Value>(s).unwrap_or(Value::Null);
    let maxima = [
        MAX_QUANTITY,
        1_000_000,
        10_000,
        200,
        20,
        100,
        2000,
        999_999_999_999_999,
    ];
    let mut values = vec![
        json!(i64::MIN),
        json!(i64::MIN + 1),
        json!(-1),
        json!(0),
        json!(1),
        json!(i64::MAX),
        json!(u64::MAX),
        json!(u64::from(u32::MAX) + 1),
        json!(1e300),
        json!(-1e300),
        json!(1.5),
        json!(0.001),
        raw("-0"),
        json!("5"),
        json!("-9223372036854775808"),
        json!(true),
    ];
    for m in maxima {
        values.push(json!(m + 1));
        values.push(json!(-m - 1));
    }
    values.retain(|v| !takes.accepts(v));
    values
}

/// Sets the value at `path` (`lines[0].quantity`) in `body`.
pub(super) fn set(body: &mut Value, path: &str, value: Value) {
    let mut at = body;
    for part in path.split('.') {
        let (key, index) = match part.split_once('[') {
            Some((k, i)) => (k, i.trim_end_matches(']').parse::<usize>().ok()),
            None => (part, None),
        };
        at = &mut at[key];
        if let Some(i) = index {
            at = &mut at[i];
        }
    }
    *at = value;
}

/// Asserts a refusal: a 4xx with the error body, or (automation) 201 with
/// `{fieldErrors}`; a 422 or 201 names `field`, when there is one.
pub(super) fn assert_refused(r: &depot_testkit::cloud::Res, what: &str, field: Option<&str>) {
    if r.status == 201 && r.body["fieldErrors"].is_array() {
        let names = field_names(&r.body);
        if let Some(f) = field {
            assert!(names.iter().any(|n| n == f), "{what}: {names:?} {}", r.body);
        }
        return;
    }
    assert!(
        (400..500).contains(&r.status),
        "{what}: answered {} {}",
        r.status,
        r.body
    );
    assert_error(r, r.status);
    if let (422, Some(f)) = (r.status, field) {
        let names = field_names(&r.body);
        assert!(
            names.iter().any(|n| n == f),
            "{what}: 422 naming {names:?}, not {f}"
        );
    }
}

/// What a write could change: the business's lists, as the API shows them.
pub(super) async fn lists(app: &TestCloud, f: &Fixture) -> Vec<Value> {
    let b = app.a.business;
    let mut out = Vec::new();
    for path in [
        format!("/v1/items/{b}/list?length=1000"),
        format!("/v1/inventory/{b}/items/list?length=1000"),
        format!("/v1/orders/{b}/list?length=1000"),
        format!("/v1/inbounds/{b}/orders/list?length=1000"),
        format!("/v1/picking/{b}/waves/list?length=1000"),
        format!("/v1/shipments/{b}/list?length=1000"),
        format!("/v1/outbounds/{b}/dispatch-runs?length=1000"),
        format!("/v1/printers/{b}/list"),
        format!("/v1/printers/jobs/{b}/{}", f.printer),
        format!("/v1/automation/{b}/items/pricing/rules/list"),
        format!("/v1/webhooks/{b}/list"),
        format!("/v1/contact/{b}/forms"),
        format!("/v1/crm/{b}/threads/list"),
        format!("/v1/documents/{b}/order/{}/list", f.order),
    ] {
        let r = app.get(&path).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        out.push(r.body);
    }
    out
}

/// The records the routes act on, so that a request is refused for its
/// number and not for a missing record.
pub(super) struct Fixture {
    w0: i64,
    w1: i64,
    item: i64,
    /// Confirmed, in `wave`.
    order: i64,
    wave: i64,
    /// Confirmed, in no wave: packable.
    packable: i64,
    shipment: i64,
    inbound: i64,
    printer: i64,
    rule: i64,
    webhook: i64,
    thread: i64,
}

pub(super) async fn ok(app: &TestCloud, method: &str, path: &str, body: Value) -> Value {
    let r = app.call(method, path, Some(&app.a.key), Some(body)).await;
    assert_eq!(r.status, 200, "{method} {path}: {}", r.body);
    r.body
}

pub(super) async fn fixture(app: &TestCloud) -> Fixture {
    let b = app.a.business;
    let (w0, w1) = (app.a.warehouses[0].0, app.a.warehouses[1].0);
    let item = app.item("N-1").await;
    app.receive("N-1", 100).await;
    let order = app.order("N-O1", &[("N-1", 1)]).await;
    assert_eq!(app.set_status(order, "confirmed").await.status, 200);
    let wave = ok(
        app,
        "POST",
        &format!("/v1/picking/{b}/waves/create"),
        json!({"warehouse_id": w0, "max_orders": 1}),
    )
    .await["data"]["id"]
        .as_i64()
        .expect("wave");
    let packable = app.order("N-O2", &[("N-1", 1)]).await;
    assert_eq!(app.set_status(packable, "confirmed").await.status, 200);
    let shipped = app.order("N-O3", &[("N-1", 1)]).await;
    assert_eq!(app.set_status(shipped, "confirmed").await.status, 200);
    let packed = ok(
        app,
        "POST",
        &format!("/v1/packing/{b}/pack-order"),
        json!({"order_id": shipped, "items": [{"code": "N-1"}], "packages": [{"weight_g": 500}]}),
    )
    .await;
    let shipment = packed["data"]["shipment"]["id"].as_i64().expect("shipment");
    let inbound = ok(
        app,
        "POST",
        &format!("/v1/inbounds/{b}/orders/create"),
        json!({"warehouse_id": w0, "reference": "N-PO", "supplier": "S", "lines": [{"sku": "N-1", "quantity": 10}]}),
    )
    .await["data"]["id"]
        .as_i64()
        .expect("inbound");
    let printer = ok(
        app,
        "POST",
        &format!("/v1/printers/{b}/create"),
        json!({"name": "Zebra", "kind": "zpl", "connection": "tcp://10.0.0.5:9100"}),
    )
    .await["data"]["id"]
        .as_i64()
        .expect("printer");
    let rule = ok(
        app,
        "POST",
        &format!("/v1/automation/{b}/items/pricing/rules/create"),
        json!({"origin_price_list_id": 1, "target_price_list_id": 2,
               "origin_action_id": "increase_percent", "origin_action_value": "10", "status": 0}),
    )
    .await["data"][0]["id"]
        .as_str()
        .and_then(|id| id.parse().ok())
        .expect("rule");
    let webhook = ok(
        app,
        "POST",
        &format!("/v1/webhooks/{b}/create"),
        json!({"url": "https://hooks.example.com/depot", "event_types": ["*"], "active": false}),
    )
    .await["data"]["id"]
        .as_i64()
        .expect("webhook");
    ok(
        app,
        "POST",
        &format!("/v1/contact/{b}/departments"),
        json!({"code": "support", "name": "Support"}),
    )
    .await;
    let form = ok(
        app,
        "POST",
        &format!("/v1/contact/{b}/forms"),
        json!({"name": "Help", "department": "support"}),
    )
    .await["data"]["id"]
        .as_i64()
        .expect("form");
    let thread = ok(
        app,
        "POST",
        &format!("/v1/contact/{b}/{form}"),
        json!({"name": "Ana", "email": "ana@example.com", "subject": "Hi", "message": "Hello"}),
    )
    .await["thread_id"]
        .as_i64()
        .expect("thread");
    Fixture {
        w0,
        w1,
        item,
        order,
        wave,
        packable,
        shipment,
        inbound,
        printer,
        rule,
        webhook,
        thread,
    }
}
