//! The release-notes API described in its own OpenAPI document.

use super::*;

/// Every `$ref` in `v`, e.g. `#/components/schemas/ReleaseView`.
fn refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                match (k.as_str(), v.as_str()) {
                    ("$ref", Some(r)) => out.push(r.to_owned()),
                    _ => refs(v, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[tokio::test]
async fn the_release_notes_api_is_described() {
    let app = spawn_cloud_configured(|_| {}).await;
    let (s, ctype, text) = get(&app, "/api/openapi.json", "application/json").await;
    assert_eq!(s, 200);
    assert!(ctype.starts_with("application/json"), "{ctype}");
    let doc: Value = serde_json::from_str(&text).expect("json");
    let mut described: Vec<String> = Vec::new();
    for (path, ops) in doc["paths"].as_object().expect("paths") {
        for method in ops.as_object().expect("ops").keys() {
            described.push(format!("{} {path}", method.to_uppercase()));
        }
    }
    described.sort();
    let mut served = [
        "GET /api/releases",
        "POST /api/releases",
        "GET /api/releases/rss",
        "GET /api/releases/atom",
        "POST /api/sync-translations",
        "GET /api/sync-translations/{job_id}",
        "GET /.well-known/oauth-protected-resource",
        "GET /.well-known/oauth-authorization-server",
        "GET /.well-known/openid-configuration",
        "GET /.well-known/jwks.json",
    ];
    served.sort_unstable();
    assert_eq!(described, served);
    // Each described route is served (the writes answer 401 here).
    for route in served {
        let (method, path) = route.split_once(' ').expect("route");
        let path = path.replace("{job_id}", "1");
        let r = app.http.raw(method, &path).send().await;
        assert!(![404, 405].contains(&r.status), "{route}: {}", r.status);
    }

    let mut found = Vec::new();
    refs(&doc, &mut found);
    assert!(!found.is_empty());
    for r in found {
        let pointer = r.strip_prefix('#').expect("local ref");
        assert!(doc.pointer(pointer).is_some(), "{r} does not resolve");
    }
    let flows = &doc["components"]["securitySchemes"]["oauth2"]["flows"];
    assert_eq!(
        flows["clientCredentials"]["tokenUrl"],
        format!("{}/oauth/token", "http://127.0.0.1:8080")
    );
    assert!(flows["clientCredentials"]["scopes"]["releases:write"].is_string());
    assert_eq!(
        doc["paths"]["/api/releases"]["post"]["security"][0]["oauth2"],
        json!(["releases:write"])
    );
}
