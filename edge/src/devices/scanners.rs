//! The scanners: the USB registry (every USB scanner, found by identity)
//! and one task per serial scanner, all sending their scans to one channel
//! that the stations read; and whether each scanner is connected.

use super::config::ScannerDevice;
use super::stopped;
use depot_hardware::scanner::registry::{
    self, BusState, DeviceBus, RegistryOptions, RegistryStatus, ScannerMatch,
};
use depot_hardware::scanner::serial;
use depot_hardware::scanner::{Connection, Scan};
use serde::Serialize;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

/// Where to read each scanner's connection.
#[derive(Debug, Clone, Default)]
pub struct Scanners {
    /// Present when USB scanners are configured.
    usb: Option<watch::Receiver<RegistryStatus>>,
    serial: Vec<(String, watch::Receiver<Connection>)>,
    /// Every configured scanner in configuration order, and whether it is
    /// a USB one.
    names: Vec<(String, bool)>,
}

/// A scanner as the routes show it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct ScannerView {
    pub name: String,
    /// usb or serial.
    pub kind: &'static str,
    pub connected: bool,
    /// The HID path or serial port it is read from, when connected.
    pub device: Option<String>,
    /// Why it is not connected, when something failed (`None`: not
    /// plugged in).
    pub reason: Option<String>,
}

/// Starts the scanner tasks, which stop when `stop` turns true.
pub fn start<B: DeviceBus>(
    config: &[ScannerDevice],
    bus: B,
    scans: &mpsc::Sender<Scan>,
    stop: &watch::Receiver<bool>,
    tasks: &mut JoinSet<()>,
) -> Scanners {
    let until = |stop: &watch::Receiver<bool>| {
        let mut stop = stop.clone();
        async move { stopped(&mut stop).await }
    };
    let usb: Vec<ScannerMatch> = config
        .iter()
        .filter_map(|s| match s {
            ScannerDevice::Usb(m) => Some(m.clone()),
            ScannerDevice::Serial(_) => None,
        })
        .collect();
    let usb = (!usb.is_empty()).then(|| {
        let (status, read) = watch::channel(RegistryStatus::default());
        let run = registry::run(
            usb,
            bus,
            RegistryOptions::default(),
            scans.clone(),
            status,
            until(stop),
        );
        tasks.spawn(async move {
            if let Err(error) = run.await {
                tracing::error!(%error, "the USB scanners stopped");
            }
        });
        read
    });
    let mut serials = Vec::new();
    for s in config {
        if let ScannerDevice::Serial(c) = s {
            let (status, read) = watch::channel(Connection::Disconnected { reason: None });
            let name = c.name.clone();
            let run = serial::run(c.clone(), scans.clone(), status, until(stop));
            tasks.spawn(async move {
                if let Err(error) = run.await {
                    tracing::error!(scanner = %name, %error, "the serial scanner stopped");
                }
            });
            serials.push((c.name.clone(), read));
        }
    }
    Scanners {
        usb,
        serial: serials,
        names: config
            .iter()
            .map(|s| (s.name().to_owned(), matches!(s, ScannerDevice::Usb(_))))
            .collect(),
    }
}

impl Scanners {
    pub fn view(&self, name: &str) -> Option<ScannerView> {
        let (_, usb) = self.names.iter().find(|(n, _)| n == name)?;
        let connection = if *usb {
            self.usb
                .as_ref()
                .and_then(|u| u.borrow().scanners.get(name).cloned())
        } else {
            self.serial
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, c)| c.borrow().clone())
        }
        .unwrap_or(Connection::Disconnected { reason: None });
        let (connected, device, reason) = match connection {
            Connection::Connected { device } => (true, Some(device), None),
            Connection::Disconnected { reason } => (false, None, reason),
        };
        Some(ScannerView {
            name: name.to_owned(),
            kind: if *usb { "usb" } else { "serial" },
            connected,
            device,
            reason,
        })
    }

    pub fn all(&self) -> Vec<ScannerView> {
        self.names
            .iter()
            .filter_map(|(n, _)| self.view(n))
            .collect()
    }

    /// Resolves once the USB registry has enumerated the HID bus (and
    /// bound what it found) for the first time; at once when no USB
    /// scanner is configured. Serial scanners have no first pass: their
    /// tasks open and retry their ports on their own.
    pub async fn first_pass(&self) {
        if let Some(usb) = &self.usb {
            let mut usb = usb.clone();
            let _ = usb.wait_for(|s| s.bus != BusState::Starting).await;
        }
    }

    /// The HID bus, when USB scanners are configured: ready, no devices,
    /// or unavailable with the reason.
    pub fn usb_bus(&self) -> Option<String> {
        self.usb.as_ref().map(|u| match &u.borrow().bus {
            BusState::Starting => "starting".to_owned(),
            BusState::Ready => "ready".to_owned(),
            BusState::NoDevices => "no HID devices".to_owned(),
            BusState::Unavailable { reason } => format!("unavailable: {reason}"),
        })
    }
}
