//! The `~HQES` (host query, extended status) answer:
//!
//! ```text
//! <STX><CR><LF>
//! PRINTER STATUS<CR><LF>
//!    ERRORS:         1 00000000 00000005<CR><LF>
//!    WARNINGS:       1 00000000 00000002<CR><LF>
//! <ETX><CR><LF>
//! ```
//!
//! Each line is a flag (1 when any bit is set), then group 2 and group 1 of
//! the flags as hexadecimal. The bit meanings below are the error and
//! warning tables of the ZPL II Programming Guide (`~HQ`, also printed for
//! `~WQES`): group 1 nibble 1 media out 0x1, ribbon out 0x2, head open 0x4,
//! cutter fault 0x8; nibble 2 printhead over temperature 0x10, motor over
//! temperature 0x20, bad printhead element 0x40, printhead detection error
//! 0x80; nibble 3 invalid firmware configuration 0x100, printhead
//! thermistor open 0x200. The guide lists further bits (paper feed and
//! presenter errors, paused, black mark errors) for the KR403 kiosk printer
//! only; they are reported here as [`Problem::OtherError`] with the raw bits
//! kept. Warnings, group 1 nibble 1: calibrate media 0x1, clean printhead
//! 0x2, replace printhead 0x4, paper near end 0x8; the higher warning bits
//! are KR403 sensor states and are not named.

use serde::{Deserialize, Serialize};

use super::frame::{self, ETX, STX};
use super::{Problem, StatusError};

const MAX_FRAME: usize = 512;

const ERROR_NAMES: [(u64, Problem); 10] = [
    (0x1, Problem::PaperOut),
    (0x2, Problem::RibbonOut),
    (0x4, Problem::HeadOpen),
    (0x8, Problem::CutterFault),
    (0x10, Problem::OverTemperature),
    (0x20, Problem::MotorOverTemperature),
    (0x40, Problem::BadPrintheadElement),
    (0x80, Problem::PrintheadDetectionError),
    (0x100, Problem::InvalidFirmwareConfig),
    (0x200, Problem::PrintheadThermistorOpen),
];

/// A maintenance warning: the printer still prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Warning {
    CalibrateMedia,
    CleanPrinthead,
    ReplacePrinthead,
    PaperNearEnd,
}

const WARNING_NAMES: [(u64, Warning); 4] = [
    (0x1, Warning::CalibrateMedia),
    (0x2, Warning::CleanPrinthead),
    (0x4, Warning::ReplacePrinthead),
    (0x8, Warning::PaperNearEnd),
];

/// A decoded `~HQES` answer: the error and warning bits, group 2 in the
/// high 32 bits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtendedStatus {
    pub errors: u64,
    pub warnings: u64,
}

/// Parses `ERRORS:  1 00000000 00000005` into its bits.
fn flags_line(line: &str, name: &'static str) -> Result<u64, StatusError> {
    let invalid = |value: &str| StatusError::Field {
        string: 1,
        field: name,
        value: value.to_owned(),
        expected: "a 0/1 flag and two groups of hex digits",
    };
    let values: Vec<&str> = line.split_whitespace().collect();
    let [flag, group2, group1] = values.as_slice() else {
        return Err(invalid(line));
    };
    if !matches!(*flag, "0" | "1") {
        return Err(invalid(flag));
    }
    // A group is 8 digits; extra leading zeros are tolerated, a value that
    // does not fit 32 bits is not.
    let group = |text: &str| -> Result<u64, StatusError> {
        let significant = text.trim_start_matches('0');
        let digits_ok = !text.is_empty()
            && significant.len() <= 8
            && text.bytes().all(|b| b.is_ascii_hexdigit());
        if !digits_ok {
            return Err(invalid(text));
        }
        u64::from_str_radix(text, 16).map_err(|_| invalid(text))
    };
    Ok(group(group2)? << 32 | group(group1)?)
}

impl ExtendedStatus {
    /// Parses one `~HQES` answer from the start of `input`, returning it
    /// and the bytes consumed. [`StatusError::Incomplete`] asks for more.
    pub fn parse(input: &[u8]) -> Result<(Self, usize), StatusError> {
        let (frames, used) = frame::split(input, 1, MAX_FRAME)?;
        let text = std::str::from_utf8(frames[0]).map_err(|_| StatusError::NotExtendedStatus {
            line: String::from_utf8_lossy(frames[0]).into_owned(),
        })?;
        let mut lines = text.lines().map(str::trim).filter(|line| !line.is_empty());
        match lines.next() {
            Some("PRINTER STATUS") => {}
            other => {
                return Err(StatusError::NotExtendedStatus {
                    line: other.unwrap_or_default().to_owned(),
                });
            }
        }
        let mut errors = None;
        let mut warnings = None;
        for line in lines {
            if let Some(rest) = line.strip_prefix("ERRORS:") {
                errors = Some(flags_line(rest, "errors")?);
            } else if let Some(rest) = line.strip_prefix("WARNINGS:") {
                warnings = Some(flags_line(rest, "warnings")?);
            }
        }
        let status = ExtendedStatus {
            errors: errors.ok_or(StatusError::MissingLine { line: "ERRORS" })?,
            warnings: warnings.ok_or(StatusError::MissingLine { line: "WARNINGS" })?,
        };
        Ok((status, used))
    }

    /// The errors, named where the manual names them for all printers.
    pub fn problems(&self) -> Vec<Problem> {
        let mut problems: Vec<Problem> = ERROR_NAMES
            .iter()
            .filter(|(bit, _)| self.errors & bit != 0)
            .map(|&(_, problem)| problem)
            .collect();
        let named = ERROR_NAMES.iter().fold(0, |all, (bit, _)| all | bit);
        if self.errors & !named != 0 {
            problems.push(Problem::OtherError);
        }
        problems
    }

    pub fn warnings(&self) -> Vec<Warning> {
        WARNING_NAMES
            .iter()
            .filter(|(bit, _)| self.warnings & bit != 0)
            .map(|&(_, warning)| warning)
            .collect()
    }

    pub fn is_ready(&self) -> bool {
        self.errors == 0
    }

    /// The answer a printer in this state sends, as the simulator needs it.
    pub fn encode(&self) -> Vec<u8> {
        let line = |name: &str, bits: u64| {
            format!(
                "   {name:<16}{} {:08X} {:08X}\r\n",
                u8::from(bits != 0),
                bits >> 32,
                bits & 0xffff_ffff
            )
        };
        let mut out = vec![STX];
        out.extend(b"\r\nPRINTER STATUS\r\n");
        out.extend(line("ERRORS:", self.errors).into_bytes());
        out.extend(line("WARNINGS:", self.warnings).into_bytes());
        out.extend([ETX, b'\r', b'\n']);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD_OPEN_PAPER_OUT: &[u8] = b"\x02\r\nPRINTER STATUS\r\n   ERRORS:         1 00000000 00000005\r\n   WARNINGS:       1 00000000 00000002\r\n\x03\r\n";

    fn parse(input: &[u8]) -> Result<ExtendedStatus, StatusError> {
        ExtendedStatus::parse(input).map(|(status, _)| status)
    }

    #[test]
    fn errors_and_warnings() {
        let (status, used) = ExtendedStatus::parse(HEAD_OPEN_PAPER_OUT).expect("valid answer");
        assert_eq!(used, HEAD_OPEN_PAPER_OUT.len());
        assert_eq!(
            status.problems(),
            vec![Problem::PaperOut, Problem::HeadOpen]
        );
        assert_eq!(status.warnings(), vec![Warning::CleanPrinthead]);
        assert!(!status.is_ready());
    }

    #[test]
    fn no_errors() {
        let input = b"\x02\r\nPRINTER STATUS\r\n   ERRORS:         0 00000000 00000000\r\n   WARNINGS:       0 00000000 00000000\r\n\x03";
        let status = parse(input).expect("valid answer");
        assert!(status.is_ready());
        assert!(status.problems().is_empty() && status.warnings().is_empty());
    }

    #[test]
    fn every_named_error_bit() {
        let status = ExtendedStatus {
            errors: 0x3ff,
            warnings: 0xf,
        };
        assert_eq!(status.problems().len(), 10);
        assert_eq!(status.warnings().len(), 4);
    }

    #[test]
    fn kr403_bits_are_other_errors() {
        let input = b"\x02\r\nPRINTER STATUS\r\nERRORS: 1 00000000 00010000\r\nWARNINGS: 0 00000000 00000000\r\n\x03";
        let status = parse(input).expect("valid answer");
        assert_eq!(status.errors, 0x10000);
        assert_eq!(status.problems(), vec![Problem::OtherError]);
    }

    #[test]
    fn extra_leading_zeros_are_tolerated() {
        let input = b"\x02\r\nPRINTER STATUS\r\nERRORS: 0 00000000 00000000\r\nWARNINGS: 0 000000000 00000000\r\n\x03";
        assert!(parse(input).expect("valid answer").is_ready());
    }

    #[test]
    fn group_two_lands_in_the_high_bits() {
        let input =
            b"\x02\r\nPRINTER STATUS\r\nERRORS: 1 00000001 00000000\r\nWARNINGS: 0 0 0\r\n\x03";
        assert_eq!(parse(input).expect("valid answer").errors, 1 << 32);
    }

    #[test]
    fn truncated_answers_are_incomplete() {
        for end in 0..HEAD_OPEN_PAPER_OUT.len() - 2 {
            assert_eq!(
                parse(&HEAD_OPEN_PAPER_OUT[..end]),
                Err(StatusError::Incomplete),
                "cut at {end}"
            );
        }
    }

    #[test]
    fn garbled_answers() {
        let cases: [&[u8]; 6] = [
            b"\x02\r\nHELLO\r\n\x03",
            b"\x02\r\nPRINTER STATUS\r\nWARNINGS: 0 00000000 00000000\r\n\x03",
            b"\x02\r\nPRINTER STATUS\r\nERRORS: 0 00000000 00000000\r\n\x03",
            b"\x02\r\nPRINTER STATUS\r\nERRORS: 2 00000000 00000000\r\nWARNINGS: 0 0 0\r\n\x03",
            b"\x02\r\nPRINTER STATUS\r\nERRORS: 1 0000000G 00000000\r\nWARNINGS: 0 0 0\r\n\x03",
            b"\x02\r\nPRINTER STATUS\r\nERRORS: 1 100000000 00000000\r\nWARNINGS: 0 0 0\r\n\x03",
        ];
        for case in cases {
            let result = parse(case);
            assert!(
                result.as_ref().is_err_and(|e| !e.is_incomplete()),
                "{:?} gave {result:?}",
                String::from_utf8_lossy(case)
            );
        }
    }

    #[test]
    fn a_host_status_answer_is_not_an_extended_status() {
        let hs = b"\x02030,0,0,1218,000,0,0,0,000,0,0,0\x03\r\n";
        assert!(matches!(
            parse(hs),
            Err(StatusError::NotExtendedStatus { .. })
        ));
    }

    #[test]
    fn encode_round_trips() {
        let status = ExtendedStatus {
            errors: 0x1_0000_0204,
            warnings: 0x8,
        };
        let bytes = status.encode();
        assert_eq!(ExtendedStatus::parse(&bytes), Ok((status, bytes.len())));
    }
}
