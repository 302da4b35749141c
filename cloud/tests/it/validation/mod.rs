//! Bad input gets a 4xx with the error body, and nothing is written.
//!
//! `numbers.rs`: every numeric field of every write route at the extremes,
//! and stock driven to its ceiling.

mod numbers;

use depot_testkit::cloud::{TestCloud, assert_error, field_names, spawn_cloud};
use depot_testkit::eventually;
use serde_json::{Value, json};

/// Sends a bad request and checks its status, body, and that the event log
/// (which every write appends to) did not move.
async fn refused(app: &TestCloud, method: &str, path: &str, body: Value, status: u16) -> Value {
    let before = app.event_count().await;
    let r = app.call(method, path, Some(&app.a.key), Some(body)).await;
    assert_error(&r, status);
    assert_eq!(
        app.event_count().await,
        before,
        "{method} {path} wrote despite {status}"
    );
    r.body
}

#[tokio::test]
async fn item_creation_errors() {
    let app = spawn_cloud().await;
    let p = format!("/v1/items/{}/create", app.a.business);
    refused(&app, "POST", &p, json!({"name": "no sku"}), 422).await;
    let b = refused(&app, "POST", &p, json!({"sku": 12, "name": "x"}), 422).await;
    assert_eq!(field_names(&b), ["sku"]);
    let b = refused(
        &app,
        "POST",
        &p,
        json!({"sku": "A", "name": "x".repeat(201)}),
        422,
    )
    .await;
    assert_eq!(field_names(&b), ["name"]);
    let b = refused(
        &app,
        "POST",
        &p,
        json!({"sku": "A", "name": "x", "gtin": "4006381333932"}),
        422,
    )
    .await;
    assert!(
        b["message"].as_str().unwrap_or("").contains("check digit"),
        "{b}"
    );
    let b = refused(&app, "POST", &p, json!({"sku": "A", "name": "x", "weight_g": 0, "dimensions": {"length_mm": -1, "width_mm": 1, "height_mm": 1}}), 422).await;
    assert_eq!(field_names(&b), ["dimensions.length_mm", "weight_g"]);
    let b = refused(&app, "POST", &p, json!({"sku": "A", "name": "x", "locations": [{"warehouse_id": app.b.warehouses[0].0, "location": "A-1"}]}), 422).await;
    assert_eq!(field_names(&b), ["locations[0].warehouse_id"]);

    app.item("DUP").await;
    let b = refused(
        &app,
        "POST",
        &p,
        json!({"sku": "DUP", "name": "again"}),
        409,
    )
    .await;
    assert_eq!(field_names(&b), ["sku"]);
    let r = app
        .post(
            &p,
            json!({"sku": "G1", "name": "g", "gtin": "4006381333931"}),
        )
        .await;
    assert_eq!(r.status, 200);
    // The same GTIN written as a GTIN-14 is the same product.
    let b = refused(
        &app,
        "POST",
        &p,
        json!({"sku": "G2", "name": "g", "barcodes": ["04006381333931"]}),
        409,
    )
    .await;
    assert_eq!(field_names(&b), ["barcodes[0]"]);
    // Another tenant may use the same SKU and GTIN.
    let r = app
        .call(
            "POST",
            &format!("/v1/items/{}/create", app.b.business),
            Some(&app.b.key),
            Some(json!({"sku": "DUP", "name": "theirs", "gtin": "4006381333931"})),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
}

#[tokio::test]
async fn malformed_and_oversized_bodies() {
    let app = spawn_cloud().await;
    let p = format!("/v1/items/{}/create", app.a.business);
    let before = app.event_count().await;
    let r = app
        .raw(
            "POST",
            &p,
            &app.a.key,
            Some("application/json"),
            b"{\"sku\": \"A\",".to_vec(),
        )
        .await;
    assert_error(&r, 400);
    let r = app
        .raw(
            "POST",
            &p,
            &app.a.key,
            Some("text/plain"),
            b"{\"sku\":\"A\",\"name\":\"B\"}".to_vec(),
        )
        .await;
    assert_error(&r, 415);
    let r = app
        .raw(
            "POST",
            &p,
            &app.a.key,
            None,
            b"{\"sku\":\"A\",\"name\":\"B\"}".to_vec(),
        )
        .await;
    assert_error(&r, 415);
    let huge = format!(
        "{{\"sku\":\"A\",\"name\":\"{}\"}}",
        "x".repeat(2 * 1024 * 1024)
    );
    let r = app
        .raw(
            "POST",
            &p,
            &app.a.key,
            Some("application/json"),
            huge.into_bytes(),
        )
        .await;
    assert_error(&r, 413);
    assert_eq!(app.event_count().await, before);
    // Only JSON as JSON: a "+json" type, another charset, a compressed
    // body are each refused with 415 saying what to send.
    let body = b"{\"sku\":\"A\",\"name\":\"B\"}".to_vec();
    for ct in [
        "application/merge-patch+json",
        "application/json; charset=latin1",
        "application/jsonx",
    ] {
        let r = app
            .raw("POST", &p, &app.a.key, Some(ct), body.clone())
            .await;
        assert_error(&r, 415);
    }
    for ct in ["application/json; charset=UTF-8", "Application/JSON"] {
        let sku = format!("OK-{}", ct.len());
        let ok = format!("{{\"sku\":\"{sku}\",\"name\":\"B\"}}");
        let r = app
            .raw("POST", &p, &app.a.key, Some(ct), ok.into_bytes())
            .await;
        assert_eq!(r.status, 200, "{ct}: {}", r.body);
    }
    let before = app.event_count().await;
    let gz = app
        .as_a()
        .raw("POST", &p)
        .header("content-type", "application/json")
        .header("content-encoding", "gzip")
        .body(body.clone())
        .send()
        .await;
    assert_eq!(gz.status, 415);
    let said = gz.body;
    assert!(
        said["message"]
            .as_str()
            .is_some_and(|m| m.contains("uncompressed")),
        "{said}"
    );
    assert_eq!(app.event_count().await, before);
}

/// A field the route does not take is refused and named, nested ones too,
/// on every body (a typo in an optional field would otherwise be dropped
/// in silence).
#[tokio::test]
async fn unknown_fields_are_refused_and_named() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    app.item("U-1").await;
    let before = app.event_count().await;
    for (path, body, named) in [
        (
            format!("/v1/items/{b}/create"),
            json!({"sku": "U-2", "name": "x", "colour": "red"}),
            "colour",
        ),
        (
            format!("/v1/inventory/{b}/adjust"),
            json!({"warehouse_id": app.a.warehouses[0].0, "sku": "U-1", "reason": "cycle_count", "delta": 1, "qty": 5}),
            "qty",
        ),
        (
            format!("/v1/orders/{b}/create"),
            json!({"channel": "web", "external_ref": "U", "lines": [{"sku": "U-1", "quantity": 1, "price": "1.00"}]}),
            "lines[0].price",
        ),
    ] {
        let r = app.post(&path, body).await;
        assert_error(&r, 422);
        let names: Vec<&str> = r.body["errors"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["name"].as_str())
            .collect();
        assert_eq!(names, [named], "{path}: {}", r.body);
    }
    assert_eq!(app.event_count().await, before);
}

#[tokio::test]
async fn edit_errors_and_partial_updates() {
    let app = spawn_cloud().await;
    let id = app.item("E-1").await;
    app.item("E-2").await;
    let p = format!("/v1/items/{}/{id}/edit", app.a.business);
    refused(&app, "PUT", &p, json!({"sku": "E-2"}), 409).await;
    refused(&app, "PUT", &p, json!({"name": ""}), 422).await;
    refused(
        &app,
        "PUT",
        &format!("/v1/items/{}/424242/edit", app.a.business),
        json!({"name": "x"}),
        404,
    )
    .await;
    refused(
        &app,
        "PUT",
        &format!("/v1/items/{}/abc/edit", app.a.business),
        json!({"name": "x"}),
        400,
    )
    .await;
    let r = app.put(&p, json!({"brand": "Acme", "barcodes": ["INT-1"], "links": [{"channel": "shop", "url": "https://shop.example/e1"}]})).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["data"]["sku"], "E-1");
    assert_eq!(r.body["data"]["brand"], "Acme");
    assert_eq!(
        r.body["data"]["prices"][0]["amount"], "10.00",
        "untouched prices are kept"
    );
    assert_eq!(r.body["data"]["barcodes"], json!(["INT-1"]));
}

#[tokio::test]
async fn adjustment_errors() {
    let app = spawn_cloud().await;
    app.item("S-1").await;
    let p = format!("/v1/inventory/{}/adjust", app.a.business);
    let w = app.a.warehouses[0].0;
    for q in [0, -4] {
        let b = refused(
            &app,
            "POST",
            &p,
            json!({"warehouse_id": w, "sku": "S-1", "reason": "received", "quantity": q}),
            422,
        )
        .await;
        assert_eq!(field_names(&b), ["quantity"]);
    }
    let b = refused(
        &app,
        "POST",
        &p,
        json!({"warehouse_id": w, "sku": "S-1", "reason": "stolen", "quantity": 1}),
        422,
    )
    .await;
    assert_eq!(field_names(&b), ["reason"]);
    refused(
        &app,
        "POST",
        &p,
        json!({"warehouse_id": w, "sku": "S-1", "reason": "received", "quantity": "many"}),
        422,
    )
    .await;
    refused(
        &app,
        "POST",
        &p,
        json!({"warehouse_id": w, "sku": "S-1", "reason": "adjusted", "delta": 0}),
        422,
    )
    .await;
    refused(&app, "POST", &p, json!({"warehouse_id": w, "sku": "S-1", "reason": "received", "quantity": 1, "note": "n".repeat(501)}), 422).await;
    refused(
        &app,
        "POST",
        &p,
        json!({"warehouse_id": w, "sku": "NOPE", "reason": "received", "quantity": 1}),
        404,
    )
    .await;
    refused(&app, "POST", &p, json!({"warehouse_id": app.b.warehouses[0].0, "sku": "S-1", "reason": "received", "quantity": 1}), 404).await;
    refused(&app, "POST", &p, json!({"warehouse_id": w, "sku": "S-1", "reason": "transfer", "quantity": 1, "to_warehouse_id": app.b.warehouses[0].0}), 404).await;
}

#[tokio::test]
async fn order_errors() {
    let app = spawn_cloud().await;
    app.item("O-1").await;
    let p = format!("/v1/orders/{}/create", app.a.business);
    let b = refused(&app, "POST", &p, json!({"channel": "web", "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"}, "external_ref": "X", "lines": [{"sku": "O-1", "quantity": 0}, {"sku": "NOPE", "quantity": 1}]}), 422).await;
    assert_eq!(field_names(&b), ["lines[0].quantity"]);
    let b = refused(
        &app,
        "POST",
        &p,
        json!({"channel": "web", "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"}, "external_ref": "X", "lines": [{"sku": "NOPE", "quantity": 1}]}),
        422,
    )
    .await;
    assert_eq!(field_names(&b), ["lines[0].sku"]);
    refused(
        &app,
        "POST",
        &p,
        json!({"channel": "web", "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"}, "external_ref": "X", "lines": []}),
        422,
    )
    .await;
    refused(
        &app,
        "POST",
        &p,
        json!({"channel": "web", "lines": [{"sku": "O-1", "quantity": 1}]}),
        422,
    )
    .await;
    refused(&app, "POST", &p, json!({"channel": "web", "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"}, "external_ref": "X", "warehouse_id": app.b.warehouses[0].0, "lines": [{"sku": "O-1", "quantity": 1}]}), 422).await;
    let id = app.order("O-OK", &[("O-1", 1)]).await;
    let sp = format!("/v1/orders/{}/{id}/status", app.a.business);
    let b = refused(&app, "PUT", &sp, json!({"status": "shipped"}), 422).await;
    assert_eq!(field_names(&b), ["status"]);
    let b = refused(&app, "PUT", &sp, json!({"status": "delivered"}), 409).await;
    assert_eq!(
        b["message"],
        "illegal status transition from pending to delivered"
    );
    refused(
        &app,
        "PUT",
        &format!("/v1/orders/{}/777/status", app.a.business),
        json!({"status": "confirmed"}),
        404,
    )
    .await;
    let r = app.get(&format!("/v1/orders/{}/777", app.a.business)).await;
    assert_error(&r, 404);
}

#[tokio::test]
async fn list_query_errors() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    for path in [
        format!("/v1/orders/{b}/list?status=lost"),
        format!("/v1/orders/{b}/list?date_from=yesterday"),
        format!("/v1/orders/{b}/list?length=0"),
        format!("/v1/orders/{b}/list?length=5000"),
        format!("/v1/items/{b}/list?start=-1"),
        format!("/v1/inventory/{b}/items/list?length=1001"),
        format!("/v1/business/{b}/warehouses?is_visible_sales=2"),
    ] {
        assert_error(&app.get(&path).await, 422);
    }
    for path in [
        format!("/v1/orders/{b}/list?start=abc"),
        format!("/v1/inventory/{b}/items/list?warehouse_id=x"),
        "/v1/business/abc".into(),
    ] {
        assert_error(&app.get(&path).await, 400);
    }
    assert_error(&app.get("/v1/nowhere").await, 404);
    assert_error(
        &app.call(
            "DELETE",
            &format!("/v1/business/{b}"),
            Some(&app.a.key),
            None,
        )
        .await,
        405,
    );
}

#[tokio::test]
async fn log_and_conflict_listing_errors() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    for (query, fields) in [
        ("after=-1", vec!["after"]),
        ("length=0", vec!["length"]),
        ("after=-5&length=5000", vec!["after", "length"]),
        ("wait=-1", vec!["wait"]),
        ("wait=30001", vec!["wait"]),
    ] {
        let r = app
            .call(
                "GET",
                &format!("/v1/events/{b}/list?{query}"),
                Some(&app.a.key),
                None,
            )
            .await;
        assert_error(&r, 422);
        assert_eq!(field_names(&r.body), fields, "{query}");
    }
    let r = app
        .call(
            "GET",
            &format!("/v1/events/{b}/list?after=x"),
            Some(&app.a.key),
            None,
        )
        .await;
    assert_error(&r, 400);
    let r = app
        .call(
            "GET",
            &format!("/v1/conflicts/{b}/list?rejected=maybe"),
            Some(&app.a.key),
            None,
        )
        .await;
    assert_error(&r, 422);
    assert_eq!(field_names(&r.body), ["rejected"]);
    // Blank is neither, as for every boolean of a query (found by
    // Schemathesis: the description says boolean).
    for blank in ["", "%20", "%09"] {
        let r = app
            .call(
                "GET",
                &format!("/v1/conflicts/{b}/list?rejected={blank}"),
                Some(&app.a.key),
                None,
            )
            .await;
        assert_error(&r, 422);
        assert_eq!(field_names(&r.body), ["rejected"]);
    }

    // The log reads forward from a position, a page at a time.
    let r = app
        .call(
            "GET",
            &format!("/v1/events/{b}/list?length=2"),
            Some(&app.a.key),
            None,
        )
        .await;
    assert_eq!(r.status, 200);
    let first = r.body["data"].clone();
    assert_eq!(first["events"].as_array().map(Vec::len), Some(2));
    assert_eq!(first["more"], true);
    let next = first["next"].as_i64().expect("next");
    let r = app
        .call(
            "GET",
            &format!("/v1/events/{b}/list?after={next}&length=1000"),
            Some(&app.a.key),
            None,
        )
        .await;
    let rest = r.body["data"]["events"].as_array().expect("events").clone();
    assert!(rest.iter().all(|e| e["seq"].as_i64() > Some(next)));
    assert!(rest.iter().all(|e| e["business_id"] == b.0));
}

#[tokio::test]
async fn the_log_can_be_long_polled() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    let head = app.get(&format!("/v1/events/{b}/list?length=1000")).await;
    let next = head.body["data"]["next"].as_i64().expect("next");

    // Nothing comes: the answer is empty, after the wait.
    let started = std::time::Instant::now();
    let r = app
        .get(&format!("/v1/events/{b}/list?after={next}&wait=200"))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["data"]["events"], serde_json::json!([]));
    assert_eq!(r.body["data"]["next"], next);
    assert!(started.elapsed() >= std::time::Duration::from_millis(200));

    // An event comes while a reader waits: it is answered with it, long
    // before its wait is over.
    let path = format!("/v1/events/{b}/list?after={next}&wait=20000");
    let waiting = app.get(&path);
    let write = async {
        eventually("the reader to wait", || async {
            app.wms.long_polls_waiting() == 1
        })
        .await;
        app.wms
            .station_event(
                b,
                serde_json::json!({"station": "pack-1", "business_id": b.0}),
            )
            .await
            .expect("event")
    };
    let started = std::time::Instant::now();
    let (r, written) = tokio::join!(waiting, write);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let events = r.body["data"]["events"].as_array().expect("events");
    assert_eq!(events.len(), 1, "{}", r.body);
    assert_eq!(events[0]["kind"], "station.scanned");
    assert_eq!(events[0]["seq"], written.seq);
    // Another business's events do not answer it.
    let other = app.b.business;
    let r = app
        .call(
            "GET",
            &format!("/v1/events/{other}/list?after={}&wait=100", written.seq),
            Some(&app.b.key),
            None,
        )
        .await;
    assert_eq!(r.body["data"]["events"], serde_json::json!([]));
}
