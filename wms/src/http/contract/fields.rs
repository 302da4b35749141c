//! What a body's values may be beyond their own types, written into the
//! description: amounts (a number or a string), the rules between fields a
//! parser checks (an adjustment's item and the fields its reason takes, a
//! package's dimensions together), and the event types a webhook may name.
//! `rules::apply` runs these after closing the bodies: their branches name
//! properties to constrain, not to close a body to.

use depot_protocol::stock::MovementReason;
use depot_protocol::webhook;
use serde_json::{Map, Value, json};

/// An amount as requests may send it: "decimal numbers, or strings with
/// two decimal digits" (product specification). The derive can say only
/// the string.
pub(super) fn amount(non_negative: bool) -> Value {
    let most = "999999999999999.99";
    let max: f64 = most.parse().unwrap_or(f64::MAX);
    let (pattern, min, from) = if non_negative {
        (r"^[0-9]{1,15}(\.[0-9]{1,2})?$", 0.0, "0".to_owned())
    } else {
        (r"^-?[0-9]{1,15}(\.[0-9]{1,2})?$", -max, format!("-{most}"))
    };
    json!({
        "type": ["string", "number"],
        "pattern": pattern,
        "minimum": min,
        "maximum": max,
        "examples": ["12.50"],
        "description": format!(
            "An amount with at most two decimals, {from} to {most}: a number or a \
             string like \"12.50\" in a request; answers always write the string."
        ),
    })
}

/// `Money`, as [`amount`] says.
pub(super) fn money(doc: &mut Value) {
    if let Some(m) = doc.pointer_mut("/components/schemas/Money") {
        *m = amount(false);
    }
}

/// Absent or null: what a parser reads as absent.
fn absent() -> Value {
    json!({"type": "null"})
}

/// The rules between fields of `AdjustRequest::parse` and
/// `PackRequest::parse`, and `webhook::event_type_pattern`, written as
/// the schemas' `allOf`/`oneOf`/`anyOf`. A field given as null counts as
/// absent, as the parsers read it.
pub(super) fn cross_fields(doc: &mut Value) {
    let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    if let Some(adjust) = schemas
        .get_mut("AdjustRequest")
        .and_then(Value::as_object_mut)
    {
        let int = json!({"type": "integer"});
        let item = json!({"oneOf": [
            {"required": ["item_id"], "properties": {"item_id": int, "sku": absent()}},
            {"required": ["sku"], "properties": {"sku": {"type": "string"}, "item_id": absent()}},
        ]});
        // Which of quantity, delta, counted, to_warehouse_id and
        // to_location each reason takes: the required ones given, the
        // optional ones free, the others absent.
        let uses = |reasons: &[MovementReason], required: &[&str], optional: &[&str]| {
            let mut props = Map::new();
            let names: Vec<&str> = reasons.iter().map(|r| r.as_str()).collect();
            props.insert("reason".into(), json!({"enum": names}));
            for field in [
                "quantity",
                "delta",
                "counted",
                "to_warehouse_id",
                "to_location",
            ] {
                if optional.contains(&field) {
                    continue;
                }
                let schema = if !required.contains(&field) {
                    absent()
                } else if field == "delta" {
                    json!({"type": "integer", "not": {"const": 0}})
                } else {
                    int.clone()
                };
                props.insert(field.into(), schema);
            }
            json!({"required": required, "properties": props})
        };
        let moved: Vec<MovementReason> = MovementReason::ALL
            .into_iter()
            .filter(|r| {
                !matches!(
                    r,
                    MovementReason::Adjusted
                        | MovementReason::CycleCount
                        | MovementReason::Transfer
                )
            })
            .collect();
        let reason = json!({"oneOf": [
            uses(&[MovementReason::Adjusted], &["delta"], &[]),
            uses(&[MovementReason::CycleCount], &["counted"], &[]),
            uses(
                &[MovementReason::Transfer],
                &["quantity"],
                &["to_warehouse_id", "to_location"],
            ),
            uses(&moved, &["quantity"], &[]),
        ]});
        adjust.insert("allOf".into(), json!([item, reason]));
    }
    if let Some(package) = schemas.get_mut("PackageIn").and_then(Value::as_object_mut) {
        let dims = ["length_mm", "width_mm", "height_mm"];
        let given: Map<String, Value> = dims
            .iter()
            .map(|d| ((*d).to_owned(), json!({"type": "integer"})))
            .collect();
        let none: Map<String, Value> = dims.iter().map(|d| ((*d).to_owned(), absent())).collect();
        // Under `allOf`, beside the properties: a generator keeps one
        // model for a package (a bare `anyOf` makes it two).
        package.insert(
            "allOf".into(),
            json!([{"anyOf": [{"required": dims, "properties": given}, {"properties": none}]}]),
        );
    }
    for name in ["WebhookInput", "WebhookInputOnCreate"] {
        if let Some(types) = schemas
            .get_mut(name)
            .and_then(|s| s.pointer_mut("/properties/event_types"))
        {
            types["items"] = json!({"type": "string", "pattern": webhook::event_type_pattern()});
            types["maxItems"] = json!(webhook::MAX_EVENT_TYPES);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::rules::apply;
    use super::*;

    #[test]
    fn rules_between_fields_are_branches_the_body_is_not_closed_to() {
        let mut doc = json!({
            "paths": {"/v1/inventory/{business_id}/adjust": {"post": {
                "requestBody": {"content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/AdjustRequest"}}}}
            }}},
            "components": {"schemas": {
                "AdjustRequest": {"type": "object", "properties": {
                    "item_id": {"type": ["integer", "null"]}, "sku": {"type": ["string", "null"]}}},
                "PackageIn": {"type": "object", "properties": {"weight_g": {"type": "integer"},
                    "price": {"type": "string", "format": "amount"}}},
                "Money": {"type": "string", "pattern": "^[0-9]+$"},
                "WebhookInput": {"type": "object", "properties": {
                    "event_types": {"type": ["array", "null"], "items": {"type": "string"}}}}
            }}
        });
        apply(&mut doc);
        let s = &doc["components"]["schemas"];
        let adjust = &s["AdjustRequest"];
        assert_eq!(adjust["additionalProperties"], false);
        let item = &adjust["allOf"][0]["oneOf"];
        assert_eq!(item[0]["required"], json!(["item_id"]));
        assert_eq!(item[0]["properties"]["sku"], json!({"type": "null"}));
        assert!(item[0].get("additionalProperties").is_none());
        let reasons = adjust["allOf"][1]["oneOf"].as_array().expect("reasons");
        // Every reason in exactly one branch.
        let mut named: Vec<&str> = reasons
            .iter()
            .flat_map(|b| b["properties"]["reason"]["enum"].as_array().expect("enum"))
            .filter_map(Value::as_str)
            .collect();
        named.sort_unstable();
        let mut all: Vec<&str> = MovementReason::ALL.iter().map(|r| r.as_str()).collect();
        all.sort_unstable();
        assert_eq!(named, all);
        assert_eq!(
            reasons[0]["properties"]["delta"]["not"],
            json!({"const": 0})
        );
        assert_eq!(reasons[2]["required"], json!(["quantity"]));
        assert!(reasons[2]["properties"].get("to_location").is_none());
        assert_eq!(
            reasons[3]["properties"]["to_location"],
            json!({"type": "null"})
        );
        let package = &s["PackageIn"]["allOf"][0]["anyOf"];
        assert_eq!(
            package[0]["required"],
            json!(["length_mm", "width_mm", "height_mm"])
        );
        assert_eq!(
            package[1]["properties"]["height_mm"],
            json!({"type": "null"})
        );
        let types = &s["WebhookInput"]["properties"]["event_types"];
        assert_eq!(s["Money"]["type"], json!(["string", "number"]));
        assert_eq!(s["PackageIn"]["properties"]["price"]["minimum"], 0.0);
        assert_eq!(types["maxItems"], webhook::MAX_EVENT_TYPES);
        let pattern =
            regex::Regex::new(types["items"]["pattern"].as_str().expect("pattern")).expect("regex");
        assert!(pattern.is_match(" order.* "));
        assert!(!pattern.is_match("key.created"));
    }
}
