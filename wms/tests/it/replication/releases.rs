//! Releases and their translations reach every edge once.

use super::*;

#[tokio::test]
async fn releases_and_translations_reach_every_edge_once() {
    use depot_protocol::release::{Note, Product, ReleaseCreate};
    use std::collections::BTreeMap;
    let mut p = pair().await;
    let b = p.caller.business_id;
    let today = chrono::Utc::now().date_naive();
    let publish = |product: &str, version: &str| {
        ReleaseCreate {
            product: product.into(),
            version: version.into(),
            date: Some("2025-03-01".into()),
            default_locale: None,
            notes: BTreeMap::from([(
                "en".into(),
                Note {
                    title: format!("Depot {version}"),
                    body: "- faster picking\n".into(),
                },
            )]),
        }
        .parse(today)
    };
    let r = p
        .cloud
        .wms
        .publish_release(publish("wms", "1.4.0").expect("valid"), None)
        .await
        .expect("publish");
    assert!(matches!(
        p.cloud
            .wms
            .publish_release(publish("wms", "1.4.0").expect("valid"), None)
            .await,
        Err(depot_wms::WmsError::Conflict { .. })
    ));
    assert!(publish("wms", "next").is_err());
    // The same version of another product is another release.
    p.cloud
        .wms
        .publish_release(publish("app", "1.4.0").expect("valid"), None)
        .await
        .expect("publish app");
    // A release names no business, and still is in every edge's feed.
    let edge_id = depot_protocol::sync::EdgeId::parse("mad-1").expect("edge id");
    p.cloud
        .wms
        .register_edge(b, edge_id.clone(), None)
        .await
        .expect("register");
    let page = p
        .cloud
        .wms
        .changes_for(b, edge_id, 0, 1000)
        .await
        .expect("page");
    assert!(
        page.changes
            .iter()
            .any(|c| c.kind == "release.published" && c.payload["version"] == "1.4.0"),
        "{page:?}"
    );
    no_rejections(&exchange(&mut p.cloud, &p.edge).await);
    let at_edge = p.edge.wms.releases(10).await.expect("releases");
    assert_eq!(at_edge.len(), 2);
    assert_eq!(at_edge.iter().find(|e| e.product == Product::Wms), Some(&r));

    // A translation follows the release it belongs to.
    let es = Note {
        title: "Depot 1.4.0".into(),
        body: "- recogida más rápida".into(),
    };
    let translated = p
        .cloud
        .wms
        .translate_release(
            Product::Wms,
            "1.4.0".into(),
            BTreeMap::from([("es".into(), es.clone())]),
        )
        .await
        .expect("translate");
    no_rejections(&exchange(&mut p.cloud, &p.edge).await);
    let at_edge = p.edge.wms.releases(10).await.expect("releases");
    let wms = at_edge
        .iter()
        .find(|e| e.product == Product::Wms)
        .expect("wms release");
    assert_eq!(wms.notes.get("es"), Some(&es));
    assert_eq!(wms, &translated);

    // Delivered again, nothing changes.
    p.cloud.sent = 0;
    exchange(&mut p.cloud, &p.edge).await;
    assert_eq!(p.edge.wms.releases(10).await.expect("releases"), at_edge);
}

#[tokio::test]
async fn a_release_event_from_before_locales_still_applies() {
    let p = pair().await;
    let legacy = depot_protocol::event::Event {
        seq: 1,
        id: depot_protocol::EventId::new(),
        origin: "cloud".into(),
        business_id: None,
        kind: "release.published".into(),
        version: 1,
        payload: json!({"id": 9, "version": "1.2.0", "title": "Labels",
            "notes": "- ZPL", "published_at": "2024-03-02T09:00:00Z"}),
        at: chrono::Utc::now(),
    };
    no_rejections(&p.edge.wms.apply_remote(vec![legacy]).await.expect("apply"));
    let r = p.edge.wms.releases(10).await.expect("releases");
    assert_eq!(r.len(), 1);
    assert_eq!(
        (
            r[0].id,
            r[0].default_locale.as_str(),
            r[0].notes["en"].title.as_str()
        ),
        (9, "en", "Labels")
    );
}
