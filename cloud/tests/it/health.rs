//! `/healthz` and `/readyz`: no key needed; ready while the writer answers,
//! 503 with the error body once it hangs, while the process stays healthy.

use depot_testkit::cloud;
use serde_json::json;

#[tokio::test]
async fn health_needs_no_key_and_readiness_follows_the_writer() {
    let app = cloud::spawn_cloud().await;
    for path in ["/healthz", "/readyz"] {
        let r = app.call("GET", path, None, None).await;
        assert_eq!(
            (r.status, &r.body),
            (200, &json!({"status": "ok"})),
            "{path}"
        );
    }
    app.wms.hang_writer_for_tests().await;
    let r = app.call("GET", "/readyz", None, None).await;
    assert_eq!(r.status, 503, "{:?}", r.body);
    assert_eq!(
        (&r.body["error"], &r.body["code"]),
        (&json!(1), &json!(503))
    );
    assert!(
        r.body["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("not ready")),
        "{:?}",
        r.body
    );
    let r = app.call("GET", "/healthz", None, None).await;
    assert_eq!(r.status, 200);
}
