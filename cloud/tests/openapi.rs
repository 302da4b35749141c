//! The OpenAPI description covers every route served, and every schema it
//! refers to is defined.

mod common;

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
    let app = common::spawn_app().await;
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
    let app = common::spawn_app().await;
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
