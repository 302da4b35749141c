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
