//! The catalogue as an AsyncAPI 3.0 document (`/v1/asyncapi.json`): the
//! websocket stream, its query, and one message per event type.

use super::schema::{payload_schema, record_schemas};
use serde_json::{Map, Value, json};

/// The event envelope around a payload.
fn envelope(name: &str, version: u32, payload: Value) -> Value {
    json!({
        "type": "object",
        "required": ["seq", "id", "origin", "business_id", "kind", "version", "payload", "at"],
        "properties": {
            "seq": {"type": "integer", "description": "Position in this node's log: what `after` takes."},
            "id": {"type": "string", "description": "The event's id, the same on every node."},
            "origin": {"type": "string", "description": "The node that wrote it: cloud or edge:<id>."},
            "business_id": {"type": "integer"},
            "kind": {"const": name},
            "version": {"const": version},
            "payload": payload,
            "at": {"type": "string", "format": "date-time"}
        }
    })
}

/// The document, for a service of `version`.
pub fn document(version: &str) -> Value {
    let mut messages = Map::new();
    let mut refs = Vec::new();
    for t in super::public() {
        let id = t.name().replace('.', "_");
        messages.insert(
            id.clone(),
            json!({
                "name": t.name(),
                "title": t.name(),
                "summary": t.summary,
                "payload": envelope(t.name(), t.version, payload_schema(t)),
                "x-depot-version": t.version,
                "x-depot-source": t.source.as_str(),
            }),
        );
        refs.push(json!({"$ref": format!("#/channels/stream/messages/{id}")}));
    }
    let channel_messages: Map<String, Value> = messages
        .keys()
        .map(|id| {
            (
                id.clone(),
                json!({"$ref": format!("#/components/messages/{id}")}),
            )
        })
        .collect();
    json!({
        "asyncapi": "3.0.0",
        "info": {
            "title": "Depot events",
            "version": version,
            "description": "The events of a business, live: each websocket frame is \
                `{\"events\": [event, ...], \"next\": seq}`, events in log order; \
                reconnect with `after=<next>` to miss nothing. Authenticate with the \
                `X-API-KEY` header or, from a browser, with `ticket` from \
                `POST /v1/events/{business_id}/tickets`. A client that does not take \
                a frame within 10 seconds is closed with a reason and resumes with `after`."
        },
        "channels": {
            "stream": {
                "address": "/v1/events/{business_id}/stream",
                "parameters": {"business_id": {"description": "The business."}},
                "messages": channel_messages,
                "bindings": {"ws": {"method": "GET", "query": {
                    "type": "object",
                    "properties": {
                        "after": {"type": "integer", "description": "Send what came after this seq first."},
                        "kinds": {"type": "string", "description": "Comma-separated types or families (`order.*`)."},
                        "warehouse_id": {"type": "integer"},
                        "station": {"type": "string"},
                        "ticket": {"type": "string", "description": "A single-use ticket, for browsers."}
                    }
                }}}
            }
        },
        "operations": {
            "receiveEvents": {
                "action": "receive",
                "channel": {"$ref": "#/channels/stream"},
                "messages": refs
            }
        },
        "components": {
            "messages": messages,
            "schemas": record_schemas(super::public()),
            "securitySchemes": {
                "apiKey": {"type": "httpApiKey", "name": "X-API-KEY", "in": "header"}
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `$ref` in `v`.
    fn refs<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
        match v {
            Value::Object(m) => {
                if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                    out.push(r);
                }
                m.values().for_each(|v| refs(v, out));
            }
            Value::Array(a) => a.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }

    #[test]
    fn every_reference_resolves() {
        let doc = document("1.2.3");
        let mut all = Vec::new();
        refs(&doc, &mut all);
        assert!(all.len() > 40);
        for r in all {
            let pointer = r.strip_prefix('#').expect("local reference");
            assert!(doc.pointer(pointer).is_some(), "{r} does not resolve");
        }
    }

    #[test]
    fn one_message_per_public_type() {
        let doc = document("1.2.3");
        let messages = doc["components"]["messages"].as_object().expect("messages");
        assert_eq!(messages.len(), super::super::public().count());
        let m = &messages["order_status_changed"];
        assert_eq!(m["name"], "order.status_changed");
        assert_eq!(m["payload"]["properties"]["version"]["const"], 1);
        assert!(!messages.contains_key("key_created"));
        assert_eq!(doc["info"]["version"], "1.2.3");
    }
}
