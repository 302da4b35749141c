//! Records an edge creates carry its node number, so they never collide with
//! the cloud's or another edge's when they meet in the cloud.

use depot_protocol::order::{Address, OrderStatus};
use depot_protocol::tenant::Caller;
use depot_wms::Wms;
use depot_wms::database::{NODE_SHIFT, node_of};

#[tokio::test]
async fn an_edge_numbers_its_waves_and_shipments_in_its_range() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("edge.db");
    let wms = Wms::open_node(&path, "edge:mad-1", 5).expect("open");
    // A new edge: the cloud holds nothing of it, so its log is whole.
    assert!(
        wms.cloud_cursor_seen(0, true)
            .await
            .expect("cloud's answer")
    );
    let b = wms
        .create_business("B", "EUR", "UTC")
        .await
        .expect("business");
    let w = wms
        .create_warehouse(b.id, "W", "W", Address::default(), false)
        .await
        .expect("warehouse");
    let k = wms.create_key(b.id, None).await.expect("key");
    let caller = Caller {
        key_id: k.key.id,
        business_id: b.id,
    };
    wms.create_item(
        b.id,
        serde_json::from_value(serde_json::json!({"sku": "A", "name": "A"})).expect("item"),
    )
    .await
    .expect("create");
    wms.adjust(caller, serde_json::from_value(serde_json::json!({"warehouse_id": w.id, "sku": "A", "reason": "received", "quantity": 5})).expect("adjust"))
        .await
        .expect("receive");
    let order = serde_json::from_value(serde_json::json!({"channel": "web", "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"}, "external_ref": "1", "lines": [{"sku": "A", "quantity": 1}]})).expect("order");
    let (o, _) = wms.create_order(caller, order).await.expect("ingest");
    wms.set_order_status(caller, o.id, OrderStatus::Confirmed, None)
        .await
        .expect("confirm");
    let wave = wms
        .create_wave(
            b.id,
            serde_json::from_value(serde_json::json!({"warehouse_id": w.id})).expect("wave"),
        )
        .await
        .expect("create wave");
    assert_eq!(node_of(wave.id.0), 5);
    assert_eq!(wave.id.0, (5 << NODE_SHIFT) + 1);
    assert!(
        wave.pick_lists
            .iter()
            .flat_map(|p| p.lines.iter())
            .all(|l| node_of(l.id.0) == 5)
    );
    drop(wms);

    // The database stays the edge's: opening it as another node is refused.
    let again = Wms::open_node(&path, "edge:mad-1", 6);
    assert!(again.is_err());
}
