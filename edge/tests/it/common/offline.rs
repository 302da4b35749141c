//! An edge that has what the cloud sent it and no broker to reach: the
//! floor served from the box alone.

use depot_edge::settings::{Broker, Settings};
use depot_protocol::BusinessId;
use depot_protocol::order::Address;
use depot_wms::Wms;
use serde_json::json;
use std::path::Path;

/// What a test needs to serve and call such an edge.
pub struct Offline {
    pub settings: Settings,
    pub business: BusinessId,
    pub warehouse: i64,
    pub key: String,
}

/// A cloud database in `cloud_dir` with a business, a warehouse, a key and
/// item `A`; the edge `edge_id`'s database in `data_dir` with all of it
/// applied, opened; settings that name a broker nothing listens on.
pub async fn bootstrap(cloud_dir: &Path, data_dir: &Path, edge_id: &str) -> (Offline, Wms) {
    let cloud = Wms::open(&cloud_dir.join("cloud.db"), "cloud").expect("cloud");
    let b = cloud
        .create_business("B", "EUR", "UTC")
        .await
        .expect("business");
    let w = cloud
        .create_warehouse(b.id, "W", "W", Address::default(), false)
        .await
        .expect("warehouse");
    let key = cloud.create_key(b.id, None).await.expect("key").secret;
    cloud
        .create_item(
            b.id,
            serde_json::from_value(json!({"sku": "A", "name": "A"})).expect("item"),
        )
        .await
        .expect("item");
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr");
    let settings = Settings {
        business_id: b.id.0,
        edge_id: edge_id.into(),
        node: 1,
        data_dir: data_dir.to_owned(),
        broker: Broker {
            url: format!("mqtt://{closed}"),
            ..Broker::default()
        },
        ..Settings::default()
    };
    let wms = depot_edge::open(&settings).expect("open edge");
    let head = cloud.outgoing_head().await.expect("head");
    let events = cloud
        .outgoing(0, head, 1000)
        .await
        .expect("events")
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    wms.apply_remote(events).await.expect("bootstrap");
    let offline = Offline {
        settings,
        business: b.id,
        warehouse: w.id.0,
        key,
    };
    (offline, wms)
}
