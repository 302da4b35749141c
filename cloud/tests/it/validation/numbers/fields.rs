//! Every numeric field of every write route at the extremes, and an order
//! total past any amount.

use super::cases::cases;
use super::{Takes, assert_refused, extremes, field_names, fixture, lists, set};
use depot_testkit::cloud::{assert_error, spawn_cloud};
use serde_json::json;

#[tokio::test]
async fn every_numeric_field_of_every_write_route_at_the_extremes() {
    let app = spawn_cloud().await;
    let f = fixture(&app).await;
    let all_before = lists(&app, &f).await;
    let mut sent = 0;
    for c in cases(&app, &f) {
        let before = app.event_count().await;
        let lists_before = lists(&app, &f).await;
        for value in extremes(c.takes) {
            let mut body = c.body.clone();
            set(&mut body, c.field, value.clone());
            let r = app
                .call(c.method, &c.path, Some(&app.a.key), Some(body))
                .await;
            let what = format!("{} {} {} = {value}", c.method, c.path, c.field);
            let named = !matches!(c.takes, Takes::Id) || r.status == 422;
            let names = field_names(&r.body);
            let field = if names.iter().any(|n| n == c.or_names) {
                c.or_names
            } else {
                c.field
            };
            assert_refused(&r, &what, named.then_some(field));
            assert_eq!(app.event_count().await, before, "{what} wrote an event");
            sent += 1;
        }
        assert_eq!(
            lists(&app, &f).await,
            lists_before,
            "{} {} {} changed a list",
            c.method,
            c.path,
            c.field
        );
    }
    // Numbers inside text: a printer's port and baud rate.
    let b = app.a.business;
    let before = app.event_count().await;
    for connection in [
        "tcp://10.0.0.6:0",
        "tcp://10.0.0.6:-1",
        "tcp://10.0.0.6:65536",
        "tcp://10.0.0.6:18446744073709551616",
        "tcp://10.0.0.6:1e3",
        "serial:///dev/ttyUSB0?baud=0",
        "serial:///dev/ttyUSB0?baud=-9600",
        "serial:///dev/ttyUSB0?baud=4294967296",
        "serial:///dev/ttyUSB0?baud=1.5",
    ] {
        for (method, path) in [
            ("POST", format!("/v1/printers/{b}/create")),
            ("PUT", format!("/v1/printers/{b}/{}/edit", f.printer)),
        ] {
            let body = json!({"name": "P", "kind": "zpl", "connection": connection});
            let r = app.call(method, &path, Some(&app.a.key), Some(body)).await;
            assert_refused(
                &r,
                &format!("{method} {path} {connection}"),
                Some("connection"),
            );
            sent += 1;
        }
    }
    assert_eq!(app.event_count().await, before);
    assert!(sent > 500, "only {sent} requests");
    assert_eq!(lists(&app, &f).await, all_before);
}

/// The order total is an amount too: lines whose quantity times price
/// would pass it are refused, naming the line's price.
#[tokio::test]
async fn an_order_total_beyond_any_amount_is_refused() {
    let app = spawn_cloud().await;
    app.item("T-1").await;
    let b = app.a.business;
    let before = app.event_count().await;
    for lines in [
        json!([{"sku": "T-1", "quantity": 1_000_000, "unit_price": "999999999999999.99"}]),
        json!([{"sku": "T-1", "quantity": 1, "unit_price": "999999999999999.99"},
               {"sku": "T-1", "quantity": 1, "unit_price": "0.01"}]),
    ] {
        let n = lines.as_array().map_or(0, Vec::len);
        let r = app
            .post(
                &format!("/v1/orders/{b}/create"),
                json!({"channel": "web", "external_ref": "T", "lines": lines}),
            )
            .await;
        assert_error(&r, 422);
        assert_eq!(
            field_names(&r.body),
            [format!("lines[{}].unit_price", n - 1)],
            "{}",
            r.body
        );
    }
    assert_eq!(app.event_count().await, before);
    let r = app.get(&format!("/v1/orders/{b}/list")).await;
    assert_eq!(r.body["recordsTotal"], "0");
}
