//! Buyers from orders and forms, one per person, and the searches over them.

use super::*;
use depot_testkit::cloud::{assert_error, spawn_cloud};

async fn order_by(app: &TestCloud, external_ref: &str, channel: &str, buyer: Value) {
    let r = app
        .post(
            &format!("/v1/orders/{}/create", app.a.business),
            json!({"channel": channel, "external_ref": external_ref, "buyer": buyer,
                   "lines": [{"sku": "CRM-1", "quantity": 1}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
}

#[tokio::test]
async fn buyers_come_from_orders_one_per_person() {
    let app = spawn_cloud().await;
    app.item("CRM-1").await;
    let ana =
        json!({"name": "Ana María López", "email": "Ana@Example.com", "phone": "+34 600 11 22 33"});
    order_by(&app, "W-1", "web", ana.clone()).await;
    order_by(&app, "W-1", "web", ana.clone()).await; // the same order again
    order_by(
        &app,
        "M-1",
        "market",
        json!({"name": "Ana López", "email": "ana@example.com"}),
    )
    .await;
    order_by(
        &app,
        "W-2",
        "web",
        json!({"name": "Anabel Gil", "email": "gil@shop.example"}),
    )
    .await;
    order_by(
        &app,
        "W-3",
        "web",
        json!({"name": "Bruno Díaz", "phone": "600 99 88 77"}),
    )
    .await;
    order_by(&app, "W-4", "web", json!({})).await;

    let r = find(&app, "by_name?key_id=ana").await;
    assert_eq!(names(&r), ["Ana López", "Anabel Gil"]);
    assert_eq!(r.body["recordsTotal"], "3");
    assert_eq!(r.body["recordsFiltered"], "2");
    let a = &r.body["results"][0];
    assert!(a["id"].is_i64(), "{a:?}");
    assert_eq!(a["email"], "ana@example.com");
    assert_eq!(a["phone"], "+34 600 11 22 33");
    assert_eq!(a["order_count"], 2);
    assert_eq!(a["thread_count"], 0);
    assert_eq!(a["channels"], json!(["market", "web"]));
    assert!(is_ts(&a["first_seen"]) && is_ts(&a["last_seen"]), "{a:?}");
    let keys: Vec<&String> = r
        .body
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    assert_eq!(keys, ["recordsFiltered", "recordsTotal", "results"]);

    let id = a["id"].as_i64().unwrap_or_default();
    assert_eq!(
        names(&find(&app, &format!("by_id?key_id={id}")).await),
        ["Ana López"]
    );
    assert!(names(&find(&app, "by_id?key_id=999999").await).is_empty());
    assert_eq!(
        names(&find(&app, "by_name?key_id=L%C3%B3p").await),
        ["Ana López"]
    );
    // Accents count for nothing either way.
    assert_eq!(
        names(&find(&app, "by_name?key_id=LOPEZ").await),
        ["Ana López"]
    );
    assert_eq!(
        names(&find(&app, "by_wildcard?key_id=br*d%C3%AD%C3%A1z").await),
        ["Bruno Díaz"]
    );
    assert_eq!(
        names(&find(&app, "by_wildcard?key_id=*@shop.example").await),
        ["Anabel Gil"]
    );
    assert_eq!(
        names(&find(&app, "by_wildcard?key_id=60099*").await),
        ["Bruno Díaz"]
    );
    assert_eq!(
        names(&find(&app, "by_name?key_id=an&filter_id=channel:market").await),
        ["Ana López"]
    );
    assert!(names(&find(&app, "by_name?key_id=an&filter_id=crm").await).is_empty());
    assert_eq!(
        names(&find(&app, "by_name?key_id=an&filter_id=orders&start=1&length=1").await),
        ["Anabel Gil"]
    );

    // Another tenant sees none of them.
    let r = app
        .call(
            "GET",
            &format!("/v1/buyers/{}/find/by_name?key_id=ana", app.b.business),
            Some(&app.b.key),
            None,
        )
        .await;
    assert_eq!(r.body["results"], json!([]));
    assert_eq!(r.body["recordsTotal"], "0");
}

#[tokio::test]
async fn wildcards_stay_literal_and_bounded() {
    let app = spawn_cloud().await;
    app.item("CRM-1").await;
    for (i, name) in [
        "100% Cotton",
        "100x Cotton",
        "a_b Shop",
        "axb Shop",
        "O'Brien",
    ]
    .iter()
    .enumerate()
    {
        order_by(&app, &format!("L-{i}"), "web", json!({"name": name})).await;
    }
    assert_eq!(
        names(&find(&app, "by_wildcard?key_id=100%25*").await),
        ["100% Cotton"]
    );
    assert_eq!(
        names(&find(&app, "by_wildcard?key_id=a_b*").await),
        ["a_b Shop"]
    );
    assert_eq!(names(&find(&app, "by_name?key_id=o'b").await), ["O'Brien"]);
    for hostile in [
        "%25%25%25",
        "___",
        "'%20OR%20'1'='1",
        "x'%3B%20DROP%20TABLE%20buyers%3B%20--",
        "%22%3B%20DELETE%20FROM%20buyers",
        "abc%5C%25",
    ] {
        for t in ["by_wildcard", "by_name"] {
            let r = find(&app, &format!("{t}?key_id={hostile}")).await;
            assert_eq!(names(&r), Vec::<String>::new(), "{t} {hostile}");
        }
    }
    assert_eq!(
        find(&app, "by_name?key_id=10").await.body["recordsTotal"],
        "5"
    );

    // Patterns that would scan: too few literals at either end, too many
    // wildcards, too long.
    let long = "a".repeat(101);
    let many = format!("abc{}", "?".repeat(9));
    for bad in [
        "*",
        "*a*",
        "ab*",
        "*ab",
        "a*b",
        "?ab?",
        "*abc*",
        long.as_str(),
        many.as_str(),
    ] {
        let r = find(&app, &format!("by_wildcard?key_id={bad}")).await;
        assert_error(&r, 422);
        assert_eq!(error_names(&r), ["key_id"], "{bad}");
    }
    assert_error(&find(&app, "by_name?key_id=a").await, 422);
}

#[tokio::test]
async fn bad_searches_name_every_parameter() {
    let app = spawn_cloud().await;
    let r = find(&app, "by_email").await;
    assert_error(&r, 422);
    assert_eq!(error_names(&r), ["key_type", "key_id"]);
    let r = find(&app, "by_name?key_id=%20&filter_id=vip&length=0").await;
    assert_error(&r, 422);
    assert_eq!(error_names(&r), ["key_id", "filter_id", "length"]);
    assert_eq!(
        error_names(&find(&app, "by_id?key_id=12abc").await),
        ["key_id"]
    );
    assert_error(&find(&app, "by_id?key_id=1&start=x").await, 400);
}
