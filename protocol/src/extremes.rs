//! Every numeric field of every write request, at the extremes: each value
//! is either accepted, when it is within the range the field documents, or
//! refused with an error naming the field. Never a panic, never a value
//! that wrapped around.
//!
//! Each [`Field`] names a request body, the JSON path of one number in it
//! and an oracle saying which JSON values it must accept. A value the
//! oracle refuses must be refused by the parser: by serde (a wrong type or
//! a number out of the Rust type's range, which the HTTP layer answers with
//! 422 naming the path) or by the checks, naming the path.

use crate::crm::contact::FormCreate;
use crate::inbound::{InboundCreate, ReceptionRequest};
use crate::order_request::OrderCreate;
use crate::picking::{ScanRequest, WaveCreate};
use crate::pricing::{JobSpec, MoveRequest, RuleRequest};
use crate::shipping::{LabelRequest, PackRequest};
use crate::stock::{AdjustRequest, MAX_QUANTITY};
use crate::{FieldError, Money, Page};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Why a body was refused: by serde (its message), or by the checks (the
/// fields they named).
#[derive(Debug)]
enum Refusal {
    Serde(#[allow(dead_code)] String),
    Fields(Vec<String>),
}

type Outcome = Result<(), Refusal>;

fn checked<T: DeserializeOwned, U>(
    v: Value,
    parse: impl FnOnce(T) -> Result<U, Vec<FieldError>>,
) -> Outcome {
    let raw: T = serde_json::from_value(v).map_err(|e| Refusal::Serde(e.to_string()))?;
    parse(raw)
        .map(|_| ())
        .map_err(|e| Refusal::Fields(e.into_iter().map(|e| e.name).collect()))
}

fn fields<U>(r: Result<U, Vec<FieldError>>) -> Outcome {
    r.map(|_| ())
        .map_err(|e| Refusal::Fields(e.into_iter().map(|e| e.name).collect()))
}

/// One numeric field of one request body.
struct Field {
    what: &'static str,
    /// A valid body, in which the number at `path` is replaced.
    body: fn() -> Value,
    path: &'static str,
    parse: fn(Value) -> Outcome,
    /// Whether the field must accept this JSON value.
    accepts: fn(&Value) -> bool,
}

/// An integer (not a float, not a string) within `min..=max`.
fn int_in(v: &Value, min: i64, max: i64) -> bool {
    v.is_i64() && v.as_i64().is_some_and(|n| (min..=max).contains(&n))
}

/// An amount of money within `min..=max` cents, as a number or a string.
fn money_in(v: &Value, min: i64, max: i64) -> bool {
    serde_json::from_value::<Money>(v.clone()).is_ok_and(|m| (min..=max).contains(&m.cents()))
}

/// What the pricing bodies accept as an id: an integer, or a string of
/// digits (answers write ids as strings).
fn id_text(v: &Value) -> Option<i64> {
    match v {
        Value::String(s) if s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok(),
        v if v.is_i64() => v.as_i64(),
        _ => None,
    }
}

/// A decimal number with at most `decimals` decimals whose value is within
/// `min..=max` and not 0.
fn decimal_in(v: &Value, decimals: u32, min: f64, max: f64) -> bool {
    let Value::Number(n) = v else { return false };
    let text = n.to_string();
    let unsigned = text.trim_start_matches('-');
    let (whole, frac) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let plain =
        whole.bytes().all(|b| b.is_ascii_digit()) && frac.bytes().all(|b| b.is_ascii_digit());
    let f = n.as_f64().unwrap_or(f64::NAN);
    plain
        && frac.len() <= decimals as usize
        && whole.len() <= 15
        && f != 0.0
        && (min..=max).contains(&f)
}

const MAX_AMOUNT: i64 = Money::MAX.0;

fn fields_table() -> Vec<Field> {
    vec![
        // POST /v1/inventory/{b}/adjust
        Field {
            what: "adjust received",
            body: || json!({"warehouse_id": 1, "item_id": 1, "reason": "received", "quantity": 1}),
            path: "quantity",
            parse: |v| checked(v, AdjustRequest::parse),
            accepts: |v| int_in(v, 1, MAX_QUANTITY),
        },
        Field {
            what: "adjust picked",
            body: || json!({"warehouse_id": 1, "item_id": 1, "reason": "picked", "quantity": 1}),
            path: "quantity",
            parse: |v| checked(v, AdjustRequest::parse),
            accepts: |v| int_in(v, 1, MAX_QUANTITY),
        },
        Field {
            what: "adjust adjusted",
            body: || json!({"warehouse_id": 1, "sku": "A", "reason": "adjusted", "delta": 1}),
            path: "delta",
            parse: |v| checked(v, AdjustRequest::parse),
            accepts: |v| int_in(v, -MAX_QUANTITY, MAX_QUANTITY) && v.as_i64() != Some(0),
        },
        Field {
            what: "adjust cycle count",
            body: || json!({"warehouse_id": 1, "sku": "A", "reason": "cycle_count", "counted": 1}),
            path: "counted",
            parse: |v| checked(v, AdjustRequest::parse),
            accepts: |v| int_in(v, 0, MAX_QUANTITY),
        },
        Field {
            what: "adjust transfer",
            body: || json!({"warehouse_id": 1, "item_id": 1, "reason": "transfer", "quantity": 1, "to_warehouse_id": 2}),
            path: "quantity",
            parse: |v| checked(v, AdjustRequest::parse),
            accepts: |v| int_in(v, 1, MAX_QUANTITY),
        },
        Field {
            what: "adjust item id",
            body: || json!({"warehouse_id": 1, "item_id": 1, "reason": "received", "quantity": 1}),
            path: "item_id",
            parse: |v| checked(v, AdjustRequest::parse),
            // Any id is read; one that names nothing is a 404 later.
            accepts: |v| int_in(v, i64::MIN, i64::MAX),
        },
        Field {
            what: "adjust warehouse id",
            body: || json!({"warehouse_id": 1, "item_id": 1, "reason": "received", "quantity": 1}),
            path: "warehouse_id",
            parse: |v| checked(v, AdjustRequest::parse),
            accepts: |v| int_in(v, i64::MIN, i64::MAX),
        },
        // POST /v1/items/{b}/create and PUT .../edit
        Field {
            what: "item weight",
            body: || json!({"sku": "A", "name": "N", "weight_g": 1}),
            path: "weight_g",
            parse: |v| checked(v, crate::catalog::ItemCreate::parse),
            accepts: |v| int_in(v, 1, crate::catalog::MAX_WEIGHT_G),
        },
        Field {
            what: "item length",
            body: || json!({"sku": "A", "name": "N", "dimensions": {"length_mm": 1, "width_mm": 1, "height_mm": 1}}),
            path: "dimensions.length_mm",
            parse: |v| checked(v, crate::catalog::ItemCreate::parse),
            accepts: |v| int_in(v, 1, crate::catalog::MAX_DIMENSION_MM),
        },
        Field {
            what: "item width",
            body: || json!({"sku": "A", "name": "N", "dimensions": {"length_mm": 1, "width_mm": 1, "height_mm": 1}}),
            path: "dimensions.width_mm",
            parse: |v| checked(v, crate::catalog::ItemCreate::parse),
            accepts: |v| int_in(v, 1, crate::catalog::MAX_DIMENSION_MM),
        },
        Field {
            what: "item height",
            body: || json!({"sku": "A", "name": "N", "dimensions": {"length_mm": 1, "width_mm": 1, "height_mm": 1}}),
            path: "dimensions.height_mm",
            parse: |v| checked(v, crate::catalog::ItemCreate::parse),
            accepts: |v| int_in(v, 1, crate::catalog::MAX_DIMENSION_MM),
        },
        Field {
            what: "item price",
            body: || json!({"sku": "A", "name": "N", "prices": [{"price_list_id": 1, "amount": 1, "currency": "EUR"}]}),
            path: "prices[0].amount",
            parse: |v| checked(v, crate::catalog::ItemCreate::parse),
            accepts: |v| money_in(v, 0, MAX_AMOUNT),
        },
        Field {
            what: "item price list",
            body: || json!({"sku": "A", "name": "N", "prices": [{"price_list_id": 1, "amount": 1, "currency": "EUR"}]}),
            path: "prices[0].price_list_id",
            parse: |v| checked(v, crate::catalog::ItemCreate::parse),
            accepts: |v| int_in(v, 1, crate::MAX_ID),
        },
        Field {
            what: "item edit weight",
            body: || json!({"weight_g": 1}),
            path: "weight_g",
            parse: |v| checked(v, |e: crate::catalog::ItemEdit| e.apply(current_item())),
            accepts: |v| int_in(v, 1, crate::catalog::MAX_WEIGHT_G),
        },
        Field {
            what: "item edit length",
            body: || json!({"dimensions": {"length_mm": 1, "width_mm": 1, "height_mm": 1}}),
            path: "dimensions.length_mm",
            parse: |v| checked(v, |e: crate::catalog::ItemEdit| e.apply(current_item())),
            accepts: |v| int_in(v, 1, crate::catalog::MAX_DIMENSION_MM),
        },
        Field {
            what: "item edit price",
            body: || json!({"prices": [{"price_list_id": 1, "amount": 1, "currency": "EUR"}]}),
            path: "prices[0].amount",
            parse: |v| checked(v, |e: crate::catalog::ItemEdit| e.apply(current_item())),
            accepts: |v| money_in(v, 0, MAX_AMOUNT),
        },
        // POST /v1/orders/{b}/create
        Field {
            what: "order line quantity",
            body: || json!({"channel": "c", "external_ref": "x", "lines": [{"sku": "A", "quantity": 1}]}),
            path: "lines[0].quantity",
            parse: |v| checked(v, OrderCreate::parse),
            accepts: |v| int_in(v, 1, crate::order_request::MAX_LINE_QUANTITY),
        },
        Field {
            what: "order line price",
            body: || json!({"channel": "c", "external_ref": "x", "lines": [{"sku": "A", "quantity": 1, "unit_price": 1}]}),
            path: "lines[0].unit_price",
            parse: |v| checked(v, OrderCreate::parse),
            accepts: |v| money_in(v, 0, MAX_AMOUNT),
        },
        Field {
            what: "order payment",
            body: || json!({"channel": "c", "external_ref": "x", "payments": [{"method": "card", "amount": 1}], "lines": [{"sku": "A", "quantity": 1}]}),
            path: "payments[0].amount",
            parse: |v| checked(v, OrderCreate::parse),
            accepts: |v| money_in(v, 0, MAX_AMOUNT),
        },
        Field {
            what: "order warehouse",
            body: || json!({"channel": "c", "external_ref": "x", "warehouse_id": 1, "lines": [{"sku": "A", "quantity": 1}]}),
            path: "warehouse_id",
            parse: |v| checked(v, OrderCreate::parse),
            accepts: |v| int_in(v, 1, crate::MAX_ID),
        },
        // POST /v1/inbounds/{b}/orders/create and reception
        Field {
            what: "inbound line",
            body: || json!({"warehouse_id": 1, "reference": "PO", "supplier": "S", "lines": [{"sku": "A", "quantity": 1}]}),
            path: "lines[0].quantity",
            parse: |v| checked(v, InboundCreate::parse),
            accepts: |v| int_in(v, 1, MAX_QUANTITY),
        },
        Field {
            what: "reception quantity",
            body: || json!({"inbound_id": 1, "lines": [{"code": "A", "quantity": 1}]}),
            path: "lines[0].quantity",
            parse: |v| checked(v, ReceptionRequest::parse),
            accepts: |v| int_in(v, 1, MAX_QUANTITY),
        },
        Field {
            what: "reception accepted",
            body: || json!({"inbound_id": 1, "lines": [{"code": "A", "accepted": 1}]}),
            path: "lines[0].accepted",
            parse: |v| checked(v, ReceptionRequest::parse),
            // 0 accepted and nothing rejected is no reception at all.
            accepts: |v| int_in(v, 1, MAX_QUANTITY),
        },
        Field {
            what: "reception rejected",
            body: || json!({"inbound_id": 1, "lines": [{"code": "A", "rejected": 1, "reason": "torn"}]}),
            path: "lines[0].rejected",
            parse: |v| checked(v, ReceptionRequest::parse),
            accepts: |v| int_in(v, 0, MAX_QUANTITY),
        },
        Field {
            what: "reception that must add up",
            body: || json!({"inbound_id": 1, "lines": [{"code": "A", "quantity": 1000000000, "accepted": 1, "rejected": 999999999, "reason": "torn"}]}),
            path: "lines[0].quantity",
            parse: |v| checked(v, ReceptionRequest::parse),
            accepts: |v| v.as_i64() == Some(MAX_QUANTITY),
        },
        Field {
            what: "reception inbound id",
            body: || json!({"inbound_id": 1, "lines": [{"code": "A"}]}),
            path: "inbound_id",
            parse: |v| checked(v, ReceptionRequest::parse),
            accepts: |v| int_in(v, i64::MIN, i64::MAX),
        },
        // POST /v1/picking/{b}/waves/create and item/scan
        Field {
            what: "wave size",
            body: || json!({"warehouse_id": 1, "max_orders": 1}),
            path: "max_orders",
            parse: |v| checked(v, WaveCreate::parse),
            accepts: |v| int_in(v, 1, i64::from(crate::picking::MAX_WAVE_ORDERS)),
        },
        Field {
            what: "pick scan quantity",
            body: || json!({"wave_id": 1, "code": "A", "quantity": 1}),
            path: "quantity",
            parse: |v| checked(v, ScanRequest::parse),
            accepts: |v| int_in(v, 1, crate::picking::MAX_SCAN_QUANTITY),
        },
        Field {
            what: "pick scan wave",
            body: || json!({"wave_id": 1, "order_id": 1, "code": "A"}),
            path: "wave_id",
            parse: |v| checked(v, ScanRequest::parse),
            accepts: |v| int_in(v, i64::MIN, i64::MAX),
        },
        Field {
            what: "pick scan order",
            body: || json!({"wave_id": 1, "order_id": 1, "code": "A"}),
            path: "order_id",
            parse: |v| checked(v, ScanRequest::parse),
            accepts: |v| int_in(v, i64::MIN, i64::MAX),
        },
        // POST /v1/packing/{b}/pack-order
        Field {
            what: "pack item quantity",
            body: || json!({"order_id": 1, "items": [{"code": "A", "quantity": 1}], "packages": [{"weight_g": 1}]}),
            path: "items[0].quantity",
            parse: |v| checked(v, PackRequest::parse),
            accepts: |v| int_in(v, 1, crate::shipping::MAX_PACK_QUANTITY),
        },
        Field {
            what: "pack package weight",
            body: || json!({"order_id": 1, "items": [{"code": "A"}], "packages": [{"weight_g": 1}]}),
            path: "packages[0].weight_g",
            parse: |v| checked(v, PackRequest::parse),
            accepts: |v| int_in(v, 1, crate::catalog::MAX_WEIGHT_G),
        },
        Field {
            what: "pack package length",
            body: || json!({"order_id": 1, "items": [{"code": "A"}], "packages": [{"weight_g": 1, "length_mm": 1, "width_mm": 1, "height_mm": 1}]}),
            path: "packages[0].length_mm",
            parse: |v| checked(v, PackRequest::parse),
            accepts: |v| int_in(v, 1, crate::catalog::MAX_DIMENSION_MM),
        },
        Field {
            what: "pack package height",
            body: || json!({"order_id": 1, "items": [{"code": "A"}], "packages": [{"weight_g": 1, "length_mm": 1, "width_mm": 1, "height_mm": 1}]}),
            path: "packages[0].height_mm",
            parse: |v| checked(v, PackRequest::parse),
            accepts: |v| int_in(v, 1, crate::catalog::MAX_DIMENSION_MM),
        },
        // POST /v1/shipments/{b}/generate-label: the package is checked
        // against the shipment's packages when it is read.
        Field {
            what: "label package",
            body: || json!({"shipment_id": 1, "format": "zpl", "package": 1}),
            path: "package",
            parse: |v| checked(v, |l: LabelRequest| Ok::<_, Vec<FieldError>>(l)),
            accepts: |v| int_in(v, 0, i64::from(u32::MAX)),
        },
        // Pricing rules: create/edit, position, jobs/execute.
        Field {
            what: "rule position",
            body: || json!({"origin_price_list_id": 1, "target_price_list_id": 2, "origin_action_id": "set_fixed", "origin_action_value": "1", "position_id": 1}),
            path: "position_id",
            parse: |v| fields(RuleRequest::from_json(&v).and_then(RuleRequest::create)),
            accepts: |v| int_in(v, 1, i64::MAX),
        },
        Field {
            what: "rule origin list",
            body: || json!({"origin_price_list_id": 1, "target_price_list_id": 2, "origin_action_id": "set_fixed", "origin_action_value": "1"}),
            path: "origin_price_list_id",
            parse: |v| fields(RuleRequest::from_json(&v).and_then(RuleRequest::create)),
            accepts: |v| int_in(v, 1, i64::MAX),
        },
        Field {
            what: "rule target list",
            body: || json!({"origin_price_list_id": 1, "target_price_list_id": 2, "origin_action_id": "set_fixed", "origin_action_value": "1"}),
            path: "target_price_list_id",
            parse: |v| fields(RuleRequest::from_json(&v).and_then(RuleRequest::create)),
            accepts: |v| int_in(v, 1, i64::MAX),
        },
        Field {
            what: "rule status",
            body: || json!({"origin_price_list_id": 1, "target_price_list_id": 2, "origin_action_id": "set_fixed", "origin_action_value": "1", "status": 1}),
            path: "status",
            parse: |v| fields(RuleRequest::from_json(&v).and_then(RuleRequest::create)),
            accepts: |v| int_in(v, 0, 1),
        },
        Field {
            what: "rule percentage",
            body: || json!({"origin_price_list_id": 1, "target_price_list_id": 2, "type": "percentage", "value": 1}),
            path: "value",
            parse: |v| fields(RuleRequest::from_json(&v).and_then(RuleRequest::create)),
            accepts: |v| decimal_in(v, 4, -100.0, 1000.0),
        },
        Field {
            what: "rule fixed amount",
            body: || json!({"origin_price_list_id": 1, "target_price_list_id": 2, "type": "fixed", "value": 1}),
            path: "value",
            parse: |v| fields(RuleRequest::from_json(&v).and_then(RuleRequest::create)),
            accepts: |v| decimal_in(v, 2, -1e15, 1e15),
        },
        Field {
            what: "rule move id",
            body: || json!({"id": 1, "position_id": 1}),
            path: "id",
            parse: |v| fields(MoveRequest::parse(&v)),
            accepts: |v| id_text(v).is_some(),
        },
        Field {
            what: "rule move position",
            body: || json!({"positions": [{"id": 1, "position_id": 1}]}),
            path: "positions[0].position_id",
            parse: |v| fields(MoveRequest::parse(&v)),
            // Checked against the number of rules when the move is made.
            accepts: |v| int_in(v, i64::MIN, i64::MAX),
        },
        Field {
            what: "job rule",
            body: || json!({"rule_id": 1}),
            path: "rule_id",
            parse: |v| fields(JobSpec::parse(&v, None)),
            accepts: |v| id_text(v).is_some_and(|id| id > 0),
        },
        Field {
            what: "job origin list",
            body: || json!({"origin_price_list_id": 1}),
            path: "origin_price_list_id",
            parse: |v| fields(JobSpec::parse(&v, None)),
            accepts: |v| int_in(v, 1, i64::MAX),
        },
        // POST /v1/contact/{b}/forms
        Field {
            what: "form per email",
            body: || json!({"name": "F", "department": "support", "max_per_email_per_hour": 1}),
            path: "max_per_email_per_hour",
            parse: |v| checked(v, FormCreate::parse),
            accepts: |v| int_in(v, 1, 100),
        },
        Field {
            what: "form per hour",
            body: || json!({"name": "F", "department": "support", "max_per_hour": 1}),
            path: "max_per_hour",
            parse: |v| checked(v, FormCreate::parse),
            accepts: |v| int_in(v, 1, 10_000),
        },
        Field {
            what: "form links",
            body: || json!({"name": "F", "department": "support", "max_links": 1}),
            path: "max_links",
            parse: |v| checked(v, FormCreate::parse),
            accepts: |v| int_in(v, 0, 20),
        },
        Field {
            what: "form field length",
            body: || json!({"name": "F", "department": "support", "fields": [{"name": "order_ref", "max_length": 1}]}),
            path: "fields[0].max_length",
            parse: |v| checked(v, FormCreate::parse),
            accepts: |v| int_in(v, 1, 2000),
        },
    ]
}

fn current_item() -> crate::catalog::ItemFields {
    crate::catalog::ItemCreate {
        sku: "A".into(),
        name: "N".into(),
        ..Default::default()
    }
    .parse()
    .unwrap_or_else(|e| panic!("the base item is refused: {e:?}"))
}

/// Sets the value at `path` (`a.b[0].c`), which must exist.
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

/// Runs one field with one value and checks the outcome against the
/// oracle; the panic message names what failed.
fn check(f: &Field, value: Value) {
    let mut body = (f.body)();
    set(&mut body, f.path, value.clone());
    let outcome = (f.parse)(body);
    let accepts = (f.accepts)(&value);
    match (outcome, accepts) {
        (Ok(()), true) => {}
        (Ok(()), false) => panic!("{} {}: {value} was accepted", f.what, f.path),
        (Err(r), true) => panic!("{} {}: {value} was refused: {r:?}", f.what, f.path),
        // Serde names the path at the HTTP layer (422 with the field).
        (Err(Refusal::Serde(_)), false) => {}
        (Err(Refusal::Fields(names)), false) => assert!(
            names.iter().any(|n| n == f.path),
            "{} {}: {value} was refused naming {names:?}",
            f.what,
            f.path
        ),
    }
}

/// The values every numeric field is tried with, besides its own bounds.
fn extremes() -> Vec<Value> {
    let parse = |s: &str| serde_json::from_str::<Value>(s).unwrap_or(Value::Null);
    vec![
        json!(i64::MIN),
        json!(i64::MIN + 1),
        json!(-1),
        json!(0),
        json!(1),
        json!(i64::MAX),
        json!(u64::MAX),
        json!(i64::MAX as u64 + 1),
        json!(MAX_QUANTITY),
        json!(MAX_QUANTITY + 1),
        json!(-MAX_QUANTITY),
        json!(-MAX_QUANTITY - 1),
        json!(1_000_000),
        json!(1_000_001),
        json!(10_000),
        json!(10_001),
        json!(999_999_999_999_999i64),
        json!(1_000_000_000_000_000i64),
        json!(u32::MAX),
        json!(u64::from(u32::MAX) + 1),
        json!(1e300),
        json!(-1e300),
        json!(1.5),
        json!(0.001),
        parse("-0"),
        parse("-0.0"),
        parse("1e2"),
        json!(1000),
        json!(1001),
        json!(-100),
        json!(-101),
        json!("5"),
        json!("-9223372036854775808"),
        json!("99999999999999999999"),
        json!(""),
        json!(true),
        json!([1]),
        json!({"n": 1}),
    ]
}

#[test]
fn every_field_at_every_extreme() {
    for f in fields_table() {
        for v in extremes() {
            check(&f, v);
        }
    }
}

#[test]
fn the_bodies_are_valid_as_they_stand() {
    for f in fields_table() {
        assert!(
            (f.parse)((f.body)()).is_ok(),
            "{}: the base body is refused",
            f.what
        );
    }
}

/// The bug of issue 25: `i64::MIN` was its own absolute value in release
/// builds and passed the range check.
#[test]
fn the_most_negative_delta_is_refused() {
    let r = checked(
        json!({"warehouse_id": 1, "sku": "A", "reason": "adjusted", "delta": i64::MIN}),
        AdjustRequest::parse,
    );
    assert!(
        matches!(&r, Err(Refusal::Fields(n)) if n == &["delta"]),
        "{r:?}"
    );
}

/// Accepted and rejected are compared with the quantity without
/// overflowing, however large they are.
#[test]
fn reception_sums_do_not_overflow() {
    for (a, r) in [(i64::MAX, i64::MAX), (i64::MIN, i64::MIN), (i64::MAX, 1)] {
        let out = checked(
            json!({"inbound_id": 1, "lines": [{"code": "A", "quantity": 1, "accepted": a, "rejected": r, "reason": "x"}]}),
            ReceptionRequest::parse,
        );
        let Err(Refusal::Fields(names)) = out else {
            panic!("{a} + {r} accepted: {out:?}")
        };
        assert!(names.contains(&"lines[0].accepted".to_owned()), "{names:?}");
        assert!(names.contains(&"lines[0].quantity".to_owned()), "{names:?}");
    }
}

#[test]
fn paging_refuses_what_it_cannot_serve() {
    for (start, length, ok) in [
        (Some(i64::MIN), None, false),
        (Some(-1), None, false),
        (Some(0), Some(0), false),
        (Some(i64::MAX), Some(1000), true),
        (None, Some(1001), false),
        (None, Some(i64::MAX), false),
        (None, Some(i64::MIN), false),
    ] {
        assert_eq!(
            Page::parse(start, length).is_ok(),
            ok,
            "{start:?} {length:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any integer, any float, in any numeric field.
    #[test]
    fn any_number_in_any_field(i in any::<i64>(), f in any::<f64>(), near in -3i64..=3) {
        for field in fields_table() {
            check(&field, json!(i));
            check(&field, json!(i.saturating_add(near)));
            if f.is_finite() {
                check(&field, json!(f));
            }
            for edge in [MAX_QUANTITY, crate::catalog::MAX_WEIGHT_G, 999_999_999_999_999] {
                check(&field, json!(edge + near));
                check(&field, json!(-edge + near));
            }
        }
    }

    #[test]
    fn any_page(start in any::<i64>(), length in any::<i64>()) {
        match Page::parse(Some(start), Some(length)) {
            Ok(p) => {
                prop_assert!(start >= 0 && (1..=1000).contains(&length));
                prop_assert_eq!((p.start, p.length), (start as u64, length as u64));
            }
            Err(e) => prop_assert!(!e.is_empty()),
        }
    }
}
