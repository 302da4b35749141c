//! A key over its rate gets 429, the spec's body naming the seconds to wait,
//! and `Retry-After`; other keys are unaffected.

mod common;

use depot_cloud::settings::RateLimit;

#[tokio::test]
async fn over_the_limit_is_told_when_to_come_back() {
    let app = common::spawn_app_with(RateLimit {
        per_second: 1,
        burst: 3,
    })
    .await;
    let path = format!("/v1/business/{}", app.a.business);
    for _ in 0..3 {
        assert_eq!(app.get(&path).await.status, 200);
    }
    let r = app.get(&path).await;
    assert_eq!(r.status, 429);
    assert_eq!(r.body["error"], 1);
    let message = r.body["message"].as_str().unwrap_or_default();
    let retry: u64 = r
        .headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(retry >= 1, "Retry-After: {retry}");
    assert!(
        message.contains(&format!(
            "try again after {}",
            depot_protocol::plural::counted(retry, "second")
        )),
        "{message}"
    );
    // Tenant B's key has its own budget.
    let other = app
        .call(
            "GET",
            &format!("/v1/business/{}", app.b.business),
            Some(&app.b.key),
            None,
        )
        .await;
    assert_eq!(other.status, 200);
}

#[tokio::test]
async fn probes_and_metrics_are_never_limited_whatever_key_they_carry() {
    let app = common::spawn_app_with(RateLimit {
        per_second: 1,
        burst: 2,
    })
    .await;
    let path = format!("/v1/business/{}", app.a.business);
    while app.get(&path).await.status != 429 {}
    for probe in ["/healthz", "/readyz", "/metrics"] {
        for _ in 0..5 {
            let r = app.call("GET", probe, Some(&app.a.key), None).await;
            assert_eq!(r.status, 200, "{probe}: {:?}", r.body);
        }
    }
}
