//! The station page and the keyboard scan route, on a packing station like
//! the demo's (a serial scanner, an MT-SICS scale and a ZPL printer, all
//! simulated). The route takes a typed scan down the hardware scanner's
//! path; the page is served with its assets; and, when
//! `DEPOT_TEST_CHROMEDRIVER` names a chromedriver, headless Chromium opens
//! the page and shows what the station's scanner scans within a second,
//! refusals in red with their errors as the API sends them, and scans
//! typed into the page, packing an order (a failed pack retried from the
//! page, a wave released from it) and walking a wave's pick list; at
//! 1280x800 and at 800x480 the answer, the task and what is left stay in
//! view without overlapping. A failed pack is retried or released through
//! the routes too. Screenshots are kept in
//! `$DEPOT_ARTIFACTS_DIR/station-page*.png` (target/artifacts unless told).

use crate::common;
mod webdriver;

mod browser;
mod chromium;
mod routes;

use common::RunningEdge;
use common::devices::{Api, LIMIT, cloud_printer, printer_device};
use depot_edge::devices::config::{ScaleDevice, ScaleProtocol, ScannerDevice, StationConfig};
use depot_edge::settings::Settings;
use depot_hardware::printer::sim::Simulator;
use depot_hardware::scale::Unit;
use depot_hardware::scale::sim::{SerialScaleSim, SimProtocol};
use depot_hardware::scanner::serial::{LineEnding, SerialScannerConfig};
use depot_hardware::scanner::sim::{SerialSim, SimBus};
use depot_protocol::{OrderId, OrderStatus};
use depot_testkit::{eventually, rig::Rig};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use webdriver::{Driver, Session};

const STATION: &str = "pack-1";
const MUG_GTIN: &str = "4006381333931";

/// A packing station with its devices, and an order of 2 MUG and 1 TEA
/// (3 units, 1000 g with the packaging) confirmed and at the edge.
struct Floor {
    rig: Rig,
    edge: RunningEdge,
    api: Api,
    gun: SerialSim,
    scale: SerialScaleSim,
    printer: Simulator,
    order: OrderId,
}

impl Floor {
    async fn start(edge_id: &str) -> Self {
        Self::start_with(edge_id, |_| {}).await
    }

    /// `start`, with the edge's settings changed by `configure`.
    async fn start_with(edge_id: &str, configure: impl FnOnce(&mut Settings)) -> Self {
        let rig = Rig::start(edge_id, false).await;
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
        let req = json!({"channel": "web", "external_ref": "S1", "warehouse_id": rig.warehouse.0,
            "shipping_address": {"name": "Γιώργος Παπαδόπουλος", "line1": "Οδός Ερμού 25",
                                 "postal_code": "105 63", "city": "Αθήνα", "country": "GR"},
            "lines": [{"sku": "MUG", "quantity": 2}, {"sku": "TEA", "quantity": 1}]});
        let (order, _) = rig
            .cloud
            .create_order(rig.caller, serde_json::from_value(req).expect("order"))
            .await
            .expect("order");
        rig.cloud
            .set_order_status(rig.caller, order.id, OrderStatus::Confirmed, None)
            .await
            .expect("confirm");
        let printer = Simulator::start().await.expect("printer simulator");
        cloud_printer(&rig, "label-1").await;
        let scale = SerialScaleSim::start(SimProtocol::MtSics, Unit::Kilogram).expect("scale");
        scale.set_weight("1.000".parse().expect("weight"));
        let gun = SerialSim::pty().expect("serial scanner");

        let mut settings = rig.edge_settings();
        settings.devices.printers = vec![printer_device("label-1", &printer)];
        settings.devices.scales = vec![ScaleDevice {
            port: Some(scale.path().to_owned()),
            poll_interval_ms: Some(50),
            timeout_ms: Some(300),
            ..ScaleDevice::new("scale-1", ScaleProtocol::MtSics)
        }];
        settings.devices.scanners = vec![ScannerDevice::Serial(SerialScannerConfig::new(
            "gun-1",
            gun.path(),
        ))];
        settings.stations = vec![StationConfig {
            name: STATION.into(),
            scanners: vec!["gun-1".into()],
            scale: Some("scale-1".into()),
            printer: Some("label-1".into()),
            tolerance_g: 20,
            tolerance_pct: 5.0,
            packaging_g: 150,
            weigh_timeout_ms: 3000,
        }];
        configure(&mut settings);
        settings.check().expect("valid settings");
        let edge = RunningEdge::start_with_bus(settings, SimBus::new()).await;
        let api = Api::new(&edge, &rig.key);
        api.ready().await;
        eventually("the order at the edge", || async {
            edge.wms
                .order(rig.business, order.id)
                .await
                .is_ok_and(|o| o.status == OrderStatus::Confirmed)
        })
        .await;
        eventually("the scanner, the scale and the printer ready", || async {
            let (_, body) = api.get("/v1/edge/stations").await;
            let s = &body["data"][0];
            s["scanners"][0]["connected"] == true
                && s["scale"]["state"] == "weight"
                && s["printer"]["printer_id"].is_i64()
        })
        .await;
        let (status, body) = api
            .call(
                "PUT",
                &format!("/v1/edge/stations/{STATION}/task"),
                Some(json!({"task": "packing", "order_id": order.id.0})),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        Self {
            rig,
            edge,
            api,
            gun,
            scale,
            printer,
            order: order.id,
        }
    }

    fn scan(&mut self, code: &str) {
        self.gun
            .scan(code, None, LineEnding::CrLf)
            .expect("scanned");
    }

    async fn typed(&self, body: Value) -> (u16, Value) {
        self.api
            .call(
                "POST",
                &format!("/v1/edge/stations/{STATION}/scan"),
                Some(body),
            )
            .await
    }

    /// A station route with an `Idempotency-Key`: the status, the body as
    /// it came, and whether it was a replay of the key's first answer.
    async fn keyed(&self, what: &str, key: &str, body: Option<Value>) -> (u16, Vec<u8>, bool) {
        let mut req = reqwest::Client::new()
            .post(format!(
                "{}/v1/edge/stations/{STATION}/{what}",
                self.edge.base
            ))
            .header("X-API-KEY", &self.rig.key)
            .header("Idempotency-Key", key)
            .timeout(LIMIT);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let r = req.send().await.expect("request");
        let status = r.status().as_u16();
        let replayed = r
            .headers()
            .get("idempotent-replayed")
            .is_some_and(|v| v == "true");
        (status, r.bytes().await.expect("body").to_vec(), replayed)
    }

    async fn stop(self) {
        self.edge.stop().await;
        self.rig.stop().await;
    }
}

fn json_of(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or_default()
}

/// How many `station.scanned` events the edge has.
async fn station_events(api: &Api, b: i64) -> usize {
    let (_, body) = api
        .get(&format!(
            "/v1/events/{b}/list?kind=station.scanned&length=1000"
        ))
        .await;
    body["data"]["events"].as_array().map_or(0, Vec::len)
}

/// The last `station.scanned` event's payload.
async fn last_event(api: &Api, b: i64) -> Value {
    let (_, body) = api
        .get(&format!(
            "/v1/events/{b}/list?kind=station.scanned&length=1000"
        ))
        .await;
    let events = body["data"]["events"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    events
        .last()
        .map(|e| e["payload"].clone())
        .unwrap_or_default()
}
