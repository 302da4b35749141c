//! Barcode scanners: USB keyboard-wedge and HID point-of-sale scanners, and
//! serial scanners.
//!
//! Each transport has a pure decoder fed with reports or bytes and the time
//! ([`wedge::WedgeDecoder`], [`hidpos::HidPosDecoder`],
//! [`serial::LineFramer`]) and a thin I/O layer: [`registry::run`] finds the
//! configured USB scanners by identity, follows them across unplug and replug,
//! and [`serial::run`] reads one serial port. Both emit [`Scan`]s tagged with
//! the scanner's configured name, which the edge binds to a station and hands
//! to the same code path as a scan posted over HTTP.
//!
//! Text is passed on as the scanner decoded it, control characters included:
//! GS1 barcodes carry FNC1 as ASCII GS (0x1D) and GS1 parsing downstream needs
//! it to find the end of variable-length fields.

pub mod hidpos;
pub mod registry;
pub mod serial;
pub mod sim;
mod symbology;
pub mod wedge;

use std::fmt;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use symbology::Symbology;

/// Longest scan any decoder assembles, in bytes. The largest 2D symbols carry
/// about 3 KB (QR binary) to 7 KB (QR numeric); anything longer is a stuck
/// key or a runaway stream, and bounding it keeps a faulty device from growing
/// memory without limit.
pub const MAX_SCAN_BYTES: usize = 8192;

/// The configured name of a scanner: what the edge binds to a station. It is
/// the name, not the USB identity, so that a replaced scanner can take over a
/// station by configuration alone.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DeviceId(String);

impl DeviceId {
    pub fn new(name: impl Into<String>) -> Self {
        Self(name.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for DeviceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One decoded barcode, as a scanner delivered it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scan {
    /// The barcode's data, with GS (0x1D) separators and other control
    /// characters kept, and without any symbology prefix or terminator.
    pub text: String,
    /// Known when the scanner reports it (HID-POS always can; wedge and
    /// serial scanners only when configured to send an AIM prefix).
    pub symbology: Option<Symbology>,
    pub device: DeviceId,
    pub at: SystemTime,
}

/// What a decoder produces: a scan before it is tagged with its device and
/// wall-clock time (decoders run on monotonic time only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    pub text: String,
    pub symbology: Option<Symbology>,
}

impl Decoded {
    /// A scan's text, with the AIM identifier split off when the scanner is
    /// configured to prefix one (a scan without it is kept, symbology unknown).
    pub(crate) fn from_text(text: String, aim_prefix: bool) -> Self {
        if aim_prefix {
            if let Some((symbology, data)) = symbology::split_aim(&text) {
                return Self {
                    symbology: Some(symbology),
                    text: data.to_owned(),
                };
            }
            tracing::debug!("scan without the configured AIM prefix");
        }
        Self {
            text,
            symbology: None,
        }
    }

    pub fn into_scan(self, device: DeviceId, at: SystemTime) -> Scan {
        Scan {
            text: self.text,
            symbology: self.symbology,
            device,
            at,
        }
    }
}

/// Whether a scanner is reachable, as published on the status watches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Connection {
    /// Open and being read; `device` is the HID path or serial port.
    Connected { device: String },
    /// Not open; `reason` says why when something failed, and is `None` when
    /// the device is simply not plugged in.
    Disconnected { reason: Option<String> },
}

impl Connection {
    pub fn is_connected(&self) -> bool {
        matches!(self, Connection::Connected { .. })
    }
}

/// A configuration the scanner tasks refuse to run with.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("a scanner has an empty name")]
    EmptyName,
    #[error("two scanners are named {0:?}")]
    DuplicateName(String),
    #[error("scanner {0:?}: {1} must not be 0")]
    Zero(String, &'static str),
}

/// Barcode payloads are bytes. Scanners send UTF-8 when the symbol says so
/// and ISO 8859-1 otherwise (the default character set of Code 128, Data
/// Matrix and QR), so anything that is not valid UTF-8 is read as Latin-1,
/// which maps every byte and never fails.
fn text_from_bytes(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => err.into_bytes().iter().map(|&b| char::from(b)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_keeps_utf8_and_reads_other_bytes_as_latin1() {
        assert_eq!(text_from_bytes("01\u{1d}10é".into()), "01\u{1d}10é");
        assert_eq!(text_from_bytes(vec![b'A', 0xE9, 0x1D]), "Aé\u{1d}");
    }
}
