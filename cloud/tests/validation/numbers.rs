//! Numbers that cannot overflow (issue 25): every numeric field of every
//! write route, sent the extremes (`i64::MIN`, -1, 0, the documented
//! maximum plus one, `i64::MAX`, `u64::MAX`, `1e300`, `1.5`, strings), is
//! answered with a 4xx and the spec's error body (the automation routes:
//! 201 `{fieldErrors}`, as the spec has them) and writes nothing: the event
//! log and the lists the route would change stay as they were. Ids in
//! paths and query-string numbers of the list routes get 4xx, never 500.
//! Stock driven to its ceiling refuses the next unit with 422 naming the
//! field, and keeps moving down afterwards.

use crate::common::{TestApp, assert_error, spawn_app};
use depot_protocol::Money;
use depot_protocol::stock::{MAX_ON_HAND, MAX_QUANTITY};
use serde_json::{Value, json};

/// What a numeric field takes: the values the test must not send (they
/// would be written), by the range the field documents.
#[derive(Clone, Copy)]
enum Takes {
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
        let int =
            |min: i64, max: i64| v.is_i64() && v.as_i64().is_some_and(|n| (min..=max).contains(&n));
        match self {
            Takes::Int(min, max) => int(min, max),
            Takes::IntBut(min, max, not) => int(min, max) && v.as_i64() != Some(not),
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
fn extremes(takes: Takes) -> Vec<Value> {
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
fn set(body: &mut Value, path: &str, value: Value) {
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

fn field_names(body: &Value) -> Vec<String> {
    body["errors"]
        .as_array()
        .or_else(|| body["fieldErrors"].as_array())
        .into_iter()
        .flatten()
        .filter_map(|e| e["name"].as_str().map(str::to_owned))
        .collect()
}

/// Asserts a refusal: a 4xx with the error body, or (automation) 201 with
/// `{fieldErrors}`; a 422 or 201 names `field`, when there is one.
fn assert_refused(r: &crate::common::Res, what: &str, field: Option<&str>) {
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
async fn lists(app: &TestApp, f: &Fixture) -> Vec<Value> {
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
struct Fixture {
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

async fn ok(app: &TestApp, method: &str, path: &str, body: Value) -> Value {
    let r = app.call(method, path, Some(&app.a.key), Some(body)).await;
    assert_eq!(r.status, 200, "{method} {path}: {}", r.body);
    r.body
}

async fn fixture(app: &TestApp) -> Fixture {
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

/// One numeric field of one write route.
struct Case {
    method: &'static str,
    path: String,
    body: Value,
    field: &'static str,
    takes: Takes,
    /// What a refusal may name instead of `field`: the field a value is
    /// checked against (a quantity that must add up, an item packed).
    or_names: &'static str,
}

fn cases(app: &TestApp, f: &Fixture) -> Vec<Case> {
    use Takes::*;
    let b = app.a.business;
    let q = MAX_QUANTITY;
    let amount = Money(0, depot_protocol::Money::MAX.cents());
    let case = |method, path: String, body: Value, field, takes| Case {
        method,
        path,
        body,
        field,
        takes,
        or_names: field,
    };
    let adjust = format!("/v1/inventory/{b}/adjust");
    let item_create = format!("/v1/items/{b}/create");
    let item_edit = format!("/v1/items/{b}/{}/edit", f.item);
    let order_create = format!("/v1/orders/{b}/create");
    let inbound_create = format!("/v1/inbounds/{b}/orders/create");
    let reception = format!("/v1/inbounds/{b}/reception");
    let waves = format!("/v1/picking/{b}/waves/create");
    let scan = format!("/v1/picking/{b}/item/scan");
    let pack = format!("/v1/packing/{b}/pack-order");
    let label = format!("/v1/shipments/{b}/generate-label");
    let rules = format!("/v1/automation/{b}/items/pricing/rules");
    let forms = format!("/v1/contact/{b}/forms");
    let (w0, w1, item) = (f.w0, f.w1, f.item);
    let dims = json!({"length_mm": 10, "width_mm": 10, "height_mm": 10});
    let price = json!([{"price_list_id": 1, "amount": "1.00", "currency": "EUR"}]);
    let rule = json!({"origin_price_list_id": 1, "target_price_list_id": 2,
        "origin_action_id": "set_fixed", "origin_action_value": "1", "status": 0});
    vec![
        case(
            "POST",
            adjust.clone(),
            json!({"warehouse_id": w0, "item_id": item, "reason": "received", "quantity": 1}),
            "quantity",
            Int(1, q),
        ),
        case(
            "POST",
            adjust.clone(),
            json!({"warehouse_id": w0, "item_id": item, "reason": "damaged", "quantity": 1}),
            "quantity",
            Int(1, q),
        ),
        case(
            "POST",
            adjust.clone(),
            json!({"warehouse_id": w0, "sku": "N-1", "reason": "adjusted", "delta": 1}),
            "delta",
            IntBut(-q, q, 0),
        ),
        case(
            "POST",
            adjust.clone(),
            json!({"warehouse_id": w0, "sku": "N-1", "reason": "cycle_count", "counted": 1}),
            "counted",
            Int(0, q),
        ),
        case(
            "POST",
            adjust.clone(),
            json!({"warehouse_id": w0, "item_id": item, "reason": "transfer", "quantity": 1, "to_warehouse_id": w1}),
            "quantity",
            Int(1, q),
        ),
        case(
            "POST",
            adjust.clone(),
            json!({"warehouse_id": w0, "item_id": item, "reason": "transfer", "quantity": 1, "to_warehouse_id": w1}),
            "to_warehouse_id",
            Id,
        ),
        case(
            "POST",
            adjust.clone(),
            json!({"warehouse_id": w0, "item_id": item, "reason": "received", "quantity": 1}),
            "warehouse_id",
            Id,
        ),
        case(
            "POST",
            adjust.clone(),
            json!({"warehouse_id": w0, "item_id": item, "reason": "received", "quantity": 1}),
            "item_id",
            Id,
        ),
        case(
            "POST",
            item_create.clone(),
            json!({"sku": "NEW-1", "name": "N", "weight_g": 1}),
            "weight_g",
            Int(1, 1_000_000),
        ),
        case(
            "POST",
            item_create.clone(),
            json!({"sku": "NEW-1", "name": "N", "dimensions": dims}),
            "dimensions.length_mm",
            Int(1, 10_000),
        ),
        case(
            "POST",
            item_create.clone(),
            json!({"sku": "NEW-1", "name": "N", "dimensions": dims}),
            "dimensions.width_mm",
            Int(1, 10_000),
        ),
        case(
            "POST",
            item_create.clone(),
            json!({"sku": "NEW-1", "name": "N", "dimensions": dims}),
            "dimensions.height_mm",
            Int(1, 10_000),
        ),
        case(
            "POST",
            item_create.clone(),
            json!({"sku": "NEW-1", "name": "N", "prices": price}),
            "prices[0].amount",
            amount,
        ),
        case(
            "POST",
            item_create.clone(),
            json!({"sku": "NEW-1", "name": "N", "prices": price}),
            "prices[0].price_list_id",
            Int(1, i64::MAX),
        ),
        case(
            "POST",
            item_create.clone(),
            json!({"sku": "NEW-1", "name": "N", "locations": [{"warehouse_id": w0, "location": "A-1"}]}),
            "locations[0].warehouse_id",
            Id,
        ),
        case(
            "PUT",
            item_edit.clone(),
            json!({"weight_g": 1}),
            "weight_g",
            Int(1, 1_000_000),
        ),
        case(
            "PUT",
            item_edit.clone(),
            json!({"dimensions": dims}),
            "dimensions.length_mm",
            Int(1, 10_000),
        ),
        case(
            "PUT",
            item_edit.clone(),
            json!({"dimensions": dims}),
            "dimensions.height_mm",
            Int(1, 10_000),
        ),
        case(
            "PUT",
            item_edit.clone(),
            json!({"prices": price}),
            "prices[0].amount",
            amount,
        ),
        case(
            "PUT",
            item_edit.clone(),
            json!({"prices": price}),
            "prices[0].price_list_id",
            Int(1, i64::MAX),
        ),
        case(
            "POST",
            order_create.clone(),
            json!({"channel": "web", "external_ref": "N-NEW", "lines": [{"sku": "N-1", "quantity": 1}]}),
            "lines[0].quantity",
            Int(1, 1_000_000),
        ),
        case(
            "POST",
            order_create.clone(),
            json!({"channel": "web", "external_ref": "N-NEW", "lines": [{"sku": "N-1", "quantity": 1, "unit_price": 1}]}),
            "lines[0].unit_price",
            amount,
        ),
        case(
            "POST",
            order_create.clone(),
            json!({"channel": "web", "external_ref": "N-NEW", "payments": [{"method": "card", "amount": 1}], "lines": [{"sku": "N-1", "quantity": 1}]}),
            "payments[0].amount",
            amount,
        ),
        case(
            "POST",
            order_create.clone(),
            json!({"channel": "web", "external_ref": "N-NEW", "warehouse_id": w0, "lines": [{"sku": "N-1", "quantity": 1}]}),
            "warehouse_id",
            Id,
        ),
        case(
            "POST",
            inbound_create.clone(),
            json!({"warehouse_id": w0, "reference": "N-PO2", "supplier": "S", "lines": [{"sku": "N-1", "quantity": 1}]}),
            "lines[0].quantity",
            Int(1, q),
        ),
        case(
            "POST",
            inbound_create.clone(),
            json!({"warehouse_id": w0, "reference": "N-PO2", "supplier": "S", "lines": [{"sku": "N-1", "quantity": 1}]}),
            "warehouse_id",
            Id,
        ),
        case(
            "POST",
            reception.clone(),
            json!({"inbound_id": f.inbound, "lines": [{"code": "N-1", "quantity": 1}]}),
            "lines[0].quantity",
            Int(1, q),
        ),
        case(
            "POST",
            reception.clone(),
            json!({"inbound_id": f.inbound, "lines": [{"code": "N-1", "accepted": 1}]}),
            "lines[0].accepted",
            Int(1, q),
        ),
        case(
            "POST",
            reception.clone(),
            json!({"inbound_id": f.inbound, "lines": [{"code": "N-1", "rejected": 1, "reason": "torn"}]}),
            "lines[0].rejected",
            Int(0, q),
        ),
        Case {
            or_names: "lines[0].quantity",
            ..case(
                "POST",
                reception.clone(),
                json!({"inbound_id": f.inbound, "lines": [{"code": "N-1", "quantity": 2, "accepted": 1, "rejected": 1, "reason": "torn"}]}),
                "lines[0].rejected",
                Int(1, 1),
            )
        },
        case(
            "POST",
            reception.clone(),
            json!({"inbound_id": f.inbound, "lines": [{"code": "N-1"}]}),
            "inbound_id",
            Id,
        ),
        case(
            "POST",
            waves.clone(),
            json!({"warehouse_id": w0, "max_orders": 1}),
            "max_orders",
            Int(1, 200),
        ),
        case(
            "POST",
            waves.clone(),
            json!({"warehouse_id": w0, "max_orders": 1}),
            "warehouse_id",
            Id,
        ),
        case(
            "POST",
            scan.clone(),
            json!({"wave_id": f.wave, "order_id": f.order, "code": "N-1", "quantity": 1}),
            "quantity",
            Int(1, 10_000),
        ),
        case(
            "POST",
            scan.clone(),
            json!({"wave_id": f.wave, "order_id": f.order, "code": "N-1"}),
            "wave_id",
            Id,
        ),
        case(
            "POST",
            scan.clone(),
            json!({"wave_id": f.wave, "order_id": f.order, "code": "N-1"}),
            "order_id",
            Id,
        ),
        Case {
            // More or fewer than ordered: named by the item's SKU.
            or_names: "N-1",
            ..case(
                "POST",
                pack.clone(),
                json!({"order_id": f.packable, "items": [{"code": "N-1", "quantity": 1}], "packages": [{"weight_g": 500}]}),
                "items[0].quantity",
                Int(1, 1),
            )
        },
        case(
            "POST",
            pack.clone(),
            json!({"order_id": f.packable, "items": [{"code": "N-1"}], "packages": [{"weight_g": 500}]}),
            "packages[0].weight_g",
            Int(1, 1_000_000),
        ),
        case(
            "POST",
            pack.clone(),
            json!({"order_id": f.packable, "items": [{"code": "N-1"}], "packages": [{"weight_g": 500, "length_mm": 1, "width_mm": 1, "height_mm": 1}]}),
            "packages[0].length_mm",
            Int(1, 10_000),
        ),
        case(
            "POST",
            pack.clone(),
            json!({"order_id": f.packable, "items": [{"code": "N-1"}], "packages": [{"weight_g": 500, "length_mm": 1, "width_mm": 1, "height_mm": 1}]}),
            "packages[0].width_mm",
            Int(1, 10_000),
        ),
        case(
            "POST",
            pack.clone(),
            json!({"order_id": f.packable, "items": [{"code": "N-1"}], "packages": [{"weight_g": 500, "length_mm": 1, "width_mm": 1, "height_mm": 1}]}),
            "packages[0].height_mm",
            Int(1, 10_000),
        ),
        case(
            "POST",
            pack.clone(),
            json!({"order_id": f.packable, "items": [{"code": "N-1"}], "packages": [{"weight_g": 500}]}),
            "order_id",
            Id,
        ),
        // A label changes nothing but is a write route all the same: the
        // package it names must be one of the shipment's.
        case(
            "POST",
            label.clone(),
            json!({"shipment_id": f.shipment, "format": "zpl", "package": 1}),
            "package",
            Int(1, 1),
        ),
        case(
            "POST",
            label.clone(),
            json!({"shipment_id": f.shipment, "format": "zpl"}),
            "shipment_id",
            Id,
        ),
        case(
            "POST",
            format!("{rules}/create"),
            rule.clone(),
            "position_id",
            Int(1, 2),
        ),
        case(
            "POST",
            format!("{rules}/create"),
            rule.clone(),
            "origin_price_list_id",
            Int(1, i64::MAX),
        ),
        case(
            "POST",
            format!("{rules}/create"),
            rule.clone(),
            "target_price_list_id",
            Int(1, i64::MAX),
        ),
        case(
            "POST",
            format!("{rules}/create"),
            rule.clone(),
            "status",
            Int(0, 1),
        ),
        case(
            "POST",
            format!("{rules}/create"),
            json!({"origin_price_list_id": 1, "target_price_list_id": 2, "type": "percentage", "value": 1, "status": 0}),
            "value",
            Decimal(4, -100.0, 1000.0),
        ),
        case(
            "POST",
            format!("{rules}/create"),
            json!({"origin_price_list_id": 1, "target_price_list_id": 2, "type": "fixed", "value": 1, "status": 0}),
            "value",
            Decimal(2, -1e15, 1e15),
        ),
        case(
            "POST",
            format!("{rules}/create"),
            rule.clone(),
            "origin_action_value",
            AmountText(0, depot_protocol::Money::MAX.cents()),
        ),
        case(
            "PUT",
            format!("{rules}/{}/edit", f.rule),
            json!({"status": 0}),
            "status",
            Int(0, 1),
        ),
        case(
            "PUT",
            format!("{rules}/{}/edit", f.rule),
            json!({"position_id": 1}),
            "position_id",
            Int(1, 1),
        ),
        case(
            "PUT",
            format!("{rules}/{}/edit", f.rule),
            json!({"target_price_list_id": 2}),
            "target_price_list_id",
            Int(1, i64::MAX),
        ),
        case(
            "PUT",
            format!("{rules}/position"),
            json!({"id": f.rule, "position_id": 1}),
            "position_id",
            Int(1, 1),
        ),
        case(
            "PUT",
            format!("{rules}/position"),
            json!({"id": f.rule, "position_id": 1}),
            "id",
            Id,
        ),
        case(
            "PUT",
            format!("{rules}/position"),
            json!({"positions": [{"id": f.rule, "position_id": 1}]}),
            "positions[0].position_id",
            Int(1, 1),
        ),
        case(
            "POST",
            format!("{rules}/jobs/execute"),
            json!({"rule_id": f.rule}),
            "rule_id",
            Id,
        ),
        case(
            "POST",
            format!("{rules}/jobs/execute"),
            json!({"rule_id": f.rule, "origin_price_list_id": 1}),
            "origin_price_list_id",
            Int(1, i64::MAX),
        ),
        case(
            "POST",
            format!("{rules}/jobs/execute"),
            json!({"rule_id": f.rule, "target_price_list_id": 2}),
            "target_price_list_id",
            Int(1, i64::MAX),
        ),
        case(
            "POST",
            forms.clone(),
            json!({"name": "F2", "department": "support", "max_per_email_per_hour": 1}),
            "max_per_email_per_hour",
            Int(1, 100),
        ),
        case(
            "POST",
            forms.clone(),
            json!({"name": "F2", "department": "support", "max_per_hour": 1}),
            "max_per_hour",
            Int(1, 10_000),
        ),
        case(
            "POST",
            forms.clone(),
            json!({"name": "F2", "department": "support", "max_links": 1}),
            "max_links",
            Int(0, 20),
        ),
        case(
            "POST",
            forms.clone(),
            json!({"name": "F2", "department": "support", "fields": [{"name": "order_ref", "max_length": 1}]}),
            "fields[0].max_length",
            Int(1, 2000),
        ),
        // No numbers in these bodies: a number where text is expected.
        case(
            "POST",
            format!("/v1/printers/{b}/create"),
            json!({"name": "P", "kind": "zpl", "connection": "tcp://10.0.0.6:9100"}),
            "name",
            Text,
        ),
        case(
            "PUT",
            format!("/v1/printers/{b}/{}/edit", f.printer),
            json!({"name": "P"}),
            "name",
            Text,
        ),
        case(
            "POST",
            format!("/v1/webhooks/{b}/create"),
            json!({"url": "https://hooks.example.com/x", "event_types": ["*"], "active": false}),
            "description",
            Text,
        ),
        case(
            "PUT",
            format!("/v1/webhooks/{b}/{}/edit", f.webhook),
            json!({"description": "d"}),
            "description",
            Text,
        ),
        case(
            "POST",
            format!("/v1/crm/{b}/threads/{}/message", f.thread),
            json!({"body": "hi"}),
            "body",
            Text,
        ),
        case(
            "PUT",
            format!("/v1/orders/{b}/{}/status", f.packable),
            json!({"status": "cancelled"}),
            "status",
            Text,
        ),
    ]
}

#[tokio::test]
async fn every_numeric_field_of_every_write_route_at_the_extremes() {
    let app = spawn_app().await;
    let f = fixture(&app).await;
    let all_before = lists(&app, &f).await;
    let mut sent = 0;
    for c in cases(&app, &f) {
        let before = app.event_count().await;
        let lists_before = lists(&app, &f).await;
        for value in extremes(c.takes) {
            let mut body = c.body.clone();
            set(&mut body, c.field, value.clone());
            let r = app
                .call(c.method, &c.path, Some(&app.a.key), Some(body))
                .await;
            let what = format!("{} {} {} = {value}", c.method, c.path, c.field);
            let named = !matches!(c.takes, Takes::Id) || r.status == 422;
            let names = field_names(&r.body);
            let field = if names.iter().any(|n| n == c.or_names) {
                c.or_names
            } else {
                c.field
            };
            assert_refused(&r, &what, named.then_some(field));
            assert_eq!(app.event_count().await, before, "{what} wrote an event");
            sent += 1;
        }
        assert_eq!(
            lists(&app, &f).await,
            lists_before,
            "{} {} {} changed a list",
            c.method,
            c.path,
            c.field
        );
    }
    // Numbers inside text: a printer's port and baud rate.
    let b = app.a.business;
    let before = app.event_count().await;
    for connection in [
        "tcp://10.0.0.6:0",
        "tcp://10.0.0.6:-1",
        "tcp://10.0.0.6:65536",
        "tcp://10.0.0.6:18446744073709551616",
        "tcp://10.0.0.6:1e3",
        "serial:///dev/ttyUSB0?baud=0",
        "serial:///dev/ttyUSB0?baud=-9600",
        "serial:///dev/ttyUSB0?baud=4294967296",
        "serial:///dev/ttyUSB0?baud=1.5",
    ] {
        for (method, path) in [
            ("POST", format!("/v1/printers/{b}/create")),
            ("PUT", format!("/v1/printers/{b}/{}/edit", f.printer)),
        ] {
            let body = json!({"name": "P", "kind": "zpl", "connection": connection});
            let r = app.call(method, &path, Some(&app.a.key), Some(body)).await;
            assert_refused(
                &r,
                &format!("{method} {path} {connection}"),
                Some("connection"),
            );
            sent += 1;
        }
    }
    assert_eq!(app.event_count().await, before);
    assert!(sent > 500, "only {sent} requests");
    assert_eq!(lists(&app, &f).await, all_before);
}

/// The order total is an amount too: lines whose quantity times price
/// would pass it are refused, naming the line's price.
#[tokio::test]
async fn an_order_total_beyond_any_amount_is_refused() {
    let app = spawn_app().await;
    app.item("T-1").await;
    let b = app.a.business;
    let before = app.event_count().await;
    for lines in [
        json!([{"sku": "T-1", "quantity": 1_000_000, "unit_price": "999999999999999.99"}]),
        json!([{"sku": "T-1", "quantity": 1, "unit_price": "999999999999999.99"},
               {"sku": "T-1", "quantity": 1, "unit_price": "0.01"}]),
    ] {
        let n = lines.as_array().map_or(0, Vec::len);
        let r = app
            .post(
                &format!("/v1/orders/{b}/create"),
                json!({"channel": "web", "external_ref": "T", "lines": lines}),
            )
            .await;
        assert_error(&r, 422);
        assert_eq!(
            field_names(&r.body),
            [format!("lines[{}].unit_price", n - 1)],
            "{}",
            r.body
        );
    }
    assert_eq!(app.event_count().await, before);
    let r = app.get(&format!("/v1/orders/{b}/list")).await;
    assert_eq!(r.body["recordsTotal"], "0");
}

/// Ids in paths: 0, negative, `i64::MAX`, beyond `i64`, not integers.
#[tokio::test]
async fn extreme_ids_in_paths_answer_4xx() {
    let app = spawn_app().await;
    let f = fixture(&app).await;
    let b = app.a.business;
    let ids = [
        "0",
        "-1",
        "2147483648",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551616",
        "1e300",
        "1.5",
    ];
    let all_before = lists(&app, &f).await;
    let before = app.event_count().await;
    for id in ids {
        for (method, path, body) in [
            (
                "PUT",
                format!("/v1/items/{b}/{id}/edit"),
                Some(json!({"name": "x"})),
            ),
            (
                "PUT",
                format!("/v1/orders/{b}/{id}/status"),
                Some(json!({"status": "cancelled"})),
            ),
            (
                "POST",
                format!("/v1/outbounds/{b}/dispatch-runs/{id}/close"),
                None,
            ),
            (
                "PUT",
                format!("/v1/printers/{b}/{id}/edit"),
                Some(json!({"name": "x"})),
            ),
            (
                "PUT",
                format!("/v1/automation/{b}/items/pricing/rules/{id}/edit"),
                Some(json!({"name": "x"})),
            ),
            (
                "DELETE",
                format!("/v1/automation/{b}/items/pricing/rules/{id}/delete"),
                None,
            ),
            (
                "PUT",
                format!("/v1/webhooks/{b}/{id}/edit"),
                Some(json!({"description": "x"})),
            ),
            ("DELETE", format!("/v1/webhooks/{b}/{id}/delete"), None),
            ("POST", format!("/v1/webhooks/{b}/{id}/rotate-secret"), None),
            (
                "POST",
                format!("/v1/webhooks/{b}/{}/deliveries/{id}/retry", f.webhook),
                None,
            ),
            (
                "POST",
                format!("/v1/contact/{b}/{id}"),
                Some(
                    json!({"name": "A", "email": "a@example.com", "subject": "s", "message": "m"}),
                ),
            ),
            (
                "POST",
                format!("/v1/crm/{b}/threads/{id}/message"),
                Some(json!({"body": "hi"})),
            ),
            (
                "POST",
                format!("/v1/inventory/{id}/adjust"),
                Some(
                    json!({"warehouse_id": f.w0, "item_id": f.item, "reason": "received", "quantity": 1}),
                ),
            ),
            (
                "POST",
                format!("/v1/orders/{id}/create"),
                Some(
                    json!({"channel": "web", "external_ref": "P", "lines": [{"sku": "N-1", "quantity": 1}]}),
                ),
            ),
        ] {
            let r = app.call(method, &path, Some(&app.a.key), body).await;
            assert_refused(&r, &format!("{method} {path}"), None);
        }
        let r = app
            .raw(
                "POST",
                &format!("/v1/printers/jobs/{b}/{id}"),
                &app.a.key,
                Some("application/octet-stream"),
                b"^XA^XZ".to_vec(),
            )
            .await;
        assert_refused(&r, &format!("print job to {id}"), None);
        let boundary = "numbers-boundary";
        let form = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"category\"\r\n\r\ndelivery_note\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"d.pdf\"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\n%%EOF\n\r\n--{boundary}--\r\n"
        );
        let r = app
            .raw(
                "POST",
                &format!("/v1/documents/{b}/order/{id}"),
                &app.a.key,
                Some(&format!("multipart/form-data; boundary={boundary}")),
                form.into_bytes(),
            )
            .await;
        assert_refused(&r, &format!("document for order {id}"), None);
    }
    assert_eq!(app.event_count().await, before);
    assert_eq!(lists(&app, &f).await, all_before);
}

/// The numbers of the list routes' query strings: what is outside the
/// documented range is a 4xx with the error body, the rest a page, never a
/// 500.
#[tokio::test]
async fn query_string_numbers_answer_4xx_not_500() {
    let app = spawn_app().await;
    let f = fixture(&app).await;
    let b = app.a.business;
    let routes: Vec<(String, &[&str])> = vec![
        (format!("/v1/items/{b}/list"), &["start", "length"]),
        (
            format!("/v1/inventory/{b}/items/list"),
            &["start", "length", "warehouse_id", "item_id"],
        ),
        (format!("/v1/orders/{b}/list"), &["start", "length"]),
        (
            format!("/v1/inbounds/{b}/orders/list"),
            &["start", "length", "warehouse_id"],
        ),
        (
            format!("/v1/picking/{b}/waves/list"),
            &["start", "length", "warehouse_id"],
        ),
        (format!("/v1/shipments/{b}/list"), &["start", "length"]),
        (
            format!("/v1/outbounds/{b}/dispatch-runs"),
            &["start", "length", "warehouse_id"],
        ),
        (format!("/v1/events/{b}/list"), &["after", "length"]),
        (format!("/v1/conflicts/{b}/list"), &["start", "length"]),
        (
            format!("/v1/business/{b}/warehouses"),
            &["is_visible_sales"],
        ),
        (
            format!("/v1/buyers/{b}/find/by_name?key_id=ana"),
            &["start", "length"],
        ),
        (format!("/v1/crm/{b}/threads/list"), &["start", "length"]),
        (format!("/v1/contact/{b}/forms"), &["start", "length"]),
        (format!("/v1/webhooks/{b}/list"), &["start", "length"]),
        (
            format!("/v1/webhooks/{b}/{}/deliveries", f.webhook),
            &["start", "length"],
        ),
    ];
    // Beyond `i64` or no integer at all: refused whatever the parameter.
    let never = [
        "9223372036854775808",
        "-9223372036854775809",
        "18446744073709551616",
        "1e300",
        "1.5",
        "x",
    ];
    let maybe = [
        "-9223372036854775808",
        "-1",
        "0",
        "1",
        "1000",
        "1001",
        "2147483648",
        "9223372036854775807",
    ];
    // What each parameter's documented range leaves out besides.
    let out_of_range = |param: &str| -> &[&str] {
        match param {
            "start" | "after" => &["-1", "-9223372036854775808"],
            "length" => &["-1", "0", "1001", "9223372036854775807"],
            "is_visible_sales" => &["-1", "2", "2147483648", "9223372036854775807"],
            // Ids filter: one that names nothing finds nothing.
            _ => &[],
        }
    };
    for (route, params) in &routes {
        for p in *params {
            let sep = if route.contains('?') { '&' } else { '?' };
            for v in never.iter().chain(&maybe) {
                let path = format!("{route}{sep}{p}={v}");
                let r = app.get(&path).await;
                assert!(r.status < 500, "{path}: {} {}", r.status, r.body);
                if r.status >= 400 || never.contains(v) || out_of_range(p).contains(v) {
                    assert_refused(&r, &path, None);
                }
            }
        }
    }
    // The long poll's wait, with a bound it documents.
    for v in ["-1", "30001", "9223372036854775807", "1e300"] {
        let path = format!("/v1/events/{b}/list?wait={v}");
        assert_refused(&app.get(&path).await, &path, None);
    }
}

/// The reported bug: `delta: i64::MIN` was taken (its absolute value is
/// itself in release builds) and every decrement of the item answered 500
/// after it. And the ceiling: stock driven to `MAX_ON_HAND` refuses the
/// next unit with 422 naming the field, writes nothing, and still goes
/// down.
#[tokio::test]
async fn stock_driven_to_its_ceiling_refuses_more_and_still_goes_down() {
    let app = spawn_app().await;
    let b = app.a.business;
    let (w0, w1) = (app.a.warehouses[0].0, app.a.warehouses[1].0);
    let p = format!("/v1/inventory/{b}/adjust");
    let item = app.item("BIG").await;
    let adjust = |body: Value| {
        let (app, p) = (&app, p.clone());
        async move { app.post(&p, body).await }
    };
    let level = |body: &Value| body["data"]["levels"][0]["on_hand"].as_i64();

    // The bug of the issue, first: refused, and the item still moves.
    let before = app.event_count().await;
    for delta in [
        json!(i64::MIN),
        json!(i64::MIN + 1),
        json!(i64::MAX),
        json!(-MAX_QUANTITY - 1),
    ] {
        let r = adjust(
            json!({"warehouse_id": w0, "item_id": item, "reason": "adjusted", "delta": delta}),
        )
        .await;
        assert_error(&r, 422);
        assert_eq!(field_names(&r.body), ["delta"], "{}", r.body);
    }
    assert_eq!(app.event_count().await, before);
    let r = adjust(json!({"warehouse_id": w0, "item_id": item, "reason": "picked", "quantity": 1}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(level(&r.body), Some(-1));

    // Up to the ceiling, a billion at a time.
    let mut on_hand = -1;
    while on_hand + MAX_QUANTITY <= MAX_ON_HAND {
        let r = adjust(json!({"warehouse_id": w0, "item_id": item, "reason": "received", "quantity": MAX_QUANTITY})).await;
        assert_eq!(r.status, 200, "{}", r.body);
        on_hand += MAX_QUANTITY;
        assert_eq!(level(&r.body), Some(on_hand));
    }
    let room = MAX_ON_HAND - on_hand;
    let r =
        adjust(json!({"warehouse_id": w0, "item_id": item, "reason": "adjusted", "delta": room}))
            .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(level(&r.body), Some(MAX_ON_HAND));
    assert_eq!(app.stock(item).await, (MAX_ON_HAND, 0, MAX_ON_HAND));

    // One more unit, by any route that books stock, is refused naming its
    // field, and nothing is written.
    let inbound = app
        .post(
            &format!("/v1/inbounds/{b}/orders/create"),
            json!({"warehouse_id": w0, "reference": "BIG-PO", "supplier": "S", "lines": [{"sku": "BIG", "quantity": 5}]}),
        )
        .await;
    assert_eq!(inbound.status, 200, "{}", inbound.body);
    let inbound = inbound.body["data"]["id"].as_i64().expect("inbound");
    // Stock elsewhere, to transfer in.
    let r =
        adjust(json!({"warehouse_id": w1, "item_id": item, "reason": "received", "quantity": 5}))
            .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let before = app.event_count().await;
    let inbounds_before = app.get(&format!("/v1/inbounds/{b}/orders/list")).await.body;
    for (path, body, field) in [
        (
            p.clone(),
            json!({"warehouse_id": w0, "item_id": item, "reason": "received", "quantity": 1}),
            "quantity",
        ),
        (
            p.clone(),
            json!({"warehouse_id": w0, "item_id": item, "reason": "returned", "quantity": MAX_QUANTITY}),
            "quantity",
        ),
        (
            p.clone(),
            json!({"warehouse_id": w0, "item_id": item, "reason": "adjusted", "delta": 1}),
            "delta",
        ),
        (
            p.clone(),
            json!({"warehouse_id": w1, "item_id": item, "reason": "transfer", "quantity": 1, "to_warehouse_id": w0}),
            "quantity",
        ),
        (
            format!("/v1/inbounds/{b}/reception"),
            json!({"inbound_id": inbound, "lines": [{"code": "BIG", "quantity": 1}]}),
            "lines[0].quantity",
        ),
        (
            format!("/v1/inbounds/{b}/reception"),
            json!({"inbound_id": inbound, "lines": [{"code": "BIG", "accepted": 1, "rejected": 1, "reason": "torn"}]}),
            "lines[0].accepted",
        ),
    ] {
        let r = app.post(&path, body.clone()).await;
        assert_error(&r, 422);
        assert_eq!(field_names(&r.body), [field], "{body}: {}", r.body);
        assert!(
            r.body["message"]
                .as_str()
                .is_some_and(|m| m.contains(&MAX_ON_HAND.to_string())),
            "{}",
            r.body
        );
    }
    assert_eq!(app.event_count().await, before);
    assert_eq!(app.stock(item).await, (MAX_ON_HAND, 0, MAX_ON_HAND));
    assert_eq!(
        app.get(&format!("/v1/inbounds/{b}/orders/list")).await.body,
        inbounds_before
    );

    // And it still goes down, by every route that takes stock out.
    let r = adjust(json!({"warehouse_id": w0, "item_id": item, "reason": "picked", "quantity": 1}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(level(&r.body), Some(MAX_ON_HAND - 1));
    let r = adjust(
        json!({"warehouse_id": w0, "item_id": item, "reason": "adjusted", "delta": -MAX_QUANTITY}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r =
        adjust(json!({"warehouse_id": w0, "sku": "BIG", "reason": "cycle_count", "counted": 7}))
            .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(level(&r.body), Some(7));
    assert_eq!(
        r.body["data"]["movements"][0]["delta"],
        7 - (MAX_ON_HAND - 1 - MAX_QUANTITY)
    );
    let order = app.order("BIG-1", &[("BIG", 7)]).await;
    assert_eq!(app.set_status(order, "confirmed").await.status, 200);
    assert_eq!(app.stock(item).await, (7, 7, 0));

    // Below zero there is a floor as well: a discrepancy, not a wrap.
    let other = app.item("DEEP").await;
    let mut on_hand = 0;
    while on_hand - MAX_QUANTITY >= -MAX_ON_HAND {
        let r = adjust(json!({"warehouse_id": w0, "item_id": other, "reason": "damaged", "quantity": MAX_QUANTITY})).await;
        assert_eq!(r.status, 200, "{}", r.body);
        on_hand -= MAX_QUANTITY;
    }
    assert_eq!(on_hand, -MAX_ON_HAND);
    let r =
        adjust(json!({"warehouse_id": w0, "item_id": other, "reason": "damaged", "quantity": 1}))
            .await;
    assert_error(&r, 422);
    assert_eq!(field_names(&r.body), ["quantity"]);
    let r =
        adjust(json!({"warehouse_id": w0, "item_id": other, "reason": "received", "quantity": 1}))
            .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(level(&r.body), Some(1 - MAX_ON_HAND));
    let r = app
        .get(&format!("/v1/inventory/{b}/items/list?negative=true"))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["data"][0]["on_hand"], 1 - MAX_ON_HAND);
}

/// The ranges are in the OpenAPI description, where the types are.
#[tokio::test]
async fn the_ranges_are_documented() {
    let app = spawn_app().await;
    let r = app.call("GET", "/v1/openapi.json", None, None).await;
    assert_eq!(r.status, 200);
    let schemas = &r.body["components"]["schemas"];
    for (schema, field, min, max) in [
        ("AdjustRequest", "quantity", 1, MAX_QUANTITY),
        ("AdjustRequest", "delta", -MAX_QUANTITY, MAX_QUANTITY),
        ("AdjustRequest", "counted", 0, MAX_QUANTITY),
        ("ItemCreate", "weight_g", 1, 1_000_000),
        ("ItemEdit", "weight_g", 1, 1_000_000),
        ("Dimensions", "length_mm", 1, 10_000),
        ("OrderLineCreate", "quantity", 1, 1_000_000),
        ("InboundLineCreate", "quantity", 1, MAX_QUANTITY),
        ("ReceptionLine", "quantity", 1, MAX_QUANTITY),
        ("ReceptionLine", "accepted", 0, MAX_QUANTITY),
        ("ReceptionLine", "rejected", 0, MAX_QUANTITY),
        ("WaveCreate", "max_orders", 1, 200),
        ("ScanRequest", "quantity", 1, 10_000),
        ("PackItem", "quantity", 1, 1_000_000),
        ("PackageIn", "weight_g", 1, 1_000_000),
        ("PackageIn", "height_mm", 1, 10_000),
        ("LabelRequest", "package", 1, 50),
        ("RuleInput", "status", 0, 1),
        ("FormCreate", "max_links", 0, 20),
        ("FormField", "max_length", 1, 2000),
    ] {
        let p = &schemas[schema]["properties"][field];
        assert_eq!(
            (p["minimum"].as_i64(), p["maximum"].as_i64()),
            (Some(min), Some(max)),
            "{schema}.{field}: {p}"
        );
    }
    assert!(
        schemas["Money"]["pattern"].is_string(),
        "{}",
        schemas["Money"]
    );
    let params = r.body["paths"]["/v1/orders/{business_id}/list"]["get"]["parameters"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let length = params
        .iter()
        .find(|p| p["name"] == "length")
        .map(|p| p["schema"].clone())
        .unwrap_or_default();
    assert_eq!(
        (length["minimum"].as_i64(), length["maximum"].as_i64()),
        (Some(1), Some(1000)),
        "{length}"
    );
}
