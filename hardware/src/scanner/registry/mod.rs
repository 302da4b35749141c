//! Which USB scanner is which: configured scanners are matched to the HID
//! devices present by identity, so a scanner keeps its name (and so its
//! station) across reboots, hub reshuffles and unplug/replug.
//!
//! Identity is the vendor and product id, narrowed by the USB serial number
//! (stable wherever the scanner is plugged) or the USB port path (stable for
//! whatever scanner is plugged there; the way to tell apart identical
//! scanners without serial numbers). [`bind`] is the pure matching rule;
//! [`run`] is the task that enumerates, opens and reads.

mod bus;
mod hid;
mod reader;
mod task;

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::ConfigError;
use super::wedge::{Terminator, WedgeConfig};

pub use bus::{DeviceBus, DeviceError, HidDeviceInfo, ReportSource};
pub use hid::HidapiBus;
pub use task::{BusState, RegistryOptions, RegistryStatus, run};

/// HID usage page and usage of a keyboard (Generic Desktop, Keyboard).
const KEYBOARD: (u16, u16) = (0x01, 0x06);
/// HID usage page of bar code scanners (HID Point of Sale Usage Tables).
const BAR_CODE_SCANNER_PAGE: u16 = 0x8C;

/// One configured USB scanner.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScannerMatch {
    /// Unique; what scans are tagged with and stations are bound to.
    pub name: String,
    /// The USB vendor id, as `lsusb` shows it (in TOML, `0x0c2e`).
    pub vendor_id: u16,
    /// The USB product id, as `lsusb` shows it (in TOML, `0x0b61`).
    pub product_id: u16,
    /// The USB serial number (iSerialNumber), when the scanner has one.
    #[serde(default)]
    pub serial: Option<String>,
    /// The USB port path as Linux names it (`1-1.4`: bus 1, root port 1,
    /// hub port 4), as in `ls -l /sys/class/hidraw`.
    #[serde(default)]
    pub usb_path: Option<String>,
    #[serde(default)]
    pub mode: ScannerMode,
}

/// How the scanner is set up to talk: it decides which of the device's HID
/// interfaces is read and how.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ScannerMode {
    /// Keyboard emulation, the factory default of most scanners.
    Wedge(WedgeConfig),
    /// HID point-of-sale (usage page 0x8C).
    HidPos,
}

impl Default for ScannerMode {
    fn default() -> Self {
        ScannerMode::Wedge(WedgeConfig::default())
    }
}

impl ScannerMatch {
    fn identifies(&self, device: &HidDeviceInfo) -> bool {
        self.vendor_id == device.vendor_id
            && self.product_id == device.product_id
            && self
                .serial
                .as_ref()
                .is_none_or(|s| device.serial.as_ref() == Some(s))
            && self
                .usb_path
                .as_ref()
                .is_none_or(|p| device.usb_path.as_ref() == Some(p))
    }

    /// Scanners are composite devices (a keyboard and a HID-POS interface,
    /// often a vendor one too), each interface a device of its own: the mode
    /// picks one. A device whose usages could not be read (0:0) is taken.
    fn reads_through(&self, device: &HidDeviceInfo) -> bool {
        match (device.usage_page, device.usage) {
            (0, 0) => true,
            page_usage => match self.mode {
                ScannerMode::Wedge(_) => page_usage == KEYBOARD,
                ScannerMode::HidPos => page_usage.0 == BAR_CODE_SCANNER_PAGE,
            },
        }
    }

    fn specificity(&self) -> u8 {
        u8::from(self.serial.is_some()) * 2 + u8::from(self.usb_path.is_some())
    }
}

/// Checks what [`run`] needs of a configuration.
pub fn validate(scanners: &[ScannerMatch]) -> Result<(), ConfigError> {
    let mut names = HashSet::new();
    for scanner in scanners {
        if scanner.name.trim().is_empty() {
            return Err(ConfigError::EmptyName);
        }
        if !names.insert(scanner.name.as_str()) {
            return Err(ConfigError::DuplicateName(scanner.name.clone()));
        }
        if let ScannerMode::Wedge(WedgeConfig {
            terminator: Terminator::Timeout { idle_ms: 0 },
            ..
        }) = scanner.mode
        {
            return Err(ConfigError::Zero(scanner.name.clone(), "idle_ms"));
        }
    }
    Ok(())
}

/// A configured scanner and the device that is it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binding<'a> {
    pub scanner: &'a ScannerMatch,
    pub device: &'a HidDeviceInfo,
}

/// Says which configured scanner each present device is. Each device path
/// serves at most one scanner and each scanner at most one device. The most
/// specific configurations choose first (serial and port, then serial, then
/// port, then vendor and product alone), so a catch-all entry never takes a
/// device a precise one names; among equals configuration order decides,
/// and devices are tried in port-path order so the outcome does not depend
/// on enumeration order.
pub fn bind<'a>(scanners: &'a [ScannerMatch], devices: &'a [HidDeviceInfo]) -> Vec<Binding<'a>> {
    let mut by_specificity: Vec<&ScannerMatch> = scanners.iter().collect();
    by_specificity.sort_by_key(|s| std::cmp::Reverse(s.specificity()));
    let mut ordered: Vec<&HidDeviceInfo> = devices.iter().collect();
    ordered.sort_by(|a, b| (&a.usb_path, &a.path).cmp(&(&b.usb_path, &b.path)));

    let mut taken = HashSet::new();
    let mut bindings = Vec::new();
    for scanner in by_specificity {
        let found = ordered.iter().find(|device| {
            !taken.contains(device.path.as_str())
                && scanner.identifies(device)
                && scanner.reads_through(device)
        });
        if let Some(&device) = found {
            taken.insert(device.path.as_str());
            bindings.push(Binding { scanner, device });
        }
    }
    bindings
}

#[cfg(test)]
mod tests;
