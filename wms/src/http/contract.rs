//! The OpenAPI description as a client generator needs it: every answer
//! the shared layers give documented on every route they guard, and the
//! same description in OpenAPI 3.0.3 for the generators that do not read
//! 3.1 yet.
//!
//! The answers come from the same code that gives them: the extractors
//! (400 for a path or query that is not what it must be; for a JSON body
//! 413, 415 and 422), the key check (401), the rate limiter (429), the
//! router (405). What a route itself answers stays in its own annotation.

use serde_json::{Map, Value, json};
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, ResponseBuilder};

/// An answer with the spec's error body.
pub(crate) fn error(description: &str) -> utoipa::openapi::Response {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("ErrorBody")))
                .build(),
        )
        .build()
}

/// Adds the shared layers' answers to every operation of `openapi` that
/// does not document them itself. `rate_limited`: the server limits
/// requests per key (the cloud).
pub fn describe(openapi: &mut OpenApi, rate_limited: bool) {
    operation_ids(openapi);
    for (path, item) in openapi.paths.paths.iter_mut() {
        // The keyless tracking route is limited per client address.
        let public_limit = rate_limited && path.starts_with("/v1/tracking/");
        for op in [
            &mut item.get,
            &mut item.post,
            &mut item.put,
            &mut item.patch,
            &mut item.delete,
        ]
        .into_iter()
        .flatten()
        {
            let keyed = op.security.as_ref().is_some_and(|s| !s.is_empty());
            let json_body = op
                .request_body
                .as_ref()
                .is_some_and(|b| b.content.contains_key("application/json"));
            let mut add = |status: &str, description: &str| {
                op.responses
                    .responses
                    .entry(status.to_owned())
                    .or_insert_with(|| error(description).into());
            };
            add(
                "400",
                "A path or query parameter is not what it must be (the message says the rule), \
                 or the body is not well-formed JSON",
            );
            add("405", "The path does not take this method");
            add(
                "503",
                "Every connection place is taken by a request in progress, or the server is \
                 starting or stopping: try again after Retry-After",
            );
            if keyed {
                add(
                    "401",
                    "No X-API-KEY, an unknown or revoked one, or a key of another business",
                );
            }
            if json_body {
                add(
                    "408",
                    "The body did not arrive within the server's body read timeout",
                );
                add("413", "The body is larger than the limit (1 MiB)");
                add(
                    "415",
                    "The body is not uncompressed application/json (UTF-8, or no charset)",
                );
                add(
                    "422",
                    "A field is missing, of the wrong kind, out of its range, or not a field of \
                     this request: errors[] names each",
                );
            }
            if rate_limited && keyed {
                add(
                    "429",
                    "Too many requests with this key: wait the seconds Retry-After says",
                );
            }
            if public_limit {
                add(
                    "429",
                    "Too many lookups from this address: wait the seconds Retry-After says",
                );
            }
        }
    }
}

/// Operation ids a generator can name functions by: unique, as OpenAPI
/// requires. Handlers are named for what they do within their module
/// (`list`, `create`), so the id is the route's tag and that name
/// (`orders_list`), and the method besides where two still meet.
fn operation_ids(openapi: &mut OpenApi) {
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    let mut ops = Vec::new();
    for item in openapi.paths.paths.values_mut() {
        for (method, op) in [
            ("get", &mut item.get),
            ("post", &mut item.post),
            ("put", &mut item.put),
            ("patch", &mut item.patch),
            ("delete", &mut item.delete),
        ] {
            if let Some(op) = op {
                let tag = op.tags.as_ref().and_then(|t| t.first()).cloned();
                let name = op.operation_id.clone().unwrap_or_else(|| method.to_owned());
                let id = match tag {
                    Some(tag) if !name.starts_with(&tag) => format!("{tag}_{name}"),
                    _ => name,
                };
                *seen.entry(id.clone()).or_default() += 1;
                ops.push((id, method, op));
            }
        }
    }
    for (id, method, op) in ops {
        let id = if seen.get(&id).copied().unwrap_or(0) > 1 {
            format!("{id}_{method}")
        } else {
            id
        };
        op.operation_id = Some(id.replace(['-', ' '], "_"));
    }
}

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
