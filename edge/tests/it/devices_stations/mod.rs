//! Stations at the edge, with simulated devices: a packing station's USB
//! scanner scans an order, its scale weighs it and its printer prints the
//! shipping label (`packing.rs`); a station's serial scanner picks with
//! the same answers as the HTTP scan route, receives, puts away, counts
//! and grades returns (`floor.rs`). What both use is here.

mod floor;
mod packing;

use crate::common;
use common::RunningEdge;
use common::devices::{Api, LIMIT, cloud_printer, printer_device};
use depot_edge::devices::config::{ScaleDevice, ScaleProtocol, ScannerDevice, StationConfig};
use depot_hardware::printer::sim::Simulator;
use depot_hardware::scale::sim::{SerialScaleSim, SimProtocol};
use depot_hardware::scale::{Unit, Weight};
use depot_hardware::scanner::registry::{HidDeviceInfo, ScannerMatch, ScannerMode};
use depot_hardware::scanner::serial::{LineEnding, SerialScannerConfig};
use depot_hardware::scanner::sim::encode::WedgeEncoding;
use depot_hardware::scanner::sim::{SerialSim, SimBus};
use depot_protocol::tenant::Caller;
use depot_protocol::{OrderId, OrderStatus, WarehouseId};
use depot_testkit::{eventually, rig::Rig};
use depot_wms::Wms;
use serde_json::{Value, json};

const MUG_GTIN: &str = "4006381333931";

/// MUG (300 g, with a GTIN) and TEA (250 g), 50 of each in stock.
async fn catalog(rig: &Rig) {
    for item in [
        json!({"sku": "MUG", "name": "Mug", "gtin": MUG_GTIN, "weight_g": 300}),
        json!({"sku": "TEA", "name": "Tea", "weight_g": 250}),
    ] {
        let sku = item["sku"].clone();
        rig.cloud
            .create_item(rig.business, serde_json::from_value(item).expect("item"))
            .await
            .expect("item");
        let adjust = json!({"warehouse_id": rig.warehouse.0, "sku": sku, "reason": "received", "quantity": 50});
        rig.cloud
            .adjust(rig.caller, serde_json::from_value(adjust).expect("adjust"))
            .await
            .expect("stock");
    }
}

async fn confirmed_order(
    wms: &Wms,
    caller: Caller,
    w: WarehouseId,
    reference: &str,
    lines: Value,
) -> OrderId {
    let req = json!({"channel": "web", "external_ref": reference, "warehouse_id": w.0, "lines": lines,
               "shipping_address": {"name": "Łucja Wiśniewska", "line1": "ul. Floriańska 14/3",
                                    "postal_code": "31-021", "city": "Kraków", "country": "PL"}});
    let (o, _) = wms
        .create_order(caller, serde_json::from_value(req).expect("order"))
        .await
        .expect("order");
    wms.set_order_status(caller, o.id, OrderStatus::Confirmed, None)
        .await
        .expect("confirm");
    o.id
}

async fn at_edge(edge: &RunningEdge, rig: &Rig, orders: &[OrderId]) {
    eventually("the orders at the edge", || async {
        for o in orders {
            if !edge
                .wms
                .order(rig.business, *o)
                .await
                .is_ok_and(|o| o.status == OrderStatus::Confirmed)
            {
                return false;
            }
        }
        true
    })
    .await;
}

/// Follows the station events of the log.
struct Events {
    after: i64,
}

impl Events {
    /// The next `station.scanned` event's payload, which must be what the
    /// event catalogue documents (docs/events.md).
    async fn next(&mut self, api: &Api, b: i64) -> Value {
        let events = api.events_after(b, self.after, "station.scanned").await;
        let first = &events[0];
        self.after = first["seq"].as_i64().expect("seq");
        let entry = depot_protocol::catalogue::lookup("station.scanned").expect("catalogued");
        assert_eq!(first["version"], entry.version);
        if let Err(problems) = depot_protocol::catalogue::schema::check(entry, &first["payload"]) {
            panic!("{problems:#?}\n{}", first["payload"]);
        }
        first["payload"].clone()
    }
}

/// Sets the floor station's task.
async fn set_task(api: &Api, task: Value) -> (u16, Value) {
    api.call("PUT", "/v1/edge/stations/floor-1/task", Some(task))
        .await
}

async fn status_at(edge: &RunningEdge, rig: &Rig, order: OrderId) -> OrderStatus {
    edge.wms
        .order(rig.business, order)
        .await
        .expect("order")
        .status
}

fn weight(text: &str) -> Weight {
    text.parse().expect("weight")
}
