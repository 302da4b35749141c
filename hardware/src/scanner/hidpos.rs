//! HID point-of-sale scanners: the "HID POS" USB mode of Honeywell, Zebra,
//! Access-IS and others, whose interface is a Bar Code Scanner collection
//! (usage page 0x8C) instead of a keyboard.
//!
//! The HID Point of Sale Usage Tables (USB-IF, v1.02) name the fields: the
//! Scanned Data Report (usage 0x12) carries Symbology Identifier 1-3 (0xFB,
//! 0xFC, 0xFD), Decoded Data (0xFE) and Decode Data Continued (0xFF). The
//! tables do not fix byte positions (a device's report descriptor does), but
//! the scanners above all use the same 64-byte input report, which is what
//! this module parses:
//!
//! | byte  | content                                                      |
//! |-------|--------------------------------------------------------------|
//! | 0     | report id, 0x02                                              |
//! | 1     | number of valid bytes in the data field, 0..=56              |
//! | 2..5  | AIM symbology identifier (`]`, code, modifier), or zeros     |
//! | 5..61 | decoded data, zero padded                                    |
//! | 61    | vendor symbology code (Honeywell "Code ID"), informative     |
//! | 62    | reserved                                                     |
//! | 63    | bit 0: decode data continued, more reports follow            |
//!
//! This layout is an assumption checked against the vendors' manuals
//! (Access-IS LSR/ATR products document it byte for byte, with the same
//! example as Honeywell's), not read from each device's report descriptor:
//! a scanner that numbers or sizes its report differently is rejected with a
//! [`HidPosError`] rather than misread. Reading the descriptor
//! (`hidraw`'s `HIDIOCGRDESC`) would lift that limit.

use std::time::{Duration, Instant};

use thiserror::Error;

use super::symbology::is_aim_pair;
use super::{Decoded, MAX_SCAN_BYTES, Symbology, text_from_bytes};

/// Report id of the Scanned Data Report in this layout.
pub const SCANNED_DATA_REPORT_ID: u8 = 0x02;
pub const REPORT_LEN: usize = 64;
pub const MAX_DATA_PER_REPORT: usize = 56;

const LENGTH_AT: usize = 1;
const SYMBOLOGY_AT: usize = 2;
const DATA_AT: usize = 5;
const VENDOR_CODE_AT: usize = 61;
const FLAGS_AT: usize = 63;
const MORE_DATA: u8 = 0x01;

/// How long a multi-report scan waits for its next report. Continuations
/// come back to back (one USB poll interval, a few ms); a partial scan older
/// than this was cut short, by an unplug or a lost report, and must not be
/// glued to the start of the next barcode.
pub const CONTINUATION_TIMEOUT: Duration = Duration::from_secs(1);

#[derive(Debug, Error, PartialEq, Eq)]
pub enum HidPosError {
    #[error("HID-POS report truncated: {len} bytes, expected {REPORT_LEN}")]
    Truncated { len: usize },
    #[error("HID-POS report too long: {len} bytes, expected {REPORT_LEN}")]
    Oversized { len: usize },
    #[error("report id {0:#04x} is not a scanned data report ({SCANNED_DATA_REPORT_ID:#04x})")]
    ReportId(u8),
    #[error("data length {0} exceeds the {MAX_DATA_PER_REPORT} bytes a report carries")]
    DataLength(u8),
    #[error("symbology identifier {0:02x?} is neither empty nor an AIM identifier")]
    SymbologyId([u8; 3]),
    #[error("scan longer than {MAX_SCAN_BYTES} bytes across continued reports")]
    Overlong,
}

/// One Scanned Data Report, borrowed from the bytes it was parsed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScannedDataReport<'a> {
    /// AIM code and modifier characters, when the scanner sent them.
    pub aim: Option<(char, char)>,
    pub data: &'a [u8],
    pub vendor_code: u8,
    pub more_follows: bool,
}

impl<'a> ScannedDataReport<'a> {
    pub fn parse(bytes: &'a [u8]) -> Result<Self, HidPosError> {
        let len = bytes.len();
        if len < REPORT_LEN {
            return Err(HidPosError::Truncated { len });
        }
        if len > REPORT_LEN {
            return Err(HidPosError::Oversized { len });
        }
        if bytes[0] != SCANNED_DATA_REPORT_ID {
            return Err(HidPosError::ReportId(bytes[0]));
        }
        let data_len = bytes[LENGTH_AT];
        if usize::from(data_len) > MAX_DATA_PER_REPORT {
            return Err(HidPosError::DataLength(data_len));
        }
        let mut id = [0; 3];
        id.copy_from_slice(&bytes[SYMBOLOGY_AT..DATA_AT]);
        Ok(Self {
            aim: parse_aim(id)?,
            data: &bytes[DATA_AT..DATA_AT + usize::from(data_len)],
            vendor_code: bytes[VENDOR_CODE_AT],
            more_follows: bytes[FLAGS_AT] & MORE_DATA != 0,
        })
    }
}

fn parse_aim(id: [u8; 3]) -> Result<Option<(char, char)>, HidPosError> {
    if id == [0; 3] {
        return Ok(None);
    }
    let [bracket, code, modifier] = id.map(char::from);
    if bracket == ']' && is_aim_pair(code, modifier) {
        Ok(Some((code, modifier)))
    } else {
        Err(HidPosError::SymbologyId(id))
    }
}

#[derive(Debug)]
struct Partial {
    aim: Option<(char, char)>,
    data: Vec<u8>,
    last_at: Instant,
}

/// Assembles scans from Scanned Data Reports, joining continued ones.
#[derive(Debug, Default)]
pub struct HidPosDecoder {
    partial: Option<Partial>,
}

impl HidPosDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one input report as read from the device; returns a scan when
    /// the report completes one. An invalid report also drops any scan in
    /// progress, which it may have been part of.
    pub fn feed(&mut self, bytes: &[u8], now: Instant) -> Result<Option<Decoded>, HidPosError> {
        let report = match ScannedDataReport::parse(bytes) {
            Ok(report) => report,
            Err(err) => {
                self.drop_partial("an invalid report interrupted it");
                return Err(err);
            }
        };
        if self
            .partial
            .as_ref()
            .is_some_and(|p| now.saturating_duration_since(p.last_at) > CONTINUATION_TIMEOUT)
        {
            self.drop_partial("its continuation never came");
        }
        let partial = self.partial.get_or_insert_with(|| Partial {
            aim: report.aim,
            data: Vec::new(),
            last_at: now,
        });
        if partial.data.len() + report.data.len() > MAX_SCAN_BYTES {
            self.partial = None;
            return Err(HidPosError::Overlong);
        }
        partial.data.extend_from_slice(report.data);
        partial.last_at = now;
        if report.more_follows {
            return Ok(None);
        }
        let Some(Partial { aim, data, .. }) = self.partial.take() else {
            return Ok(None);
        };
        if data.is_empty() {
            return Ok(None);
        }
        let text = text_from_bytes(data);
        let symbology = aim.map(|(code, modifier)| Symbology::from_aim(code, modifier, &text));
        Ok(Some(Decoded { text, symbology }))
    }

    fn drop_partial(&mut self, why: &str) {
        if let Some(partial) = self.partial.take() {
            tracing::warn!(
                bytes = partial.data.len(),
                "incomplete HID-POS scan dropped: {why}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::scanner::sim::encode::hidpos_reports;

    /// A recorded 64-byte report: `]C1`, GS1-128 data with a GS separator.
    fn recorded_gs1_128() -> [u8; REPORT_LEN] {
        let data = b"0109506000134352\x1d10ABC123";
        let mut report = [0u8; REPORT_LEN];
        report[0] = 0x02;
        report[1] = 25;
        report[2..5].copy_from_slice(b"]C1");
        report[5..5 + data.len()].copy_from_slice(data);
        report[61] = b'I';
        report
    }

    #[test]
    fn parses_a_single_report_scan() {
        let report = recorded_gs1_128();
        let parsed = ScannedDataReport::parse(&report).expect("valid report");
        assert_eq!(parsed.aim, Some(('C', '1')));
        assert_eq!(parsed.vendor_code, b'I');
        assert!(!parsed.more_follows);

        let mut decoder = HidPosDecoder::new();
        let scan = decoder
            .feed(&report, Instant::now())
            .expect("valid report")
            .expect("complete scan");
        assert_eq!(scan.text, "0109506000134352\u{1d}10ABC123");
        assert_eq!(scan.symbology, Some(Symbology::Gs1_128));
    }

    #[test]
    fn joins_continued_reports() {
        // As in the vendors' manuals: a 60-byte boarding pass as ]Q0, sent
        // as 56 bytes flagged "continued" and 4 more.
        let data = format!(
            "{:<56} 100",
            "M1GATHERGOOD/MICHAEL YABCDEF LHRDURAK 3542 052Y003D23"
        );
        let data = data.as_bytes();
        let reports = hidpos_reports(data, Some("]Q0")).expect("encodable");
        assert_eq!(reports.len(), 2);
        assert_eq!((reports[0][1], reports[0][63]), (56, 0x01));
        assert_eq!((reports[1][1], reports[1][63]), (4, 0x00));

        let mut decoder = HidPosDecoder::new();
        let now = Instant::now();
        assert_eq!(decoder.feed(&reports[0], now), Ok(None));
        let scan = decoder
            .feed(&reports[1], now)
            .expect("valid")
            .expect("complete");
        assert_eq!(scan.text.as_bytes(), data);
        assert_eq!(scan.symbology, Some(Symbology::Qr));
    }

    #[test]
    fn rejects_truncated_oversized_and_foreign_reports() {
        let report = recorded_gs1_128();
        let mut decoder = HidPosDecoder::new();
        let now = Instant::now();
        assert_eq!(
            decoder.feed(&report[..8], now),
            Err(HidPosError::Truncated { len: 8 })
        );
        assert_eq!(
            decoder.feed(&[report.as_slice(), &[0]].concat(), now),
            Err(HidPosError::Oversized { len: 65 })
        );
        let mut other = report;
        other[0] = 0x04;
        assert_eq!(decoder.feed(&other, now), Err(HidPosError::ReportId(0x04)));
        let mut long = report;
        long[1] = 57;
        assert_eq!(decoder.feed(&long, now), Err(HidPosError::DataLength(57)));
        let mut garbage = report;
        garbage[2..5].copy_from_slice(&[0xFF, 0x13, 0x37]);
        assert_eq!(
            decoder.feed(&garbage, now),
            Err(HidPosError::SymbologyId([0xFF, 0x13, 0x37]))
        );
    }

    #[test]
    fn a_report_without_symbology_identifier_gives_no_symbology() {
        let reports = hidpos_reports(b"4006381333931", None).expect("encodable");
        let scan = HidPosDecoder::new()
            .feed(&reports[0], Instant::now())
            .expect("valid")
            .expect("complete");
        assert_eq!(scan.symbology, None);
        assert_eq!(scan.text, "4006381333931");
    }

    #[test]
    fn an_invalid_report_drops_the_scan_it_interrupts() {
        let data = [b'7'; 70];
        let reports = hidpos_reports(&data, Some("]C0")).expect("encodable");
        let mut decoder = HidPosDecoder::new();
        let now = Instant::now();
        assert_eq!(decoder.feed(&reports[0], now), Ok(None));
        assert!(decoder.feed(&[0x02, 0x00], now).is_err());
        // The tail alone is all that is left.
        let scan = decoder
            .feed(&reports[1], now)
            .expect("valid")
            .expect("done");
        assert_eq!(scan.text.len(), 70 - 56);
    }

    #[test]
    fn a_stale_partial_scan_is_not_glued_to_the_next() {
        let long = hidpos_reports(&[b'1'; 60], Some("]C0")).expect("encodable");
        let next = hidpos_reports(b"ABC", Some("]A0")).expect("encodable");
        let mut decoder = HidPosDecoder::new();
        let start = Instant::now();
        assert_eq!(decoder.feed(&long[0], start), Ok(None));
        let later = start + CONTINUATION_TIMEOUT + Duration::from_millis(1);
        let scan = decoder.feed(&next[0], later).expect("valid").expect("done");
        assert_eq!(scan.text, "ABC");
        assert_eq!(scan.symbology, Some(Symbology::Code39));
    }

    #[test]
    fn an_endless_continuation_is_cut_at_the_limit() {
        let mut report = [0u8; REPORT_LEN];
        report[0] = 0x02;
        report[1] = 56;
        report[5..61].fill(b'x');
        report[63] = MORE_DATA;
        let mut decoder = HidPosDecoder::new();
        let now = Instant::now();
        let outcomes: Vec<_> = (0..=MAX_SCAN_BYTES / 56)
            .map(|_| decoder.feed(&report, now))
            .collect();
        assert!(
            outcomes[..outcomes.len() - 1]
                .iter()
                .all(|o| *o == Ok(None))
        );
        assert_eq!(outcomes.last(), Some(&Err(HidPosError::Overlong)));
    }

    #[test]
    fn latin1_data_is_kept() {
        let reports = hidpos_reports(&[b'A', 0xE9], Some("]C0")).expect("encodable");
        let scan = HidPosDecoder::new()
            .feed(&reports[0], Instant::now())
            .expect("valid")
            .expect("done");
        assert_eq!(scan.text, "Aé");
    }

    proptest! {
        #[test]
        fn any_scan_survives_splitting_into_reports(
            text in "[ -~\u{1d}]{1,400}",
        ) {
            let reports = hidpos_reports(text.as_bytes(), Some("]d2")).expect("encodable");
            let mut decoder = HidPosDecoder::new();
            let now = Instant::now();
            let mut scans = Vec::new();
            for report in &reports {
                scans.extend(decoder.feed(report, now).expect("valid"));
            }
            prop_assert_eq!(scans.len(), 1);
            prop_assert_eq!(&scans[0].text, &text);
            prop_assert_eq!(&scans[0].symbology, &Some(Symbology::Gs1DataMatrix));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            let _ = HidPosDecoder::new().feed(&bytes, Instant::now());
        }
    }
}
