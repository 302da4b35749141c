//! The stock ledger through the API: reasons, cycle counts, transfers,
//! negative stock, and the catalog list filters.

use depot_testkit::cloud::spawn_cloud;
use serde_json::json;

#[tokio::test]
async fn reasons_counts_transfers_and_discrepancies() {
    let app = spawn_cloud().await;
    let item = app.item("K-1").await;
    let p = format!("/v1/inventory/{}/adjust", app.a.business);
    let (w1, w2) = (app.a.warehouses[0].0, app.a.warehouses[1].0);
    let adjust = |body: serde_json::Value| {
        let app = &app;
        let p = p.clone();
        async move {
            let r = app.post(&p, body).await;
            assert_eq!(r.status, 200, "{:?}", r.body);
            r.body
        }
    };
    let r = app
        .post(
            &format!("/v1/locations/{}/create", app.a.business),
            json!({"warehouse_id": w1, "code": "A-01", "type": "bulk"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    adjust(json!({"warehouse_id": w1, "item_id": item, "reason": "received", "quantity": 20, "ref": "PO-7", "location": "A-01"})).await;
    adjust(json!({"warehouse_id": w1, "item_id": item, "reason": "damaged", "quantity": 2, "note": "forklift"})).await;
    adjust(json!({"warehouse_id": w1, "item_id": item, "reason": "returned", "quantity": 1})).await;
    assert_eq!(app.stock(item).await.0, 19);

    // A count of 15 where the books say 19 records -4.
    let b =
        adjust(json!({"warehouse_id": w1, "sku": "K-1", "reason": "cycle_count", "counted": 15}))
            .await;
    assert_eq!(b["data"]["movements"][0]["delta"], -4);
    assert_eq!(b["data"]["movements"][0]["reason"], "cycle_count");
    assert_eq!(
        b["data"]["movements"][0]["actor"],
        format!("key:{}", app.a.caller.key_id)
    );

    let b = adjust(json!({"warehouse_id": w1, "item_id": item, "reason": "transfer", "quantity": 5, "to_warehouse_id": w2})).await;
    let levels: Vec<(i64, i64)> = b["data"]["levels"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            (
                l["warehouse_id"].as_i64().unwrap_or(0),
                l["on_hand"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(levels, [(w1, 10), (w2, 5)]);

    // Taking more than there is: recorded and flagged, not refused.
    let b = adjust(json!({"warehouse_id": w2, "item_id": item, "reason": "picked", "quantity": 8}))
        .await;
    assert_eq!(b["data"]["levels"][0]["on_hand"], -3);
    assert_eq!(b["data"]["levels"][0]["negative"], true);
    let r = app
        .get(&format!(
            "/v1/inventory/{}/items/list?negative=true",
            app.a.business
        ))
        .await;
    assert_eq!(r.body["recordsFiltered"], "1");
    assert_eq!(r.body["data"][0]["warehouse_id"], w2);
    assert!(app.wms.check_ledger().await.expect("check").is_empty());
}

#[tokio::test]
async fn item_list_filters() {
    let app = spawn_cloud().await;
    let p = format!("/v1/items/{}/create", app.a.business);
    for (sku, brand, cat, gtin) in [
        ("P-1", "Acme", "tools", "4006381333931"),
        ("P-2", "Acme", "toys", ""),
        ("P-3", "Zeta", "tools", "96385074"),
    ] {
        let r = app.post(&p, json!({"sku": sku, "name": format!("Product {sku} 100%"), "brand": brand, "category": cat, "gtin": gtin})).await;
        assert_eq!(r.status, 200, "{:?}", r.body);
    }
    let b = app.a.business;
    let skus = |path: String| {
        let app = &app;
        async move {
            let r = app.get(&path).await;
            r.body["data"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|i| i["sku"].as_str().map(str::to_owned))
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        skus(format!("/v1/items/{b}/list")).await,
        ["P-1", "P-2", "P-3"]
    );
    assert_eq!(
        skus(format!("/v1/items/{b}/list?brand=Acme")).await,
        ["P-1", "P-2"]
    );
    assert_eq!(
        skus(format!("/v1/items/{b}/list?category=tools&brand=Zeta")).await,
        ["P-3"]
    );
    assert_eq!(
        skus(format!("/v1/items/{b}/list?barcode=04006381333931")).await,
        ["P-1"]
    );
    assert_eq!(skus(format!("/v1/items/{b}/list?q=P-2")).await, ["P-2"]);
    // LIKE wildcards in the search text are literal.
    assert_eq!(skus(format!("/v1/items/{b}/list?q=%25")).await.len(), 3);
    assert_eq!(skus(format!("/v1/items/{b}/list?q=_")).await.len(), 0);
    assert_eq!(
        skus(format!("/v1/items/{b}/list?start=1&length=1")).await,
        ["P-2"]
    );
}

#[tokio::test]
async fn warehouse_visibility_filter() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    let r = app
        .get(&format!("/v1/business/{b}/warehouses?is_visible_sales=1"))
        .await;
    assert_eq!(r.body["data"].as_array().map(Vec::len), Some(1));
    assert_eq!(r.body["data"][0]["code"], "MAD1");
    let r = app
        .get(&format!("/v1/business/{b}/warehouses?is_visible_sales=0"))
        .await;
    assert_eq!(r.body["data"][0]["code"], "BCN1");
    let r = app.get(&format!("/v1/business/{b}/warehouses")).await;
    assert_eq!(r.body["recordsTotal"], "2");
    let r = app.get(&format!("/v1/business/{b}")).await;
    assert_eq!(r.body["data"]["name"], "Alpha");
}
