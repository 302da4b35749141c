//! A key over its rate gets 429, the spec's body naming the seconds to wait,
//! and `Retry-After`; other keys are unaffected.

use depot_cloud::settings::RateLimit;
use depot_testkit::cloud;

#[tokio::test]
async fn over_the_limit_is_told_when_to_come_back() {
    let app = cloud::spawn_cloud_with(RateLimit {
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
    let app = cloud::spawn_cloud_with(RateLimit {
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

/// Public tracking takes no key: a client address gets a burst, then is
/// told to wait; an API key does not lift the limit.
#[tokio::test]
async fn public_tracking_is_limited_per_client_address() {
    let app = cloud::spawn_cloud().await;
    let burst = depot_cloud::ratelimit::TRACKING_BURST;
    for i in 0..burst {
        let r = app
            .call("GET", &format!("/v1/tracking/DPT{i:020}"), None, None)
            .await;
        assert_eq!(r.status, 404, "{i}: {}", r.body);
    }
    let r = app
        .call("GET", "/v1/tracking/DPT00000000000000420", None, None)
        .await;
    assert_eq!(r.status, 429, "{}", r.body);
    assert!(r.headers.get("retry-after").is_some());
    let keyed = app
        .call(
            "GET",
            "/v1/tracking/DPT00000000000000420",
            Some(&app.a.key),
            None,
        )
        .await;
    assert_eq!(keyed.status, 429);
    // The rest of the API is not the tracking route's budget.
    let other = app.get(&format!("/v1/business/{}", app.a.business)).await;
    assert_eq!(other.status, 200);
}
