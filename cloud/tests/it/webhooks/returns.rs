//! A return received at an edge cut off from the cloud: graded three ways
//! on the box, then synced. The cloud's stock, its return and the
//! webhooks a merchant refunds on all tell the same story.

use super::receiver::Receiver;
use super::{fast, subscribe, wait_for};
use crate::returns::{dispatched, floor, held};
use depot_protocol::ReturnId;
use depot_protocol::returns::ReturnReceive;
use depot_protocol::sync::EdgeId;
use depot_testkit::cloud::spawn_cloud_configured;
use depot_wms::Wms;
use serde_json::{Value, json};

#[tokio::test]
async fn a_return_graded_offline_at_the_edge_agrees_with_the_cloud_s_stock_and_webhooks() {
    let app = spawn_cloud_configured(fast).await;
    let rx = Receiver::start().await;
    subscribe(&app, &rx, &["return.*"]).await;
    let b = app.a.business;
    floor(&app).await;
    let order = dispatched(&app).await;
    let r = app
        .post(
            &format!("/v1/returns/{b}/create"),
            json!({"order_id": order, "lines": [
                {"line_no": 1, "quantity": 3, "reason": "defective"},
                {"line_no": 2, "quantity": 1, "reason": "other"}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let id = ReturnId(r.body["data"]["id"].as_i64().expect("id"));

    // The box takes its business's books, then loses the uplink.
    let dir = tempfile::tempdir().expect("tempdir");
    let edge_id = EdgeId::parse("ath-1").expect("edge id");
    let record = app
        .wms
        .register_edge(b, edge_id.clone(), None)
        .await
        .expect("register");
    let edge =
        Wms::open_node(&dir.path().join("edge.db"), "edge:ath-1", record.node).expect("edge");
    let (_, events) = depot_testkit::events::own_since(&app.wms, 0).await;
    let events = events
        .into_iter()
        .filter(|e| e.business_id.is_none_or(|x| x == b))
        .collect();
    edge.apply_remote(events).await.expect("bootstrap");

    // Offline: ΚΡΑΣΙ graded restock, damaged and scrap; ΛΑΔΙ restocked.
    for (code, grade) in [
        ("ΚΡΑΣΙ", "restock"),
        ("ΚΡΑΣΙ", "damaged"),
        ("ΚΡΑΣΙ", "scrap"),
        ("ΛΑΔΙ", "restock"),
    ] {
        let req: ReturnReceive =
            serde_json::from_value(json!({"code": code, "grade": grade})).expect("scan");
        edge.receive_return(app.a.caller, id, req)
            .await
            .expect("graded at the edge");
    }
    let at_cloud = app.get(&format!("/v1/returns/{b}/{id}")).await;
    assert_eq!(
        at_cloud.body["data"]["status"], "open",
        "the cloud heard nothing yet"
    );

    // The uplink is back: the box's log goes up.
    let head = edge.outgoing_head().await.expect("head");
    let log = edge.outgoing_sync(0, head, 100_000).await.expect("log");
    let ack = app.wms.receive_batch(b, edge_id, log).await.expect("up");
    assert!(ack.rejected.is_empty(), "{:?}", ack.rejected);

    let ret = app.get(&format!("/v1/returns/{b}/{id}")).await.body["data"].clone();
    assert_eq!(ret["status"], "received", "{ret}");
    let grades = |l: &Value| {
        [&l["restocked"], &l["damaged"], &l["scrapped"]].map(|n| n.as_i64().unwrap_or(-1))
    };
    assert_eq!(grades(&ret["lines"][0]), [1, 1, 1]);
    assert_eq!(grades(&ret["lines"][1]), [1, 0, 0]);
    assert_eq!(
        held(&app).await,
        [("Q-1".to_owned(), 1), ("RET-1".to_owned(), 2)]
    );
    let tasks = app.get(&format!("/v1/putaway/{b}/tasks/list")).await.body["data"].clone();
    assert_eq!(
        tasks.as_array().map(Vec::len),
        Some(2),
        "the restocked units wait for putaway at the cloud too: {tasks}"
    );
    assert!(app.wms.check_ledger().await.expect("check").is_empty());
    assert!(edge.check_ledger().await.expect("check").is_empty());

    // The webhooks: one return.created, then a return.received per scan
    // in the order they were made, whose units add up to the stock.
    let got = wait_for("the return's deliveries", || async {
        let got = rx.got();
        (got.len() >= 5).then_some(got)
    })
    .await;
    let types: Vec<&str> = got.iter().filter_map(|g| g.body["type"].as_str()).collect();
    assert_eq!(
        types,
        [
            "return.created",
            "return.received",
            "return.received",
            "return.received",
            "return.received"
        ]
    );
    let mut per_grade = std::collections::BTreeMap::new();
    for g in &got[1..] {
        let d = &g.body["data"];
        assert_eq!(d["id"], id.0);
        *per_grade
            .entry(d["grade"].as_str().unwrap_or("").to_owned())
            .or_insert(0) += d["units"].as_i64().unwrap_or(0);
    }
    assert_eq!(
        per_grade.into_iter().collect::<Vec<_>>(),
        [
            ("damaged".to_owned(), 1),
            ("restock".to_owned(), 2),
            ("scrap".to_owned(), 1)
        ]
    );
    assert_eq!(got[4].body["data"]["status"], "received");
    assert_eq!(got[4].body["data"]["location"], "RET-1");
}
