//! Pricing rule automation: the spec's shapes (string `id` and
//! `position_id`, `{data: [rule]}`, 201 `{fieldErrors}`), positions that
//! stay 1..n however rules are created, moved and deleted (also at once),
//! and jobs that really change item prices: the math, the audit, the
//! `item.updated` events, one run per job key, all or nothing.

mod common;

use common::{TestApp, assert_error, spawn_app};
use depot_cloud::settings::RateLimit;
use depot_protocol::{ItemId, Money, PriceListId};
use serde_json::{Value, json};

fn base(app: &TestApp) -> String {
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

async fn create(app: &TestApp, body: Value) -> Value {
    let r = app.post(&format!("{}/create", base(app)), body).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body["data"][0].clone()
}

/// The rules' (id, position_id) as listed.
async fn positions(app: &TestApp) -> Vec<(String, String)> {
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
    app: &TestApp,
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
async fn price(app: &TestApp, item: i64, list: i64) -> Option<String> {
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

async fn execute(app: &TestApp, body: Value) -> common::Res {
    app.post(&format!("{}/jobs/execute", base(app)), body).await
}

#[tokio::test]
async fn rules_answer_the_spec_shapes() {
    let app = spawn_app().await;
    let rule = create(
        &app,
        rule_body(
            json!({"name": "Marketplace", "condition_id": "brand", "condition_value": "Acme",
        "status": 0, "channels": ["amazon"], "conditions": {"price_above": 5}}),
        ),
    )
    .await;
    assert!(
        rule["id"]
            .as_str()
            .is_some_and(|id| id.parse::<i64>().is_ok()),
        "{rule}"
    );
    assert_eq!(rule["position_id"], "1");
    for (field, value) in [
        ("origin_price_list_id", json!(1)),
        ("target_price_list_id", json!(2)),
        ("origin_action_id", json!("increase_percent")),
        ("origin_action_value", json!("10")),
        ("condition_id", json!("brand")),
        ("condition_value", json!("Acme")),
        ("status", json!(0)),
        ("name", json!("Marketplace")),
        ("type", json!("percentage")),
        ("value", json!(10.0)),
        ("channels", json!(["amazon"])),
        ("conditions", json!({"price_above": "5.00"})),
    ] {
        assert_eq!(rule[field], value, "{field} in {rule}");
    }
    let id = rule["id"].as_str().unwrap_or_default().to_owned();

    // The extended form alone makes a rule too.
    let second = create(&app, json!({"origin_price_list_id": 1, "target_price_list_id": 3, "type": "fixed", "value": -0.5})).await;
    assert_eq!(
        (
            second["origin_action_id"].clone(),
            second["origin_action_value"].clone(),
            second["position_id"].clone()
        ),
        (json!("add_fixed"), json!("-0.50"), json!("2"))
    );
    assert_eq!(second["status"], 1);

    let r = app.get(&format!("{}/list", base(&app))).await;
    assert_eq!(r.body["data"].as_array().map(Vec::len), Some(2));
    assert_eq!(r.body["data"][0], rule);

    let r = app
        .put(
            &format!("{}/{id}/edit", base(&app)),
            json!({"origin_action_value": "12.5", "status": 1, "name": null}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let edited = &r.body["data"][0];
    assert_eq!(
        (
            edited["origin_action_value"].clone(),
            edited["status"].clone(),
            edited["name"].clone(),
            edited["condition_value"].clone()
        ),
        (json!("12.5"), json!(1), json!("Marketplace"), json!("Acme"))
    );

    let r = app
        .call(
            "DELETE",
            &format!("{}/{id}/delete", base(&app)),
            Some(&app.a.key),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["data"][0]["id"], id.as_str());
    assert_eq!(r.body["data"][0]["position_id"], "1");
    assert_eq!(
        positions(&app).await,
        [(
            second["id"].as_str().unwrap_or_default().to_owned(),
            "1".to_owned()
        )]
    );
    for (method, path) in [
        ("PUT", format!("{}/{id}/edit", base(&app))),
        ("DELETE", format!("{}/{id}/delete", base(&app))),
    ] {
        assert_error(
            &app.call(method, &path, Some(&app.a.key), Some(json!({"status": 1})))
                .await,
            404,
        );
    }
}

#[tokio::test]
async fn fields_in_error_answer_201_and_write_nothing() {
    let app = spawn_app().await;
    let rule = create(&app, rule_body(json!({}))).await;
    let id = rule["id"].as_str().unwrap_or_default().to_owned();
    let events = app.event_count().await;
    let b = base(&app);
    let cases: Vec<(&str, String, Value, Vec<&str>)> = vec![
        (
            "POST",
            format!("{b}/create"),
            json!({"position_id": "1", "origin_price_list_id": 1, "target_price_list_id": 2,
            "origin_action_id": "increase_percent", "origin_action_value": 10}),
            vec!["position_id", "origin_action_value"],
        ),
        (
            "POST",
            format!("{b}/create"),
            json!({}),
            vec![
                "origin_price_list_id",
                "target_price_list_id",
                "origin_action_id",
            ],
        ),
        (
            "POST",
            format!("{b}/create"),
            rule_body(
                json!({"status": 2, "origin_price_list_id": -1, "condition_id": "colour",
            "origin_action_value": "1001", "rule": 1}),
            ),
            vec![
                "rule",
                "origin_price_list_id",
                "origin_action_value",
                "condition_id",
                "status",
            ],
        ),
        (
            "POST",
            format!("{b}/create"),
            rule_body(json!({"position_id": 3})),
            vec!["position_id"],
        ),
        (
            "POST",
            format!("{b}/create"),
            rule_body(json!({"type": "percentage", "value": 5})),
            vec!["type"],
        ),
        ("POST", format!("{b}/create"), json!([1, 2]), vec!["body"]),
        (
            "PUT",
            format!("{b}/{id}/edit"),
            json!({"origin_action_id": "decrease_percent", "origin_action_value": "150"}),
            vec!["origin_action_value"],
        ),
        (
            "PUT",
            format!("{b}/{id}/edit"),
            json!({"channels": "amazon", "conditions": {"size": "M"}}),
            vec!["channels", "conditions.size"],
        ),
        (
            "PUT",
            format!("{b}/{id}/edit"),
            json!({"position_id": 2}),
            vec!["position_id"],
        ),
        (
            "PUT",
            format!("{b}/abc/edit"),
            json!({"status": 5}),
            vec!["rule_id"],
        ),
        // With no rule to edit, values are not judged, but types still are.
        (
            "PUT",
            format!("{b}/abc/edit"),
            json!({"status": "active"}),
            vec!["rule_id", "status"],
        ),
        (
            "DELETE",
            format!("{b}/abc/delete"),
            Value::Null,
            vec!["rule_id"],
        ),
        (
            "DELETE",
            format!("{b}/0/delete"),
            Value::Null,
            vec!["rule_id"],
        ),
        (
            "DELETE",
            format!("{b}/99999999999/delete"),
            Value::Null,
            vec!["rule_id"],
        ),
        (
            "PUT",
            format!("{b}/position"),
            json!({"error": 1}),
            vec!["error", "id", "position_id"],
        ),
        (
            "PUT",
            format!("{b}/position"),
            json!({"id": id, "position_id": 2}),
            vec!["position_id"],
        ),
        (
            "PUT",
            format!("{b}/position"),
            json!({"positions": [{"id": id, "position_id": "1"}]}),
            vec!["positions[0].position_id"],
        ),
        (
            "POST",
            format!("{b}/jobs/execute"),
            json!({"rule_id": "x", "job_id": "", "status": 1}),
            vec!["status", "rule_id", "job_id"],
        ),
    ];
    for (method, path, body, names) in cases {
        let body = (!body.is_null()).then_some(body);
        let r = app
            .call(method, &path, Some(&app.a.key), body.clone())
            .await;
        assert_eq!(r.status, 201, "{method} {path} {body:?}: {:?}", r.body);
        let keys: Vec<&String> = r
            .body
            .as_object()
            .map(|o| o.keys().collect())
            .unwrap_or_default();
        assert_eq!(keys, ["fieldErrors"], "{:?}", r.body);
        let got: Vec<&str> = r.body["fieldErrors"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| {
                assert!(e["status"].as_str().is_some_and(|s| !s.is_empty()), "{e}");
                e["name"].as_str().unwrap_or_default()
            })
            .collect();
        assert_eq!(got, names, "{method} {path} {body:?}");
    }
    // Bodies that cannot be read keep the usual error answers.
    let create_path = format!("{b}/create");
    assert_error(
        &app.raw(
            "POST",
            &create_path,
            &app.a.key,
            Some("text/plain"),
            b"{}".to_vec(),
        )
        .await,
        415,
    );
    assert_error(
        &app.raw(
            "POST",
            &create_path,
            &app.a.key,
            Some("application/json"),
            b"{\"status\":".to_vec(),
        )
        .await,
        400,
    );
    let big = format!("{{\"name\": \"{}\"}}", "x".repeat(1024 * 1024 + 1));
    assert_error(
        &app.raw(
            "POST",
            &create_path,
            &app.a.key,
            Some("application/json"),
            big.into_bytes(),
        )
        .await,
        413,
    );
    assert_error(
        &app.raw(
            "PUT",
            &format!("{b}/position"),
            &app.a.key,
            None,
            Vec::new(),
        )
        .await,
        415,
    );

    assert_eq!(
        app.event_count().await,
        events,
        "a refused request wrote something"
    );
    let listed = app.get(&format!("{b}/list")).await;
    assert_eq!(listed.body["data"], json!([rule]));
}

#[tokio::test]
async fn positions_stay_dense_through_creates_moves_and_deletes() {
    let app = spawn_app().await;
    let b = base(&app);
    let mut ids = Vec::new();
    for _ in 0..4 {
        ids.push(
            create(&app, rule_body(json!({}))).await["id"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        );
    }
    // Inserted second: the rules after it move down.
    let inserted = create(&app, rule_body(json!({"position_id": 2}))).await;
    assert_eq!(inserted["position_id"], "2");
    let order: Vec<String> = positions(&app).await.into_iter().map(|p| p.0).collect();
    assert_eq!(
        order,
        [
            ids[0].clone(),
            inserted["id"].as_str().unwrap_or_default().to_owned(),
            ids[1].clone(),
            ids[2].clone(),
            ids[3].clone()
        ]
    );

    // Last to first: every rule moves, and the answer says so.
    let r = app
        .put(
            &format!("{b}/position"),
            json!({"id": ids[3].parse::<i64>().unwrap_or(0), "position_id": 1}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let answer: Vec<(String, i64)> = r.body["data"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            (
                m["id"].as_str().unwrap_or_default().to_owned(),
                m["position_id"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(answer.len(), 5);
    assert_eq!(answer[0], (ids[3].clone(), 1));
    assert!(r.body["data"][0]["id"].is_string() && r.body["data"][0]["position_id"].is_i64());

    // A move to where it is changes nothing.
    let r = app
        .put(
            &format!("{b}/position"),
            json!({"id": ids[3], "position_id": 1}),
        )
        .await;
    assert_eq!(r.body["data"], json!([]));

    // Several moves in order: only the rules whose position changed are answered.
    let r = app.put(&format!("{b}/position"), json!({"positions": [{"id": ids[0], "position_id": 5}, {"id": ids[2], "position_id": 4}]})).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let p = positions(&app).await;
    assert_dense(&p);
    assert_eq!(p[4].0, ids[0]);
    assert_eq!(p[3].0, ids[2]);
    assert!(
        r.body["data"]
            .as_array()
            .is_some_and(|d| d.len() < 5 && !d.is_empty()),
        "{:?}",
        r.body
    );

    // An edit with position_id moves the rule; a delete closes the gap.
    let r = app
        .put(&format!("{b}/{}/edit", ids[0]), json!({"position_id": 1}))
        .await;
    assert_eq!(r.body["data"][0]["position_id"], "1");
    app.call(
        "DELETE",
        &format!("{b}/{}/delete", ids[2]),
        Some(&app.a.key),
        None,
    )
    .await;
    let p = positions(&app).await;
    assert_dense(&p);
    assert_eq!(p.len(), 4);
    assert_eq!(p[0].0, ids[0]);

    // An unknown rule in a move is not found, and the other moves are not made.
    let r = app.put(&format!("{b}/position"), json!({"positions": [{"id": ids[1], "position_id": 4}, {"id": 999999, "position_id": 1}]})).await;
    assert_error(&r, 404);
    assert_eq!(positions(&app).await, p);
}

/// Sends a request on a task of its own; the task answers the status.
fn spawn_call(
    tasks: &mut tokio::task::JoinSet<u16>,
    app: &TestApp,
    method: &str,
    path: String,
    body: Option<Value>,
) {
    let (client, url, key) = (
        app.client.clone(),
        format!("{}{path}", app.base),
        app.a.key.clone(),
    );
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    tasks.spawn(async move {
        let mut req = client.request(method, url).header("X-API-KEY", key);
        if let Some(b) = body {
            req = req.json(&b);
        }
        req.send().await.expect("send").status().as_u16()
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_moves_keep_positions_a_permutation() {
    let app = spawn_app().await;
    let mut ids = Vec::new();
    for _ in 0..8 {
        ids.push(
            create(&app, rule_body(json!({}))).await["id"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        );
    }
    let b = base(&app);
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..40usize {
        let body = json!({"id": ids[(i * 5) % 8], "position_id": (i * 3) % 6 + 1});
        spawn_call(&mut tasks, &app, "PUT", format!("{b}/position"), Some(body));
    }
    for i in 0..4 {
        spawn_call(
            &mut tasks,
            &app,
            "POST",
            format!("{b}/create"),
            Some(rule_body(json!({"position_id": i + 1}))),
        );
    }
    for id in [&ids[1], &ids[6]] {
        spawn_call(&mut tasks, &app, "DELETE", format!("{b}/{id}/delete"), None);
    }
    while let Some(status) = tasks.join_next().await {
        // A move of a rule deleted meanwhile is not found; all else succeeds.
        let status = status.expect("task");
        assert!(status == 200 || status == 404, "{status}");
    }
    let p = positions(&app).await;
    assert_eq!(p.len(), 10);
    assert_dense(&p);
    let mut listed: Vec<&String> = p.iter().map(|p| &p.0).collect();
    listed.sort();
    listed.dedup();
    assert_eq!(listed.len(), 10);
}

/// The job's answer reduced to (rule id, matched, changed, skipped).
fn summary(r: &common::Res) -> Vec<(String, u64, u64, u64)> {
    r.body["data"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|run| {
            let n = |f: &str| run[f].as_u64().unwrap_or(u64::MAX);
            (
                run["id"].as_str().unwrap_or_default().to_owned(),
                n("items_matched"),
                n("items_changed"),
                n("items_skipped"),
            )
        })
        .collect()
}

fn id_of(rule: &Value) -> String {
    rule["id"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_job_applies_the_active_rules_in_order() {
    let app = spawn_app().await;
    let shirt = item(
        &app,
        "TSH-1",
        "Acme",
        "shirts",
        &[(1, "10.00", "EUR")],
        &["amazon"],
    )
    .await;
    let cheap = item(
        &app,
        "TSH-2",
        "Acme",
        "shirts",
        &[(1, "0.25", "EUR"), (2, "9.99", "EUR")],
        &[],
    )
    .await;
    let other = item(
        &app,
        "MUG-1",
        "Other",
        "mugs",
        &[(1, "7.77", "EUR")],
        &["amazon"],
    )
    .await;
    item(&app, "TSH-3", "Acme", "shirts", &[(3, "5.00", "EUR")], &[]).await;
    let usd = item(
        &app,
        "TSH-4",
        "acme",
        "shirts",
        &[(1, "20.00", "EUR"), (2, "30.00", "USD")],
        &[],
    )
    .await;
    // Tenant B's item with the same prices is never touched.
    let b_item = app
        .wms
        .create_item(
            app.b.business,
            serde_json::from_value(json!({"sku": "TSH-1", "name": "b", "brand": "Acme",
            "prices": [{"price_list_id": 1, "amount": "10.00", "currency": "EUR"}]}))
            .expect("item"),
        )
        .await
        .expect("create");

    let a = create(&app, rule_body(json!({"condition_id": "brand", "condition_value": "ACME", "origin_action_value": "12.5"}))).await;
    let b = create(
        &app,
        json!({"origin_price_list_id": 2, "target_price_list_id": 2, "origin_action_id": "round_to",
        "origin_action_value": "0.10", "channels": ["amazon"]}),
    )
    .await;
    create(&app, json!({"origin_price_list_id": 1, "target_price_list_id": 2, "origin_action_id": "set_fixed",
        "origin_action_value": "1.00", "status": 0})).await;
    let d = create(&app, json!({"origin_price_list_id": 1, "target_price_list_id": 4, "type": "percentage", "value": -10,
        "conditions": {"price_below": "1.00"}})).await;
    let events = app.event_count().await;

    let r = execute(&app, json!({"job_id": "reprice-1"})).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        summary(&r),
        [
            (id_of(&a), 3, 2, 1),
            (id_of(&b), 1, 1, 0),
            (id_of(&d), 1, 1, 0)
        ]
    );
    let run = &r.body["data"][0];
    assert_eq!(
        (
            run["job_id"].clone(),
            run["position_id"].clone(),
            run["origin_action_id"].clone()
        ),
        (json!("reprice-1"), json!("1"), json!("increase_percent"))
    );

    // 10.00 + 12.5 % = 11.25, rounded to 0.10 half away from zero: 11.30.
    assert_eq!(price(&app, shirt, 2).await.as_deref(), Some("11.30"));
    // 0.25 + 12.5 % = 0.28125 → 0.28; 0.25 - 10 % = 0.225 → 0.23 (banker's: 0.22).
    assert_eq!(price(&app, cheap, 2).await.as_deref(), Some("0.28"));
    assert_eq!(price(&app, cheap, 4).await.as_deref(), Some("0.23"));
    // A target price in another currency is left alone; unmatched items too.
    assert_eq!(price(&app, usd, 2).await.as_deref(), Some("30.00"));
    assert_eq!(price(&app, other, 2).await, None);
    let b_after = app.wms.item(app.b.business, b_item.id).await.expect("item");
    assert_eq!(b_after.prices, b_item.prices);

    // The audit: every change, with what it was.
    let audit: Vec<(i64, i64, i64, Option<Money>, Money)> = app
        .wms
        .pricing_changes(app.a.business, "reprice-1".into())
        .await
        .expect("audit")
        .into_iter()
        .map(|c| {
            (
                c.rule_id,
                c.item_id.0,
                c.price_list_id.0,
                c.old_amount,
                c.new_amount,
            )
        })
        .collect();
    let rule = |r: &Value| id_of(r).parse::<i64>().unwrap_or(0);
    assert_eq!(
        audit,
        [
            (rule(&a), shirt, 2, None, Money(1125)),
            (rule(&a), cheap, 2, Some(Money(999)), Money(28)),
            (rule(&b), shirt, 2, Some(Money(1125)), Money(1130)),
            (rule(&d), cheap, 4, None, Money(23)),
        ]
    );
    let r = app
        .get(&format!("{}/jobs/reprice-1/changes", base(&app)))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let served = &r.body["data"];
    assert_eq!(served.as_array().map(Vec::len), Some(4));
    assert_eq!(
        (
            &served[1]["old_amount"],
            &served[1]["new_amount"],
            &served[1]["job_id"]
        ),
        (&json!("9.99"), &json!("0.28"), &json!("reprice-1"))
    );
    assert_eq!(served[0]["old_amount"], Value::Null);
    // Another business's job is none of B's.
    let r = app
        .call(
            "GET",
            &format!(
                "/v1/automation/{}/items/pricing/rules/jobs/reprice-1/changes",
                app.b.business
            ),
            Some(&app.b.key),
            None,
        )
        .await;
    assert_error(&r, 404);

    // One item.updated per changed item, with its final prices (what the
    // edges apply), then the job's own event, which stays in the cloud.
    let log = app.wms.events_since(0, 100_000).await.expect("events");
    let new: Vec<_> = log.iter().skip(events).collect();
    let kinds: Vec<&str> = new.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["item.updated", "item.updated", "pricing_job.executed"]
    );
    assert_eq!(new[0].payload["id"], shirt);
    assert_eq!(
        new[0].payload["prices"][1],
        json!({"price_list_id": 2, "amount": "11.30", "currency": "EUR"})
    );
    assert!(depot_wms::replica::REPLICATED.contains(&"item.updated"));
    for kind in ["pricing_job.executed", "pricing_rules.changed"] {
        assert!(
            !depot_wms::replica::REPLICATED.contains(&kind),
            "{kind} would go to the edges"
        );
    }

    // Rule D again, alone: its prices are already what it makes.
    let r = execute(&app, json!({"id": id_of(&d)})).await;
    assert_eq!(summary(&r), [(id_of(&d), 1, 0, 0)]);
    // The inactive rule runs when named; filters narrow the choice.
    let r = execute(&app, json!({"target_price_list_id": 4})).await;
    assert_eq!(summary(&r).len(), 1);
    let r = execute(&app, json!({"origin_price_list_id": 9})).await;
    assert_eq!(r.body["data"], json!([]));
    assert_error(&execute(&app, json!({"rule_id": 999999})).await, 404);
}

/// Posts a job with an `Idempotency-Key` header.
async fn execute_keyed(app: &TestApp, key: &str, api_key: &str, body: Value) -> common::Res {
    let r = app
        .client
        .post(format!("{}{}/jobs/execute", app.base, base(app)))
        .header("X-API-KEY", api_key)
        .header("Idempotency-Key", key)
        .json(&body)
        .send()
        .await
        .expect("send");
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let body = r.json().await.unwrap_or(Value::Null);
    common::Res {
        status,
        body,
        headers,
    }
}

#[tokio::test]
async fn a_job_key_runs_its_job_once() {
    let app = spawn_app().await;
    let it = item(&app, "K-1", "Acme", "x", &[(1, "10.00", "EUR")], &[]).await;
    let rule = create(&app, rule_body(json!({}))).await;
    let first = execute(&app, json!({"job_id": "nightly-1"})).await;
    assert_eq!(first.status, 200, "{:?}", first.body);
    assert_eq!(
        first
            .headers
            .get("idempotency-key")
            .and_then(|v| v.to_str().ok()),
        Some("nightly-1")
    );
    assert!(first.headers.get("idempotent-replayed").is_none());
    assert_eq!(price(&app, it, 2).await.as_deref(), Some("11.00"));
    let events = app.event_count().await;

    // The rule and the price change afterwards: a replay still answers, and
    // does, what the first run did: nothing more.
    let r = app
        .put(
            &format!("{}/{}/edit", base(&app), id_of(&rule)),
            json!({"origin_action_value": "50"}),
        )
        .await;
    assert_eq!(r.status, 200);
    let events = events + 1;
    let again = execute(&app, json!({"job_id": "nightly-1"})).await;
    assert_eq!((again.status, &again.body), (200, &first.body));
    assert_eq!(
        again
            .headers
            .get("idempotent-replayed")
            .and_then(|v| v.to_str().ok()),
        Some("true")
    );
    let by_header = execute_keyed(&app, "nightly-1", &app.a.key, json!({})).await;
    assert_eq!((by_header.status, &by_header.body), (200, &first.body));
    assert_eq!(app.event_count().await, events);
    assert_eq!(price(&app, it, 2).await.as_deref(), Some("11.00"));
    let audit = app
        .wms
        .pricing_changes(app.a.business, "nightly-1".into())
        .await
        .expect("audit");
    assert_eq!(audit.len(), 1);

    // The key with another body is a conflict; nothing runs.
    let r = execute(
        &app,
        json!({"job_id": "nightly-1", "rule_id": id_of(&rule)}),
    )
    .await;
    assert_error(&r, 409);
    assert_eq!(app.event_count().await, events);

    // Another business's key space is its own.
    let b = execute_keyed(&app, "nightly-1", &app.b.key, json!({})).await;
    assert_eq!(b.status, 401, "B's key on A's path");

    // Without a key, every call is a job, whose key the answer carries.
    let r = execute(&app, json!({})).await;
    let key = r
        .headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(!key.is_empty() && key != "nightly-1");
    assert_eq!(r.body["data"][0]["job_id"], key.as_str());
    assert_eq!(price(&app, it, 2).await.as_deref(), Some("15.00"));
}

#[tokio::test]
async fn two_runs_of_one_key_at_once_apply_it_once() {
    let app = spawn_app().await;
    let it = item(&app, "R-1", "Acme", "x", &[(1, "10.00", "EUR")], &[]).await;
    create(&app, json!({"origin_price_list_id": 1, "target_price_list_id": 1, "origin_action_id": "add_fixed",
        "origin_action_value": "1.00"})).await;
    let path = format!("{}/jobs/execute", base(&app));
    let (a, b) = tokio::join!(
        execute(&app, json!({"job_id": "once"})),
        app.post(&path, json!({"job_id": "once"}))
    );
    assert_eq!((a.status, b.status), (200, 200));
    assert_eq!(a.body, b.body);
    // In place, the rule compounds with every new job: this one ran once.
    assert_eq!(price(&app, it, 1).await.as_deref(), Some("11.00"));
}

#[tokio::test]
async fn a_job_that_fails_changes_nothing() {
    let app = spawn_app().await;
    let first = item(&app, "F-1", "Acme", "x", &[(1, "10.00", "EUR")], &[]).await;
    let second = item(&app, "F-2", "Acme", "x", &[(1, "20.00", "EUR")], &[]).await;
    create(&app, rule_body(json!({}))).await;
    // The audit refuses the second item's change: the job fails half way.
    let trigger = format!(
        "CREATE TRIGGER fail_second BEFORE INSERT ON pricing_changes WHEN NEW.item_id = {second}
        BEGIN SELECT RAISE(ABORT, 'injected'); END;"
    );
    app.wms
        .write(move |c| Ok(c.execute_batch(&trigger)?))
        .await
        .expect("trigger");
    let events = app.event_count().await;
    let r = execute(&app, json!({"job_id": "j-1"})).await;
    assert_eq!(r.status, 500, "{:?}", r.body);
    assert_eq!(price(&app, first, 2).await, None);
    assert_eq!(app.event_count().await, events);
    // A job that failed left no key and no audit.
    assert_error(
        &app.get(&format!("{}/jobs/j-1/changes", base(&app))).await,
        404,
    );

    // Nothing of the failed run stands, not even its key: the job runs now.
    app.wms
        .write(|c| Ok(c.execute_batch("DROP TRIGGER fail_second")?))
        .await
        .expect("drop");
    let r = execute(&app, json!({"job_id": "j-1"})).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["data"][0]["items_changed"], 2);
    assert_eq!(
        (
            price(&app, first, 2).await.as_deref(),
            price(&app, second, 2).await.as_deref()
        ),
        (Some("11.00"), Some("22.00"))
    );
}

#[tokio::test]
async fn another_tenants_rules_are_not_found() {
    let app = spawn_app().await;
    let theirs = app
        .wms
        .create_pricing_rule(
            app.b.business,
            depot_protocol::pricing::RuleRequest::from_json(&rule_body(json!({"name": "B's"})))
                .expect("body"),
        )
        .await
        .expect("rule");
    create(&app, rule_body(json!({}))).await;
    let id = theirs.id;
    let b = base(&app);
    let r = app
        .put(&format!("{b}/{id}/edit"), json!({"name": "stolen"}))
        .await;
    assert_error(&r, 404);
    assert_error(
        &app.call(
            "DELETE",
            &format!("{b}/{id}/delete"),
            Some(&app.a.key),
            None,
        )
        .await,
        404,
    );
    assert_error(
        &app.put(
            &format!("{b}/position"),
            json!({"id": id, "position_id": 1}),
        )
        .await,
        404,
    );
    assert_error(&execute(&app, json!({"rule_id": id})).await, 404);
    let listed = positions(&app).await;
    assert!(
        listed.iter().all(|(rule, _)| *rule != id.to_string()),
        "{listed:?}"
    );
    assert_eq!(
        app.wms.pricing_rules(app.b.business).await.expect("rules"),
        [theirs]
    );
}

#[tokio::test]
async fn automation_routes_are_rate_limited_with_the_spec_body() {
    let app = common::spawn_app_with(RateLimit {
        per_second: 1,
        burst: 2,
    })
    .await;
    let b = base(&app);
    assert_eq!(app.get(&format!("{b}/list")).await.status, 200);
    assert_eq!(
        app.post(&format!("{b}/create"), rule_body(json!({})))
            .await
            .status,
        200
    );
    let r = app.post(&format!("{b}/create"), rule_body(json!({}))).await;
    assert_eq!(r.status, 429, "{:?}", r.body);
    assert_eq!(r.body["error"], 1);
    let retry: u64 = r
        .headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(retry >= 1);
    let message = r.body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("try again after {retry} seconds")),
        "{message}"
    );
    assert_eq!(
        app.wms
            .pricing_rules(app.a.business)
            .await
            .expect("rules")
            .len(),
        1,
        "a refused create wrote"
    );
    let r = app
        .call("DELETE", &format!("{b}/1/delete"), Some(&app.a.key), None)
        .await;
    assert_eq!(r.status, 429);
}
