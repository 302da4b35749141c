//! Rules: the spec's shapes, fields in error, positions kept 1..n (also
//! under concurrent moves), tenants and the rate limit.

use super::*;

#[tokio::test]
async fn rules_answer_the_spec_shapes() {
    let app = spawn_cloud().await;
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
    let app = spawn_cloud().await;
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
    let app = spawn_cloud().await;
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
    app: &TestCloud,
    method: &str,
    path: String,
    body: Option<Value>,
) {
    let (client, method) = (app.as_a(), method.to_owned());
    tasks.spawn(async move { client.call(&method, &path, body).await.status });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_moves_keep_positions_a_permutation() {
    let app = spawn_cloud().await;
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

#[tokio::test]
async fn another_tenants_rules_are_not_found() {
    let app = spawn_cloud().await;
    let theirs = app
        .office()
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
        app.office()
            .pricing_rules(app.b.business)
            .await
            .expect("rules"),
        [theirs]
    );
}

#[tokio::test]
async fn automation_routes_are_rate_limited_with_the_spec_body() {
    let app = cloud::spawn_cloud_with(RateLimit {
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
        message.contains(&format!(
            "try again after {}",
            depot_protocol::plural::counted(retry, "second")
        )),
        "{message}"
    );
    assert_eq!(
        app.office()
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
