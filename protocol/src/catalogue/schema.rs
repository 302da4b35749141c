//! Payloads as JSON Schema, and a check of a payload against its entry:
//! what the documents publish and what the tests hold the engine to.

use super::{EventType, Field, Payload, Presence, Ty};
use serde_json::{Map, Value, json};

/// A field's JSON Schema.
fn field_schema(f: &Field) -> Value {
    let (ty, format) = match f.ty {
        Ty::String => ("string", None),
        Ty::Integer => ("integer", None),
        Ty::Boolean => ("boolean", None),
        Ty::Object => ("object", None),
        Ty::Array => ("array", None),
        Ty::Timestamp => ("string", Some("date-time")),
        Ty::Date => ("string", Some("date")),
    };
    let mut s = Map::new();
    s.insert(
        "type".into(),
        if f.presence == Presence::Nullable {
            json!([ty, "null"])
        } else {
            json!(ty)
        },
    );
    if let Some(format) = format {
        s.insert("format".into(), json!(format));
    }
    s.insert("description".into(), json!(f.doc));
    Value::Object(s)
}

fn fields_schema(fields: &[Field]) -> Value {
    let properties: Map<String, Value> = fields
        .iter()
        .map(|f| (f.name.to_owned(), field_schema(f)))
        .collect();
    let required: Vec<&str> = fields
        .iter()
        .filter(|f| f.presence != Presence::Optional)
        .map(|f| f.name)
        .collect();
    json!({"type": "object", "properties": properties, "required": required})
}

/// The payload's schema; a record's refers to `#/components/schemas/<name>`.
pub fn payload_schema(t: &EventType) -> Value {
    match t.payload {
        Payload::Fields(fields) => fields_schema(fields),
        Payload::Record { name, extra, .. } => {
            let record = json!({"$ref": format!("#/components/schemas/{}", name())});
            if extra.is_empty() {
                record
            } else {
                json!({"allOf": [record, fields_schema(extra)]})
            }
        }
    }
}

/// Every schema the records of `types` need, by name, as JSON.
pub fn record_schemas<'a>(types: impl Iterator<Item = &'a EventType>) -> Map<String, Value> {
    let mut all = Vec::new();
    for t in types {
        if let Payload::Record {
            name,
            schema,
            schemas,
            ..
        } = t.payload
        {
            all.push((name().into_owned(), schema()));
            schemas(&mut all);
        }
    }
    all.into_iter()
        .filter_map(|(name, s)| Some((name, serde_json::to_value(s).ok()?)))
        .collect()
}

/// The names a record's schema declares at its top level (through `allOf`
/// for flattened parts), and those it requires.
fn top_level(schema: &Value, names: &mut Vec<String>, required: &mut Vec<String>) {
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        names.extend(props.keys().cloned());
    }
    if let Some(req) = schema.get("required").and_then(Value::as_array) {
        required.extend(req.iter().filter_map(Value::as_str).map(str::to_owned));
    }
    for part in schema
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        top_level(part, names, required);
    }
}

fn type_matches(ty: Ty, v: &Value) -> bool {
    match ty {
        Ty::String => v.is_string(),
        Ty::Integer => v.is_i64() || v.is_u64(),
        Ty::Boolean => v.is_boolean(),
        Ty::Object => v.is_object(),
        Ty::Array => v.is_array(),
        Ty::Timestamp => v
            .as_str()
            .is_some_and(|s| chrono::DateTime::parse_from_rfc3339(s).is_ok()),
        Ty::Date => v
            .as_str()
            .is_some_and(|s| chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok()),
    }
}

/// Whether `payload` is what the entry documents: no field it does not
/// name, every field it requires, each of its type. Every problem is named.
pub fn check(t: &EventType, payload: &Value) -> Result<(), Vec<String>> {
    let Some(obj) = payload.as_object() else {
        return Err(vec![format!("{}: the payload is not an object", t.name())]);
    };
    let (fields, mut names, mut required) = match t.payload {
        Payload::Fields(fields) => (fields, Vec::new(), Vec::new()),
        Payload::Record { schema, extra, .. } => {
            let (mut names, mut required) = (Vec::new(), Vec::new());
            match serde_json::to_value(schema()) {
                Ok(s) => top_level(&s, &mut names, &mut required),
                Err(e) => return Err(vec![format!("{}: its schema: {e}", t.name())]),
            }
            (extra, names, required)
        }
    };
    for f in fields {
        names.push(f.name.to_owned());
        if f.presence != Presence::Optional {
            required.push(f.name.to_owned());
        }
    }
    let mut problems = Vec::new();
    for key in obj.keys() {
        if !names.contains(key) {
            problems.push(format!("{}: field {key} is not documented", t.name()));
        }
    }
    for name in &required {
        if !obj.contains_key(name) {
            problems.push(format!("{}: field {name} is missing", t.name()));
        }
    }
    for f in fields {
        match obj.get(f.name) {
            None => {}
            Some(Value::Null) if f.presence == Presence::Nullable => {}
            Some(v) if type_matches(f.ty, v) => {}
            Some(v) => problems.push(format!(
                "{}: field {} is {v}, not of type {:?}",
                t.name(),
                f.name,
                f.ty
            )),
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::lookup;

    fn entry(name: &str) -> &'static EventType {
        lookup(name).expect("in the catalogue")
    }

    #[test]
    fn fields_payloads() {
        let t = entry("order.status_changed");
        let change = json!({"from": "pending", "to": "confirmed", "at": "2026-01-01T00:00:00Z",
                            "actor": "key:1", "note": null});
        assert!(
            check(
                t,
                &json!({"order_id": 1, "warehouse_id": 2, "change": change})
            )
            .is_ok()
        );
        // Optional fields may be absent.
        assert!(check(t, &json!({"order_id": 1, "change": change})).is_ok());
        let problems = check(t, &json!({"order_id": "1", "extra": true}))
            .err()
            .unwrap_or_default();
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(
            problems
                .iter()
                .any(|p| p.contains("extra is not documented"))
        );
        assert!(problems.iter().any(|p| p.contains("change is missing")));
        assert!(problems.iter().any(|p| p.contains("order_id is \"1\"")));
        assert!(check(t, &json!([1])).is_err());
    }

    #[test]
    fn nullable_and_timestamps() {
        let t = entry("print_job.updated");
        let ok = json!({"id": 1, "business_id": 1, "printer_id": 2, "status": "printed",
                        "error": null, "at": "2026-01-01T00:00:00Z"});
        assert!(check(t, &ok).is_ok());
        let mut bad = ok.clone();
        bad["at"] = json!("yesterday");
        assert!(check(t, &bad).is_err());
        let mut missing = ok;
        missing.as_object_mut().map(|o| o.remove("error"));
        assert!(check(t, &missing).is_err(), "nullable is not optional");
    }

    #[test]
    fn record_payloads() {
        let t = entry("print_job.created");
        let job = json!({"id": 1, "printer_id": 2, "format": "zpl", "size": 10,
                         "status": "queued", "error": null,
                         "created_at": "2026-01-01T00:00:00Z",
                         "updated_at": "2026-01-01T00:00:00Z", "business_id": 1});
        assert_eq!(check(t, &job), Ok(()));
        let mut with_bytes = job.clone();
        with_bytes["data_base64"] = json!("XlhB");
        assert_eq!(check(t, &with_bytes), Ok(()));
        let mut stray = job.clone();
        stray["secret"] = json!(1);
        assert!(check(t, &stray).is_err());
        let mut short = job;
        short.as_object_mut().map(|o| o.remove("printer_id"));
        assert!(check(t, &short).is_err());
    }

    #[test]
    fn schemas() {
        let s = payload_schema(entry("pick.scanned"));
        assert_eq!(
            s["properties"]["location"]["type"],
            json!(["string", "null"])
        );
        assert!(
            s["required"]
                .as_array()
                .is_some_and(|r| r.contains(&json!("wave_remaining")))
        );
        let r = payload_schema(entry("order.created"));
        assert_eq!(r["$ref"], "#/components/schemas/Order");
        let all = record_schemas(crate::catalogue::CATALOGUE.iter());
        assert!(all.contains_key("Order") && all.contains_key("Shipment"));
        // What records refer to is there too.
        assert!(
            all.keys().any(|k| k == "OrderLine" || k == "StatusChange"),
            "{:?}",
            all.keys()
        );
    }
}
