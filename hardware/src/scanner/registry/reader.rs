//! One open scanner: a blocking loop on its own thread that reads reports,
//! decodes them and sends the scans on. HID reads block (hidapi has no async
//! API), so each device gets a thread rather than a tokio task, and the loop
//! wakes every `slice` to notice a stop request.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::mpsc;

use super::ScannerMode;
use super::bus::{DeviceError, ReportSource};
use crate::scanner::hidpos::{HidPosDecoder, HidPosError};
use crate::scanner::wedge::{BootReport, WedgeDecoder};
use crate::scanner::{Decoded, DeviceId, Scan};

/// Larger than any report either decoder accepts, so that an oversized
/// report is seen as such instead of being cut to a plausible length.
const READ_BUFFER: usize = 256;

pub(super) enum Decoder {
    Wedge(WedgeDecoder),
    HidPos(HidPosDecoder),
}

impl Decoder {
    pub(super) fn for_mode(mode: &ScannerMode) -> Self {
        match mode {
            ScannerMode::Wedge(config) => Decoder::Wedge(WedgeDecoder::new(config.clone())),
            ScannerMode::HidPos => Decoder::HidPos(HidPosDecoder::new()),
        }
    }

    fn feed(&mut self, device: &DeviceId, bytes: &[u8], now: Instant) -> Option<Decoded> {
        match self {
            Decoder::Wedge(decoder) => match BootReport::parse(bytes) {
                Ok(report) => decoder.feed(&report, now),
                Err(err) => {
                    tracing::debug!(scanner = %device, "keyboard report ignored: {err}");
                    None
                }
            },
            Decoder::HidPos(decoder) => match decoder.feed(bytes, now) {
                Ok(decoded) => decoded,
                // Status and trigger reports share the interface.
                Err(err @ HidPosError::ReportId(_)) => {
                    tracing::debug!(scanner = %device, "HID-POS report ignored: {err}");
                    None
                }
                Err(err) => {
                    tracing::warn!(scanner = %device, "HID-POS report rejected: {err}");
                    None
                }
            },
        }
    }

    fn poll(&mut self, now: Instant) -> Option<Decoded> {
        match self {
            Decoder::Wedge(decoder) => decoder.poll(now),
            Decoder::HidPos(_) => None,
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        match self {
            Decoder::Wedge(decoder) => decoder.next_deadline(),
            Decoder::HidPos(_) => None,
        }
    }
}

/// Why a reader stopped.
#[derive(Debug)]
pub(super) enum Exit {
    Stopped,
    ScansClosed,
    Failed(DeviceError),
}

pub(super) struct Reader {
    pub(super) device: DeviceId,
    pub(super) source: Box<dyn ReportSource>,
    pub(super) decoder: Decoder,
    pub(super) scans: mpsc::Sender<Scan>,
    pub(super) stop: Arc<AtomicBool>,
    pub(super) slice: Duration,
}

impl Reader {
    pub(super) fn run(mut self) -> Exit {
        let mut buf = [0u8; READ_BUFFER];
        while !self.stop.load(Ordering::Relaxed) {
            let wait = match self.decoder.next_deadline() {
                Some(deadline) => deadline
                    .saturating_duration_since(Instant::now())
                    .min(self.slice),
                None => self.slice,
            };
            let decoded = match self.source.read_report(&mut buf, wait) {
                Ok(Some(len)) => {
                    let report = &buf[..len.min(buf.len())];
                    self.decoder.feed(&self.device, report, Instant::now())
                }
                Ok(None) => self.decoder.poll(Instant::now()),
                Err(err) => return Exit::Failed(err),
            };
            if let Some(decoded) = decoded {
                tracing::debug!(scanner = %self.device, bytes = decoded.text.len(), "scan");
                let scan = decoded.into_scan(self.device.clone(), SystemTime::now());
                if self.scans.blocking_send(scan).is_err() {
                    return Exit::ScansClosed;
                }
            }
        }
        Exit::Stopped
    }
}
