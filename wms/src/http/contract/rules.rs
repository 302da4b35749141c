//! The rules every route's extractors enforce, written into the
//! description where the handlers' annotations cannot say them:
//!
//! - a path id is a whole number from 1 (`ApiPath`, `Tenant`: `business_id`
//!   up to 2147483647, every other id up to `MAX_ID`), so a generator
//!   neither sends nor expects what the server refuses;
//! - a JSON body (`ApiJson`) and a form (document uploads) refuse every
//!   field they do not name, so each object schema a body reaches is
//!   closed (`additionalProperties: false`) unless it is a map of its own;
//! - an empty (or all whitespace) query parameter is read as an absent
//!   one, so where a parameter has a form (an enum, a format, a pattern),
//!   a blank value is documented beside it;
//! - the text rules of `depot_protocol::validate`, which fields name as a
//!   format of ours (`#[schema(format = "line")]`), written as the pattern
//!   that checks them;
//! - the fields a create requires where create and edit share a body
//!   (on edit, an absent field is kept);
//! - documents (labels, manifests, print jobs) are bytes of their media
//!   type, not the JSON array of numbers a `Vec<u8>` describes;
//! - an amount (`Money`) is read from a number or a string, as the
//!   specification says, and always answered as the string;
//! - the rules between fields a body's parser checks (an adjustment's item
//!   by id or SKU and the fields its reason uses, a package's dimensions
//!   together) and the event types a subscription may name (`fields.rs`).

use super::super::words::MAX_ID;
use super::fields;
use depot_protocol::validate::patterns;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// Applies the rules to a 3.1 document.
pub fn apply(doc: &mut Value) {
    path_ids(doc);
    blank_queries(doc);
    body_ids(doc);
    required_on_create(doc);
    close_bodies(doc);
    // After closing: its branches name properties to constrain, not to
    // close the body to.
    fields::cross_fields(doc);
    fields::money(doc);
    formats(doc);
    binary(doc);
}

/// `pattern` (one of `patterns`) taking at most `max` characters between
/// the whitespace around them: its one open repetition bounded.
fn bounded(pattern: &str, max: u64) -> Option<String> {
    if max < 2 {
        return None;
    }
    if let Some(i) = pattern.find("]*[^\\s") {
        let inner = max - 2;
        return Some(format!(
            "{}]{{0,{inner}}}{}",
            &pattern[..i],
            &pattern[i + 2..]
        ));
    }
    // `CODE`: one word.
    pattern
        .strip_suffix("]+\\s*$")
        .map(|head| format!("{head}]{{1,{max}}}\\s*$"))
}

/// Every non-JSON content whose schema is a list of bytes, as bytes.
fn binary(doc: &mut Value) {
    for op in operations(doc) {
        let mut contents: Vec<&mut Value> = Vec::new();
        for (key, part) in op.iter_mut() {
            match (key.as_str(), part) {
                ("requestBody", body) => contents.extend(body.get_mut("content")),
                ("responses", Value::Object(answers)) => {
                    contents.extend(answers.values_mut().filter_map(|a| a.get_mut("content")));
                }
                _ => {}
            }
        }
        for content in contents.into_iter().filter_map(Value::as_object_mut) {
            for (media, m) in content.iter_mut() {
                let Some(schema) = m.get_mut("schema") else {
                    continue;
                };
                let bytes = schema.get("type") == Some(&json!("array"))
                    && schema.pointer("/items/type") == Some(&json!("integer"));
                if bytes && !media.ends_with("json") {
                    *schema =
                        json!({"type": "string", "format": "binary", "contentMediaType": media});
                }
            }
        }
    }
}

/// Operations whose body is shared with an edit, and what they require.
const CREATES: &[(&str, &[&str])] = &[
    ("printers_create", &["name", "kind", "connection"]),
    ("webhooks_create", &["url", "event_types"]),
];

/// Gives each of `CREATES` a body schema of its own (`<Body>OnCreate`): the
/// shared one, with the fields it requires required and not nullable.
fn required_on_create(doc: &mut Value) {
    let mut made = Vec::new();
    for op in operations(doc) {
        let id = op.get("operationId").and_then(Value::as_str).unwrap_or("");
        let Some((_, fields)) = CREATES.iter().find(|(name, _)| *name == id) else {
            continue;
        };
        let Some(schema) = op
            .get_mut("requestBody")
            .and_then(|b| b.pointer_mut("/content/application~1json/schema"))
        else {
            continue;
        };
        let Some(name) = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/components/schemas/"))
            .map(str::to_owned)
        else {
            continue;
        };
        let own = format!("{name}OnCreate");
        *schema = json!({"$ref": format!("#/components/schemas/{own}")});
        made.push((name, own, *fields));
    }
    let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    for (name, own, fields) in made {
        let Some(mut schema) = schemas.get(&name).cloned() else {
            continue;
        };
        if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            for field in fields {
                if let Some(p) = props.get_mut(*field) {
                    not_null(p);
                }
            }
        }
        schema["required"] = json!(fields);
        schemas.insert(own, schema);
    }
}

/// `p` without its `null`: `type: [T, "null"]` → `type: T`; a `oneOf`
/// of `null` and one schema → that schema.
fn not_null(p: &mut Value) {
    if let Some(Value::Array(types)) = p.get("type").cloned() {
        let rest: Vec<Value> = types.into_iter().filter(|t| t != "null").collect();
        p["type"] = match rest.as_slice() {
            [one] => one.clone(),
            _ => Value::Array(rest),
        };
    }
    if let Some(Value::Array(branches)) = p.get("oneOf").cloned() {
        let rest: Vec<Value> = branches
            .into_iter()
            .filter(|b| b.get("type") != Some(&json!("null")))
            .collect();
        if let ([one], Some(o)) = (rest.as_slice(), p.as_object_mut()) {
            o.remove("oneOf");
            let one = one.clone();
            if let Some(r) = one.get("$ref") {
                o.insert("allOf".into(), json!([{"$ref": r}]));
            } else if let Some(fields) = one.as_object() {
                o.extend(fields.clone());
            }
        }
    }
}

/// Our formats (`line`, `opt-line`, `code`, `scan`, `printable`, `note`,
/// `body`, `email`, `crm-code`, `date-or-time`, `amount`: a `Money` that
/// is not negative; on a list, utoipa gives
/// the format to its entries), written as the
/// patterns and formats a generator and a validator read.
fn formats(v: &mut Value) {
    match v {
        Value::Object(o) => {
            let ours = o
                .get("format")
                .and_then(Value::as_str)
                .and_then(|f| match f {
                    "line" => Some(json!({"pattern": patterns::LINE})),
                    "scan" => Some(json!({"pattern": patterns::SCAN})),
                    "code" => Some(json!({"pattern": patterns::CODE})),
                    "body" => Some(json!({"pattern": patterns::BODY})),
                    "email" => Some(json!({"pattern": patterns::EMAIL})),
                    "crm-code" => Some(json!({"pattern": patterns::CRM_CODE})),
                    "opt-line" => Some(json!({"pattern": patterns::OPT_LINE})),
                    "printable" => Some(json!({"pattern": patterns::PRINTABLE})),
                    "note" => Some(json!({"pattern": patterns::NOTE})),
                    "amount" => Some(fields::amount(true)),
                    "date-or-time" => {
                        Some(json!({"anyOf": [{"format": "date"}, {"format": "date-time"}]}))
                    }
                    _ => None,
                });
            if let Some(Value::Object(mut with)) = ours {
                o.remove("format");
                // The checks count characters once trimmed; `maxLength`
                // would count the whitespace around them too, so the bound
                // goes into the pattern.
                if let (Some(max), Some(Value::String(p))) = (
                    o.get("maxLength").and_then(Value::as_u64),
                    with.get("pattern").cloned(),
                ) {
                    if let Some(bounded) = bounded(&p, max) {
                        with.insert("pattern".into(), json!(bounded));
                        o.remove("maxLength");
                    }
                }
                o.extend(with);
            }
            o.values_mut().for_each(formats);
        }
        Value::Array(a) => a.iter_mut().for_each(formats),
        _ => {}
    }
}

fn operations(doc: &mut Value) -> impl Iterator<Item = &mut Map<String, Value>> {
    doc.get_mut("paths")
        .and_then(Value::as_object_mut)
        .into_iter()
        .flat_map(|paths| paths.values_mut())
        .filter_map(Value::as_object_mut)
        .flat_map(|item| item.values_mut())
        .filter_map(Value::as_object_mut)
}

fn path_ids(doc: &mut Value) {
    for op in operations(doc) {
        let Some(params) = op.get_mut("parameters").and_then(Value::as_array_mut) else {
            continue;
        };
        for p in params {
            let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
            if p.get("in") != Some(&json!("path")) || !name.ends_with("_id") {
                continue;
            }
            let max = if name == "business_id" {
                i64::from(i32::MAX)
            } else {
                MAX_ID
            };
            let Some(schema) = p.get_mut("schema").and_then(Value::as_object_mut) else {
                continue;
            };
            if schema.get("type") == Some(&json!("integer")) {
                schema.insert("minimum".into(), json!(1));
                schema.insert("maximum".into(), json!(max));
                schema.insert(
                    "format".into(),
                    json!(if max == MAX_ID { "int64" } else { "int32" }),
                );
            }
        }
    }
}

/// A value of nothing but whitespace, as `str::trim` reads whitespace
/// (Unicode White_Space; `\s` differs between regex dialects: Python's
/// takes the ASCII separators 0x1C to 0x1F too).
const BLANK: &str =
    r"^[\t\n\u000b\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$";

fn blank_queries(doc: &mut Value) {
    for op in operations(doc) {
        let Some(params) = op.get_mut("parameters").and_then(Value::as_array_mut) else {
            continue;
        };
        for p in params {
            if p.get("in") != Some(&json!("query")) {
                continue;
            }
            let Some(schema) = p.get_mut("schema") else {
                continue;
            };
            let formed = schema.get("$ref").is_some()
                || ["enum", "format", "pattern", "anyOf", "oneOf", "allOf"]
                    .iter()
                    .any(|k| schema.get(k).is_some());
            let string = schema.get("$ref").is_some()
                || match schema.get("type") {
                    Some(Value::String(t)) => t == "string",
                    Some(Value::Array(ts)) => ts.contains(&json!("string")),
                    _ => schema.get("format").is_some(),
                };
            if formed && string {
                *schema = json!({"anyOf": [schema.take(), {"type": "string", "pattern": BLANK}]});
            }
        }
    }
}

/// The typed ids of `depot_protocol::ids` (a record's id is 1 or more,
/// and a body naming 0 or less is refused).
const IDS: &[&str] = &[
    "BusinessId",
    "WarehouseId",
    "ItemId",
    "OrderId",
    "KeyId",
    "PriceListId",
    "WaveId",
    "PickLineId",
    "PrinterId",
    "PrintJobId",
    "ShipmentId",
    "DispatchRunId",
];

fn body_ids(doc: &mut Value) {
    let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    for name in IDS {
        if let Some(Value::Object(s)) = schemas.get_mut(*name) {
            s.insert("minimum".into(), json!(1));
            s.insert("maximum".into(), json!(MAX_ID));
        }
    }
}

/// The component schemas JSON request bodies reach, closed.
fn close_bodies(doc: &mut Value) {
    let mut roots = Vec::new();
    for op in operations(doc) {
        let Some(content) = op
            .get_mut("requestBody")
            .and_then(|b| b.get_mut("content"))
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        for (_, media) in content
            .iter_mut()
            .filter(|(t, _)| *t == "application/json" || *t == "multipart/form-data")
        {
            if let Some(schema) = media.get_mut("schema") {
                collect_refs(schema, &mut roots);
                close(schema);
            }
        }
    }
    let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let mut seen = BTreeSet::new();
    while let Some(name) = roots.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(schema) = schemas.get_mut(&name) {
            collect_refs(schema, &mut roots);
            close(schema);
        }
    }
}

/// Names of the component schemas `v` refers to.
fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            if let Some(name) = o
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/components/schemas/"))
            {
                out.push(name.to_owned());
            }
            o.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

/// Closes every object schema with named properties within `v` (its
/// properties, items and branches), leaving maps (`additionalProperties`
/// given) as they are.
fn close(v: &mut Value) {
    let Some(o) = v.as_object_mut() else {
        return;
    };
    if o.contains_key("properties") && !o.contains_key("additionalProperties") {
        o.insert("additionalProperties".into(), json!(false));
    }
    for (key, child) in o.iter_mut() {
        match (key.as_str(), child) {
            ("properties", Value::Object(named)) => named.values_mut().for_each(close),
            ("items" | "additionalProperties" | "not", child) => close(child),
            ("allOf" | "anyOf" | "oneOf" | "prefixItems", Value::Array(branches)) => {
                branches.iter_mut().for_each(close)
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_get_their_range_and_bodies_close() {
        let mut doc = json!({
            "paths": {"/v1/x/{business_id}/{order_id}": {"post": {
                "parameters": [
                    {"name": "business_id", "in": "path", "schema": {"type": "integer", "format": "int32"}},
                    {"name": "order_id", "in": "path", "schema": {"type": "integer", "format": "int64"}},
                    {"name": "start", "in": "query", "schema": {"type": "integer"}}
                ],
                "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Body"}}}}
            }}},
            "components": {"schemas": {
                "Body": {"type": "object", "properties": {
                    "lines": {"type": "array", "items": {"$ref": "#/components/schemas/Line"}},
                    "tags": {"type": "object", "additionalProperties": {"type": "string"}}
                }},
                "Line": {"type": "object", "properties": {"sku": {"type": "string"}}},
                "Answer": {"type": "object", "properties": {"id": {"type": "integer"}}}
            }}
        });
        apply(&mut doc);
        let params = &doc["paths"]["/v1/x/{business_id}/{order_id}"]["post"]["parameters"];
        assert_eq!(params[0]["schema"]["minimum"], 1);
        assert_eq!(params[0]["schema"]["maximum"], 2147483647);
        assert_eq!(params[1]["schema"]["maximum"], MAX_ID);
        assert!(params[2]["schema"].get("minimum").is_none());
        let s = &doc["components"]["schemas"];
        assert_eq!(s["Body"]["additionalProperties"], false);
        assert_eq!(s["Line"]["additionalProperties"], false);
        // A map stays a map; a schema only answers reach stays open.
        assert_eq!(
            s["Body"]["properties"]["tags"]["additionalProperties"],
            json!({"type": "string"})
        );
        assert!(s["Answer"].get("additionalProperties").is_none());
    }

    #[test]
    fn blank_queries_formats_and_creates() {
        let mut doc = json!({
            "paths": {"/v1/p/{business_id}/create": {"post": {
                "operationId": "printers_create",
                "parameters": [
                    {"name": "status", "in": "query", "schema": {"$ref": "#/components/schemas/S"}},
                    {"name": "day", "in": "query", "schema": {"type": "string", "format": "date"}},
                    {"name": "q", "in": "query", "schema": {"type": "string"}},
                    {"name": "n", "in": "query", "schema": {"type": "integer", "minimum": 0}}
                ],
                "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Fields"}}}}
            }}},
            "components": {"schemas": {
                "S": {"type": "string", "enum": ["open"]},
                "Fields": {"type": "object", "properties": {
                    "name": {"type": ["string", "null"], "format": "line"},
                    "kind": {"oneOf": [{"type": "null"}, {"$ref": "#/components/schemas/S"}]},
                    "connection": {"type": ["string", "null"]},
                    "station": {"type": ["string", "null"], "format": "date-or-time"}
                }}
            }}
        });
        doc["paths"]["/v1/p/{business_id}/create"]["post"]["responses"] = json!({"200": {"content": {
            "application/pdf": {"schema": {"type": "array", "items": {"type": "integer", "format": "int32", "minimum": 0}}},
            "application/json": {"schema": {"type": "array", "items": {"type": "integer"}}}
        }}});
        apply(&mut doc);
        let op = &doc["paths"]["/v1/p/{business_id}/create"]["post"];
        // A document is bytes; a JSON list of numbers stays one.
        assert_eq!(
            op["responses"]["200"]["content"]["application/pdf"]["schema"],
            json!({"type": "string", "format": "binary", "contentMediaType": "application/pdf"})
        );
        assert_eq!(
            op["responses"]["200"]["content"]["application/json"]["schema"]["type"],
            "array"
        );
        let p = &op["parameters"];
        // A formed string may be blank; a free one or a number stays.
        assert_eq!(
            p[0]["schema"],
            json!({"anyOf": [{"$ref": "#/components/schemas/S"}, {"type": "string", "pattern": BLANK}]})
        );
        assert_eq!(
            p[1]["schema"]["anyOf"][1],
            json!({"type": "string", "pattern": BLANK})
        );
        // What the pattern calls blank is what `trim` takes away.
        let blank = regex::Regex::new(BLANK).expect("blank");
        for c in [
            '\t', '\u{b}', ' ', '\u{85}', '\u{a0}', '\u{2009}', '\u{3000}', '\u{1c}', '\u{feff}',
            'a',
        ] {
            assert_eq!(
                blank.is_match(&c.to_string()),
                c.to_string().trim().is_empty(),
                "{c:?}"
            );
        }
        assert_eq!(p[2]["schema"], json!({"type": "string"}));
        assert_eq!(p[3]["schema"], json!({"type": "integer", "minimum": 0}));
        // The create has its own body, with what it requires required.
        assert_eq!(
            op["requestBody"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/FieldsOnCreate"
        );
        let s = &doc["components"]["schemas"];
        let create = &s["FieldsOnCreate"];
        assert_eq!(create["required"], json!(["name", "kind", "connection"]));
        assert_eq!(create["properties"]["name"]["type"], "string");
        assert_eq!(
            create["properties"]["kind"],
            json!({"allOf": [{"$ref": "#/components/schemas/S"}]})
        );
        assert_eq!(create["additionalProperties"], false);
        // The shared one, for the edit, is unchanged but closed.
        assert!(s["Fields"].get("required").is_none());
        assert_eq!(
            s["Fields"]["properties"]["name"]["type"],
            json!(["string", "null"])
        );
        // A bound counts what the check counts: what is inside the
        // whitespace.
        let line = regex::Regex::new(&bounded(patterns::LINE, 5).expect("bounded")).expect("re");
        assert!(line.is_match("  abcde \t"));
        assert!(!line.is_match("abcdef"));
        let code = regex::Regex::new(&bounded(patterns::CODE, 3).expect("bounded")).expect("re");
        assert!(code.is_match(" abc "));
        assert!(!code.is_match("abcd"));
        // Our formats are patterns and formats others read.
        assert_eq!(create["properties"]["name"]["pattern"], patterns::LINE);
        assert!(create["properties"]["name"].get("format").is_none());
        assert_eq!(
            s["Fields"]["properties"]["station"]["anyOf"],
            json!([{"format": "date"}, {"format": "date-time"}])
        );
    }
}
