//! Subscriptions: made (the secret shown once), listed, changed, rotated,
//! deleted; bad fields named; limits; other businesses' subscriptions out
//! of reach.

use super::{base, fast};
use depot_testkit::cloud::{assert_error, field_names, spawn_cloud, spawn_cloud_configured};
use serde_json::{Value, json};

#[tokio::test]
async fn subscriptions_are_made_seen_changed_rotated_and_deleted() {
    let app = spawn_cloud_configured(fast).await;
    let base = base(&app);
    let r = app
        .post(
            &format!("{base}/create"),
            json!({"url": "https://hooks.example.com/depot", "description": "ERP",
                   "event_types": ["order.*", "shipment.estimated_delivery_changed", "order.*"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let made = &r.body["data"];
    let id = made["id"].as_i64().expect("id");
    let secret = made["secret"].as_str().expect("the secret, once");
    assert!(
        secret.starts_with("whsec_") && secret.len() == 70,
        "{secret}"
    );
    assert_eq!(
        made["event_types"],
        json!(["order.*", "shipment.estimated_delivery_changed"])
    );
    assert_eq!(made["active"], true);
    assert_eq!(made["business_id"], app.a.business.0);

    let own = "a-secret-of-our-own-making-0123456789";
    let r = app
        .post(
            &format!("{base}/create"),
            json!({"url": "https://hooks.example.com/other", "event_types": ["*"], "secret": own, "active": false}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["data"]["secret"], own);
    assert_eq!(r.body["data"]["active"], false);

    let list = app.get(&format!("{base}/list")).await;
    assert_eq!(list.status, 200);
    assert_eq!(list.body["recordsTotal"], "2");
    let listed = list.body["data"].as_array().expect("list");
    assert_eq!(listed[0]["id"], id);
    assert!(
        listed.iter().all(|w| w.get("secret").is_none()),
        "{listed:?}"
    );
    let page = app.get(&format!("{base}/list?start=1&length=1")).await;
    assert_eq!(
        page.body["data"][0]["url"],
        "https://hooks.example.com/other"
    );
    let one = app.get(&format!("{base}/{id}")).await;
    assert_eq!(one.body["data"]["description"], "ERP");
    assert!(one.body["data"].get("secret").is_none());

    let r = app
        .put(
            &format!("{base}/{id}/edit"),
            json!({"active": false, "event_types": ["*"], "description": " "}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let edited = &r.body["data"];
    assert_eq!(
        (
            &edited["active"],
            &edited["event_types"],
            &edited["description"]
        ),
        (&json!(false), &json!(["*"]), &Value::Null)
    );
    assert_eq!(edited["url"], "https://hooks.example.com/depot");
    assert!(edited.get("secret").is_none());

    let r = app
        .post(&format!("{base}/{id}/rotate-secret"), json!({}))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let rotated = r.body["data"]["secret"].as_str().expect("new secret");
    assert_ne!(rotated, secret);

    let r = app
        .call(
            "DELETE",
            &format!("{base}/{id}/delete"),
            Some(&app.a.key),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["data"]["id"], id);
    assert_error(&app.get(&format!("{base}/{id}")).await, 404);
    assert_error(&app.get(&format!("{base}/{id}/deliveries")).await, 404);
    assert_eq!(
        app.get(&format!("{base}/list")).await.body["recordsTotal"],
        "1"
    );
}

#[tokio::test]
async fn bad_subscriptions_name_their_fields_and_write_nothing() {
    // Default settings: https to public addresses only.
    let app = spawn_cloud().await;
    let base = base(&app);
    let create = format!("{base}/create");
    for (body, fields) in [
        (json!({}), vec!["url", "event_types"]),
        (
            json!({"url": "http://hooks.example.com/", "event_types": []}),
            vec!["url", "event_types"],
        ),
        (
            json!({"url": "https://127.0.0.1:8080/", "event_types": ["order.shipped", "key.created", "stock.*"]}),
            vec!["url", "event_types[0]", "event_types[1]"],
        ),
        (
            json!({"url": format!("https://hooks.example.com/{}", "a".repeat(2048)), "event_types": ["key.*"]}),
            vec!["url", "event_types[0]"],
        ),
        (
            json!({"url": "https://localhost/x", "event_types": ["*"], "secret": "short"}),
            vec!["url", "secret"],
        ),
        (
            json!({"url": "not a url", "event_types": ["*"], "description": "x".repeat(201)}),
            vec!["url", "description"],
        ),
        (
            json!({"url": "https://hooks.example.com/", "event_types": ["*"], "colour": "blue"}),
            vec!["colour"],
        ),
    ] {
        let r = app.post(&create, body.clone()).await;
        assert_error(&r, 422);
        let names = field_names(&r.body);
        assert!(
            fields.iter().all(|f| names.iter().any(|n| n.contains(f))),
            "{body}: {names:?}"
        );
    }
    assert_eq!(
        app.get(&format!("{base}/list")).await.body["recordsTotal"],
        "0"
    );

    let ok = json!({"url": "https://hooks.example.com/", "event_types": ["order.*"]});
    let r = app.post(&create, ok.clone()).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let id = r.body["data"]["id"].as_i64().expect("id");
    let r = app
        .put(
            &format!("{base}/{id}/edit"),
            json!({"secret": "x".repeat(40), "url": "http://hooks.example.com/"}),
        )
        .await;
    assert_error(&r, 422);
    assert_eq!(field_names(&r.body), ["url", "secret"]);
    let r = app
        .get(&format!("{base}/{id}/deliveries?status=lost"))
        .await;
    assert_error(&r, 422);
    assert_error(
        &app.get(&format!("{base}/{id}/deliveries/nope/attempts"))
            .await,
        404,
    );
    assert_error(&app.get(&format!("{base}/x")).await, 400);

    // At most 25 per business.
    for _ in 1..25 {
        assert_eq!(app.post(&create, ok.clone()).await.status, 200);
    }
    assert_error(&app.post(&create, ok.clone()).await, 409);
}

#[tokio::test]
async fn another_business_cannot_reach_a_subscription() {
    let app = spawn_cloud_configured(fast).await;
    let a = base(&app);
    let r = app
        .post(
            &format!("{a}/create"),
            json!({"url": "https://hooks.example.com/", "event_types": ["*"]}),
        )
        .await;
    let id = r.body["data"]["id"].as_i64().expect("id");
    let b = format!("/v1/webhooks/{}", app.b.business);
    // B's key on A's paths: 401; B's own path with A's id: 404.
    for (method, path) in [
        ("GET", format!("{a}/list")),
        ("GET", format!("{a}/{id}")),
        ("DELETE", format!("{a}/{id}/delete")),
        ("POST", format!("{a}/{id}/rotate-secret")),
    ] {
        let r = app.call(method, &path, Some(&app.b.key), None).await;
        assert_error(&r, 401);
    }
    for (method, path) in [
        ("GET", format!("{b}/{id}")),
        ("GET", format!("{b}/{id}/deliveries")),
        ("DELETE", format!("{b}/{id}/delete")),
        ("POST", format!("{b}/{id}/rotate-secret")),
    ] {
        let r = app.call(method, &path, Some(&app.b.key), None).await;
        assert_error(&r, 404);
    }
    let r = app
        .call(
            "PUT",
            &format!("{b}/{id}/edit"),
            Some(&app.b.key),
            Some(json!({"active": false})),
        )
        .await;
    assert_error(&r, 404);
    assert_eq!(
        app.get(&format!("{a}/{id}")).await.body["data"]["active"],
        true
    );
    assert_eq!(
        app.call("GET", &format!("{b}/list"), Some(&app.b.key), None)
            .await
            .body["recordsTotal"],
        "0"
    );
}
