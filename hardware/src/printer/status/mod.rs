//! The printer's answers to `~HS` (host status) and `~HQES` (extended
//! status), and the problems they report.

mod extended;
mod frame;
mod host;

pub use extended::{ExtendedStatus, Warning};
pub use host::PrinterStatus;

use std::fmt;

use serde::{Deserialize, Serialize};

/// Something that keeps a printer from printing, as the status route and
/// the station screens show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Problem {
    PaperOut,
    RibbonOut,
    HeadOpen,
    Paused,
    UnderTemperature,
    OverTemperature,
    /// Communications diagnostic mode: the printer dumps what it receives
    /// instead of printing it.
    DiagnosticMode,
    CutterFault,
    MotorOverTemperature,
    BadPrintheadElement,
    PrintheadDetectionError,
    InvalidFirmwareConfig,
    PrintheadThermistorOpen,
    /// `~HQES` error bits this crate has no name for.
    OtherError,
    /// The printer answered, but not with a status this crate can read.
    UnreadableStatus,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Problem::PaperOut => "paper out",
            Problem::RibbonOut => "ribbon out",
            Problem::HeadOpen => "head open",
            Problem::Paused => "paused",
            Problem::UnderTemperature => "print head too cold",
            Problem::OverTemperature => "print head too hot",
            Problem::DiagnosticMode => "in communications diagnostic mode",
            Problem::CutterFault => "cutter fault",
            Problem::MotorOverTemperature => "motor too hot",
            Problem::BadPrintheadElement => "bad print head element",
            Problem::PrintheadDetectionError => "print head not detected",
            Problem::InvalidFirmwareConfig => "invalid firmware configuration",
            Problem::PrintheadThermistorOpen => "print head thermistor open",
            Problem::OtherError => "printer error",
            Problem::UnreadableStatus => "unreadable status answer",
        })
    }
}

/// Why a status answer could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatusError {
    /// Not all frames have arrived yet: read more and parse again.
    #[error("the answer is incomplete")]
    Incomplete,
    #[error("a frame is longer than {max} bytes without its ETX")]
    FrameTooLong { max: usize },
    #[error("unexpected byte {byte:#04x} at offset {offset}")]
    UnexpectedByte { offset: usize, byte: u8 },
    #[error("string {string} has {got} fields, at least {expected} expected")]
    FieldCount {
        string: usize,
        expected: usize,
        got: usize,
    },
    #[error("string {string}, field {field}: {value:?} is not {expected}")]
    Field {
        string: usize,
        field: &'static str,
        value: String,
        expected: &'static str,
    },
    #[error("not a PRINTER STATUS answer: {line:?}")]
    NotExtendedStatus { line: String },
    #[error("the {line} line is missing")]
    MissingLine { line: &'static str },
}

impl StatusError {
    /// Incomplete answers become complete with more bytes; every other
    /// error is final for this answer.
    pub fn is_incomplete(&self) -> bool {
        matches!(self, StatusError::Incomplete)
    }
}
