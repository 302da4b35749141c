//! Channels at the edge: a channel made at the cloud reaches the edges,
//! which keep its figures from their own books, offline too; what they
//! did reaches the cloud's figures as sync arrives.

use super::counts_sync::{adjust, up};
use super::locations_sync::{Setup, down, setup};
use depot_protocol::channel::ChannelFields;
use depot_wms::Wms;
use serde_json::json;

async fn figure(wms: &Wms, s: &Setup) -> i64 {
    let page = depot_protocol::Page::parse(None, None).expect("page");
    let depot_protocol::Listed { rows, .. } = wms
        .channel_availability(s.business, "λιανική".into(), Some("ΦΕΤΑ".into()), page)
        .await
        .expect("availability");
    rows[0].available
}

async fn save(s: &Setup, buffer: i64, create: bool) {
    let fields: ChannelFields =
        serde_json::from_value(json!({"code": "λιανική", "name": "Λιανική",
        "kind": "pos", "warehouse_ids": [s.warehouse.0], "buffer_units": buffer}))
        .expect("fields");
    if create {
        s.cloud
            .create_channel(s.business, fields)
            .await
            .expect("made");
    } else {
        s.cloud
            .edit_channel(s.business, "λιανική".into(), fields)
            .await
            .expect("edited");
    }
}

#[tokio::test]
async fn an_edge_keeps_a_channels_figures_offline_and_the_cloud_merges_them() {
    let s = setup().await;
    adjust(&s.cloud, &s, json!({"reason": "received", "quantity": 5})).await;
    save(&s, 1, true).await;
    assert_eq!(figure(&s.cloud, &s).await, 4);
    down(&s).await;
    assert_eq!(figure(&s.edge, &s).await, 4);

    // Cut off, the floor receives 3: its figure follows at once; the
    // cloud's when the edge's movements arrive.
    adjust(&s.edge, &s, json!({"reason": "received", "quantity": 3})).await;
    assert_eq!(figure(&s.edge, &s).await, 7);
    assert_eq!(figure(&s.cloud, &s).await, 4);
    up(&s).await;
    assert_eq!(figure(&s.cloud, &s).await, 7);

    // An edit at the cloud, and an order it took (pending, so sold): the
    // edge's figure says both.
    save(&s, 0, false).await;
    let req = serde_json::from_value(json!({"channel": "λιανική", "external_ref": "Π-1",
        "warehouse_id": s.warehouse.0, "lines": [{"sku": "ΦΕΤΑ", "quantity": 2}],
        "shipping_address": {"name": "Ελένη Παππά", "line1": "Ερμού 12", "postal_code": "105 63",
                             "city": "Αθήνα", "country": "GR"}}))
    .expect("order");
    s.cloud.create_order(s.caller, req).await.expect("order");
    assert_eq!(figure(&s.cloud, &s).await, 6);
    down(&s).await;
    assert_eq!(figure(&s.edge, &s).await, 6);
    assert!(s.edge.check_ledger().await.expect("edge").is_empty());
    assert!(s.cloud.check_ledger().await.expect("cloud").is_empty());
}

#[tokio::test]
async fn figures_kept_by_older_rules_are_made_again_at_start() {
    let s = setup().await;
    adjust(&s.cloud, &s, json!({"reason": "received", "quantity": 5})).await;
    save(&s, 1, true).await;
    // A figure as a release that did not count something would have left
    // it, and the feed where it stood.
    let b = s.business;
    s.cloud
        .write_for(b, move |conn| {
            conn.execute(
                "UPDATE channel_availability SET available = 9 WHERE business_id = ?1",
                depot_sql::params![b.0],
            )?;
            Ok(())
        })
        .await
        .expect("stale");
    let before = s
        .cloud
        .channel_changes(b, "λιανική".into(), 0, 1000)
        .await
        .expect("feed")
        .next;
    assert_eq!(figure(&s.cloud, &s).await, 9);
    assert_eq!(s.cloud.refresh_all_channels().await.expect("refreshed"), 1);
    assert_eq!(figure(&s.cloud, &s).await, 4);
    // The corrected figure is a change a connector reads.
    let (rows, _) = {
        let page = s
            .cloud
            .channel_changes(b, "λιανική".into(), before.parse().expect("cursor"), 1000)
            .await
            .expect("feed");
        (page.data, page.next)
    };
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].available, 4);
}
