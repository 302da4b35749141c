//! The real HID bus, through hidapi (on Linux its pure-Rust hidraw backend).
//!
//! On Linux, reading a keyboard-wedge scanner's hidraw node does not take its
//! keystrokes away from the kernel's input layer: the console or a desktop
//! still sees them typed. An appliance either runs the scanners in HID-POS
//! mode or keeps them away from the console (a udev rule), which is for the
//! deployment, not this driver.

use std::ffi::CString;
use std::path::Path;
use std::time::Duration;

use hidapi::{HidApi, HidDevice};

use super::bus::{DeviceBus, DeviceError, HidDeviceInfo, ReportSource};

/// hidapi, initialised on first use so that a machine without a HID
/// subsystem fails an enumeration (reported, retried) rather than startup.
#[derive(Default)]
pub struct HidapiBus {
    api: Option<HidApi>,
}

impl HidapiBus {
    pub fn new() -> Self {
        Self::default()
    }
}

impl DeviceBus for HidapiBus {
    fn enumerate(&mut self) -> Result<Vec<HidDeviceInfo>, DeviceError> {
        let api = match &mut self.api {
            Some(api) => {
                api.refresh_devices()
                    .map_err(|e| DeviceError::Unavailable(e.to_string()))?;
                api
            }
            None => self
                .api
                .insert(HidApi::new().map_err(|e| DeviceError::Unavailable(e.to_string()))?),
        };
        Ok(api
            .device_list()
            .map(|info| {
                let path = info.path().to_string_lossy().into_owned();
                HidDeviceInfo {
                    usb_path: usb_port_of(&path),
                    path,
                    vendor_id: info.vendor_id(),
                    product_id: info.product_id(),
                    serial: info
                        .serial_number()
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned),
                    usage_page: info.usage_page(),
                    usage: info.usage(),
                }
            })
            .collect())
    }

    fn open(&mut self, device: &HidDeviceInfo) -> Result<Box<dyn ReportSource>, DeviceError> {
        let open_error = |reason: String| DeviceError::Open {
            path: device.path.clone(),
            reason,
        };
        let api = self
            .api
            .as_ref()
            .ok_or_else(|| open_error("HID devices were never enumerated".into()))?;
        let c_path = CString::new(device.path.as_bytes()).map_err(|e| open_error(e.to_string()))?;
        let handle = api
            .open_path(&c_path)
            .map_err(|e| open_error(e.to_string()))?;
        Ok(Box::new(HidSource {
            handle,
            path: device.path.clone(),
        }))
    }
}

struct HidSource {
    handle: HidDevice,
    path: String,
}

impl ReportSource for HidSource {
    fn read_report(
        &mut self,
        buf: &mut [u8],
        timeout: Duration,
    ) -> Result<Option<usize>, DeviceError> {
        let millis = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        match self.handle.read_timeout(buf, millis) {
            // Reports are never empty: zero bytes is hidapi's timeout.
            Ok(0) => Ok(None),
            Ok(len) => Ok(Some(len)),
            Err(err) => Err(DeviceError::Read {
                path: self.path.clone(),
                reason: err.to_string(),
            }),
        }
    }
}

/// The USB port path of a hidraw node, from the sysfs device it hangs off.
/// `None` off Linux or for devices not on USB.
fn usb_port_of(devnode: &str) -> Option<String> {
    let node = Path::new(devnode).file_name()?;
    let device = Path::new("/sys/class/hidraw").join(node).join("device");
    usb_port_from_sysfs(&device.canonicalize().ok()?)
}

/// The deepest component of a sysfs device path that names a USB port:
/// `<bus>-<port>[.<port>…]`, as in `…/usb1/1-1/1-1.4/1-1.4:1.0/0003:…`. The
/// interface (`1-1.4:1.0`) and the HID device (`0003:0C2E:…`) below it are
/// not ports.
fn usb_port_from_sysfs(path: &Path) -> Option<String> {
    path.components()
        .rev()
        .filter_map(|c| c.as_os_str().to_str())
        .find(|name| is_usb_port(name))
        .map(str::to_owned)
}

fn is_usb_port(name: &str) -> bool {
    let Some((bus, ports)) = name.split_once('-') else {
        return false;
    };
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    numeric(bus) && ports.split('.').all(numeric)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_port_path_in_a_sysfs_path() {
        let path = Path::new(
            "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1.4/1-1.4:1.0/0003:0C2E:0B61.0004/hidraw/hidraw3",
        );
        assert_eq!(usb_port_from_sysfs(path), Some("1-1.4".into()));
        let root =
            Path::new("/sys/devices/pci0000:00/0000:00:14.0/usb3/3-2/3-2:1.1/0003:05E0:1200.0002");
        assert_eq!(usb_port_from_sysfs(root), Some("3-2".into()));
    }

    #[test]
    fn devices_off_usb_have_no_port_path() {
        let i2c = Path::new(
            "/sys/devices/platform/AMDI0010:00/i2c-0/i2c-ELAN0001:00/0018:04F3:3140.0001",
        );
        assert_eq!(usb_port_from_sysfs(i2c), None);
        assert!(!is_usb_port("1-"));
        assert!(!is_usb_port("1-1..2"));
        assert!(!is_usb_port("a-1"));
    }

    #[test]
    fn a_hidraw_node_that_does_not_exist_has_no_port_path() {
        assert_eq!(usb_port_of("/dev/hidraw-none"), None);
    }
}
