//! Ids in paths and numbers in query strings: 4xx, never 500.

use super::{assert_refused, fixture, lists};
use depot_testkit::cloud::spawn_cloud;
use serde_json::json;

/// A refusal says the rule in words: no Rust type, no serde or axum
/// wording.
fn plain_words(body: &serde_json::Value, what: &str) {
    let mut said = vec![body["message"].as_str().unwrap_or("").to_owned()];
    for e in body["errors"].as_array().into_iter().flatten() {
        said.push(e["status"].as_str().unwrap_or("").to_owned());
    }
    for text in said {
        let words: Vec<&str> = text.split(|c: char| !c.is_ascii_alphanumeric()).collect();
        for leak in [
            "i8",
            "i16",
            "i32",
            "i64",
            "u8",
            "u16",
            "u32",
            "u64",
            "usize",
            "isize",
            "f64",
            "deserialize",
            "serde",
        ] {
            assert!(
                !words.contains(&leak),
                "{what}: {text:?} speaks Rust ({leak})"
            );
        }
        for leak in [
            "target type",
            "struct ",
            "Failed to",
            "at index",
            "invalid digit",
        ] {
            assert!(
                !text.contains(leak),
                "{what}: {text:?} speaks Rust ({leak})"
            );
        }
    }
}

/// Ids in paths: 0, negative, `i64::MAX`, beyond `i64`, not integers.
#[tokio::test]
async fn extreme_ids_in_paths_answer_4xx() {
    let app = spawn_cloud().await;
    let f = fixture(&app).await;
    let b = app.a.business;
    let ids = [
        "0",
        "-1",
        "2147483648",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551616",
        "1e300",
        "1.5",
    ];
    let all_before = lists(&app, &f).await;
    let before = app.event_count().await;
    for id in ids {
        for (method, path, body) in [
            (
                "PUT",
                format!("/v1/items/{b}/{id}/edit"),
                Some(json!({"name": "x"})),
            ),
            (
                "PUT",
                format!("/v1/orders/{b}/{id}/status"),
                Some(json!({"status": "cancelled"})),
            ),
            (
                "PUT",
                format!("/v1/orders/{b}/{id}/address"),
                Some(json!({"shipping_address": {"line1": "x"}})),
            ),
            (
                "POST",
                format!("/v1/outbounds/{b}/dispatch-runs/{id}/close"),
                None,
            ),
            (
                "POST",
                format!("/v1/outbounds/{b}/dispatch-runs/{id}/load"),
                Some(json!({"code": "x"})),
            ),
            (
                "PUT",
                format!("/v1/printers/{b}/{id}/edit"),
                Some(json!({"name": "x"})),
            ),
            (
                "PUT",
                format!("/v1/automation/{b}/items/pricing/rules/{id}/edit"),
                Some(json!({"name": "x"})),
            ),
            (
                "DELETE",
                format!("/v1/automation/{b}/items/pricing/rules/{id}/delete"),
                None,
            ),
            (
                "PUT",
                format!("/v1/webhooks/{b}/{id}/edit"),
                Some(json!({"description": "x"})),
            ),
            ("DELETE", format!("/v1/webhooks/{b}/{id}/delete"), None),
            ("POST", format!("/v1/webhooks/{b}/{id}/rotate-secret"), None),
            (
                "POST",
                format!("/v1/webhooks/{b}/{}/deliveries/{id}/retry", f.webhook),
                None,
            ),
            (
                "POST",
                format!("/v1/contact/{b}/{id}"),
                Some(
                    json!({"name": "A", "email": "a@example.com", "subject": "s", "message": "m"}),
                ),
            ),
            (
                "POST",
                format!("/v1/crm/{b}/threads/{id}/message"),
                Some(json!({"body": "hi"})),
            ),
            (
                "POST",
                format!("/v1/inventory/{id}/adjust"),
                Some(
                    json!({"warehouse_id": f.w0, "item_id": f.item, "reason": "received", "quantity": 1}),
                ),
            ),
            (
                "POST",
                format!("/v1/orders/{id}/create"),
                Some(
                    json!({"channel": "web", "external_ref": "P", "lines": [{"sku": "N-1", "quantity": 1}]}),
                ),
            ),
        ] {
            let r = app.call(method, &path, Some(&app.a.key), body).await;
            assert_refused(&r, &format!("{method} {path}"), None);
            plain_words(&r.body, &format!("{method} {path}"));
        }
        let r = app
            .raw(
                "POST",
                &format!("/v1/printers/jobs/{b}/{id}"),
                &app.a.key,
                Some("application/octet-stream"),
                b"^XA^XZ".to_vec(),
            )
            .await;
        assert_refused(&r, &format!("print job to {id}"), None);
        let boundary = "numbers-boundary";
        let form = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"category\"\r\n\r\ndelivery_note\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"d.pdf\"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\n%%EOF\n\r\n--{boundary}--\r\n"
        );
        let r = app
            .raw(
                "POST",
                &format!("/v1/documents/{b}/order/{id}"),
                &app.a.key,
                Some(&format!("multipart/form-data; boundary={boundary}")),
                form.into_bytes(),
            )
            .await;
        assert_refused(&r, &format!("document for order {id}"), None);
    }
    assert_eq!(app.event_count().await, before);
    assert_eq!(lists(&app, &f).await, all_before);
}

/// The numbers of the list routes' query strings: what is outside the
/// documented range is a 4xx with the error body, the rest a page, never a
/// 500.
#[tokio::test]
async fn query_string_numbers_answer_4xx_not_500() {
    let app = spawn_cloud().await;
    let f = fixture(&app).await;
    let b = app.a.business;
    let routes: Vec<(String, &[&str])> = vec![
        (format!("/v1/items/{b}/list"), &["start", "length"]),
        (
            format!("/v1/inventory/{b}/items/list"),
            &["start", "length", "warehouse_id", "item_id"],
        ),
        (format!("/v1/orders/{b}/list"), &["start", "length"]),
        (
            format!("/v1/inbounds/{b}/orders/list"),
            &["start", "length", "warehouse_id"],
        ),
        (
            format!("/v1/picking/{b}/waves/list"),
            &["start", "length", "warehouse_id"],
        ),
        (format!("/v1/shipments/{b}/list"), &["start", "length"]),
        (
            format!("/v1/outbounds/{b}/dispatch-runs"),
            &["start", "length", "warehouse_id"],
        ),
        (format!("/v1/events/{b}/list"), &["after", "length"]),
        (format!("/v1/conflicts/{b}/list"), &["start", "length"]),
        (
            format!("/v1/business/{b}/warehouses"),
            &["is_visible_sales"],
        ),
        (
            format!("/v1/buyers/{b}/find/by_name?key_id=ana"),
            &["start", "length"],
        ),
        (format!("/v1/crm/{b}/threads/list"), &["start", "length"]),
        (format!("/v1/contact/{b}/forms"), &["start", "length"]),
        (format!("/v1/webhooks/{b}/list"), &["start", "length"]),
        (
            format!("/v1/webhooks/{b}/{}/deliveries", f.webhook),
            &["start", "length"],
        ),
    ];
    // Beyond `i64` or no integer at all: refused whatever the parameter.
    let never = [
        "9223372036854775808",
        "-9223372036854775809",
        "18446744073709551616",
        "1e300",
        "1.5",
        "x",
    ];
    let maybe = [
        "-9223372036854775808",
        "-1",
        "0",
        "1",
        "1000",
        "1001",
        "2147483648",
        "9223372036854775807",
    ];
    // What each parameter's documented range leaves out besides.
    let out_of_range = |param: &str| -> &[&str] {
        match param {
            "start" | "after" => &["-1", "-9223372036854775808"],
            "length" => &["-1", "0", "1001", "9223372036854775807"],
            "is_visible_sales" => &["-1", "2", "2147483648", "9223372036854775807"],
            // Ids filter: one that names nothing finds nothing.
            _ => &[],
        }
    };
    for (route, params) in &routes {
        for p in *params {
            let sep = if route.contains('?') { '&' } else { '?' };
            for v in never.iter().chain(&maybe) {
                let path = format!("{route}{sep}{p}={v}");
                let r = app.get(&path).await;
                assert!(r.status < 500, "{path}: {} {}", r.status, r.body);
                if r.status >= 400 || never.contains(v) || out_of_range(p).contains(v) {
                    assert_refused(&r, &path, None);
                    plain_words(&r.body, &path);
                    let message = r.body["message"].as_str().unwrap_or("");
                    let named = r.body["errors"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|e| e["name"] == *p);
                    assert!(
                        message.contains(p) || named,
                        "{path}: {} names no {p}",
                        r.body
                    );
                }
            }
        }
    }
    // The long poll's wait, with a bound it documents.
    for v in ["-1", "30001", "9223372036854775807", "1e300"] {
        let path = format!("/v1/events/{b}/list?wait={v}");
        assert_refused(&app.get(&path).await, &path, None);
    }
}
