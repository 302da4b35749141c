//! Customer returns through the API: authorised for a dispatched order with
//! an RMA number and a return label, received by scan with each unit
//! graded three ways, the stock booked where each grade sends it, the
//! order listing its returns; every wrong request refused with nothing
//! written.

use depot_testkit::cloud::{TestCloud, assert_error, field_names, spawn_cloud};
use serde_json::{Value, json};

async fn ok(app: &TestCloud, path: &str, body: Value) -> Value {
    let r = app.post(path, body).await;
    assert_eq!(r.status, 200, "{path}: {:?}", r.body);
    r.body["data"].clone()
}

/// Locations with stock, and what each holds, by code.
pub(crate) async fn held(app: &TestCloud) -> Vec<(String, i64)> {
    let mut held = crate::putaway::held(app).await;
    held.sort();
    held
}

/// The floor of the returns tests: a returns bay, a quarantine cage, a
/// pick face and a bulk rack.
pub(crate) async fn floor(app: &TestCloud) {
    let (b, w) = (app.a.business, app.a.warehouses[0].0);
    for (code, kind, sequence) in [
        ("RET-1", "returns", 1),
        ("Q-1", "quarantine", 2),
        ("P-1", "pick", 3),
        ("B-1", "bulk", 4),
    ] {
        ok(
            app,
            &format!("/v1/locations/{b}/create"),
            json!({"warehouse_id": w, "code": code, "type": kind, "sequence": sequence}),
        )
        .await;
    }
}

/// A dispatched order of 3 × ΚΡΑΣΙ and 1 × ΛΑΔΙ (stock held at no
/// location): answers its id.
pub(crate) async fn dispatched(app: &TestCloud) -> i64 {
    let (b, w) = (app.a.business, app.a.warehouses[0].0);
    for sku in ["ΚΡΑΣΙ", "ΛΑΔΙ"] {
        app.item(sku).await;
        ok(
            app,
            &format!("/v1/inventory/{b}/adjust"),
            json!({"warehouse_id": w, "sku": sku, "reason": "received", "quantity": 5}),
        )
        .await;
    }
    let order = app.order("Ω-1001", &[("ΚΡΑΣΙ", 3), ("ΛΑΔΙ", 1)]).await;
    for status in ["confirmed", "picking", "packed", "dispatched"] {
        let r = app.set_status(order, status).await;
        assert_eq!(r.status, 200, "{status}: {:?}", r.body);
    }
    order
}

#[tokio::test]
async fn a_return_is_labelled_graded_three_ways_and_booked_where_each_grade_sends_it() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    floor(&app).await;
    let order = dispatched(&app).await;
    assert_eq!(held(&app).await, []);

    let ret = ok(
        &app,
        &format!("/v1/returns/{b}/create"),
        json!({"order_id": order, "ref": "Ζήτημα #7", "lines": [
            {"line_no": 1, "quantity": 3, "reason": "damaged", "note": "Το κουτί ήρθε σκισμένο"}]}),
    )
    .await;
    let id = ret["id"].as_i64().expect("id");
    let rma = format!("RMA-{id}");
    assert_eq!(ret["rma"], rma.as_str());
    assert_eq!(ret["status"], "open");
    assert_eq!(ret["order_ref"], "Ω-1001");
    assert_eq!(ret["lines"][0]["sku"], "ΚΡΑΣΙ");
    assert_eq!(ret["lines"][0]["remaining"], 3);
    // The own fleet delivered it: a label back to the warehouse, the RMA
    // number as its barcode.
    let zpl = ret["label_zpl"].as_str().expect("a return label");
    assert!(zpl.starts_with("^XA") && zpl.contains(&rma), "{zpl}");
    let again = app.get(&format!("/v1/returns/{b}/{id}")).await;
    assert_eq!(again.body["data"]["label_zpl"].as_str(), Some(zpl));

    // Graded three ways, one unit each.
    let receive = format!("/v1/returns/{b}/{id}/receive");
    let restock = ok(&app, &receive, json!({"code": "ΚΡΑΣΙ", "grade": "restock"})).await;
    assert_eq!(restock["location"], "RET-1");
    assert_eq!(restock["return"]["status"], "receiving");
    let task = restock["putaway_task_id"].as_i64().expect("a putaway task");
    let damaged = ok(
        &app,
        &receive,
        json!({"code": "ΚΡΑΣΙ", "grade": "damaged", "note": "σπασμένο"}),
    )
    .await;
    assert_eq!(damaged["location"], "Q-1");
    assert!(damaged["putaway_task_id"].is_null());
    let scrap = ok(&app, &receive, json!({"code": "ΚΡΑΣΙ", "grade": "scrap"})).await;
    assert!(scrap["location"].is_null());
    assert_eq!(scrap["return"]["status"], "received");
    let line = &scrap["return"]["lines"][0];
    assert_eq!(
        (
            &line["restocked"],
            &line["damaged"],
            &line["scrapped"],
            &line["remaining"]
        ),
        (&json!(1), &json!(1), &json!(1), &json!(0))
    );
    assert_eq!(
        held(&app).await,
        [("Q-1".to_owned(), 1), ("RET-1".to_owned(), 1)]
    );
    // The restocked unit is put away from the returns bay like any other.
    let put = ok(
        &app,
        &format!("/v1/putaway/{b}/scan"),
        json!({"task_id": task, "code": "ΚΡΑΣΙ", "location": "B-1"}),
    )
    .await;
    assert_eq!(put["task"]["status"], "done");
    assert_eq!(
        held(&app).await,
        [("B-1".to_owned(), 1), ("Q-1".to_owned(), 1)]
    );

    // The order lists its return; the list finds it by order and status.
    let o = app.get(&format!("/v1/orders/{b}/{order}")).await;
    let returns = &o.body["data"]["returns"];
    assert_eq!(returns[0]["rma"], rma.as_str(), "{returns}");
    assert_eq!(
        (
            &returns[0]["status"],
            &returns[0]["units"],
            &returns[0]["scrapped"]
        ),
        (&json!("received"), &json!(3), &json!(1))
    );
    let list = app
        .get(&format!(
            "/v1/returns/{b}/list?order_id={order}&status=received"
        ))
        .await;
    assert_eq!(list.body["data"][0]["id"], id, "{:?}", list.body);
    let none = app.get(&format!("/v1/returns/{b}/list?status=open")).await;
    assert_eq!(none.body["data"], json!([]));
}

#[tokio::test]
async fn wrong_returns_and_wrong_scans_are_refused_with_nothing_written() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    floor(&app).await;
    let order = dispatched(&app).await;
    let create = format!("/v1/returns/{b}/create");
    let line = |n: i64, q: i64| json!({"line_no": n, "quantity": q, "reason": "wrong_item"});

    let open = app.order("Ω-1002", &[("ΛΑΔΙ", 1)]).await;
    for (body, status, field) in [
        (json!({"order_id": open, "lines": [line(1, 1)]}), 409, None),
        (
            json!({"order_id": 999_999, "lines": [line(1, 1)]}),
            404,
            None,
        ),
        (
            json!({"order_id": order, "lines": [line(3, 1)]}),
            422,
            Some("lines[0].line_no"),
        ),
        (
            json!({"order_id": order, "lines": [line(1, 4)]}),
            422,
            Some("lines[0].quantity"),
        ),
        (json!({"order_id": order, "lines": []}), 422, Some("lines")),
        (
            json!({"order_id": order, "lines": [line(1, 1), line(1, 1)]}),
            422,
            Some("lines[1].line_no"),
        ),
        (
            json!({"order_id": order, "lines": [{"line_no": 1, "quantity": 1, "reason": "changed_mind"}]}),
            422,
            None,
        ),
    ] {
        let r = app.post(&create, body.clone()).await;
        assert_error(&r, status);
        if let Some(field) = field {
            assert!(
                field_names(&r.body).iter().any(|n| n == field),
                "{body}: {:?}",
                r.body
            );
        }
    }
    // Another tenant cannot return this order, nor see the return.
    let other = app.http.with_key(app.b.key.as_str());
    let r = other
        .post(
            &format!("/v1/returns/{}/create", app.b.business),
            json!({"order_id": order, "lines": [line(1, 1)]}),
        )
        .await;
    assert_error(&r, 404);
    let listed = app.get(&format!("/v1/returns/{b}/list")).await;
    assert_eq!(listed.body["data"], json!([]), "nothing was written");

    // Two returns may not hold more than the line shipped. A retry with
    // its Idempotency-Key answers the first answer and makes no second.
    let body = json!({"order_id": order, "lines": [line(1, 2)]});
    let mut tries = Vec::new();
    for _ in 0..2 {
        let r = crate::idempotency::send(
            &app.http,
            "POST",
            &create,
            Some(app.a.key.as_str()),
            Some("rma-retry-1"),
            Some(&body),
        )
        .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
        tries.push(r.body["data"].clone());
    }
    assert_eq!(tries[0], tries[1]);
    let first = tries[0].clone();
    let r = app
        .post(&create, json!({"order_id": order, "lines": [line(1, 2)]}))
        .await;
    assert_error(&r, 422);
    let id = first["id"].as_i64().expect("id");
    let r = other
        .get(&format!("/v1/returns/{}/{id}", app.b.business))
        .await;
    assert_error(&r, 404);

    let receive = format!("/v1/returns/{b}/{id}/receive");
    let before = held(&app).await;
    for (body, status) in [
        (json!({"code": "ΛΑΔΙ", "grade": "restock"}), 422),
        (
            json!({"code": "ΚΡΑΣΙ", "grade": "restock", "quantity": 3}),
            409,
        ),
        (json!({"code": "NO-SUCH", "grade": "restock"}), 404),
        (json!({"code": "ΚΡΑΣΙ", "grade": "resell"}), 422),
        (
            json!({"code": "ΚΡΑΣΙ", "grade": "restock", "quantity": 0}),
            422,
        ),
        (json!({"code": "  ", "grade": "scrap"}), 422),
    ] {
        let r = app.post(&receive, body.clone()).await;
        assert_error(&r, status);
    }
    let r = app
        .post(
            &format!("/v1/returns/{b}/999999/receive"),
            json!({"code": "ΚΡΑΣΙ", "grade": "scrap"}),
        )
        .await;
    assert_error(&r, 404);
    assert_eq!(held(&app).await, before, "no stock moved");

    // Both units graded: a third is refused.
    ok(
        &app,
        &receive,
        json!({"code": "ΚΡΑΣΙ", "grade": "damaged", "quantity": 2}),
    )
    .await;
    let r = app
        .post(&receive, json!({"code": "ΚΡΑΣΙ", "grade": "scrap"}))
        .await;
    assert_error(&r, 409);
}

#[tokio::test]
async fn a_warehouse_without_a_returns_location_is_told_to_make_one() {
    let app = spawn_cloud().await;
    let (b, w) = (app.a.business, app.a.warehouses[0].0);
    ok(
        &app,
        &format!("/v1/locations/{b}/create"),
        json!({"warehouse_id": w, "code": "P-1", "type": "pick"}),
    )
    .await;
    let order = dispatched(&app).await;
    let ret = ok(
        &app,
        &format!("/v1/returns/{b}/create"),
        json!({"order_id": order, "lines": [{"line_no": 2, "quantity": 1, "reason": "no_longer_needed"}]}),
    )
    .await;
    let receive = format!("/v1/returns/{b}/{}/receive", ret["id"]);
    let r = app
        .post(&receive, json!({"code": "ΛΑΔΙ", "grade": "restock"}))
        .await;
    assert_error(&r, 409);
    assert!(
        r.body["message"]
            .as_str()
            .is_some_and(|m| m.contains("no returns location")),
        "{:?}",
        r.body
    );
    // Scrap needs no location.
    let done = ok(&app, &receive, json!({"code": "ΛΑΔΙ", "grade": "scrap"})).await;
    assert_eq!(done["return"]["status"], "received");
}

#[tokio::test]
async fn a_return_that_never_comes_is_cancelled_and_its_units_may_be_returned_again() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    floor(&app).await;
    let order = dispatched(&app).await;
    let create = format!("/v1/returns/{b}/create");
    let all =
        json!({"order_id": order, "lines": [{"line_no": 1, "quantity": 3, "reason": "other"}]});
    let first = ok(&app, &create, all.clone()).await;
    let id = first["id"].as_i64().expect("id");
    // Every unit is on it: no other return may hold them.
    assert_error(&app.post(&create, all.clone()).await, 422);
    let cancelled = ok(&app, &format!("/v1/returns/{b}/{id}/cancel"), json!({})).await;
    assert_eq!(cancelled["status"], "cancelled");
    for (path, body) in [
        (format!("/v1/returns/{b}/{id}/cancel"), json!({})),
        (
            format!("/v1/returns/{b}/{id}/receive"),
            json!({"code": "ΚΡΑΣΙ", "grade": "restock"}),
        ),
    ] {
        assert_error(&app.post(&path, body).await, 409);
    }
    assert_eq!(held(&app).await, [], "nothing booked");
    let again = ok(&app, &create, all).await;
    let r = app
        .post(
            &format!("/v1/returns/{b}/{}/receive", again["id"]),
            json!({"code": "ΚΡΑΣΙ", "grade": "scrap"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    // Received in part: it may not be cancelled any more.
    let r = app
        .post(
            &format!("/v1/returns/{b}/{}/cancel", again["id"]),
            json!({}),
        )
        .await;
    assert_error(&r, 409);
    let o = app.get(&format!("/v1/orders/{b}/{order}")).await;
    let statuses: Vec<&str> = o.body["data"]["returns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["status"].as_str())
        .collect();
    assert_eq!(statuses, ["cancelled", "receiving"]);
    let other = app.http.with_key(app.b.key.as_str());
    let r = other
        .post(
            &format!("/v1/returns/{}/{}/cancel", app.b.business, again["id"]),
            json!({}),
        )
        .await;
    assert_error(&r, 404);
}
