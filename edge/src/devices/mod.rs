//! The devices attached to the box and the stations that use them.
//!
//! Configured in `edge.toml` ([`config`]); started by `serve`: a spooler
//! per printer ([`printers`]), a driver per scale ([`scales`]), the
//! scanners ([`scanners`]), and a task per station ([`stations`]) around
//! its pure state machine ([`machine`]). A scan from a station's scanner
//! takes the same engine calls as the warehouse routes; [`routes`] serves
//! their state under `/v1/edge/`.

pub mod config;
pub mod failure;
pub mod machine;
pub mod pacing;
pub mod printers;
pub mod routes;
pub mod scales;
pub mod scanners;
pub mod stations;

use crate::settings::Settings;
use depot_hardware::scanner::Scan;
use depot_hardware::scanner::registry::DeviceBus;
use depot_protocol::BusinessId;
use depot_wms::Wms;
use printers::{PrinterStatus, Spooler};
use scales::{Scale, ScaleView};
use scanners::Scanners;
use serde::Serialize;
use stations::{Context, StationHandle};
use std::sync::Arc;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

/// Scans on their way to the stations.
const SCANS: usize = 256;

/// What the routes read: every device's state, and the stations. Empty
/// when nothing is configured (or the app runs without `serve`).
#[derive(Clone, Default)]
pub struct Devices {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    printers: Vec<watch::Receiver<PrinterStatus>>,
    scales: Vec<Scale>,
    scanners: Scanners,
    stations: Vec<StationHandle>,
}

/// The device tasks, to stop with the server.
pub struct Running {
    stop: watch::Sender<bool>,
    tasks: JoinSet<()>,
}

impl Running {
    pub async fn stop(mut self) {
        let _ = self.stop.send(true);
        while let Some(done) = self.tasks.join_next().await {
            if let Err(error) = done {
                tracing::error!(%error, "a device task failed");
            }
        }
    }
}

/// Starts every configured device and station. `bus` is where USB
/// scanners are found (the real HID bus, or a simulated one in tests).
pub fn start<B: DeviceBus>(
    wms: &Wms,
    settings: &Settings,
    bus: B,
) -> Result<(Devices, Running), String> {
    // `Settings::load` checked it already; settings built in code were not.
    config::check(&settings.devices, &settings.stations)?;
    let business = BusinessId(settings.business_id);
    let (stop, stopped) = watch::channel(false);
    let mut tasks = JoinSet::new();
    let printers = settings
        .devices
        .printers
        .iter()
        .map(|config| {
            let station = settings
                .stations
                .iter()
                .find(|s| s.printer.as_ref() == Some(&config.name))
                .map(|s| s.name.clone());
            let spooler = Spooler {
                config: config.clone(),
                station,
                wms: wms.clone(),
                business,
                edge_id: settings.edge_id.clone(),
            };
            let (status, run) = spooler.start(stopped.clone());
            tasks.spawn(run);
            status
        })
        .collect();
    let scales = scales::start(&settings.devices.scales)?;
    for scale in &scales {
        let station = settings
            .stations
            .iter()
            .find(|s| s.scale.as_ref() == Some(&scale.id))
            .map(|s| s.name.clone());
        tasks.spawn(scales::report(
            scale.clone(),
            station,
            wms.clone(),
            business,
            stopped.clone(),
        ));
    }
    let (scans, incoming) = mpsc::channel(SCANS);
    let scanners = scanners::start(
        &settings.devices.scanners,
        bus,
        &scans,
        &stopped,
        &mut tasks,
    );
    drop(scans);
    let stations: Vec<StationHandle> = settings
        .stations
        .iter()
        .map(|config| {
            let scale = config
                .scale
                .as_ref()
                .and_then(|id| scales.iter().find(|s| &s.id == id).cloned());
            let context = Context {
                wms: wms.clone(),
                business,
                edge_id: settings.edge_id.clone(),
                scale,
            };
            let (handle, run) = stations::start(config.clone(), context, stopped.clone());
            tasks.spawn(run);
            handle
        })
        .collect();
    tasks.spawn(dispatch(incoming, stations.clone()));
    let devices = Devices {
        inner: Arc::new(Inner {
            printers,
            scales,
            scanners,
            stations,
        }),
    };
    Ok((devices, Running { stop, tasks }))
}

/// Resolves once `stop` turns true (or its sender is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// Hands each scan to the station its scanner serves.
async fn dispatch(mut incoming: mpsc::Receiver<Scan>, stations: Vec<StationHandle>) {
    while let Some(scan) = incoming.recv().await {
        let scanner = scan.device.as_str();
        let Some(station) = stations
            .iter()
            .find(|s| s.config.scanners.iter().any(|n| n == scanner))
        else {
            tracing::warn!(%scanner, "a scan from a scanner no station uses");
            continue;
        };
        if !station.scan(scanner.to_owned(), scan.text) {
            tracing::warn!(station = %station.config.name, %scanner, "the station is too far behind: scan dropped");
        }
    }
}

/// A line per device, for `/v1/edge/status`.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct DevicesSummary {
    pub printers: usize,
    pub scales: usize,
    pub scanners: usize,
    pub stations: usize,
    /// What needs someone: "label-1: paper out", "gun-2: not connected".
    pub attention: Vec<String>,
}

impl Devices {
    pub fn printers(&self) -> Vec<PrinterStatus> {
        self.inner
            .printers
            .iter()
            .map(|p| p.borrow().clone())
            .collect()
    }

    pub fn printer(&self, name: &str) -> Option<PrinterStatus> {
        self.printers().into_iter().find(|p| p.name == name)
    }

    pub fn scale(&self, id: &str) -> Option<&Scale> {
        self.inner.scales.iter().find(|s| s.id == id)
    }

    pub fn scale_views(&self) -> Vec<ScaleView> {
        self.inner
            .scales
            .iter()
            .map(|s| ScaleView::of(&s.id, &s.handle.state()))
            .collect()
    }

    /// Resolves once the devices have been looked for once (see
    /// [`Scanners::first_pass`]): what readiness waits for.
    pub async fn first_scan(&self) {
        self.inner.scanners.first_pass().await;
    }

    pub fn scanners(&self) -> &Scanners {
        &self.inner.scanners
    }

    pub fn stations(&self) -> &[StationHandle] {
        &self.inner.stations
    }

    pub fn station(&self, name: &str) -> Option<&StationHandle> {
        self.inner.stations.iter().find(|s| s.config.name == name)
    }

    pub fn summary(&self) -> DevicesSummary {
        let printers = self.printers();
        let scales = self.scale_views();
        let scanners = self.inner.scanners.all();
        let attention = printers
            .iter()
            .filter_map(|p| p.trouble().map(|t| format!("{}: {t}", p.name)))
            .chain(
                scales
                    .iter()
                    .filter_map(|s| s.fault.as_ref().map(|f| format!("{}: {f}", s.id))),
            )
            .chain(
                scanners
                    .iter()
                    .filter(|s| !s.connected)
                    .map(|s| format!("{}: not connected", s.name)),
            )
            .collect();
        DevicesSummary {
            printers: printers.len(),
            scales: scales.len(),
            scanners: scanners.len(),
            stations: self.inner.stations.len(),
            attention,
        }
    }
}
