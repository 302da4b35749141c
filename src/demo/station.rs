//! The demo's packing station `pack-1`, on simulated devices: a Zebra
//! printer on TCP (behind a tap that saves its labels, `labels.rs`),
//! an MT-SICS scale and a serial scanner on pseudo-terminals, the scanner
//! triggered by writing to a file (`trigger.rs`). The edge drives
//! them exactly as it drives real ones, configured as `edge.toml` would.
//!
//! Someone has to put the parcel on the scale: the demo's operator watches
//! the station's events and, when an order is taken for packing, puts a
//! parcel of the order's expected weight on the pan; once the order is
//! packed, takes it off. Every answer of the station is printed too.

use super::labels::LabelPrinter;
use super::trigger::Trigger;
use super::{Announce, DEMO_EDGE};
use anyhow::Context;
use depot_edge::devices::config::{
    PrinterDevice, ScaleDevice, ScaleProtocol, ScannerDevice, StationConfig,
};
use depot_edge::settings::Settings as EdgeSettings;
use depot_hardware::printer::Endpoint;
use depot_hardware::printer::sim::Simulator;
use depot_hardware::scale::sim::{SerialScaleSim, SimProtocol};
use depot_hardware::scale::{Unit, Weight};
use depot_hardware::scanner::serial::SerialScannerConfig;
use depot_hardware::scanner::sim::SerialSim;
use depot_protocol::BusinessId;
use depot_protocol::event::EventKind;
use depot_protocol::printing::{PrinterFields, PrinterKind};
use depot_wms::Wms;
use serde_json::Value;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use tokio::task::JoinHandle;

pub const STATION: &str = "pack-1";
/// The printer's record in the cloud and its `[[devices.printers]]` entry.
pub const PRINTER: &str = "label-1";
pub const SCALE: &str = "scale-1";
pub const SCANNER: &str = "gun-1";
/// What demos before the station called the packing printer (on
/// `tcp://127.0.0.1:9100`, where nothing printed); it becomes [`PRINTER`].
const EARLIER_PRINTER: &str = "Packing 1";
/// The box and its filling, counted in the expected weight.
const PACKAGING_G: i64 = 150;
/// Where the scanner's trigger is, in the data directory.
const TRIGGER: &str = "scanner";
/// Where the labels land, in the data directory.
const LABELS: &str = "labels";

/// Makes sure the cloud has the station's printer, attached to the demo
/// edge so that it syncs down and its jobs print there.
pub async fn printer_record(wms: &Wms, business: BusinessId) -> anyhow::Result<()> {
    let connection = format!("edge://{DEMO_EDGE}");
    let printers = wms.printers(business).await?;
    let found = printers
        .iter()
        .find(|p| p.name == PRINTER)
        .or_else(|| printers.iter().find(|p| p.name == EARLIER_PRINTER));
    let fields = PrinterFields {
        name: Some(PRINTER.into()),
        kind: Some(PrinterKind::Zpl),
        connection: Some(connection.clone()),
        station: Some(STATION.into()),
    };
    match found {
        Some(p)
            if p.name == PRINTER
                && p.kind == PrinterKind::Zpl
                && p.connection == connection
                && p.station.as_deref() == Some(STATION) => {}
        Some(p) => {
            wms.edit_printer(business, p.id, fields).await?;
        }
        None => {
            wms.create_printer(business, fields).await?;
        }
    }
    Ok(())
}

/// The station's devices, running; dropping it unplugs them all.
pub struct Station {
    printer: LabelPrinter,
    scale: Arc<SerialScaleSim>,
    trigger: Trigger,
    operator: JoinHandle<()>,
}

impl Station {
    /// Starts the simulators in `data_dir` and the operator on the edge's
    /// event log.
    pub async fn start(data_dir: &Path, edge: Wms, announce: Announce) -> anyhow::Result<Self> {
        let sim = Simulator::start()
            .await
            .context("starting the simulated printer")?;
        let printer = LabelPrinter::start(sim, data_dir.join(LABELS), PRINTER, announce.clone())
            .await
            .context("starting the simulated printer's tap")?;
        let scale = Arc::new(
            SerialScaleSim::start(SimProtocol::MtSics, Unit::Kilogram)
                .context("starting the simulated scale")?,
        );
        let gun = SerialSim::pty().context("starting the simulated scanner")?;
        let trigger = Trigger::start(data_dir.join(TRIGGER), gun)
            .context("starting the simulated scanner's trigger")?;
        let operator = tokio::spawn(operator(edge, Arc::clone(&scale), announce));
        Ok(Self {
            printer,
            scale,
            trigger,
            operator,
        })
    }

    /// Adds the devices and the station to the edge's settings, as
    /// `[[devices.…]]` and `[[stations]]` in `edge.toml` would.
    pub fn configure(&self, settings: &mut EdgeSettings) {
        let printer = self.printer.addr();
        settings.devices.printers.push(PrinterDevice::new(
            PRINTER,
            Endpoint::Tcp {
                host: printer.ip().to_string(),
                port: printer.port(),
            },
        ));
        settings.devices.scales.push(ScaleDevice {
            port: Some(self.scale.path().to_owned()),
            ..ScaleDevice::new(SCALE, ScaleProtocol::MtSics)
        });
        settings
            .devices
            .scanners
            .push(ScannerDevice::Serial(SerialScannerConfig::new(
                SCANNER,
                self.trigger.scanner_port(),
            )));
        settings.stations.push(StationConfig {
            name: STATION.into(),
            scanners: vec![SCANNER.into()],
            scale: Some(SCALE.into()),
            printer: Some(PRINTER.into()),
            tolerance_g: 20,
            tolerance_pct: 5.0,
            packaging_g: PACKAGING_G,
            weigh_timeout_ms: 5000,
        });
    }

    /// Each line written here is scanned by the station's scanner.
    pub fn trigger(&self) -> &Path {
        self.trigger.path()
    }

    /// Where the labels the printer received are saved.
    pub fn labels(&self) -> &Path {
        self.printer.dir()
    }

    /// The printer's address, as the edge knows it.
    pub fn printer_addr(&self) -> SocketAddr {
        self.printer.addr()
    }

    pub fn scale_port(&self) -> &str {
        self.scale.path()
    }

    pub fn scanner_port(&self) -> &str {
        self.trigger.scanner_port()
    }
}

impl Drop for Station {
    fn drop(&mut self) {
        self.operator.abort();
    }
}

/// Follows the edge's log from its current end and acts on the station's
/// events.
async fn operator(edge: Wms, scale: Arc<SerialScaleSim>, announce: Announce) {
    let mut changed = edge.events_changed();
    let mut after = match edge.events_head().await {
        Ok(head) => head,
        Err(error) => {
            tracing::warn!(%error, "the demo's operator cannot read the edge's log");
            return;
        }
    };
    loop {
        // Marked seen before reading, so a commit during the read wakes
        // the next wait instead of being missed.
        changed.borrow_and_update();
        let events = match edge.events_since(after, 500).await {
            Ok(events) => events,
            Err(error) => {
                tracing::warn!(%error, "the demo's operator cannot read the edge's log");
                return;
            }
        };
        if events.is_empty() {
            if changed.changed().await.is_err() {
                return;
            }
            continue;
        }
        for event in events {
            after = event.seq;
            let ours = event.kind == EventKind::StationScanned.as_str()
                && event.payload["station"] == STATION;
            if ours {
                act(&event.payload, &scale, &announce);
            }
        }
    }
}

/// Tells what the station answered, and moves the parcel.
fn act(event: &Value, scale: &SerialScaleSim, announce: &Announce) {
    let message = event["message"].as_str().unwrap_or_default();
    if event["ok"] == true {
        announce(format!("{STATION}: {message}"));
    } else {
        announce(format!(
            "{STATION} refused ({}): {message}",
            event["status"]
        ));
        return;
    }
    let result = &event["result"];
    if result.get("pack").is_some() {
        scale.set_weight(Weight::ZERO);
        announce(format!("the operator takes the parcel off {SCALE}"));
        return;
    }
    if event["input"].get("task").is_none() {
        return;
    }
    let expected = result["packing"]["expected_weight_g"].as_i64();
    match expected.map(|g| Weight::new(g, 3)) {
        Some(Ok(kg)) => {
            scale.set_weight(kg);
            announce(format!(
                "the operator puts the parcel on {SCALE}: {kg} kg (the order's items and {PACKAGING_G} g of box)"
            ));
        }
        // Not packing (or an order the catalog cannot weigh): an empty pan.
        _ => scale.set_weight(Weight::ZERO),
    }
}
