//! The description in OpenAPI 3.0.3: the 3.1 document rewritten the way
//! 3.0's subset of JSON Schema reads it.

use serde_json::{Map, Value, json};

/// The same description in OpenAPI 3.0.3: 3.1's JSON Schema written the
/// way 3.0 reads it (`nullable` for a type list or a `null` branch,
/// `example` for `examples`, `enum` for `const`, boolean exclusive bounds,
/// `format: binary` for raw content).
pub fn openapi_3_0(mut doc: Value) -> Value {
    if let Some(o) = doc.as_object_mut() {
        o.insert("openapi".into(), json!("3.0.3"));
        o.remove("jsonSchemaDialect");
        o.remove("webhooks");
        if let Some(license) = o
            .get_mut("info")
            .and_then(|i| i.get_mut("license"))
            .and_then(Value::as_object_mut)
        {
            license.remove("identifier");
        }
    }
    walk(&mut doc);
    doc
}

fn walk(v: &mut Value) {
    match v {
        Value::Object(o) => {
            schema(o);
            for (key, child) in o.iter_mut() {
                match (key.as_str(), child) {
                    // Maps of names to schemas: a property may be named
                    // `type` or `const` without being one.
                    ("properties" | "schemas", Value::Object(named)) => {
                        named.values_mut().for_each(walk);
                    }
                    (_, child) => walk(child),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(walk),
        _ => {}
    }
}

/// Rewrites one object if it is a 3.1 schema construct 3.0 lacks.
fn schema(o: &mut Map<String, Value>) {
    // `type: ["string", "null"]` → `type: string, nullable: true`.
    if let Some(Value::Array(types)) = o.get("type").cloned() {
        let rest: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if rest.len() < types.len() {
            o.insert("nullable".into(), json!(true));
        }
        match rest.as_slice() {
            [one] => {
                o.insert("type".into(), one.clone());
            }
            [] => {
                o.remove("type");
            }
            many => {
                o.remove("type");
                let branches: Vec<Value> = many.iter().map(|t| json!({"type": t})).collect();
                o.insert("anyOf".into(), Value::Array(branches));
            }
        }
    }
    // `type: "null"` alone (a branch of oneOf), handled by its parent.
    // Only null (absent or null, in a rule between fields).
    if o.get("type") == Some(&json!("null")) {
        o.remove("type");
        o.insert("nullable".into(), json!(true));
        o.insert("enum".into(), json!([null]));
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = o.get(key).cloned() {
            let is_null = |b: &Value| b.get("type") == Some(&json!("null"));
            if branches.iter().any(is_null) {
                let rest: Vec<Value> = branches.into_iter().filter(|b| !is_null(b)).collect();
                o.insert("nullable".into(), json!(true));
                if rest.len() == 1 {
                    // A `$ref` takes no siblings in 3.0: wrap it.
                    o.remove(key);
                    o.insert("allOf".into(), Value::Array(rest));
                } else {
                    o.insert(key.into(), Value::Array(rest));
                }
            }
        }
    }
    if let Some(Value::Array(examples)) = o.get("examples").cloned() {
        // Schema examples only: a media type's `examples` is a map.
        o.remove("examples");
        if let Some(first) = examples.into_iter().next() {
            o.insert("example".into(), first);
        }
    }
    if let Some(c) = o.remove("const") {
        o.insert("enum".into(), json!([c]));
    }
    for (bound, flag) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        if let Some(n) = o.get(bound).filter(|n| n.is_number()).cloned() {
            o.insert(flag.into(), n);
            o.insert(bound.into(), json!(true));
        }
    }
    if o.remove("contentMediaType").is_some() || o.remove("contentEncoding").is_some() {
        o.insert("type".into(), json!("string"));
        o.insert("format".into(), json!("binary"));
    }
    // JSON Schema keywords 3.0's subset does not have; what they said is
    // a refinement a 3.0 reader does without.
    for k in [
        "$schema",
        "propertyNames",
        "unevaluatedProperties",
        "dependentRequired",
        "$comment",
    ] {
        o.remove(k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_one_schemas_read_as_three_oh() {
        let doc = json!({
            "openapi": "3.1.0",
            "info": {"title": "t", "version": "1", "license": {"name": "MIT", "identifier": "MIT"}},
            "paths": {},
            "components": {"schemas": {
                "A": {"type": ["string", "null"], "examples": ["x"]},
                "B": {"oneOf": [{"type": "null"}, {"$ref": "#/components/schemas/A"}]},
                "C": {"type": "integer", "exclusiveMinimum": 0, "const": 3},
                "D": {"type": "array", "items": {"type": "integer", "format": "int32", "minimum": 0}},
                "E": {"contentMediaType": "application/octet-stream"},
                "F": {"type": ["integer", "string"]},
                "H": {"properties": {"n": {"type": "null"}}},
                "G": {"type": "object", "properties": {
                    "type": {"type": ["string", "null"]}, "const": {"type": "integer"}}}
            }}
        });
        let v = openapi_3_0(doc);
        assert_eq!(v["openapi"], "3.0.3");
        assert!(v["info"]["license"].get("identifier").is_none());
        let s = &v["components"]["schemas"];
        assert_eq!(
            s["A"],
            json!({"type": "string", "nullable": true, "example": "x"})
        );
        assert_eq!(
            s["B"],
            json!({"allOf": [{"$ref": "#/components/schemas/A"}], "nullable": true})
        );
        assert_eq!(
            s["C"],
            json!({"type": "integer", "minimum": 0, "exclusiveMinimum": true, "enum": [3]})
        );
        assert_eq!(s["D"]["items"]["minimum"], 0);
        assert_eq!(s["E"], json!({"type": "string", "format": "binary"}));
        assert_eq!(
            s["H"]["properties"]["n"],
            json!({"nullable": true, "enum": [null]})
        );
        assert_eq!(
            s["F"],
            json!({"anyOf": [{"type": "integer"}, {"type": "string"}]})
        );
        // Properties named like keywords are properties.
        assert_eq!(
            s["G"]["properties"],
            json!({"type": {"type": "string", "nullable": true}, "const": {"type": "integer"}})
        );
    }
}
