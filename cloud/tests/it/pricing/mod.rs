//! Pricing rule automation: the spec's shapes (string `id` and
//! `position_id`, `{data: [rule]}`, 201 `{fieldErrors}`), positions that
//! stay 1..n however rules are created, moved and deleted (also at once),
//! and jobs that really change item prices: the math, the audit, the
//! `item.updated` events, one run per job key, all or nothing.
//!
//! `rules.rs`: the rules and their positions; `jobs.rs`: the jobs.

use depot_testkit::cloud;
mod jobs;
mod rules;

use cloud::{TestCloud, assert_error, spawn_cloud};
use depot_cloud::settings::RateLimit;
use depot_protocol::{ItemId, Money, PriceListId};
use serde_json::{Value, json};

fn base(app: &TestCloud) -> String {
    format!("/v1/automation/{}/items/pricing/rules", app.a.business)
}

/// A valid rule body: list 1 → list 2, 10 % up, with `extra` fields.
fn rule_body(extra: Value) -> Value {
    let mut body = json!({"origin_price_list_id": 1, "target_price_list_id": 2,
        "origin_action_id": "increase_percent", "origin_action_value": "10"});
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    body
}

async fn create(app: &TestCloud, body: Value) -> Value {
    let r = app.post(&format!("{}/create", base(app)), body).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body["data"][0].clone()
}

/// The rules' (id, position_id) as listed.
async fn positions(app: &TestCloud) -> Vec<(String, String)> {
    let r = app.get(&format!("{}/list", base(app))).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body["data"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            (
                r["id"].as_str().unwrap_or_default().to_owned(),
                r["position_id"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn assert_dense(p: &[(String, String)]) {
    let got: Vec<String> = p.iter().map(|p| p.1.clone()).collect();
    let want: Vec<String> = (1..=p.len()).map(|i| i.to_string()).collect();
    assert_eq!(got, want, "{p:?}");
}

/// Creates an item of tenant A with prices `(list, amount, currency)`,
/// brand, category and publication channels.
async fn item(
    app: &TestCloud,
    sku: &str,
    brand: &str,
    category: &str,
    prices: &[(i64, &str, &str)],
    channels: &[&str],
) -> i64 {
    let prices: Vec<Value> = prices
        .iter()
        .map(|(l, a, c)| json!({"price_list_id": l, "amount": a, "currency": c}))
        .collect();
    let links: Vec<Value> = channels
        .iter()
        .map(|c| json!({"channel": c, "url": format!("https://{c}.example/{sku}")}))
        .collect();
    let r = app
        .post(&format!("/v1/items/{}/create", app.a.business),
            json!({"sku": sku, "name": sku, "brand": brand, "category": category, "prices": prices, "links": links}))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body["data"]["id"].as_i64().expect("id")
}

/// An item's price in a list, as "12.50".
async fn price(app: &TestCloud, item: i64, list: i64) -> Option<String> {
    let item = app
        .wms
        .item(app.a.business, ItemId(item))
        .await
        .expect("item");
    item.prices
        .iter()
        .find(|p| p.price_list_id == PriceListId(list))
        .map(|p| p.amount.to_string())
}

async fn execute(app: &TestCloud, body: Value) -> cloud::Res {
    app.post(&format!("{}/jobs/execute", base(app)), body).await
}
