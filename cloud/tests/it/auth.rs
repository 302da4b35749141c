//! Every route × {no key, bad key, revoked key, other tenant's key} → 401
//! with the error body, and not a byte of the target's data.

use depot_testkit::cloud::{assert_error, spawn_cloud};
use serde_json::json;

#[tokio::test]
async fn every_route_refuses_every_bad_key() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    let item = app.item("AUTH-1").await;
    app.receive("AUTH-1", 5).await;
    let order = app.order("AUTH-O1", &[("AUTH-1", 1)]).await;
    let revoked = app.wms.create_key(b, None).await.expect("key");
    app.wms.revoke_key(revoked.key.id).await.expect("revoke");

    let routes: Vec<(&str, String, Option<serde_json::Value>)> = vec![
        ("GET", format!("/v1/business/{b}"), None),
        ("GET", "/v1/business/my".into(), None),
        ("GET", "/v1/business/my/warehouses".into(), None),
        (
            "GET",
            format!("/v1/business/{b}/warehouses?is_visible_sales=1"),
            None,
        ),
        ("GET", format!("/v1/items/{b}/list"), None),
        (
            "POST",
            format!("/v1/items/{b}/create"),
            Some(json!({"sku": "X", "name": "X"})),
        ),
        (
            "PUT",
            format!("/v1/items/{b}/{item}/edit"),
            Some(json!({"name": "Y"})),
        ),
        ("GET", format!("/v1/inventory/{b}/items/list"), None),
        (
            "POST",
            format!("/v1/inventory/{b}/adjust"),
            Some(
                json!({"warehouse_id": app.a.warehouses[0].0, "item_id": item, "reason": "received", "quantity": 1}),
            ),
        ),
        ("GET", format!("/v1/orders/{b}/list"), None),
        ("GET", format!("/v1/orders/{b}/{order}"), None),
        (
            "POST",
            format!("/v1/orders/{b}/create"),
            Some(
                json!({"channel": "web", "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"}, "external_ref": "AUTH-O2", "lines": [{"sku": "AUTH-1", "quantity": 1}]}),
            ),
        ),
        (
            "PUT",
            format!("/v1/orders/{b}/{order}/status"),
            Some(json!({"status": "confirmed"})),
        ),
    ];
    // Warehouse operations: readable lists succeed with the right key; the
    // writes are checked for 401 only (their ids need not exist: the key is
    // refused before anything is looked up).
    let operations: Vec<(&str, String, Option<serde_json::Value>, bool)> = vec![
        ("GET", format!("/v1/inbounds/{b}/orders/list"), None, true),
        (
            "POST",
            format!("/v1/inbounds/{b}/orders/create"),
            Some(
                json!({"warehouse_id": 1, "reference": "X", "supplier": "S", "lines": [{"sku": "AUTH-1", "quantity": 1}]}),
            ),
            false,
        ),
        (
            "POST",
            format!("/v1/inbounds/{b}/reception"),
            Some(json!({"inbound_id": 1, "lines": [{"code": "AUTH-1"}]})),
            false,
        ),
        ("GET", format!("/v1/picking/{b}/waves/list"), None, true),
        ("GET", format!("/v1/picking/{b}/waves/1"), None, false),
        (
            "POST",
            format!("/v1/picking/{b}/waves/create"),
            Some(json!({"warehouse_id": 1})),
            false,
        ),
        (
            "POST",
            format!("/v1/picking/{b}/item/scan"),
            Some(json!({"wave_id": 1, "code": "AUTH-1"})),
            false,
        ),
        (
            "POST",
            format!("/v1/packing/{b}/pack-order"),
            Some(
                json!({"order_id": order, "items": [{"code": "AUTH-1"}], "packages": [{"weight_g": 1}]}),
            ),
            false,
        ),
        ("GET", format!("/v1/shipments/{b}/list"), None, true),
        (
            "POST",
            format!("/v1/shipments/{b}/generate-label"),
            Some(json!({"shipment_id": 1, "format": "zpl"})),
            false,
        ),
        (
            "GET",
            format!("/v1/outbounds/{b}/dispatch-runs"),
            None,
            true,
        ),
        (
            "POST",
            format!("/v1/outbounds/{b}/dispatch-runs/1/close"),
            None,
            false,
        ),
        (
            "GET",
            format!("/v1/outbounds/{b}/dispatch-runs/1/manifest"),
            None,
            false,
        ),
        ("GET", format!("/v1/printers/{b}/list"), None, true),
        (
            "POST",
            format!("/v1/printers/{b}/create"),
            Some(json!({"name": "P", "kind": "zpl", "connection": "tcp://h:9100"})),
            false,
        ),
        (
            "PUT",
            format!("/v1/printers/{b}/1/edit"),
            Some(json!({"name": "Q"})),
            false,
        ),
        (
            "POST",
            format!("/v1/printers/jobs/{b}/1"),
            Some(json!("^XA^XZ")),
            false,
        ),
        ("GET", format!("/v1/printers/jobs/{b}/1"), None, false),
        ("GET", format!("/v1/documents/{b}/categories"), None, true),
        ("GET", format!("/v1/edges/{b}/list"), None, true),
        ("GET", format!("/v1/conflicts/{b}/list"), None, true),
        ("GET", format!("/v1/events/{b}/list"), None, true),
        (
            "GET",
            format!("/v1/documents/{b}/order/{order}/list"),
            None,
            true,
        ),
        (
            "POST",
            format!("/v1/documents/{b}/order/{order}"),
            Some(json!({})),
            false,
        ),
        (
            "GET",
            format!("/v1/documents/{b}/order/{order}/1"),
            None,
            false,
        ),
        // Live streams: a ticket with the right key; the stream itself
        // answers 426 to a request that is not an upgrade.
        ("POST", format!("/v1/events/{b}/tickets"), None, true),
        ("GET", format!("/v1/events/{b}/stream"), None, false),
        // CRM: the lists, a search and the configuration writes succeed with
        // the right key (the department first: the form names it).
        (
            "GET",
            format!("/v1/buyers/{b}/find/by_name?key_id=auth"),
            None,
            true,
        ),
        (
            "POST",
            format!("/v1/contact/{b}/departments"),
            Some(json!({"code": "auth", "name": "Auth"})),
            true,
        ),
        ("GET", format!("/v1/contact/{b}/departments"), None, true),
        (
            "POST",
            format!("/v1/contact/{b}/forms"),
            Some(json!({"name": "Auth", "department": "auth"})),
            true,
        ),
        ("GET", format!("/v1/contact/{b}/forms"), None, true),
        (
            "POST",
            format!("/v1/contact/{b}/1"),
            Some(json!({"name": "A", "email": "a@example.com", "subject": "S", "message": "M"})),
            false,
        ),
        ("GET", format!("/v1/crm/{b}/threads/list"), None, true),
        (
            "POST",
            format!("/v1/crm/{b}/threads/1/message"),
            Some(json!({"body": "hello"})),
            false,
        ),
        (
            "GET",
            format!("/v1/crm/{b}/threads/messages/1"),
            None,
            false,
        ),
        // Pricing rules: the list and a create succeed with the right key;
        // ids need not exist for the others.
        (
            "GET",
            format!("/v1/automation/{b}/items/pricing/rules/list"),
            None,
            true,
        ),
        (
            "POST",
            format!("/v1/automation/{b}/items/pricing/rules/create"),
            Some(
                json!({"origin_price_list_id": 1, "target_price_list_id": 2, "origin_action_id": "set_fixed", "origin_action_value": "1"}),
            ),
            true,
        ),
        (
            "PUT",
            format!("/v1/automation/{b}/items/pricing/rules/1/edit"),
            Some(json!({"status": 0})),
            false,
        ),
        (
            "DELETE",
            format!("/v1/automation/{b}/items/pricing/rules/1/delete"),
            None,
            false,
        ),
        (
            "PUT",
            format!("/v1/automation/{b}/items/pricing/rules/position"),
            Some(json!({"id": 1, "position_id": 1})),
            false,
        ),
        (
            "POST",
            format!("/v1/automation/{b}/items/pricing/rules/jobs/execute"),
            Some(json!({"job_id": "auth-1"})),
            false,
        ),
        (
            "GET",
            format!("/v1/automation/{b}/items/pricing/rules/jobs/auth-1/changes"),
            None,
            false,
        ),
        // Webhooks: the list and a create (inactive, so nothing is sent)
        // succeed with the right key.
        ("GET", format!("/v1/webhooks/{b}/list"), None, true),
        (
            "POST",
            format!("/v1/webhooks/{b}/create"),
            Some(
                json!({"url": "https://hooks.example.com/auth", "event_types": ["*"], "active": false}),
            ),
            true,
        ),
        ("GET", format!("/v1/webhooks/{b}/1"), None, false),
        (
            "PUT",
            format!("/v1/webhooks/{b}/1/edit"),
            Some(json!({"active": true})),
            false,
        ),
        ("DELETE", format!("/v1/webhooks/{b}/1/delete"), None, false),
        (
            "POST",
            format!("/v1/webhooks/{b}/1/rotate-secret"),
            None,
            false,
        ),
        ("GET", format!("/v1/webhooks/{b}/1/deliveries"), None, false),
        (
            "GET",
            format!("/v1/webhooks/{b}/1/deliveries/x/attempts"),
            None,
            false,
        ),
        (
            "POST",
            format!("/v1/webhooks/{b}/1/deliveries/x/retry"),
            None,
            false,
        ),
    ];
    let routes: Vec<(&str, String, Option<serde_json::Value>)> = routes
        .into_iter()
        .chain(
            operations
                .iter()
                .map(|(m, p, b, _)| (*m, p.clone(), b.clone())),
        )
        .collect();
    let events_before = app.event_count().await;
    let bad_keys: [(&str, Option<&str>); 5] = [
        ("no key", None),
        ("empty key", Some("")),
        (
            "unknown key",
            Some("dpk_000000000000000000000000000000000000000000000000"),
        ),
        ("revoked key", Some(revoked.secret.as_str())),
        ("other tenant", Some(app.b.key.as_str())),
    ];
    for (method, path, body) in &routes {
        for (label, key) in bad_keys {
            // /business/my answers the caller's own business, so another
            // tenant's key is legitimately accepted there.
            if label == "other tenant" && path.starts_with("/v1/business/my") {
                continue;
            }
            let r = app.call(method, path, key, body.clone()).await;
            assert_error(&r, 401);
            let keys: Vec<_> = r
                .body
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default();
            assert_eq!(
                keys,
                ["code", "error", "message"],
                "{method} {path} with {label}: {:?}",
                r.body
            );
        }
    }
    assert_eq!(
        app.event_count().await,
        events_before,
        "a refused request wrote something"
    );

    // The same routes with the right key succeed (the matrix is not vacuous).
    let readable: Vec<&String> = operations.iter().filter(|o| o.3).map(|o| &o.1).collect();
    for (method, path, body) in routes
        .iter()
        .filter(|(_, p, _)| !operations.iter().any(|o| &o.1 == p) || readable.contains(&p))
    {
        let r = app.call(method, path, Some(&app.a.key), body.clone()).await;
        assert_eq!(r.status, 200, "{method} {path}: {:?}", r.body);
    }
}

#[tokio::test]
async fn my_routes_answer_only_the_callers_business() {
    let app = spawn_cloud().await;
    let r = app
        .call("GET", "/v1/business/my", Some(&app.b.key), None)
        .await;
    assert_eq!(r.body["data"], json!([app.b.business.0]));
    let r = app
        .call("GET", "/v1/business/my/warehouses", Some(&app.b.key), None)
        .await;
    let ids: Vec<i64> = r.body["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w["id"].as_i64())
        .collect();
    assert_eq!(
        ids,
        app.b.warehouses.iter().map(|w| w.0).collect::<Vec<_>>()
    );
    assert_eq!(r.body["recordsTotal"], "2");
}

#[tokio::test]
async fn ids_of_another_tenant_are_not_found_in_ones_own_business() {
    let app = spawn_cloud().await;
    // Tenant B's order, asked for under tenant A's business with A's key.
    let b_item = app
        .wms
        .create_item(
            app.b.business,
            serde_json::from_value(json!({"sku": "B-1", "name": "b"})).expect("item"),
        )
        .await
        .expect("create");
    let r = app
        .get(&format!("/v1/orders/{}/999999", app.a.business))
        .await;
    assert_error(&r, 404);
    let r = app
        .put(
            &format!("/v1/items/{}/{}/edit", app.a.business, b_item.id),
            json!({"name": "stolen"}),
        )
        .await;
    assert_error(&r, 404);
    let still = app.wms.item(app.b.business, b_item.id).await.expect("item");
    assert_eq!(still.name, "b");
}

#[tokio::test]
async fn a_revoked_key_stops_working_at_once() {
    let app = spawn_cloud().await;
    let k = app.wms.create_key(app.a.business, None).await.expect("key");
    let path = format!("/v1/business/{}", app.a.business);
    assert_eq!(
        app.call("GET", &path, Some(&k.secret), None).await.status,
        200
    );
    app.wms.revoke_key(k.key.id).await.expect("revoke");
    assert_error(&app.call("GET", &path, Some(&k.secret), None).await, 401);
}
