use std::{fmt, time::Duration};

/// Everything that can go wrong between a station and its scale.
///
/// `Clone` and `PartialEq` because errors are also states: the last fault is
/// published on the scale's watch channel for every station screen to show.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScaleError {
    #[error("the scale did not answer {command} in time")]
    Timeout { command: &'static str },
    #[error("the scale has sent nothing for {0:?}")]
    Silent(Duration),
    #[error("the weight did not settle within {0:?}")]
    NotStable(Duration),
    #[error("the scale is overloaded (above its capacity)")]
    Overload,
    #[error("the scale is underloaded (below zero)")]
    Underload,
    #[error("the scale is outside its zero capture range and must be zeroed")]
    OutsideZeroRange,
    #[error("the scale cannot execute {command} now (busy, or no stable weight in time)")]
    NotExecutable { command: &'static str },
    #[error("{command} refused: {limit} limit of its range exceeded")]
    OutOfRange { command: &'static str, limit: Limit },
    #[error("the scale did not recognise the command (syntax error)")]
    SyntaxError,
    #[error("the scale received a garbled command (transmission error)")]
    TransmissionError,
    #[error("the scale cannot execute the command (logical error)")]
    LogicalError,
    #[error("malformed answer from the scale: {0}")]
    Malformed(String),
    #[error("discarded a frame longer than {0} bytes from the scale")]
    Overlong(usize),
    #[error("the scale weighs in {0:?}, which is not supported (g, kg, lb, oz)")]
    UnsupportedUnit(String),
    #[error("invalid weight: {0}")]
    InvalidWeight(String),
    #[error("{operation} is not supported by the {protocol} protocol")]
    Unsupported {
        operation: &'static str,
        protocol: &'static str,
    },
    #[error("a command is already waiting for the scale's answer")]
    Busy,
    #[error("the scale is unreachable: {0}")]
    Disconnected(String),
    #[error("the scale answered with Modbus exception: {0}")]
    ModbusException(String),
    #[error("invalid scale configuration: {0}")]
    Config(String),
    #[error("the scale driver has stopped")]
    Stopped,
}

/// Which end of a zero or tare range a refused command hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Upper,
    Lower,
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Upper => "upper",
            Self::Lower => "lower",
        })
    }
}

/// Device bytes shown in an error or log: printable, and short even if the
/// device sent a screenful.
pub(crate) fn show_bytes(bytes: &[u8]) -> String {
    const SHOWN: usize = 48;
    let mut text = bytes
        .iter()
        .take(SHOWN)
        .flat_map(|b| b.escape_ascii())
        .map(char::from)
        .collect::<String>();
    if bytes.len() > SHOWN {
        text.push('…');
    }
    format!("\"{text}\"")
}
