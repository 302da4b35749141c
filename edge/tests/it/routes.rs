//! What the edge serves: the floor's routes. What only the cloud creates
//! (items, orders, inbound orders, printers, documents) is refused at the
//! edge with the error body, writing nothing; releases published in the
//! cloud show up on the edge's own route beside the version it runs.

use crate::common;
use common::RunningEdge;
use depot_edge::faults::Faults;
use depot_protocol::release::{Note, ReleaseCreate};
use depot_testkit::http::Client;
use depot_testkit::{eventually, rig::Rig};
use serde_json::{Value, json};
use std::collections::BTreeMap;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_edge_serves_the_floor_and_shows_releases() {
    let rig = Rig::start("routes-1", false).await;
    let b = rig.business;
    let edge = RunningEdge::start(rig.edge_settings(), Faults::default()).await;
    let ew = edge.wms.clone();
    let client = Client::new(&edge.base);
    eventually("the key at the edge", || async {
        client
            .raw("GET", "/v1/edge/status")
            .header("X-API-KEY", &rig.key)
            .try_send()
            .await
            .is_ok_and(|r| r.status == 200)
    })
    .await;

    let before = ew.outgoing_head().await.expect("head");
    for (method, path, body) in [
        (
            "POST",
            format!("/v1/items/{b}/create"),
            json!({"sku": "X", "name": "X"}),
        ),
        ("PUT", format!("/v1/items/{b}/1/edit"), json!({"name": "Y"})),
        (
            "POST",
            format!("/v1/orders/{b}/create"),
            json!({"channel": "web", "external_ref": "E1", "lines": []}),
        ),
        (
            "POST",
            format!("/v1/inbounds/{b}/orders/create"),
            json!({"reference": "PO", "supplier": "S", "lines": []}),
        ),
        (
            "POST",
            format!("/v1/printers/{b}/create"),
            json!({"name": "P", "kind": "zpl", "connection": "tcp://10.0.0.9:9100"}),
        ),
    ] {
        let r = client
            .raw(method, &path)
            .header("X-API-KEY", &rig.key)
            .json(&body)
            .send()
            .await;
        let status = r.status;
        assert!(status == 404 || status == 405, "{method} {path}: {status}");
        let body = r.body;
        assert_eq!(
            (body["error"].clone(), body["code"].clone()),
            (json!(1), json!(status))
        );
    }
    assert_eq!(
        ew.outgoing_head().await.expect("head"),
        before,
        "a refused request wrote"
    );

    // A release published in the cloud reaches the box.
    let get_releases = || async {
        let r = client
            .raw("GET", "/v1/edge/releases")
            .header("X-API-KEY", &rig.key)
            .send()
            .await;
        assert_eq!(r.status, 200);
        r.body["data"].clone()
    };
    let none = get_releases().await;
    assert_eq!(none["latest"], Value::Null);
    assert_eq!(none["update_available"], false);
    assert_eq!(none["running"], env!("CARGO_PKG_VERSION"));
    let release = |product: &str, version: &str, title: &str| {
        ReleaseCreate {
            product: product.into(),
            version: version.into(),
            date: None,
            default_locale: None,
            notes: BTreeMap::from([(
                "en".into(),
                Note {
                    title: title.into(),
                    body: "- everything\n".into(),
                },
            )]),
        }
        .parse(chrono::Utc::now().date_naive())
        .expect("valid")
    };
    // Another product's newer version is listed, but is no update for the box.
    rig.cloud
        .publish_release(release("signage", "999.0.0", "Screens"), None)
        .await
        .expect("publish signage");
    rig.cloud
        .publish_release(release("wms", "99.0.0", "The future"), None)
        .await
        .expect("publish");
    eventually("the releases at the edge", || async {
        ew.releases(10).await.is_ok_and(|r| r.len() == 2)
    })
    .await;
    let two = get_releases().await;
    assert_eq!(two["latest"], "99.0.0");
    assert_eq!(two["update_available"], true);
    let wms = two["releases"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["product"] == "wms"))
        .expect("the wms release");
    assert_eq!(wms["notes"]["en"]["title"], "The future");

    edge.stop().await;
    rig.stop().await;
}
