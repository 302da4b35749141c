//! Outbound webhooks: subscriptions through the API (`subscriptions.rs`),
//! and deliveries (`delivery.rs`): signed, in order, retried while a
//! receiver is down and through a restart, given up after the retry
//! period and sent again by hand; estimated-delivery notifications.
//!
//! The cloud runs with retry waits of tens of milliseconds (settings, not
//! sleeps) and may target the test receiver on 127.0.0.1.

mod delivery;
mod receiver;
mod returns;
mod subscriptions;

use depot_cloud::settings::Settings;
use depot_cloud::webhooks::settings::WebhookSettings;
use depot_testkit::cloud::TestCloud;
use receiver::Receiver;
use serde_json::{Value, json};

/// Fast retries, and the receiver on loopback allowed.
fn fast(s: &mut Settings) {
    s.webhooks = WebhookSettings {
        attempt_timeout_secs: 2.0,
        first_retry_secs: 0.05,
        max_retry_secs: 0.2,
        retry_for_secs: 120.0,
        concurrency: 4,
        allow_private_targets: true,
        ..WebhookSettings::default()
    };
}

use depot_testkit::eventually_some as wait_for;

fn base(app: &TestCloud) -> String {
    format!("/v1/webhooks/{}", app.a.business)
}

/// Subscribes `rx` to `types` in tenant A; the receiver learns the secret.
async fn subscribe(app: &TestCloud, rx: &Receiver, types: &[&str]) -> i64 {
    let r = app
        .post(
            &format!("{}/create", base(app)),
            json!({"url": rx.url, "event_types": types}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    rx.set_secret(r.body["data"]["secret"].as_str().expect("secret"));
    r.body["data"]["id"].as_i64().expect("id")
}

/// A subscription's deliveries, newest first.
async fn deliveries(app: &TestCloud, hook: i64) -> Vec<Value> {
    let r = app
        .get(&format!("{}/{hook}/deliveries?length=1000", base(app)))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body["data"].as_array().cloned().unwrap_or_default()
}

async fn attempts(app: &TestCloud, hook: i64, delivery: &str) -> Vec<Value> {
    let r = app
        .get(&format!(
            "{}/{hook}/deliveries/{delivery}/attempts",
            base(app)
        ))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body["data"].as_array().cloned().unwrap_or_default()
}

/// The ids of tenant A's logged events whose kind starts with `prefix`,
/// in log order.
async fn logged(app: &TestCloud, prefix: &str) -> Vec<String> {
    app.wms
        .events_since(0, 1_000_000)
        .await
        .expect("events")
        .into_iter()
        .filter(|e| e.business_id == Some(app.a.business) && e.kind.starts_with(prefix))
        .map(|e| e.id.0.to_string())
        .collect()
}
