//! Simulated scanners, for tests and the demo.
//!
//! [`SimBus`] stands in for the HID bus: devices are plugged in and out, and
//! a plugged [`SimDevice`] sends reports (recorded ones, or a barcode encoded
//! by [`encode`]) to whoever opened it, exactly where a real device's reports
//! would arrive. Unplugging makes the open reader fail as a real unplug does,
//! and the device leaves the enumeration. [`SerialSim`] is a serial scanner
//! on a pseudo-terminal.

pub mod encode;

use std::sync::mpsc::{self as std_mpsc, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use thiserror::Error;

use crate::scanner::registry::{DeviceBus, DeviceError, HidDeviceInfo, ReportSource};
use encode::{EncodeError, WedgeEncoding, hidpos_reports, wedge_reports};

#[derive(Debug, Error)]
pub enum SimError {
    #[error("the simulated device {0} is no longer read (its reader stopped)")]
    Closed(String),
    #[error(transparent)]
    Encode(#[from] EncodeError),
}

#[derive(Default)]
struct SimState {
    unavailable: Option<String>,
    slots: Vec<Slot>,
    next_id: u64,
}

struct Slot {
    id: u64,
    info: HidDeviceInfo,
    /// Taken by the first `open`; reports sent before that wait in it.
    reports: Option<std_mpsc::Receiver<Vec<u8>>>,
}

/// A simulated HID bus. Clones share the same devices.
#[derive(Clone, Default)]
pub struct SimBus {
    state: Arc<Mutex<SimState>>,
}

impl SimBus {
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SimState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Plugs a device in; it is enumerated until the returned handle is
    /// unplugged or dropped.
    pub fn plug(&self, info: HidDeviceInfo) -> SimDevice {
        let (sender, receiver) = std_mpsc::channel();
        let mut state = self.state();
        state.next_id += 1;
        let id = state.next_id;
        state.slots.push(Slot {
            id,
            info: info.clone(),
            reports: Some(receiver),
        });
        SimDevice {
            bus: self.clone(),
            id,
            path: info.path,
            sender,
        }
    }

    /// Makes enumeration fail with `reason`, as a machine without a HID
    /// subsystem does; `None` restores it.
    pub fn set_unavailable(&self, reason: Option<&str>) {
        self.state().unavailable = reason.map(str::to_owned);
    }
}

impl DeviceBus for SimBus {
    fn enumerate(&mut self) -> Result<Vec<HidDeviceInfo>, DeviceError> {
        let state = self.state();
        if let Some(reason) = &state.unavailable {
            return Err(DeviceError::Unavailable(reason.clone()));
        }
        Ok(state.slots.iter().map(|slot| slot.info.clone()).collect())
    }

    fn open(&mut self, device: &HidDeviceInfo) -> Result<Box<dyn ReportSource>, DeviceError> {
        let mut state = self.state();
        let open_error = |reason: &str| DeviceError::Open {
            path: device.path.clone(),
            reason: reason.into(),
        };
        let slot = state
            .slots
            .iter_mut()
            .find(|slot| slot.info.path == device.path)
            .ok_or_else(|| open_error("no such device"))?;
        let reports = slot
            .reports
            .take()
            .ok_or_else(|| open_error("device busy"))?;
        Ok(Box::new(SimSource {
            path: device.path.clone(),
            reports,
        }))
    }
}

struct SimSource {
    path: String,
    reports: std_mpsc::Receiver<Vec<u8>>,
}

impl ReportSource for SimSource {
    fn read_report(
        &mut self,
        buf: &mut [u8],
        timeout: Duration,
    ) -> Result<Option<usize>, DeviceError> {
        match self.reports.recv_timeout(timeout) {
            Ok(report) => {
                // Like hidraw, a report longer than the buffer is cut.
                let len = report.len().min(buf.len());
                buf[..len].copy_from_slice(&report[..len]);
                Ok(Some(len))
            }
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(DeviceError::Unplugged {
                path: self.path.clone(),
            }),
        }
    }
}

/// A plugged-in simulated device.
pub struct SimDevice {
    bus: SimBus,
    id: u64,
    path: String,
    sender: std_mpsc::Sender<Vec<u8>>,
}

impl SimDevice {
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Sends one raw input report, as read from the device (report id
    /// first for numbered reports).
    pub fn send_report(&self, report: &[u8]) -> Result<(), SimError> {
        self.sender
            .send(report.to_vec())
            .map_err(|_| SimError::Closed(self.path.clone()))
    }

    /// Types `text` as a keyboard-wedge scanner does.
    pub fn type_text(&self, text: &str, encoding: &WedgeEncoding) -> Result<(), SimError> {
        for report in wedge_reports(text, encoding)? {
            self.send_report(&report.to_bytes())?;
        }
        Ok(())
    }

    /// Sends `data` as a HID-POS scanner does, with an AIM identifier such
    /// as `]C1`.
    pub fn scan_hidpos(&self, data: &[u8], aim: Option<&str>) -> Result<(), SimError> {
        for report in hidpos_reports(data, aim)? {
            self.send_report(&report)?;
        }
        Ok(())
    }

    /// Pulls the device out: it leaves the enumeration, and its reader
    /// fails once it has read what was already sent.
    pub fn unplug(self) {}
}

impl Drop for SimDevice {
    fn drop(&mut self) {
        self.bus.state().slots.retain(|slot| slot.id != self.id);
    }
}

#[cfg(unix)]
pub use pty::SerialSim;

#[cfg(unix)]
mod pty {
    use std::io::{self, Write};

    use serialport::{SerialPort, TTYPort};

    use super::encode::serial_line;
    use crate::scanner::serial::LineEnding;

    /// A serial scanner on a pseudo-terminal: the driver opens [`path`]
    /// (the slave side) as it would a real port, and the simulator writes
    /// what a scanner sends on the master side.
    ///
    /// [`path`]: SerialSim::path
    pub struct SerialSim {
        master: TTYPort,
        // Held open so the pseudo-terminal stays up between the driver's
        // opens: with no slave side open, the master side sees a hang-up.
        _slave: TTYPort,
        path: String,
    }

    impl SerialSim {
        pub fn pty() -> Result<Self, serialport::Error> {
            let (master, slave) = TTYPort::pair()?;
            let path = slave.name().ok_or_else(|| {
                serialport::Error::new(
                    serialport::ErrorKind::Unknown,
                    "pseudo-terminal has no name",
                )
            })?;
            Ok(Self {
                master,
                _slave: slave,
                path,
            })
        }

        pub fn path(&self) -> &str {
            &self.path
        }

        /// Sends one scan: AIM prefix (if any), text, line ending.
        pub fn scan(
            &mut self,
            text: &str,
            aim: Option<&str>,
            ending: LineEnding,
        ) -> io::Result<()> {
            self.write_raw(&serial_line(text, aim, ending))
        }

        /// Sends bytes as they are: line noise, partial lines.
        pub fn write_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
            self.master.write_all(bytes)?;
            self.master.flush()
        }

        /// Closes the master side: the driver's reads fail, as when a USB
        /// serial adapter is pulled.
        pub fn unplug(self) {}
    }
}
