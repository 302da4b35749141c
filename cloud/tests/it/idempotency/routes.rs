//! Every write of the cloud, as its OpenAPI descriptions list them, is
//! described with the key and takes it.

use super::{replayed, send};
use depot_testkit::cloud::spawn_cloud;
use serde_json::{Value, json};

/// The writes (method, path template, operation) a description lists.
pub fn writes(doc: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        for method in ["post", "put", "patch", "delete"] {
            if let Some(op) = item.get(method) {
                out.push((method.to_uppercase(), path.clone(), op.clone()));
            }
        }
    }
    out
}

/// The optional header parameter and the 409 and 422 answers.
pub fn assert_described(method: &str, path: &str, op: &Value) {
    let params = op["parameters"].as_array().cloned().unwrap_or_default();
    let keys: Vec<&Value> = params
        .iter()
        .filter(|p| p["name"] == "Idempotency-Key")
        .collect();
    assert_eq!(keys.len(), 1, "{method} {path}: {params:?}");
    assert_eq!(keys[0]["in"], "header", "{method} {path}");
    assert_ne!(keys[0]["required"], true, "{method} {path}");
    assert_eq!(keys[0]["schema"]["maxLength"], 255, "{method} {path}");
    for status in ["409", "422"] {
        let r = &op["responses"][status];
        assert!(
            r["description"]
                .as_str()
                .is_some_and(|d| d.contains("Idempotency-Key")),
            "{method} {path}: {status} {r}"
        );
    }
    let ok = op["responses"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(s, _)| s.starts_with('2'))
        .all(|(_, r)| r["headers"]["Idempotent-Replayed"].is_object());
    assert!(ok, "{method} {path}: Idempotent-Replayed on success");
}

/// A path template with its parameters filled: the business, a carrier
/// that exists, `1` for the rest.
pub fn concrete(template: &str, business: i64) -> String {
    template
        .split('/')
        .map(|segment| match segment {
            "{business_id}" => business.to_string(),
            "{carrier}" => "own".to_owned(),
            s if s.starts_with('{') => "1".to_owned(),
            s => s.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[tokio::test]
async fn every_write_is_described_with_the_key() {
    let app = spawn_cloud().await;
    let mut seen = 0;
    for doc in ["/v1/openapi.json", "/api/openapi.json"] {
        let r = app.call("GET", doc, None, None).await;
        assert_eq!(r.status, 200, "{doc}");
        for (method, path, op) in writes(&r.body) {
            assert_described(&method, &path, &op);
            seen += 1;
        }
    }
    // The 49 writes of /v1 and the 2 of the release-notes API.
    assert_eq!(seen, 51);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_write_takes_the_key() {
    let app = spawn_cloud().await;
    assert_eq!(app.a.business.0, 1, "paths are made for business 1");
    let mut routes = Vec::new();
    for doc in ["/v1/openapi.json", "/api/openapi.json"] {
        routes.extend(writes(&app.call("GET", doc, None, None).await.body));
    }
    for (i, (method, template, _)) in routes.iter().enumerate() {
        let url = concrete(template, app.a.business.0);
        let body = json!({});
        let what = format!("{method} {template}");

        let refused = app
            .as_a()
            .raw(method, &url)
            .header("Idempotency-Key", "clé")
            .json(&body)
            .send()
            .await;
        assert_eq!(refused.status, 400, "{what}: {:?}", refused.body);
        assert!(
            refused.body["message"]
                .as_str()
                .is_some_and(|m| m.contains("Idempotency-Key")),
            "{what}: {:?}",
            refused.body
        );

        let key = format!("route-{i}");
        let first = send(
            &app.http,
            method,
            &url,
            Some(&app.a.key),
            Some(&key),
            Some(&body),
        )
        .await;
        assert_eq!(
            first.header("idempotency-key"),
            Some(key.as_str()),
            "{what}"
        );
        assert!(
            first.status < 500,
            "{what}: {} {:?}",
            first.status,
            first.body
        );
        let again = send(
            &app.http,
            method,
            &url,
            Some(&app.a.key),
            Some(&key),
            Some(&body),
        )
        .await;
        assert_eq!(again.status, first.status, "{what}: {:?}", again.body);
        if (200..300).contains(&first.status) {
            assert!(replayed(&again), "{what}: a success is replayed");
            assert_eq!(again.bytes, first.bytes, "{what}");
        }
    }
}
