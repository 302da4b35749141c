//! Channels' connectors: set and shown through the API, refused when
//! wrong with nothing written, failing visibly (API and `/metrics`) while
//! their platform is down; and, where CI runs a real django-oscar
//! storefront (`DEPOT_TEST_OSCAR_DIR`), end to end against it
//! ([`oscar`]).

mod oscar;

use depot_testkit::cloud::{TestCloud, assert_error, field_names, spawn_cloud_configured};
use depot_testkit::eventually_some;
use serde_json::{Value, json};

pub(crate) async fn ok(app: &TestCloud, path: &str, body: Value) -> Value {
    let r = app.post(path, body).await;
    assert_eq!(r.status, 200, "{path}: {:?}", r.body);
    r.body["data"].clone()
}

pub(crate) async fn shop(app: &TestCloud, code: &str) {
    let (b, w) = (app.a.business, app.a.warehouses[0].0);
    ok(
        app,
        &format!("/v1/channels/{b}/create"),
        json!({"code": code, "name": "Oscar shop", "kind": "storefront", "warehouse_ids": [w]}),
    )
    .await;
}

/// A cloud whose connectors may reach loopback and retry quickly.
pub(crate) async fn cloud() -> TestCloud {
    spawn_cloud_configured(|s| {
        s.connectors.allow_private_targets = true;
        s.connectors.first_retry_secs = 0.5;
        s.connectors.max_retry_secs = 1.0;
        s.connectors.call_timeout_secs = 5.0;
    })
    .await
}

#[tokio::test]
async fn a_connector_is_set_and_shown_and_wrong_ones_are_refused_with_nothing_written() {
    let app = spawn_cloud_configured(|_| {}).await;
    let b = app.a.business;
    shop(&app, "κατάστημα").await;
    let path = format!("/v1/channels/{b}/κατάστημα/connector");
    assert_error(&app.get(&path).await, 404);
    let good = json!({"kind": "oscar", "base_url": "https://shop.example.com/", "token": "t0k",
                      "user": "staff@example.com", "password": "pw", "sku_map": {"ΜΕΛΙ": "HONEY-1"}});

    // Wrong: each field named, nothing set.
    for (body, field) in [
        (
            json!({"kind": "oscar", "base_url": "http://shop.example.com", "token": "t"}),
            "base_url",
        ),
        (
            json!({"kind": "oscar", "base_url": "https://10.0.0.8/", "token": "t"}),
            "base_url",
        ),
        (
            json!({"kind": "oscar", "base_url": "https://shop.example.com"}),
            "token",
        ),
        (
            json!({"kind": "oscar", "base_url": "https://shop.example.com", "token": "t", "user": "u"}),
            "password",
        ),
        (
            json!({"kind": "oscar", "base_url": "https://shop.example.com", "token": "t", "every_secs": 0}),
            "every_secs",
        ),
        (
            json!({"kind": "oscar", "base_url": "https://shop.example.com", "token": "t",
                "sku_map": {"A": "X", "B": "X"}}),
            "sku_map",
        ),
        (
            json!({"kind": "oscar", "base_url": "https://shop.example.com", "token": " "}),
            "token",
        ),
    ] {
        let r = app.put(&path, body.clone()).await;
        assert_error(&r, 422);
        assert_eq!(field_names(&r.body), [field], "{body}");
    }
    assert_error(
        &app.put(
            &path,
            json!({"kind": "shopify", "base_url": "https://x", "token": "t"}),
        )
        .await,
        422,
    );
    assert_error(
        &app.put(&format!("/v1/channels/{b}/nope/connector"), good.clone())
            .await,
        404,
    );
    assert_error(&app.get(&path).await, 404);
    // Another business's channel is not found from here.
    let other = format!("/v1/channels/{}/κατάστημα/connector", app.b.business);
    assert!(matches!(
        app.put(&other, good.clone()).await.status,
        401 | 403 | 404
    ));

    // Set: secrets shown only as set; an edit leaving them out keeps them.
    let r = app.put(&path, good).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let c = &r.body["data"];
    assert_eq!(c["base_url"], "https://shop.example.com/");
    assert_eq!(c["token_set"], true);
    assert_eq!(c["password_set"], true);
    assert!(
        c.get("token").is_none() && c.get("password").is_none(),
        "{c}"
    );
    assert_eq!(c["sku_map"]["ΜΕΛΙ"], "HONEY-1");
    assert_eq!(c["every_secs"], 5);
    let r = app
        .put(
            &path,
            json!({"kind": "oscar", "base_url": "https://shop.example.com/", "user": "staff@example.com",
                   "enabled": false}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["data"]["token_set"], true);
    assert_eq!(r.body["data"]["password_set"], true);
    assert_eq!(r.body["data"]["state"], "disabled");
    let shown = app.get(&path).await;
    assert_eq!(shown.body["data"]["state"], "disabled");
}

#[tokio::test]
async fn a_connector_whose_platform_is_down_fails_visibly_and_keeps_its_cursors() {
    let app = cloud().await;
    let b = app.a.business;
    shop(&app, "shop").await;
    // A port nothing listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let path = format!("/v1/channels/{b}/shop/connector");
    let r = app
        .put(
            &path,
            json!({"kind": "oscar", "base_url": format!("http://127.0.0.1:{port}"), "token": "t",
                   "every_secs": 1}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let failing = eventually_some("the connector failing twice", || async {
        let c = app.get(&path).await.body["data"].clone();
        (c["state"] == "failing" && c["failures"].as_i64() >= Some(2)).then_some(c)
    })
    .await;
    assert!(
        failing["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("cannot be reached")),
        "{failing}"
    );
    assert_eq!(failing["orders_cursor"], "");
    assert_eq!(failing["orders_in"], 0);
    let metrics = app.get("/metrics").await;
    let text = metrics.text();
    assert!(
        text.lines().any(|l| l.starts_with("depot_connector_up{")
            && l.contains("channel=\"shop\"")
            && l.ends_with(" 0")),
        "{text}"
    );
}
