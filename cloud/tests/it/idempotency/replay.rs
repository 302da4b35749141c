//! The guarantees, against a server in this process.

use super::{error_word, replayed, send};
use depot_testkit::cloud::{TestCloud, spawn_cloud};
use depot_testkit::http::Res;
use depot_wms::http::idempotency::{fingerprint, scope};
use depot_wms::idempotency::Context;
use serde_json::{Value, json};

fn adjust_path(app: &TestCloud) -> String {
    format!("/v1/inventory/{}/adjust", app.a.business)
}

fn received(app: &TestCloud, sku: &str, quantity: i64, reference: &str) -> Value {
    json!({"warehouse_id": app.a.warehouses[0].0, "sku": sku, "reason": "received",
        "quantity": quantity, "ref": reference})
}

async fn adjust(app: &TestCloud, key: Option<&str>, body: &Value) -> Res {
    let url = adjust_path(app);
    send(&app.http, "POST", &url, Some(&app.a.key), key, Some(body)).await
}

/// The movements of tenant A's log whose `ref` is `reference`.
async fn movements(app: &TestCloud, reference: &str) -> usize {
    app.wms
        .events_since(0, u32::MAX)
        .await
        .expect("events")
        .iter()
        .filter(|e| e.kind == "stock.moved" && e.payload["ref"] == reference)
        .count()
}

#[tokio::test]
async fn a_retry_answers_the_first_answer_and_applies_nothing() {
    let app = spawn_cloud().await;
    let item = app.item("R-1").await;
    let body = received(&app, "R-1", 5, "retry-1");
    let first = adjust(&app, Some("retry-key-1"), &body).await;
    assert_eq!(first.status, 200, "{:?}", first.body);
    assert!(!replayed(&first));
    assert_eq!(first.header("idempotency-key"), Some("retry-key-1"));
    let events = app.event_count().await;

    for _ in 0..3 {
        let again = adjust(&app, Some("retry-key-1"), &body).await;
        assert_eq!(again.status, first.status);
        assert_eq!(again.bytes, first.bytes, "exactly the first answer");
        assert_eq!(again.header("content-type"), first.header("content-type"));
        assert!(replayed(&again), "{:?}", again.headers);
        assert_eq!(again.header("idempotency-key"), Some("retry-key-1"));
    }
    assert_eq!(app.stock(item).await.0, 5, "applied once");
    assert_eq!(app.event_count().await, events, "nothing logged again");
    assert_eq!(movements(&app, "retry-1").await, 1);

    // Without a key, the same body is another adjustment.
    let plain = adjust(&app, None, &body).await;
    assert_eq!(plain.status, 200);
    assert!(plain.header("idempotency-key").is_none());
    assert_eq!(app.stock(item).await.0, 10);
}

#[tokio::test]
async fn the_key_of_another_request_is_a_422_and_writes_nothing() {
    let app = spawn_cloud().await;
    let item = app.item("R-2").await;
    let first = adjust(&app, Some("k-2"), &received(&app, "R-2", 1, "a")).await;
    assert_eq!(first.status, 200);
    let events = app.event_count().await;

    let other = adjust(&app, Some("k-2"), &received(&app, "R-2", 2, "a")).await;
    assert_eq!(other.status, 422, "{:?}", other.body);
    assert_eq!(other.body["error"], 1);
    assert_eq!(other.body["code"], 422);
    assert_eq!(error_word(&other), "idempotency_key_reused");
    assert!(!replayed(&other));
    // Another route with the key is another request too.
    let url = format!("/v1/items/{}/create", app.a.business);
    let elsewhere = send(
        &app.http,
        "POST",
        &url,
        Some(&app.a.key),
        Some("k-2"),
        Some(&json!({"sku": "R-2b", "name": "x"})),
    )
    .await;
    assert_eq!(elsewhere.status, 422, "{:?}", elsewhere.body);
    assert_eq!(app.event_count().await, events, "nothing written");
    assert_eq!(app.stock(item).await.0, 1);
}

#[tokio::test]
async fn keys_belong_to_their_credential() {
    let app = spawn_cloud().await;
    app.item("R-3").await;
    let a = adjust(&app, Some("shared"), &received(&app, "R-3", 1, "a")).await;
    assert_eq!(a.status, 200);

    // Tenant B, same key: its own request, applied.
    let b_item = app
        .wms
        .create_item(
            app.b.business,
            serde_json::from_value(json!({"sku": "R-3", "name": "B's"})).expect("item"),
        )
        .await
        .expect("item");
    let url = format!("/v1/inventory/{}/adjust", app.b.business);
    let body = json!({"warehouse_id": app.b.warehouses[0].0, "sku": "R-3", "reason": "received", "quantity": 4});
    let b = send(
        &app.http,
        "POST",
        &url,
        Some(&app.b.key),
        Some("shared"),
        Some(&body),
    )
    .await;
    assert_eq!(b.status, 200, "{:?}", b.body);
    assert!(!replayed(&b));
    let (on_hand, _) = app
        .wms
        .stock_level(b_item.id, app.b.warehouses[0])
        .await
        .expect("level");
    assert_eq!(on_hand, 4);

    // B's key on A's path, with a key of its own: refused, and not kept.
    let wrong = send(
        &app.http,
        "POST",
        &adjust_path(&app),
        Some(&app.b.key),
        Some("b-on-a"),
        Some(&received(&app, "R-3", 1, "a")),
    )
    .await;
    assert_eq!(wrong.status, 401);
    assert!(!replayed(&wrong));

    // A key revoked since replays nothing: its request is refused as one
    // without an Idempotency-Key.
    let second = app
        .wms
        .create_key(app.a.business, Some("second".into()))
        .await
        .expect("key");
    let body = received(&app, "R-3", 1, "by-second");
    let url = adjust_path(&app);
    let before = send(
        &app.http,
        "POST",
        &url,
        Some(&second.secret),
        Some("shared"),
        Some(&body),
    )
    .await;
    assert_eq!(before.status, 200, "another key of A: its own keys");
    assert!(!replayed(&before));
    app.wms.revoke_key(second.key.id).await.expect("revoke");
    let after = send(
        &app.http,
        "POST",
        &url,
        Some(&second.secret),
        Some("shared"),
        Some(&body),
    )
    .await;
    assert_eq!(after.status, 401, "{:?}", after.body);
    assert!(!replayed(&after));
    assert!(after.header("idempotency-key").is_none());
}

#[tokio::test]
async fn an_expired_key_runs_again() {
    let app = spawn_cloud().await;
    let item = app.item("R-4").await;
    let body = received(&app, "R-4", 3, "expiring");
    assert_eq!(adjust(&app, Some("k-4"), &body).await.status, 200);
    let again = adjust(&app, Some("k-4"), &body).await;
    assert!(replayed(&again));
    assert_eq!(app.stock(item).await.0, 3);

    // A day and an hour later (24 hours by default): forgotten.
    let gone = depot_protocol::now() - chrono::Duration::hours(25);
    app.wms
        .backdate_idempotency_keys_for_tests(gone)
        .await
        .expect("backdate");
    let later = adjust(&app, Some("k-4"), &body).await;
    assert_eq!(later.status, 200);
    assert!(!replayed(&later), "an expired key is not replayed");
    assert_eq!(app.stock(item).await.0, 6, "the request ran again");
    let replay = adjust(&app, Some("k-4"), &body).await;
    assert!(replayed(&replay), "the key is new again");
    assert_eq!(replay.bytes, later.bytes);

    // The pruning deletes what has expired, and only that.
    app.wms
        .backdate_idempotency_keys_for_tests(gone)
        .await
        .expect("backdate");
    let pruned = app
        .wms
        .prune_idempotency_keys(depot_protocol::now() - chrono::Duration::hours(24), 1)
        .await
        .expect("prune");
    assert_eq!(pruned, 1);
    assert_eq!(app.stock(item).await.0, 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_at_once_with_one_key_apply_once() {
    let app = spawn_cloud().await;
    let item = app.item("R-5").await;
    let body = received(&app, "R-5", 1, "burst");
    let url = adjust_path(&app);
    let mut sent = tokio::task::JoinSet::new();
    for _ in 0..20 {
        let (client, url, api_key, body) = (
            app.http.clone(),
            url.clone(),
            app.a.key.clone(),
            body.clone(),
        );
        sent.spawn(async move {
            send(
                &client,
                "POST",
                &url,
                Some(&api_key),
                Some("burst"),
                Some(&body),
            )
            .await
        });
    }
    let mut answers = Vec::new();
    while let Some(r) = sent.join_next().await {
        answers.push(r.expect("task"));
    }
    let ok: Vec<&Res> = answers.iter().filter(|r| r.status == 200).collect();
    assert!(!ok.is_empty(), "one of them applied it");
    assert_eq!(
        ok.iter().filter(|r| !replayed(r)).count(),
        1,
        "exactly one answer is not a replay"
    );
    for r in &ok {
        assert_eq!(r.bytes, ok[0].bytes, "every 200 is the one answer");
    }
    for r in answers.iter().filter(|r| r.status != 200) {
        assert_eq!(r.status, 409, "{:?}", r.body);
        assert_eq!(error_word(r), "idempotency_key_in_use");
    }
    assert_eq!(app.stock(item).await.0, 1, "applied once");
    assert_eq!(movements(&app, "burst").await, 1);
    // Once the first has finished, every retry replays.
    let after = adjust(&app, Some("burst"), &body).await;
    assert!(replayed(&after));
    assert_eq!(after.bytes, ok[0].bytes);
}

#[tokio::test]
async fn a_bad_key_is_a_400() {
    let app = spawn_cloud().await;
    app.item("R-6").await;
    let body = received(&app, "R-6", 1, "bad");
    let url = adjust_path(&app);
    for bad in [
        vec![b'x'; 256],
        "clé".as_bytes().to_vec(),
        b"tab\tkey".to_vec(),
    ] {
        let r = app
            .as_a()
            .raw("POST", &url)
            .header("Idempotency-Key", &bad)
            .json(&body)
            .send()
            .await;
        assert_eq!(r.status, 400, "{:?}", r.body);
        assert_eq!(r.body["error"], 1);
        assert!(
            r.body["message"]
                .as_str()
                .is_some_and(|m| m.contains("Idempotency-Key")),
            "{:?}",
            r.body
        );
    }
    let longest = "k".repeat(255);
    assert_eq!(adjust(&app, Some(&longest), &body).await.status, 200);
}

/// The write committed with its key, and the process stopped before the
/// answer was stored: the retry is told so, and nothing is applied again.
#[tokio::test]
async fn a_request_applied_whose_answer_was_lost_is_a_409() {
    let app = spawn_cloud().await;
    let item = app.item("R-7").await;
    let body = received(&app, "R-7", 2, "lost");
    let path = adjust_path(&app);
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("x-api-key", app.a.key.parse().expect("a header value"));
    let uri: axum::http::Uri = path.parse().expect("uri");
    let bytes = serde_json::to_vec(&body).expect("json");
    // The write as the request made it, under its key, whose answer no
    // one stored: no handler said how to build it.
    let ctx = Context::new(
        scope(&headers, &path),
        "lost-1".into(),
        fingerprint(&axum::http::Method::POST, &uri, &bytes),
        "POST".into(),
        path.clone(),
        chrono::Duration::hours(24),
    );
    let req = serde_json::from_value(body.clone()).expect("request");
    ctx.clone()
        .run(app.wms.adjust(app.a.caller, req))
        .await
        .expect("applied");
    assert!(ctx.recorded() && !ctx.answered());
    assert_eq!(app.stock(item).await.0, 2);
    let events = app.event_count().await;

    let retry = adjust(&app, Some("lost-1"), &body).await;
    assert_eq!(retry.status, 409, "{:?}", retry.body);
    assert_eq!(retry.body["code"], 409);
    assert_eq!(error_word(&retry), "idempotency_key_applied");
    assert_eq!(app.stock(item).await.0, 2, "not applied again");
    assert_eq!(app.event_count().await, events);
    // Its key with another body is still another request.
    let other = adjust(&app, Some("lost-1"), &received(&app, "R-7", 9, "lost")).await;
    assert_eq!(other.status, 422);
}

/// Where the write stores the answer, the two are one: a failed write
/// leaves no key, and a refusal that wrote nothing is not kept (a retry
/// runs again and may succeed).
#[tokio::test]
async fn a_refusal_that_wrote_nothing_is_not_kept() {
    let app = spawn_cloud().await;
    let body = received(&app, "R-8", 1, "later");
    let refused = adjust(&app, Some("k-8"), &body).await;
    assert!(
        refused.status == 404 || refused.status == 422,
        "{:?}",
        refused.body
    );
    let item = app.item("R-8").await;
    let applied = adjust(&app, Some("k-8"), &body).await;
    assert_eq!(applied.status, 200, "{:?}", applied.body);
    assert!(!replayed(&applied));
    assert_eq!(app.stock(item).await.0, 1);
}

/// A route whose answer is not its write's result (a websocket ticket:
/// the write keeps only its hash) has its answer stored after it: the
/// retry gets the same ticket.
#[tokio::test]
async fn an_answer_without_a_write_is_stored_after_it() {
    let app = spawn_cloud().await;
    let url = format!("/v1/events/{}/tickets", app.a.business);
    let first = send(&app.http, "POST", &url, Some(&app.a.key), Some("t-1"), None).await;
    assert_eq!(first.status, 200, "{:?}", first.body);
    let again = send(&app.http, "POST", &url, Some(&app.a.key), Some("t-1"), None).await;
    assert!(replayed(&again));
    assert_eq!(again.bytes, first.bytes);
    let fresh = send(&app.http, "POST", &url, Some(&app.a.key), Some("t-2"), None).await;
    assert_ne!(fresh.body["data"]["ticket"], first.body["data"]["ticket"]);
}

/// A route that answers with more than its write's value (a created
/// order says whether it was new; a pricing job carries its key) stores
/// that answer in the write, and a replay says the same.
#[tokio::test]
async fn answers_built_from_the_write_are_replayed_whole() {
    let app = spawn_cloud().await;
    app.item("R-9").await;
    let url = format!("/v1/orders/{}/create", app.a.business);
    let order = json!({"channel": "web", "external_ref": "IDEM-1", "lines": [{"sku": "R-9", "quantity": 1}]});
    let first = send(
        &app.http,
        "POST",
        &url,
        Some(&app.a.key),
        Some("o-1"),
        Some(&order),
    )
    .await;
    assert_eq!(first.status, 200, "{:?}", first.body);
    assert_eq!(first.body["created"], true);
    let again = send(
        &app.http,
        "POST",
        &url,
        Some(&app.a.key),
        Some("o-1"),
        Some(&order),
    )
    .await;
    assert!(replayed(&again));
    assert_eq!(again.bytes, first.bytes, "created: true, as the first time");
    // Without the key the channel's reference still makes it one order.
    let plain = send(
        &app.http,
        "POST",
        &url,
        Some(&app.a.key),
        None,
        Some(&order),
    )
    .await;
    assert_eq!(plain.body["created"], false);

    // The pricing job's header key: the layer replays it, with the key.
    let rules = format!("/v1/automation/{}/items/pricing/rules", app.a.business);
    let job = send(
        &app.http,
        "POST",
        &format!("{rules}/jobs/execute"),
        Some(&app.a.key),
        Some("job-1"),
        Some(&json!({})),
    )
    .await;
    assert_eq!(job.status, 200, "{:?}", job.body);
    assert_eq!(job.header("idempotency-key"), Some("job-1"));
    let again = send(
        &app.http,
        "POST",
        &format!("{rules}/jobs/execute"),
        Some(&app.a.key),
        Some("job-1"),
        Some(&json!({})),
    )
    .await;
    assert!(replayed(&again));
    assert_eq!(again.bytes, job.bytes);
    assert_eq!(again.header("idempotency-key"), Some("job-1"));
    let other = send(
        &app.http,
        "POST",
        &format!("{rules}/jobs/execute"),
        Some(&app.a.key),
        Some("job-1"),
        Some(&json!({"rule_id": 1})),
    )
    .await;
    assert_eq!(other.status, 422);
}

/// Two writers of one key that no layer kept apart (two processes on one
/// database): the key's row, written in the first one's transaction, rolls
/// the second one back with a 409.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_second_writer_of_a_key_is_rolled_back() {
    let app = spawn_cloud().await;
    let item = app.item("R-10").await;
    let run = |n: i64| {
        let ctx = Context::new(
            "scope".into(),
            "twice".into(),
            "fingerprint".into(),
            "POST".into(),
            "/v1/inventory/1/adjust".into(),
            chrono::Duration::hours(24),
        );
        let req = serde_json::from_value(received(&app, "R-10", n, "twice")).expect("request");
        ctx.run(app.wms.adjust(app.a.caller, req))
    };
    let (first, second) = tokio::join!(run(1), run(10));
    let (applied, refused) = match (first, second) {
        (Ok(a), Err(e)) | (Err(e), Ok(a)) => (a, e),
        (a, b) => panic!("one of them is applied: {a:?} {b:?}"),
    };
    let refused = axum::response::IntoResponse::into_response(
        depot_wms::http::error::ApiError::from(refused),
    );
    assert_eq!(refused.status(), 409);
    let delta = applied.movements[0].delta;
    assert_eq!(app.stock(item).await.0, delta, "the other was rolled back");
    assert_eq!(movements(&app, "twice").await, 1);
}

#[tokio::test]
async fn a_method_the_path_does_not_take_is_a_405_whatever_the_key() {
    let app = spawn_cloud().await;
    let item = app.item("R-405").await;
    let body = received(&app, "R-405", 3, "m-1");
    let first = adjust(&app, Some("k-405"), &body).await;
    assert_eq!(first.status, 200);
    // The key of a request already applied, on a method the route does
    // not take: the router answers, not the key's record.
    let url = adjust_path(&app);
    for method in ["PUT", "PATCH", "DELETE"] {
        let wrong = send(
            &app.http,
            method,
            &url,
            Some(&app.a.key),
            Some("k-405"),
            Some(&body),
        )
        .await;
        assert_eq!(wrong.status, 405, "{method}: {:?}", wrong.body);
        assert!(wrong.header("allow").is_some_and(|a| a.contains("POST")));
    }
    // And a fresh key on a wrong method leaves nothing behind: the same
    // key then serves the right method.
    let wrong = send(
        &app.http,
        "PATCH",
        &url,
        Some(&app.a.key),
        Some("k-406"),
        Some(&body),
    )
    .await;
    assert_eq!(wrong.status, 405);
    let right = adjust(&app, Some("k-406"), &received(&app, "R-405", 1, "m-2")).await;
    assert_eq!(right.status, 200, "{:?}", right.body);
    assert_eq!(app.stock(item).await.0, 4);
}
