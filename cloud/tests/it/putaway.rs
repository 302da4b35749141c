//! Putaway through the API: goods received at the dock become tasks with a
//! suggested location (consolidation first, then the first empty bulk
//! location), a scan moves them, and every wrong scan is refused with
//! nothing moved.

use depot_testkit::cloud::{TestCloud, assert_error, spawn_cloud};
use serde_json::{Value, json};

const GTIN: &str = "09506000134352";

fn lot(lot: &str) -> String {
    format!("]d201{GTIN}17271231\u{1d}10{lot}")
}

async fn ok(app: &TestCloud, path: &str, body: Value) -> Value {
    let r = app.post(path, body).await;
    assert_eq!(r.status, 200, "{path}: {:?}", r.body);
    r.body["data"].clone()
}

/// Locations with stock, and what each holds, in the list's order.
pub(crate) async fn held(app: &TestCloud) -> Vec<(String, i64)> {
    let r = app
        .get(&format!(
            "/v1/locations/{}/list?occupied=true",
            app.a.business
        ))
        .await;
    r.body["data"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            (
                l["code"].as_str().unwrap_or("").to_owned(),
                l["on_hand"].as_i64().unwrap_or(0),
            )
        })
        .collect()
}

#[tokio::test]
async fn received_pallets_are_directed_moved_by_scan_and_refused_where_they_do_not_fit() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    let w = app.a.warehouses[0].0;
    let location = format!("/v1/locations/{b}/create");
    for (code, kind, sequence, max_units) in [
        ("DOCK", "dock", 0, None),
        ("B-01", "bulk", 10, Some(100)),
        ("B-02", "bulk", 20, Some(100)),
        ("B-03", "bulk", 30, Some(5)),
        ("Q-1", "quarantine", 40, None),
    ] {
        ok(
            &app,
            &location,
            json!({"warehouse_id": w, "code": code, "type": kind,
                                   "sequence": sequence, "max_units": max_units}),
        )
        .await;
    }
    ok(
        &app,
        &format!("/v1/items/{b}/create"),
        json!({"sku": "SERUM", "name": "Ορός 30 ml",
        "gtin": GTIN, "lot_tracked": true}),
    )
    .await;
    ok(
        &app,
        &format!("/v1/items/{b}/create"),
        json!({"sku": "OTHER", "name": "Other"}),
    )
    .await;
    let po = ok(&app, &format!("/v1/inbounds/{b}/orders/create"), json!({"warehouse_id": w,
        "reference": "PO-Ω", "supplier": "Φάρμακα ΑΕ", "lines": [{"sku": "SERUM", "quantity": 60}]})).await;
    let po = po["id"].as_i64().expect("po");
    let receive = |code: String, n: i64| {
        let app = &app;
        async move {
            let r = ok(
                app,
                &format!("/v1/inbounds/{b}/reception"),
                json!({"inbound_id": po, "lines": [{"code": code, "quantity": n}]}),
            )
            .await;
            let task = r["received"][0]["putaway_task_id"]
                .as_i64()
                .expect("a putaway task");
            let t = app.get(&format!("/v1/putaway/{b}/tasks/{task}")).await;
            assert_eq!(t.status, 200, "{:?}", t.body);
            t.body["data"].clone()
        }
    };
    let scan = format!("/v1/putaway/{b}/scan");

    // A first pallet of lot L1: nothing holds it, so the first empty bulk
    // location in the walk. The operator puts it at B-02 instead, which
    // takes it, and is told so.
    let t1 = receive(lot("L1"), 20).await;
    assert_eq!(
        (t1["from_location"].as_str(), t1["suggested"].as_str()),
        (Some("DOCK"), Some("B-01"))
    );
    let r = ok(
        &app,
        &scan,
        json!({"task_id": t1["id"], "code": lot("L1"), "location": "B-02"}),
    )
    .await;
    assert_eq!(r["as_suggested"], false);
    assert!(
        r["message"]
            .as_str()
            .is_some_and(|m| m.contains("not the suggested B-01")),
        "{r}"
    );
    assert_eq!(r["task"]["status"], "done");

    // More of L1 consolidates where L1 is; another lot never mixes in.
    let t2 = receive(lot("L1"), 30).await;
    assert_eq!(t2["suggested"], "B-02");
    let t3 = receive(lot("L2"), 10).await;
    assert_eq!(t3["suggested"], "B-01");

    // Every wrong scan is refused, and nothing moves.
    let events = app.event_count().await;
    let before = held(&app).await;
    for (body, status, field) in [
        (
            json!({"task_id": t3["id"], "code": lot("L2"), "location": "Q-1"}),
            422,
            "location",
        ),
        (
            json!({"task_id": t3["id"], "code": lot("L2"), "location": "B-03"}),
            422,
            "location",
        ),
        (
            json!({"task_id": t3["id"], "code": lot("L2"), "location": "B-02"}),
            422,
            "location",
        ),
        (
            json!({"task_id": t3["id"], "code": lot("L2"), "location": "NOWHERE"}),
            422,
            "location",
        ),
        (
            json!({"task_id": t3["id"], "code": lot("L2"), "location": "DOCK"}),
            422,
            "location",
        ),
        (
            json!({"task_id": t3["id"], "code": "OTHER", "location": "B-01"}),
            422,
            "code",
        ),
        (
            json!({"task_id": t3["id"], "code": lot("L1"), "location": "B-01"}),
            422,
            "code",
        ),
        (
            json!({"task_id": t3["id"], "code": lot("L2"), "location": "B-01", "quantity": 11}),
            409,
            "",
        ),
        (
            json!({"task_id": t1["id"], "code": lot("L1"), "location": "B-02"}),
            409,
            "",
        ),
        (
            json!({"task_id": 999_999, "code": lot("L2"), "location": "B-01"}),
            404,
            "",
        ),
    ] {
        let r = app.post(&scan, body.clone()).await;
        assert_error(&r, status);
        if !field.is_empty() {
            assert_eq!(r.body["errors"][0]["name"], field, "{body}: {:?}", r.body);
        }
    }
    assert_eq!(app.event_count().await, events, "refusals write nothing");
    assert_eq!(held(&app).await, before);

    // Half, then the rest: the task stays open until the last unit. The
    // first scan is sent twice with one Idempotency-Key (a station that
    // lost the answer): the same answer, four units moved, not eight.
    let half = json!({"task_id": t3["id"], "code": lot("L2"), "location": "B-01", "quantity": 4});
    let keyed = || {
        app.as_a()
            .raw("POST", &scan)
            .header("Idempotency-Key", "putaway-1")
            .json(&half)
            .send()
    };
    let first = keyed().await;
    assert_eq!(first.status, 200, "{:?}", first.body);
    let again = keyed().await;
    assert_eq!((again.status, &again.body), (200, &first.body));
    let r = first.body["data"].clone();
    assert_eq!(
        (r["task"]["put"].as_i64(), r["task"]["status"].as_str()),
        (Some(4), Some("open"))
    );
    let r = ok(
        &app,
        &scan,
        json!({"task_id": t3["id"], "code": lot("L2"), "location": "B-01"}),
    )
    .await;
    assert_eq!(
        (r["moved"].as_i64(), r["task"]["status"].as_str()),
        (Some(6), Some("done"))
    );
    assert_eq!(r["as_suggested"], true);

    let open = app
        .get(&format!("/v1/putaway/{b}/tasks/list?warehouse_id={w}"))
        .await;
    let ids: Vec<i64> = open.body["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["id"].as_i64())
        .collect();
    assert_eq!(ids, [t2["id"].as_i64().expect("id")]);
    let done = app
        .get(&format!("/v1/putaway/{b}/tasks/list?status=done"))
        .await;
    assert_eq!(done.body["recordsFiltered"], "2");
    // A blank status is the default (what the fuzzer sent: an ideographic
    // space); one that is none is named.
    let blank = app
        .get(&format!("/v1/putaway/{b}/tasks/list?status=%E3%80%80"))
        .await;
    assert_eq!(blank.body["recordsFiltered"], "1", "{:?}", blank.body);
    let r = app
        .get(&format!("/v1/putaway/{b}/tasks/list?status=lost"))
        .await;
    assert_error(&r, 422);
    assert_eq!(r.body["errors"][0]["name"], "status");
    assert_eq!(
        held(&app).await,
        [
            ("DOCK".to_owned(), 30),
            ("B-01".to_owned(), 10),
            ("B-02".to_owned(), 20)
        ]
    );
    // Per location and lot, the stock is what its movements say.
    assert!(app.wms.check_ledger().await.expect("check").is_empty());
    let bins = app
        .get(&format!("/v1/inventory/{b}/items/list?sku=SERUM"))
        .await;
    assert_eq!(
        bins.body["data"][0]["bins"],
        json!([{"location": "B-01", "lot": "L2", "on_hand": 10},
               {"location": "B-02", "lot": "L1", "on_hand": 20},
               {"location": "DOCK", "lot": "L1", "on_hand": 30}])
    );

    // A rack that takes mixed lots takes L1 beside L2; until it does, not.
    let b01 = app
        .get(&format!(
            "/v1/locations/{b}/list?warehouse_id={w}&type=bulk"
        ))
        .await;
    let b01 = b01.body["data"][0]["id"].as_i64().expect("B-01's id");
    let one = json!({"task_id": t2["id"], "code": lot("L1"), "location": "B-01", "quantity": 1});
    assert_error(&app.post(&scan, one.clone()).await, 422);
    let r = app
        .put(
            &format!("/v1/locations/{b}/{b01}/edit"),
            json!({"mixed_lots": true}),
        )
        .await;
    assert_eq!(
        (r.status, &r.body["data"]["code"]),
        (200, &json!("B-01")),
        "{:?}",
        r.body
    );
    let r = ok(&app, &scan, one).await;
    assert_eq!(r["location"], "B-01");
    assert!(app.wms.check_ledger().await.expect("check").is_empty());

    // Another tenant sees none of it.
    let theirs = app
        .call(
            "GET",
            &format!("/v1/putaway/{}/tasks/{}", app.b.business, t2["id"]),
            Some(app.b.key.as_str()),
            None,
        )
        .await;
    assert_error(&theirs, 404);
}
