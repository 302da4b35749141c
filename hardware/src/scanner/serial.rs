//! Serial scanners (RS-232, or USB in CDC/virtual COM mode): each scan is a
//! line of bytes, optionally prefixed with its AIM symbology identifier,
//! ended by CR, LF or CR LF as the scanner's suffix is set.
//!
//! [`LineFramer`] splits the byte stream into scans, [`run`] owns the port.
//! Lines that cannot be a barcode are dropped with the reason logged: bytes
//! that are not UTF-8 or control characters other than those barcodes carry
//! (GS and the other ISO/IEC 15434 separators, HT) are what a wrong baud
//! rate or line ending produces, and passing them on would only fail later
//! with a worse message.

use std::future::Future;
use std::mem;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use thiserror::Error;
use tokio::io::AsyncReadExt;
use tokio::sync::{mpsc, watch};
use tokio_serial::{SerialPortBuilderExt, SerialStream};

use super::{ConfigError, Connection, Decoded, DeviceId, MAX_SCAN_BYTES, Scan};

const CR: u8 = b'\r';
const LF: u8 = b'\n';

#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum LineEnding {
    Cr,
    Lf,
    /// The factory suffix of most serial scanners.
    #[default]
    CrLf,
}

impl LineEnding {
    pub fn as_bytes(self) -> &'static [u8] {
        match self {
            LineEnding::Cr => b"\r",
            LineEnding::Lf => b"\n",
            LineEnding::CrLf => b"\r\n",
        }
    }
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum LineError {
    #[error("line of {len} bytes exceeds the {max}-byte limit")]
    Overlong { len: usize, max: usize },
    #[error("line is not UTF-8 (wrong baud rate or parity?)")]
    NotUtf8,
    #[error("line contains control byte {0:#04x} (wrong line ending or baud rate?)")]
    ControlByte(u8),
}

/// Splits a serial byte stream into scans: a pure state machine, fed with
/// whatever chunks the port delivers.
#[derive(Debug)]
pub struct LineFramer {
    ending: LineEnding,
    aim_prefix: bool,
    max_line: usize,
    buf: Vec<u8>,
    /// Bytes of the current line, including any not kept in `buf`.
    len: usize,
    overflow: bool,
    last_was_cr: bool,
}

impl LineFramer {
    pub fn new(ending: LineEnding, aim_prefix: bool, max_line: usize) -> Self {
        Self {
            ending,
            aim_prefix,
            max_line,
            buf: Vec::new(),
            len: 0,
            overflow: false,
            last_was_cr: false,
        }
    }

    /// Takes the next bytes from the port; returns the lines they complete,
    /// as scans or as the reason each was dropped. Empty lines are skipped.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Result<Decoded, LineError>> {
        let mut lines = Vec::new();
        for &byte in bytes {
            let ends = match self.ending {
                LineEnding::Cr => byte == CR,
                LineEnding::Lf => byte == LF,
                LineEnding::CrLf => byte == LF && self.last_was_cr,
            };
            self.last_was_cr = byte == CR;
            if ends {
                lines.extend(self.finish());
                continue;
            }
            self.len += 1;
            // Room for the CR of a CR LF, which is only known to be part of
            // the ending once the LF comes.
            let room = self.max_line + usize::from(self.ending == LineEnding::CrLf);
            if self.buf.len() < room {
                self.buf.push(byte);
            } else {
                self.overflow = true;
            }
        }
        lines
    }

    fn finish(&mut self) -> Option<Result<Decoded, LineError>> {
        let mut line = mem::take(&mut self.buf);
        let mut len = mem::take(&mut self.len);
        if self.ending == LineEnding::CrLf {
            len = len.saturating_sub(1);
            if line.last() == Some(&CR) {
                line.pop();
            }
        }
        if mem::take(&mut self.overflow) || line.len() > self.max_line {
            return Some(Err(LineError::Overlong {
                len,
                max: self.max_line,
            }));
        }
        if line.is_empty() {
            return None;
        }
        Some(text(line).map(|text| Decoded::from_text(text, self.aim_prefix)))
    }
}

fn text(line: Vec<u8>) -> Result<String, LineError> {
    // EOT, HT, FS, GS, RS and US occur in barcodes (ISO/IEC 15434
    // envelopes, GS1 separators); no other control character does.
    let foreign = |b: &u8| (*b < 0x20 && !matches!(b, 0x04 | 0x09 | 0x1C..=0x1F)) || *b == 0x7F;
    if let Some(&byte) = line.iter().find(|b| foreign(b)) {
        return Err(LineError::ControlByte(byte));
    }
    String::from_utf8(line).map_err(|_| LineError::NotUtf8)
}

/// One serial scanner.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SerialScannerConfig {
    /// What scans are tagged with and stations are bound to.
    pub name: String,
    /// The port. A `/dev/serial/by-id/…` link names the adapter itself and
    /// survives reboots and replugging; `/dev/ttyUSB0` does not.
    pub path: String,
    /// The line's speed (8 data bits, no parity, 1 stop bit).
    #[serde(default = "default_baud_rate")]
    pub baud_rate: u32,
    /// What the scanner ends each scan with.
    #[serde(default)]
    pub line_ending: LineEnding,
    /// The scanner prefixes each scan with its AIM symbology identifier.
    #[serde(default)]
    pub aim_prefix: bool,
    /// The longest scan in bytes; a longer line is dropped whole.
    #[serde(default = "default_max_line")]
    pub max_line: usize,
    /// How long to wait before opening the port again after it failed.
    #[serde(default = "default_reopen_ms")]
    pub reopen_ms: u64,
}

fn default_baud_rate() -> u32 {
    9600
}

fn default_max_line() -> usize {
    MAX_SCAN_BYTES
}

fn default_reopen_ms() -> u64 {
    2000
}

impl SerialScannerConfig {
    /// 9600 baud 8N1 and CR LF, the factory settings of most scanners.
    pub fn new(name: impl Into<String>, path: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            path: path.into(),
            baud_rate: default_baud_rate(),
            line_ending: LineEnding::default(),
            aim_prefix: false,
            max_line: default_max_line(),
            reopen_ms: default_reopen_ms(),
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.name.trim().is_empty() {
            return Err(ConfigError::EmptyName);
        }
        let zero = [
            ("baud_rate", self.baud_rate == 0),
            ("max_line", self.max_line == 0),
            ("reopen_ms", self.reopen_ms == 0),
        ];
        match zero.into_iter().find(|(_, is_zero)| *is_zero) {
            Some((field, _)) => Err(ConfigError::Zero(self.name.clone(), field)),
            None => Ok(()),
        }
    }
}

/// Reads a serial scanner until `shutdown` resolves or `scans` has no
/// receiver, reopening the port after errors (a USB adapter unplugged and
/// plugged back in comes back by itself). `status` follows the port.
pub async fn run(
    config: SerialScannerConfig,
    scans: mpsc::Sender<Scan>,
    status: watch::Sender<Connection>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ConfigError> {
    config.validate()?;
    let device = DeviceId::new(config.name.clone());
    let reopen = Duration::from_millis(config.reopen_ms);
    tokio::pin!(shutdown);
    loop {
        let connection = match tokio_serial::new(&config.path, config.baud_rate).open_native_async()
        {
            Ok(port) => {
                set_status(
                    &status,
                    &device,
                    Connection::Connected {
                        device: config.path.clone(),
                    },
                );
                tokio::select! {
                    () = &mut shutdown => return Ok(()),
                    () = scans.closed() => return Ok(()),
                    reason = read_port(port, &config, &device, &scans) => reason,
                }
            }
            Err(err) => format!("cannot open {}: {err}", config.path),
        };
        set_status(
            &status,
            &device,
            Connection::Disconnected {
                reason: Some(connection),
            },
        );
        tokio::select! {
            () = &mut shutdown => return Ok(()),
            () = scans.closed() => return Ok(()),
            () = tokio::time::sleep(reopen) => {}
        }
    }
}

/// Reads until the port fails; returns why.
async fn read_port(
    mut port: SerialStream,
    config: &SerialScannerConfig,
    device: &DeviceId,
    scans: &mpsc::Sender<Scan>,
) -> String {
    let mut framer = LineFramer::new(config.line_ending, config.aim_prefix, config.max_line);
    let mut buf = [0u8; 512];
    loop {
        let len = match port.read(&mut buf).await {
            Ok(0) => return format!("{} closed", config.path),
            Ok(len) => len,
            Err(err) => return format!("reading {} failed: {err}", config.path),
        };
        for line in framer.feed(&buf[..len]) {
            match line {
                Ok(decoded) => {
                    let scan = decoded.into_scan(device.clone(), SystemTime::now());
                    if scans.send(scan).await.is_err() {
                        // `run` sees the closed channel and ends.
                        return "no receiver for scans".into();
                    }
                }
                Err(err) => tracing::warn!(scanner = %device, "serial line dropped: {err}"),
            }
        }
    }
}

fn set_status(status: &watch::Sender<Connection>, device: &DeviceId, connection: Connection) {
    status.send_if_modified(|current| {
        if *current == connection {
            return false;
        }
        match &connection {
            Connection::Connected { device: path } => {
                tracing::info!(scanner = %device, "serial scanner open at {path}");
            }
            Connection::Disconnected { reason } => tracing::warn!(
                scanner = %device,
                "serial scanner unavailable: {}",
                reason.as_deref().unwrap_or("closed")
            ),
        }
        *current = connection;
        true
    });
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::scanner::Symbology;
    use crate::scanner::sim::encode::serial_line;

    fn texts(results: Vec<Result<Decoded, LineError>>) -> Vec<Result<String, LineError>> {
        results.into_iter().map(|r| r.map(|d| d.text)).collect()
    }

    #[test]
    fn splits_crlf_lines_across_chunks() {
        let mut framer = LineFramer::new(LineEnding::CrLf, false, 64);
        assert!(framer.feed(b"0109506000134352\x1d10AB").is_empty());
        assert!(framer.feed(b"C\r").is_empty());
        assert_eq!(
            texts(framer.feed(b"\n4006381333931\r\n")),
            vec![
                Ok("0109506000134352\u{1d}10ABC".to_owned()),
                Ok("4006381333931".to_owned())
            ]
        );
    }

    #[test]
    fn cr_and_lf_endings() {
        let mut cr = LineFramer::new(LineEnding::Cr, false, 64);
        assert_eq!(
            texts(cr.feed(b"A\rB\r")),
            vec![Ok("A".into()), Ok("B".into())]
        );
        let mut lf = LineFramer::new(LineEnding::Lf, false, 64);
        assert_eq!(
            texts(lf.feed(b"A\nB\n")),
            vec![Ok("A".into()), Ok("B".into())]
        );
    }

    #[test]
    fn a_wrong_line_ending_shows_as_a_control_byte() {
        // Scanner sends CR LF, port set to CR: the LF starts the next line.
        let mut framer = LineFramer::new(LineEnding::Cr, false, 64);
        assert_eq!(
            texts(framer.feed(b"A\r\nB\r")),
            vec![Ok("A".into()), Err(LineError::ControlByte(LF))]
        );
    }

    #[test]
    fn empty_lines_are_skipped() {
        let mut framer = LineFramer::new(LineEnding::CrLf, false, 64);
        assert!(framer.feed(b"\r\n\r\n").is_empty());
    }

    #[test]
    fn drops_garbage_and_keeps_going() {
        let mut framer = LineFramer::new(LineEnding::CrLf, false, 64);
        assert_eq!(
            texts(framer.feed(b"\xff\xfe\x80\r\nA\x00B\r\nOK\r\n")),
            vec![
                Err(LineError::NotUtf8),
                Err(LineError::ControlByte(0)),
                Ok("OK".into())
            ]
        );
    }

    #[test]
    fn overlong_lines_are_dropped_whole_within_the_bound() {
        let mut framer = LineFramer::new(LineEnding::CrLf, false, 8);
        assert!(framer.feed(&[b'9'; 100]).is_empty());
        assert!(framer.buf.len() <= 9, "buffer stays bounded");
        assert_eq!(
            texts(framer.feed(b"\r\n12345678\r\n")),
            vec![
                Err(LineError::Overlong { len: 100, max: 8 }),
                Ok("12345678".into())
            ]
        );
        assert_eq!(
            texts(framer.feed(b"123456789\r\n")),
            vec![Err(LineError::Overlong { len: 9, max: 8 })]
        );
    }

    #[test]
    fn aim_prefix_becomes_the_symbology() {
        let mut framer = LineFramer::new(LineEnding::CrLf, true, 64);
        let mut scans = framer.feed(b"]C10109506000134352\r\n]E04006381333931\r\nNOPREFIX\r\n");
        let decoded: Vec<_> = scans.drain(..).map(|r| r.expect("valid line")).collect();
        assert_eq!(decoded[0].text, "0109506000134352");
        assert_eq!(decoded[0].symbology, Some(Symbology::Gs1_128));
        assert_eq!(decoded[1].symbology, Some(Symbology::Ean13));
        assert_eq!(decoded[2].text, "NOPREFIX");
        assert_eq!(decoded[2].symbology, None);
    }

    #[test]
    fn invalid_configurations_are_refused() {
        let mut config = SerialScannerConfig::new("dock-1", "/dev/ttyUSB0");
        assert_eq!(config.validate(), Ok(()));
        config.baud_rate = 0;
        assert_eq!(
            config.validate(),
            Err(ConfigError::Zero("dock-1".into(), "baud_rate"))
        );
        config = SerialScannerConfig::new(" ", "/dev/ttyUSB0");
        assert_eq!(config.validate(), Err(ConfigError::EmptyName));
    }

    proptest! {
        #[test]
        fn lines_survive_any_chunking(
            lines in proptest::collection::vec("[ -~\u{1d}]{1,40}", 1..8),
            cut in 1usize..16,
            ending in prop_oneof![Just(LineEnding::Cr), Just(LineEnding::Lf), Just(LineEnding::CrLf)],
        ) {
            let stream: Vec<u8> = lines.iter().flat_map(|l| serial_line(l, None, ending)).collect();
            let mut framer = LineFramer::new(ending, false, 64);
            let mut out = Vec::new();
            for chunk in stream.chunks(cut) {
                out.extend(texts(framer.feed(chunk)));
            }
            let expected: Vec<Result<String, LineError>> = lines.into_iter().map(Ok).collect();
            prop_assert_eq!(out, expected);
        }

        #[test]
        fn arbitrary_bytes_never_panic_and_stay_bounded(
            bytes in proptest::collection::vec(any::<u8>(), 0..400),
        ) {
            let mut framer = LineFramer::new(LineEnding::CrLf, true, 16);
            let _ = framer.feed(&bytes);
            prop_assert!(framer.buf.len() <= 17);
        }
    }
}
