//! The OpenAPI description covers every route served, and every schema it
//! refers to is defined.

use depot_testkit::cloud;
use serde_json::Value;
use std::collections::BTreeSet;

fn refs(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                if k == "$ref" {
                    if let Some(s) = v.as_str() {
                        out.insert(s.to_owned());
                    }
                }
                refs(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[tokio::test]
async fn describes_every_route_with_resolvable_schemas() {
    let app = cloud::spawn_cloud().await;
    let r = app.call("GET", "/v1/openapi.json", None, None).await;
    assert_eq!(r.status, 200);
    let doc = r.body;
    assert_eq!(doc["info"]["version"], "1.0.0b");
    let ops: BTreeSet<String> = doc["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .flat_map(|(path, item)| {
            item.as_object()
                .into_iter()
                .flatten()
                .map(move |(method, _)| format!("{} {path}", method.to_uppercase()))
        })
        .collect();
    let expected: BTreeSet<String> = [
        "GET /healthz",
        "GET /readyz",
        "GET /v1/business/{business_id}",
        "GET /v1/business/my",
        "GET /v1/business/my/warehouses",
        "GET /v1/business/{business_id}/warehouses",
        "GET /v1/items/{business_id}/list",
        "POST /v1/items/{business_id}/create",
        "PUT /v1/items/{business_id}/{item_id}/edit",
        "GET /v1/locations/{business_id}/list",
        "GET /v1/locations/{business_id}/{location_id}",
        "POST /v1/locations/{business_id}/create",
        "PUT /v1/locations/{business_id}/{location_id}/edit",
        "GET /v1/putaway/{business_id}/tasks/list",
        "GET /v1/putaway/{business_id}/tasks/{task_id}",
        "POST /v1/putaway/{business_id}/scan",
        "GET /v1/counts/{business_id}/list",
        "POST /v1/counts/{business_id}/create",
        "GET /v1/counts/{business_id}/{count_id}",
        "POST /v1/counts/{business_id}/{count_id}/scan",
        "POST /v1/counts/{business_id}/{count_id}/approve",
        "POST /v1/counts/{business_id}/{count_id}/cancel",
        "GET /v1/replenishment/{business_id}/tasks/list",
        "GET /v1/replenishment/{business_id}/tasks/{task_id}",
        "GET /v1/replenishment/{business_id}/levels",
        "PUT /v1/replenishment/{business_id}/levels",
        "POST /v1/replenishment/{business_id}/scan",
        "GET /v1/returns/{business_id}/list",
        "GET /v1/returns/{business_id}/{return_id}",
        "POST /v1/returns/{business_id}/create",
        "POST /v1/returns/{business_id}/{return_id}/receive",
        "POST /v1/returns/{business_id}/{return_id}/cancel",
        "GET /v1/channels/{business_id}/list",
        "POST /v1/channels/{business_id}/create",
        "GET /v1/channels/{business_id}/{channel}",
        "PUT /v1/channels/{business_id}/{channel}/edit",
        "GET /v1/channels/{business_id}/{channel}/availability",
        "GET /v1/channels/{business_id}/{channel}/availability/changes",
        "GET /v1/channels/{business_id}/{channel}/connector",
        "PUT /v1/channels/{business_id}/{channel}/connector",
        "GET /v1/inventory/{business_id}/items/list",
        "POST /v1/inventory/{business_id}/adjust",
        "GET /v1/orders/{business_id}/list",
        "GET /v1/orders/{business_id}/{order_id}",
        "POST /v1/orders/{business_id}/create",
        "PUT /v1/orders/{business_id}/{order_id}/status",
        "PUT /v1/orders/{business_id}/{order_id}/address",
        "GET /v1/inbounds/{business_id}/orders/list",
        "POST /v1/inbounds/{business_id}/orders/create",
        "POST /v1/inbounds/{business_id}/reception",
        "GET /v1/picking/{business_id}/waves/list",
        "GET /v1/picking/{business_id}/waves/{wave_id}",
        "POST /v1/picking/{business_id}/waves/create",
        "POST /v1/picking/{business_id}/item/scan",
        "POST /v1/packing/{business_id}/pack-order",
        "GET /v1/shipments/{business_id}/list",
        "POST /v1/shipments/{business_id}/generate-label",
        "GET /v1/tracking/{tracking_number}",
        "POST /v1/webhooks/carriers/{carrier}",
        "GET /v1/outbounds/{business_id}/dispatch-runs",
        "POST /v1/outbounds/{business_id}/dispatch-runs/{run_id}/close",
        "POST /v1/outbounds/{business_id}/dispatch-runs/{run_id}/load",
        "GET /v1/outbounds/{business_id}/dispatch-runs/{run_id}/manifest",
        "GET /v1/printers/{business_id}/list",
        "POST /v1/printers/{business_id}/create",
        "PUT /v1/printers/{business_id}/{printer_id}/edit",
        "POST /v1/printers/jobs/{business_id}/{printer_id}",
        "GET /v1/printers/jobs/{business_id}/{printer_id}",
        "GET /v1/documents/{business_id}/categories",
        "GET /v1/documents/{business_id}/{entity_type}/{entity_id}/list",
        "POST /v1/documents/{business_id}/{entity_type}/{entity_id}",
        "GET /v1/documents/{business_id}/{entity_type}/{entity_id}/{document_id}",
        "GET /v1/edges/{business_id}/list",
        "GET /v1/conflicts/{business_id}/list",
        "GET /v1/events/{business_id}/list",
        "POST /v1/events/{business_id}/tickets",
        "GET /v1/events/{business_id}/stream",
        "GET /v1/buyers/{business_id}/find/{key_type}",
        "POST /v1/contact/{business_id}/{form_id}",
        "POST /v1/contact/{business_id}/departments",
        "GET /v1/contact/{business_id}/departments",
        "POST /v1/contact/{business_id}/forms",
        "GET /v1/contact/{business_id}/forms",
        "GET /v1/crm/{business_id}/threads/list",
        "POST /v1/crm/{business_id}/threads/{thread_id}/message",
        "GET /v1/crm/{business_id}/threads/messages/{thread_id}",
        "GET /v1/automation/{business_id}/items/pricing/rules/list",
        "POST /v1/automation/{business_id}/items/pricing/rules/create",
        "PUT /v1/automation/{business_id}/items/pricing/rules/{rule_id}/edit",
        "DELETE /v1/automation/{business_id}/items/pricing/rules/{rule_id}/delete",
        "PUT /v1/automation/{business_id}/items/pricing/rules/position",
        "POST /v1/automation/{business_id}/items/pricing/rules/jobs/execute",
        "GET /v1/automation/{business_id}/items/pricing/rules/jobs/{job_id}/changes",
        "GET /v1/webhooks/{business_id}/list",
        "POST /v1/webhooks/{business_id}/create",
        "GET /v1/webhooks/{business_id}/{webhook_id}",
        "PUT /v1/webhooks/{business_id}/{webhook_id}/edit",
        "DELETE /v1/webhooks/{business_id}/{webhook_id}/delete",
        "POST /v1/webhooks/{business_id}/{webhook_id}/rotate-secret",
        "GET /v1/webhooks/{business_id}/{webhook_id}/deliveries",
        "GET /v1/webhooks/{business_id}/{webhook_id}/deliveries/{delivery_id}/attempts",
        "POST /v1/webhooks/{business_id}/{webhook_id}/deliveries/{delivery_id}/retry",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    assert_eq!(ops, expected);

    let mut all = BTreeSet::new();
    refs(&doc, &mut all);
    assert!(!all.is_empty());
    for r in &all {
        let name = r
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("unexpected ref {r}"));
        assert!(
            doc["components"]["schemas"][name].is_object(),
            "dangling {r}"
        );
    }
    for schema in [
        "ErrorBody",
        "Item",
        "Order",
        "StockLevel",
        "AdjustRequest",
        "OrderCreate",
        "ItemCreate",
    ] {
        assert!(
            doc["components"]["schemas"][schema].is_object(),
            "{schema} missing"
        );
    }
    assert_eq!(
        doc["components"]["securitySchemes"]["api_key"]["name"],
        "X-API-KEY"
    );
}

/// The event catalogue is published as AsyncAPI, open like the OpenAPI
/// description, and the events served carry the version it names.
#[tokio::test]
async fn describes_the_events_as_asyncapi() {
    let app = cloud::spawn_cloud().await;
    let r = app.call("GET", "/v1/asyncapi.json", None, None).await;
    assert_eq!(r.status, 200);
    let doc = r.body;
    assert_eq!(doc["asyncapi"], "3.0.0");
    let messages = doc["components"]["messages"].as_object().expect("messages");
    assert!(messages.contains_key("order_status_changed"));
    assert!(messages.contains_key("wave_completed"));
    assert!(
        !messages.contains_key("key_created"),
        "keys are not for clients"
    );
    let mut all = BTreeSet::new();
    refs(&doc, &mut all);
    for r in all {
        let pointer = r.strip_prefix('#').expect("local");
        assert!(doc.pointer(pointer).is_some(), "{r} does not resolve");
    }

    let b = app.a.business;
    app.item("SKU-V").await;
    let list = app.get(&format!("/v1/events/{b}/list")).await;
    assert_eq!(list.status, 200, "{:?}", list.body);
    let events = list.body["data"]["events"].as_array().expect("events");
    assert!(!events.is_empty());
    for e in events {
        assert_eq!(e["version"], 1, "{e}");
    }
}

/// Every answer the shared layers give is documented where they give it,
/// and the 3.0.3 form says the same in 3.0's words. Where CI installs
/// `openapi-spec-validator` (DEPOT_TEST_OPENAPI_VALIDATOR, a validator no
/// one here wrote), both forms are checked against their versions' schemas.
#[tokio::test]
async fn every_answer_is_documented_in_3_1_and_3_0() {
    let app = cloud::spawn_cloud().await;
    // The warehouse API, then the release-notes API.
    for prefix in ["/v1", "/api"] {
        documented_in_both(&app, prefix).await;
    }
}

async fn documented_in_both(app: &cloud::TestCloud, prefix: &str) {
    let doc31 = app
        .call("GET", &format!("{prefix}/openapi.json"), None, None)
        .await
        .body;
    let r = app
        .call("GET", &format!("{prefix}/openapi-3.0.json"), None, None)
        .await;
    assert_eq!(r.status, 200);
    let doc30 = r.body;
    assert_eq!(doc30["openapi"], "3.0.3");
    for doc in [&doc31, &doc30] {
        for (path, item) in doc["paths"].as_object().into_iter().flatten() {
            for (method, op) in item.as_object().into_iter().flatten() {
                let answers = &op["responses"];
                let has = |s: &str| answers.get(s).is_some();
                let what = format!("{method} {path}");
                for status in ["400", "405", "503"] {
                    assert!(has(status), "{what} does not document {status}");
                }
                if op
                    .get("security")
                    .is_some_and(|s| s.as_array().is_some_and(|a| !a.is_empty()))
                {
                    assert!(has("401") && has("429"), "{what}: 401 and 429");
                }
                if op["requestBody"]["content"]
                    .get("application/json")
                    .is_some()
                {
                    for status in ["408", "413", "415", "422"] {
                        assert!(has(status), "{what} does not document {status}");
                    }
                }
            }
        }
    }
    // Nothing of 3.1's JSON Schema that 3.0 cannot read.
    fn only_3_0(v: &Value, at: &str) {
        match v {
            Value::Object(o) => {
                if let Some(t) = o.get("type") {
                    assert!(t.is_string(), "{at}: type {t}");
                    assert_ne!(t, "null", "{at}");
                }
                for k in ["const", "$schema", "contentMediaType", "prefixItems"] {
                    assert!(!o.contains_key(k), "{at}: {k}");
                }
                if let Some(e) = o.get("exclusiveMinimum") {
                    assert!(e.is_boolean(), "{at}: exclusiveMinimum {e}");
                }
                for (k, child) in o {
                    match (k.as_str(), child) {
                        ("properties" | "schemas", Value::Object(named)) => {
                            for (name, schema) in named {
                                only_3_0(schema, &format!("{at}/{k}/{name}"));
                            }
                        }
                        _ => only_3_0(child, &format!("{at}/{k}")),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|c| only_3_0(c, at)),
            _ => {}
        }
    }
    only_3_0(&doc30, "");
    // The same operations in both.
    let ops = |d: &Value| -> BTreeSet<String> {
        d["paths"]
            .as_object()
            .into_iter()
            .flatten()
            .flat_map(|(p, i)| {
                i.as_object()
                    .into_iter()
                    .flatten()
                    .map(move |(m, _)| format!("{m} {p}"))
            })
            .collect()
    };
    assert_eq!(ops(&doc31), ops(&doc30));
    let Ok(validator) = std::env::var("DEPOT_TEST_OPENAPI_VALIDATOR") else {
        eprintln!("DEPOT_TEST_OPENAPI_VALIDATOR unset: the descriptions are not validated");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, doc) in [("openapi-3.1.json", &doc31), ("openapi-3.0.json", &doc30)] {
        let path = dir
            .path()
            .join(format!("{}-{name}", prefix.trim_start_matches('/')));
        std::fs::write(&path, doc.to_string()).expect("write");
        let out = std::process::Command::new(&validator)
            .arg(&path)
            .output()
            .expect("run the validator");
        assert!(
            out.status.success(),
            "{name}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
