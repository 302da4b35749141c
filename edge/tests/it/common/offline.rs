//! An edge that has what the cloud sent it and no broker to reach: the
//! floor served from the box alone.

use depot_edge::settings::{Broker, Settings};
use depot_protocol::BusinessId;
use depot_testkit::seed;
use depot_wms::Wms;
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
    let t = seed::business("B").item("A").seed(&cloud).await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr");
    let settings = Settings {
        business_id: t.business.0,
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
    let (_, events) = depot_testkit::events::own_since(&cloud, 0).await;
    wms.apply_remote(events).await.expect("bootstrap");
    let offline = Offline {
        settings,
        business: t.business,
        warehouse: t.warehouse.0,
        key: t.key,
    };
    (offline, wms)
}
