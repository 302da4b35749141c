//! Contact forms, the threads they open, limits, the honeypot, other
//! tenants' records, and bad input that writes nothing.

use super::*;
use depot_testkit::cloud::{assert_error, spawn_cloud};

/// A `support` department and a form for it in tenant A; answers the form's id.
async fn support_form(app: &TestCloud, limits: Value) -> i64 {
    let b = app.a.business;
    let r = app
        .post(
            &format!("/v1/contact/{b}/departments"),
            json!({"code": "support", "name": "Customer support"}),
        )
        .await;
    assert!(r.status == 200 || r.status == 409, "{:?}", r.body);
    let mut body = json!({"name": "Help", "department": "support",
        "fields": [{"name": "order_ref", "label": "Order", "required": false, "max_length": 20}]});
    if let (Some(b), Some(l)) = (body.as_object_mut(), limits.as_object()) {
        b.extend(l.clone());
    }
    let r = app.post(&format!("/v1/contact/{b}/forms"), body).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body["data"]["id"].as_i64().expect("form id")
}

fn submission(email: &str) -> Value {
    json!({"name": "Ana López", "email": email, "phone": "+34 600 11 22 33",
           "subject": "Where is my parcel?", "message": "Hello,\nit has not arrived.",
           "fields": {"order_ref": "WS-1001"}, "website": ""})
}

async fn submit(app: &TestCloud, form: i64, body: Value) -> Res {
    app.post(&format!("/v1/contact/{}/{form}", app.a.business), body)
        .await
}

async fn thread_total(app: &TestCloud) -> String {
    let r = app
        .get(&format!("/v1/crm/{}/threads/list", app.a.business))
        .await;
    r.body["recordsTotal"].as_str().unwrap_or("?").to_owned()
}

#[tokio::test]
async fn a_contact_form_opens_a_thread_that_agents_answer() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    let form = support_form(&app, json!({})).await;
    let r = app.get(&format!("/v1/contact/{b}/forms")).await;
    assert_eq!(
        (
            r.body["recordsTotal"].as_str(),
            r.body["recordsFiltered"].as_str()
        ),
        (Some("1"), Some("1"))
    );
    let f = &r.body["data"][0];
    assert_eq!(
        (
            f["department"].as_str(),
            f["max_per_email_per_hour"].as_i64(),
            f["max_links"].as_i64()
        ),
        (Some("support"), Some(5), Some(2))
    );
    assert_eq!(f["fields"][0]["name"], "order_ref");
    let r = app.get(&format!("/v1/contact/{b}/departments")).await;
    assert_eq!(r.body["data"][0]["code"], "support");
    assert_eq!(r.body["recordsTotal"], "1");

    let r = submit(&app, form, submission("Ana@Example.com")).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["status"], "received");
    let thread = r.body["thread_id"].as_i64().expect("thread id");

    let r = app.get(&format!("/v1/crm/{b}/threads/list")).await;
    assert_eq!(
        (
            r.body["recordsTotal"].as_str(),
            r.body["recordsFiltered"].as_str()
        ),
        (Some("1"), Some("1"))
    );
    let t = &r.body["data"][0];
    assert_eq!(t["id"], thread);
    assert_eq!(t["subject"], "Where is my parcel?");
    assert_eq!(t["status"], "open");
    assert_eq!(t["department"], "support");
    assert_eq!(t["integration_id"], "contact_form");
    assert_eq!(t["form_id"], form);
    assert_eq!(t["message_count"], 1);
    assert!(t["buyer_id"].is_i64());
    for k in ["created_at", "updated_at", "last_message_at"] {
        assert!(is_ts(&t[k]), "{k}: {t:?}");
    }

    let r = app
        .post(
            &format!(
                "/v1/crm/{b}/threads/{thread}/message?integration_id=contact_form&filter_id=support"
            ),
            json!({"body": "It ships today.", "author": "Marta"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["thread"][0]["message_count"], 2);
    let m = &r.body["messages"][0];
    assert_eq!(
        (
            m["direction"].as_str(),
            m["author"].as_str(),
            m["thread_id"].as_i64()
        ),
        (Some("outbound"), Some("Marta"), Some(thread))
    );
    assert!(m["id"].is_i64() && is_ts(&m["created_at"]));
    let r = app
        .post(
            &format!("/v1/crm/{b}/threads/{thread}/message"),
            json!({"body": "Refund if lost.", "direction": "internal", "status": "closed"}),
        )
        .await;
    assert_eq!(r.body["thread"][0]["status"], "closed", "{:?}", r.body);
    assert_eq!(
        r.body["messages"][0]["author"],
        format!("key:{}", app.a.caller.key_id)
    );

    let r = app
        .get(&format!(
            "/v1/crm/{b}/threads/messages/{thread}?start=0&length=2"
        ))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        (
            r.body["recordsTotal"].as_str(),
            r.body["recordsFiltered"].as_str()
        ),
        (Some("3"), Some("3"))
    );
    assert_eq!(r.body["thread"][0]["id"], thread);
    let first = &r.body["messages"][0];
    assert_eq!(first["direction"], "inbound");
    assert_eq!(first["author"], "Ana López <ana@example.com>");
    assert_eq!(first["body"], "Hello,\nit has not arrived.");
    assert_eq!(first["fields"], json!({"order_ref": "WS-1001"}));
    assert_eq!(r.body["messages"].as_array().map(Vec::len), Some(2));
    let r = app
        .get(&format!("/v1/crm/{b}/threads/messages/{thread}?start=2"))
        .await;
    assert_eq!(r.body["messages"][0]["direction"], "internal");

    for (query, n) in [
        ("filter_id=support", "1"),
        ("filter_id=sales", "0"),
        ("integration_id=contact_form", "1"),
        ("integration_id=webshop", "0"),
        ("status=closed", "1"),
        ("status=open", "0"),
    ] {
        let r = app.get(&format!("/v1/crm/{b}/threads/list?{query}")).await;
        assert_eq!(r.body["recordsFiltered"], n, "{query}");
        assert_eq!(r.body["recordsTotal"], "1", "{query}");
    }

    // The sender is a buyer now, found as one who wrote.
    let r = find(&app, "by_wildcard?key_id=ana@example.com&filter_id=crm").await;
    assert_eq!(names(&r), ["Ana López"]);
    assert_eq!(r.body["results"][0]["thread_count"], 1);
    assert_eq!(r.body["results"][0]["channels"], json!(["contact_form"]));
    let r = app
        .get(&format!("/v1/events/{b}/list?kind=crm.thread_opened"))
        .await;
    assert_eq!(
        r.body["data"]["events"][0]["payload"]["thread"]["id"], thread,
        "{:?}",
        r.body
    );
}

#[tokio::test]
async fn submissions_over_a_limit_answer_429_and_keep_nothing() {
    let app = spawn_cloud().await;
    let form = support_form(
        &app,
        json!({"max_per_email_per_hour": 2, "max_per_hour": 3}),
    )
    .await;
    for _ in 0..2 {
        assert_eq!(
            submit(&app, form, submission("ana@example.com"))
                .await
                .status,
            200
        );
    }
    let events = app.event_count().await;
    let r = submit(&app, form, submission("ANA@example.com")).await;
    assert_error(&r, 429);
    let wait: u64 = r
        .headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!((1..=3600).contains(&wait), "Retry-After {wait}");
    assert!(
        r.body["message"]
            .as_str()
            .is_some_and(|m| m.contains(&format!("{wait} seconds"))),
        "{:?}",
        r.body
    );
    assert_eq!(app.event_count().await, events);
    assert_eq!(thread_total(&app).await, "2");
    // Another sender still gets through, until the form's own limit.
    assert_eq!(
        submit(&app, form, submission("bob@example.com"))
            .await
            .status,
        200
    );
    assert_error(
        &submit(&app, form, submission("carla@example.com")).await,
        429,
    );
    assert_eq!(thread_total(&app).await, "3");
}

#[tokio::test]
async fn a_filled_honeypot_is_answered_and_forgotten() {
    let app = spawn_cloud().await;
    let form = support_form(&app, json!({})).await;
    let events = app.event_count().await;
    let mut body = submission("bot@example.com");
    body["website"] = json!("http://spam.example");
    let r = submit(&app, form, body).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body, json!({"status": "received"}));
    assert_eq!(app.event_count().await, events);
    assert_eq!(thread_total(&app).await, "0");
    assert!(names(&find(&app, "by_wildcard?key_id=bot@*").await).is_empty());
}

#[tokio::test]
async fn bad_submissions_write_nothing() {
    let app = spawn_cloud().await;
    let form = support_form(&app, json!({"max_links": 1})).await;
    let events = app.event_count().await;
    let cases: Vec<(Value, u16, Vec<&str>)> = vec![
        (
            json!({"name": "A", "email": "not-an-email", "subject": "S", "message": "M"}),
            422,
            vec!["email"],
        ),
        (
            json!({"name": "A\r\nBcc: x@y.z", "email": "a@b.co", "subject": " ", "message": "M"}),
            422,
            vec!["name", "subject"],
        ),
        (
            json!({"name": "A", "email": "a@b.co", "subject": "S", "message": "https://a.example www.b.example"}),
            422,
            vec!["message"],
        ),
        (
            json!({"name": "A", "email": "a@b.co", "subject": "S", "message": "M", "fields": {"coupon": "x"}}),
            422,
            vec!["fields.coupon"],
        ),
        (
            json!({"name": "A", "email": "a@b.co", "subject": "S", "message": "M", "phone": "call me"}),
            422,
            vec!["phone"],
        ),
        (
            json!({"name": "A", "email": "a@b.co", "subject": "S"}),
            422,
            vec!["message"],
        ),
        (
            json!({"name": "A", "email": "a@b.co", "subject": "S", "message": "x".repeat(5001)}),
            422,
            vec!["message"],
        ),
    ];
    for (body, status, fields) in cases {
        let r = submit(&app, form, body.clone()).await;
        assert_error(&r, status);
        assert_eq!(error_names(&r), fields, "{body}");
    }
    let big =
        json!({"name": "A", "email": "a@b.co", "subject": "S", "message": "x".repeat(40 * 1024)});
    let r = submit(&app, form, big).await;
    assert_error(&r, 413);
    assert!(
        r.body["message"]
            .as_str()
            .is_some_and(|m| m.contains("32768")),
        "{:?}",
        r.body
    );
    let r = app
        .raw(
            "POST",
            &format!("/v1/contact/{}/{form}", app.a.business),
            &app.a.key,
            Some("text/plain"),
            b"hi".to_vec(),
        )
        .await;
    assert_error(&r, 415);
    assert_error(&submit(&app, 999_999, submission("a@b.co")).await, 404);
    assert_error(
        &app.post(
            &format!("/v1/contact/{}/abc", app.a.business),
            submission("a@b.co"),
        )
        .await,
        400,
    );
    assert_eq!(app.event_count().await, events);
    assert_eq!(thread_total(&app).await, "0");
}

#[tokio::test]
async fn another_tenants_forms_and_threads_are_not_found() {
    let app = spawn_cloud().await;
    let (a, b) = (app.a.business, app.b.business);
    let bk = Some(app.b.key.as_str());
    app.call(
        "POST",
        &format!("/v1/contact/{b}/departments"),
        bk,
        Some(json!({"code": "support", "name": "S"})),
    )
    .await;
    let r = app
        .call(
            "POST",
            &format!("/v1/contact/{b}/forms"),
            bk,
            Some(json!({"name": "F", "department": "support",
                "fields": [{"name": "order_ref", "label": "Order"}]})),
        )
        .await;
    let b_form = r.body["data"]["id"].as_i64().expect("form");
    let r = app
        .call(
            "POST",
            &format!("/v1/contact/{b}/{b_form}"),
            bk,
            Some(submission("ana@example.com")),
        )
        .await;
    let b_thread = r.body["thread_id"].as_i64().expect("thread");
    let events = app.event_count().await;

    assert_error(
        &submit(&app, b_form, submission("ana@example.com")).await,
        404,
    );
    assert_error(
        &app.get(&format!("/v1/crm/{a}/threads/messages/{b_thread}"))
            .await,
        404,
    );
    assert_error(
        &app.post(
            &format!("/v1/crm/{a}/threads/{b_thread}/message"),
            json!({"body": "hi"}),
        )
        .await,
        404,
    );
    assert_error(
        &app.get(&format!("/v1/crm/{b}/threads/messages/{b_thread}"))
            .await,
        401,
    );
    assert_eq!(
        app.get(&format!("/v1/crm/{a}/threads/list")).await.body["data"],
        json!([])
    );
    assert_eq!(
        app.get(&format!("/v1/contact/{a}/forms")).await.body["data"],
        json!([])
    );
    // A department code of B is none of A's.
    let r = app
        .post(
            &format!("/v1/contact/{a}/forms"),
            json!({"name": "F", "department": "support"}),
        )
        .await;
    assert_error(&r, 422);
    assert_eq!(error_names(&r), ["department"]);
    assert_eq!(app.event_count().await, events);
}

#[tokio::test]
async fn message_posts_and_configuration_are_checked() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    let form = support_form(&app, json!({})).await;
    let thread = submit(&app, form, submission("ana@example.com")).await.body["thread_id"]
        .as_i64()
        .expect("thread");
    let events = app.event_count().await;
    let post = |query: &'static str, body: Value| {
        let path = format!("/v1/crm/{b}/threads/{thread}/message{query}");
        let app = &app;
        async move { app.post(&path, body).await }
    };
    let r = post("", json!({"body": " ", "direction": "inbound"})).await;
    assert_error(&r, 422);
    assert_eq!(error_names(&r), ["body", "direction"]);
    let r = post("?filter_id=50%25&integration_id=x'", json!({"body": "x"})).await;
    assert_eq!(error_names(&r), ["integration_id", "filter_id"]);
    assert_error(
        &post("?integration_id=webshop", json!({"body": "x"})).await,
        404,
    );
    assert_error(&post("?filter_id=sales", json!({"body": "x"})).await, 404);
    assert_error(
        &post("", json!({"body": "x", "direction": "sideways"})).await,
        422,
    );
    assert_error(
        &app.post(
            &format!("/v1/crm/{b}/threads/999999/message"),
            json!({"body": "x"}),
        )
        .await,
        404,
    );
    assert_error(
        &app.get(&format!("/v1/crm/{b}/threads/messages/999999"))
            .await,
        404,
    );
    assert_error(
        &app.get(&format!("/v1/crm/{b}/threads/list?status=archived"))
            .await,
        422,
    );
    assert_error(
        &app.get(&format!(
            "/v1/crm/{b}/threads/messages/{thread}?length=1001"
        ))
        .await,
        422,
    );

    let r = app
        .post(
            &format!("/v1/contact/{b}/departments"),
            json!({"code": "support", "name": "Again"}),
        )
        .await;
    assert_error(&r, 409);
    let r = app
        .post(
            &format!("/v1/contact/{b}/departments"),
            json!({"code": "Sales Team", "name": ""}),
        )
        .await;
    assert_eq!(error_names(&r), ["code", "name"]);
    let r = app.post(&format!("/v1/contact/{b}/forms"),
        json!({"name": "F", "department": "support", "fields": [{"name": "email"}], "max_per_hour": 0})).await;
    assert_error(&r, 422);
    assert_eq!(error_names(&r), ["fields[0].name", "max_per_hour"]);
    assert_eq!(app.event_count().await, events);
    let r = app
        .get(&format!("/v1/crm/{b}/threads/messages/{thread}"))
        .await;
    assert_eq!(r.body["recordsTotal"], "1");
}
