//! The seam between the registry and the devices: the real HID bus
//! ([`super::HidapiBus`]) and the simulator ([`crate::scanner::sim::SimBus`])
//! implement the same two traits, so the same task is tested without
//! hardware.

use std::time::Duration;

use thiserror::Error;

/// One enumerated HID interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HidDeviceInfo {
    /// What to open it by (`/dev/hidraw3` on Linux); changes with every
    /// plug, so never an identity.
    pub path: String,
    pub vendor_id: u16,
    pub product_id: u16,
    pub serial: Option<String>,
    /// USB port path (`1-1.4`), when the platform tells it.
    pub usb_path: Option<String>,
    /// Usage page and usage of the interface's top-level collection; 0 when
    /// unknown.
    pub usage_page: u16,
    pub usage: u16,
}

#[derive(Debug, Error)]
pub enum DeviceError {
    #[error("HID devices cannot be listed: {0}")]
    Unavailable(String),
    #[error("cannot open {path}: {reason}")]
    Open { path: String, reason: String },
    #[error("reading {path} failed: {reason}")]
    Read { path: String, reason: String },
    #[error("{path} was unplugged")]
    Unplugged { path: String },
}

/// Enumerates devices and opens them.
pub trait DeviceBus: Send + 'static {
    fn enumerate(&mut self) -> Result<Vec<HidDeviceInfo>, DeviceError>;
    fn open(&mut self, device: &HidDeviceInfo) -> Result<Box<dyn ReportSource>, DeviceError>;
}

/// An open device's input reports.
pub trait ReportSource: Send {
    /// Waits at most `timeout` for one input report, copies it into `buf`
    /// and returns its length; `None` when none came in time. An error means
    /// the device is gone or broken: the reader gives it up.
    fn read_report(
        &mut self,
        buf: &mut [u8],
        timeout: Duration,
    ) -> Result<Option<usize>, DeviceError>;
}
