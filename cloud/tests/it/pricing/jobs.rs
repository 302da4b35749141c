//! Jobs: prices really changed, in rule order, audited, once per job key,
//! all or nothing.

use super::*;

fn summary(r: &cloud::Res) -> Vec<(String, u64, u64, u64)> {
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
    let app = spawn_cloud().await;
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
        .office()
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
    let to_edges = || depot_protocol::catalogue::sent_to_edges();
    assert!(to_edges().any(|k| k == "item.updated"));
    for kind in ["pricing_job.executed", "pricing_rules.changed"] {
        assert!(
            !to_edges().any(|k| k == kind),
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
async fn execute_keyed(app: &TestCloud, key: &str, api_key: &str, body: Value) -> cloud::Res {
    let r = app
        .http
        .with_key(api_key)
        .raw("POST", &format!("{}/jobs/execute", base(app)))
        .header("Idempotency-Key", key)
        .json(&body)
        .send()
        .await;
    // Only JSON answers are looked at here.
    cloud::Res {
        body: r.json(),
        ..r
    }
}

#[tokio::test]
async fn a_job_key_runs_its_job_once() {
    let app = spawn_cloud().await;
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
        .office()
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
    let app = spawn_cloud().await;
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
    let app = spawn_cloud().await;
    let first = item(&app, "F-1", "Acme", "x", &[(1, "10.00", "EUR")], &[]).await;
    let second = item(&app, "F-2", "Acme", "x", &[(1, "20.00", "EUR")], &[]).await;
    create(&app, rule_body(json!({}))).await;
    // The audit refuses the second item's change: the job fails half way.
    let sqlite = format!(
        "CREATE TRIGGER fail_second BEFORE INSERT ON pricing_changes WHEN NEW.item_id = {second}
        BEGIN SELECT RAISE(ABORT, 'injected'); END;"
    );
    let postgres = format!(
        "CREATE FUNCTION fail_second() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN RAISE EXCEPTION 'injected'; END $$;
         CREATE TRIGGER fail_second BEFORE INSERT ON pricing_changes FOR EACH ROW
         WHEN (NEW.item_id = {second}) EXECUTE FUNCTION fail_second();"
    );
    app.wms
        .write(move |c| {
            Ok(c.execute_batch(match c.dialect() {
                depot_sql::Dialect::Sqlite => &sqlite,
                depot_sql::Dialect::Postgres => &postgres,
            })?)
        })
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
        .write(|c| {
            Ok(c.execute_batch(match c.dialect() {
                depot_sql::Dialect::Sqlite => "DROP TRIGGER fail_second",
                depot_sql::Dialect::Postgres => "DROP TRIGGER fail_second ON pricing_changes",
            })?)
        })
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
