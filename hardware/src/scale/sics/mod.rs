//! Mettler-Toledo MT-SICS (Standard Interface Command Set), sans-IO.
//!
//! What this relies on, from the MT-SICS reference manuals (levels 0 and 1,
//! which every MT-SICS balance implements):
//!
//! - Commands and answers are ASCII lines ended by CR LF. An answer starts
//!   with the command's name ("S" for both `S` and `SI`), then a status
//!   field, then data fields separated by spaces; a weight is right-aligned
//!   in a 10-character field and followed by its unit: `S S     100.00 g`.
//! - `S` (stable weight): `S S value unit`; `SI` (weight immediately):
//!   `S S` when stable, `S D` (dynamic) otherwise. Both may answer `S I`
//!   (understood, not executable now: busy, or no stable weight within the
//!   balance's own time limit), `S +` (overload) or `S -` (underload).
//! - `Z` (zero): `Z A` done, `Z I` not executable, `Z +` / `Z -` upper /
//!   lower limit of the zero setting range exceeded.
//! - `T` (tare): `T S value unit` (the tare weight stored), `T I`, `T +`,
//!   `T -` as for `Z`.
//! - `TA` (query tare weight): `TA A value unit`; `TAC` (clear tare):
//!   `TAC A`; both `I` when not executable, `TA L` on a logical error.
//! - `I4` (serial number): `I4 A "text"`.
//! - Any command may be answered `ES` (syntax error: not recognised), `ET`
//!   (transmission error: parity or framing) or `EL` (logical error: cannot
//!   be executed).

mod session;

pub use session::{Answer, Session};

use super::{ScaleError, Unit, Weight, error::show_bytes};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `SI`: the current weight, stable or not.
    WeighImmediately,
    /// `S`: the next stable weight.
    WeighStable,
    /// `Z`: zero the balance.
    Zero,
    /// `T`: tare with what is on the pan.
    Tare,
    /// `TA`: the stored tare weight.
    TareQuery,
    /// `TAC`: clear the tare.
    TareClear,
    /// `I4`: the balance's serial number.
    SerialNumber,
}

impl Command {
    const ALL: [Self; 7] = [
        Self::WeighImmediately,
        Self::WeighStable,
        Self::Zero,
        Self::Tare,
        Self::TareQuery,
        Self::TareClear,
        Self::SerialNumber,
    ];

    /// The command as sent on the wire, without CR LF.
    pub const fn name(self) -> &'static str {
        match self {
            Self::WeighImmediately => "SI",
            Self::WeighStable => "S",
            Self::Zero => "Z",
            Self::Tare => "T",
            Self::TareQuery => "TA",
            Self::TareClear => "TAC",
            Self::SerialNumber => "I4",
        }
    }

    /// The name the balance puts at the start of its answer.
    const fn reply_name(self) -> &'static str {
        match self {
            Self::WeighImmediately | Self::WeighStable => "S",
            other => other.name(),
        }
    }

    pub fn encode(self) -> Vec<u8> {
        format!("{}\r\n", self.name()).into_bytes()
    }

    /// Recognises a command line (without CR LF), as a balance does.
    pub fn parse(line: &[u8]) -> Option<Self> {
        let name = line.trim_ascii();
        Self::ALL.into_iter().find(|c| c.name().as_bytes() == name)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    /// `S S` / `S D`.
    Weight {
        weight: Weight,
        unit: Unit,
        stable: bool,
    },
    /// `Z A`.
    Zeroed,
    /// `T S`: the tare weight now stored.
    Tared { weight: Weight, unit: Unit },
    /// `TA A`.
    Tare { weight: Weight, unit: Unit },
    /// `TAC A`.
    TareCleared,
    /// `I4 A "…"`.
    SerialNumber(String),
}

/// Decodes a line (without CR LF) as the answer to `command`.
///
/// `None` when the line does not answer it: another command's late answer,
/// or noise.
pub fn decode(command: Command, line: &[u8]) -> Option<Result<Response, ScaleError>> {
    let fields: Vec<&[u8]> = line
        .split(u8::is_ascii_whitespace)
        .filter(|f| !f.is_empty())
        .collect();
    let (name, rest) = fields.split_first()?;
    match *name {
        b"ES" => return Some(Err(ScaleError::SyntaxError)),
        b"ET" => return Some(Err(ScaleError::TransmissionError)),
        b"EL" => return Some(Err(ScaleError::LogicalError)),
        name if name != command.reply_name().as_bytes() => return None,
        _ => {}
    }
    let malformed = || ScaleError::Malformed(format!("{} to {}", show_bytes(line), command.name()));
    let Some((status, data)) = rest.split_first() else {
        return Some(Err(malformed()));
    };
    use Command::*;
    let result = match (command, *status, data) {
        (WeighImmediately | WeighStable, b"S", data) => {
            value(data, &malformed).map(|(weight, unit)| Response::Weight {
                weight,
                unit,
                stable: true,
            })
        }
        (WeighImmediately, b"D", data) => {
            value(data, &malformed).map(|(weight, unit)| Response::Weight {
                weight,
                unit,
                stable: false,
            })
        }
        (WeighImmediately | WeighStable, b"+", []) => Err(ScaleError::Overload),
        (WeighImmediately | WeighStable, b"-", []) => Err(ScaleError::Underload),
        (Zero, b"A", []) => Ok(Response::Zeroed),
        (Tare, b"S", data) => {
            value(data, &malformed).map(|(weight, unit)| Response::Tared { weight, unit })
        }
        (TareQuery, b"A", data) => {
            value(data, &malformed).map(|(weight, unit)| Response::Tare { weight, unit })
        }
        (TareClear, b"A", []) => Ok(Response::TareCleared),
        (SerialNumber, b"A", data) if !data.is_empty() => {
            let text = data.join(&b' ');
            let text = text
                .strip_prefix(b"\"")
                .and_then(|t| t.strip_suffix(b"\""))
                .unwrap_or(&text);
            String::from_utf8(text.to_vec())
                .map(Response::SerialNumber)
                .map_err(|_| malformed())
        }
        (Zero | Tare, b"+", []) => Err(ScaleError::OutOfRange {
            command: command.name(),
            limit: super::Limit::Upper,
        }),
        (Zero | Tare, b"-", []) => Err(ScaleError::OutOfRange {
            command: command.name(),
            limit: super::Limit::Lower,
        }),
        (_, b"I", []) => Err(ScaleError::NotExecutable {
            command: command.name(),
        }),
        (_, b"L", []) => Err(ScaleError::LogicalError),
        _ => Err(malformed()),
    };
    Some(result)
}

fn value(data: &[&[u8]], malformed: &dyn Fn() -> ScaleError) -> Result<(Weight, Unit), ScaleError> {
    let [weight, unit] = data else {
        return Err(malformed());
    };
    let text = |bytes: &[u8]| {
        std::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|_| malformed())
    };
    let weight = text(weight)?.parse().map_err(|_| malformed())?;
    let unit = text(unit)?.parse()?;
    Ok((weight, unit))
}

/// A value line as a balance sends it: `value_line("S S", 100.00, g)` is
/// `S S     100.00 g` CR LF.
pub fn value_line(head: &str, weight: Weight, unit: Unit) -> Vec<u8> {
    format!("{head} {weight:>10} {unit}\r\n").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weight(text: &str) -> Weight {
        text.parse().expect("valid weight")
    }

    fn answer(command: Command, line: &str) -> Result<Response, ScaleError> {
        decode(command, line.as_bytes()).expect("answers the command")
    }

    #[test]
    fn weight_answers_from_the_manual() {
        assert_eq!(
            answer(Command::WeighStable, "S S     100.00 g"),
            Ok(Response::Weight {
                weight: weight("100.00"),
                unit: Unit::Gram,
                stable: true
            })
        );
        assert_eq!(
            answer(Command::WeighImmediately, "S D     129.07 g"),
            Ok(Response::Weight {
                weight: weight("129.07"),
                unit: Unit::Gram,
                stable: false
            })
        );
        assert_eq!(
            answer(Command::WeighImmediately, "S S    -12.345 kg"),
            Ok(Response::Weight {
                weight: weight("-12.345"),
                unit: Unit::Kilogram,
                stable: true
            })
        );
        assert_eq!(
            answer(Command::WeighImmediately, "S I"),
            Err(ScaleError::NotExecutable { command: "SI" })
        );
        assert_eq!(
            answer(Command::WeighStable, "S +"),
            Err(ScaleError::Overload)
        );
        assert_eq!(
            answer(Command::WeighImmediately, "S -"),
            Err(ScaleError::Underload)
        );
    }

    #[test]
    fn zero_tare_and_identification_answers() {
        use super::super::Limit;
        assert_eq!(answer(Command::Zero, "Z A"), Ok(Response::Zeroed));
        assert_eq!(
            answer(Command::Zero, "Z I"),
            Err(ScaleError::NotExecutable { command: "Z" })
        );
        assert_eq!(
            answer(Command::Zero, "Z +"),
            Err(ScaleError::OutOfRange {
                command: "Z",
                limit: Limit::Upper
            })
        );
        assert_eq!(
            answer(Command::Zero, "Z -"),
            Err(ScaleError::OutOfRange {
                command: "Z",
                limit: Limit::Lower
            })
        );
        assert_eq!(
            answer(Command::Tare, "T S     100.00 g"),
            Ok(Response::Tared {
                weight: weight("100.00"),
                unit: Unit::Gram
            })
        );
        assert_eq!(
            answer(Command::Tare, "T I"),
            Err(ScaleError::NotExecutable { command: "T" })
        );
        assert_eq!(
            answer(Command::Tare, "T +"),
            Err(ScaleError::OutOfRange {
                command: "T",
                limit: Limit::Upper
            })
        );
        assert_eq!(
            answer(Command::TareQuery, "TA A      10.00 g"),
            Ok(Response::Tare {
                weight: weight("10.00"),
                unit: Unit::Gram
            })
        );
        assert_eq!(
            answer(Command::TareQuery, "TA L"),
            Err(ScaleError::LogicalError)
        );
        assert_eq!(
            answer(Command::TareClear, "TAC A"),
            Ok(Response::TareCleared)
        );
        assert_eq!(
            answer(Command::SerialNumber, "I4 A \"B021002593\""),
            Ok(Response::SerialNumber("B021002593".into()))
        );
    }

    #[test]
    fn generic_errors_answer_any_command() {
        for command in Command::ALL {
            assert_eq!(answer(command, "ES"), Err(ScaleError::SyntaxError));
            assert_eq!(answer(command, "ET"), Err(ScaleError::TransmissionError));
            assert_eq!(answer(command, "EL"), Err(ScaleError::LogicalError));
        }
    }

    #[test]
    fn lines_that_do_not_answer_or_make_no_sense() {
        // Another command's answer is not ours.
        assert_eq!(decode(Command::Zero, b"S S     100.00 g"), None);
        assert_eq!(decode(Command::WeighImmediately, b"Z A"), None);
        assert_eq!(decode(Command::WeighImmediately, b""), None);
        for bad in [
            "S",
            "S S",
            "S S 100.00",
            "S S abc g",
            "S S 1.0 g extra",
            "S D 1.0 g ", // `S` never answers dynamic: fine for SI only
            "S X",
            "Z A 1",
        ] {
            let command = if bad.starts_with('Z') {
                Command::Zero
            } else {
                Command::WeighStable
            };
            assert!(
                matches!(answer(command, bad), Err(ScaleError::Malformed(_))),
                "{bad:?}"
            );
        }
        assert_eq!(
            answer(Command::WeighImmediately, "S S 1.0 ct"),
            Err(ScaleError::UnsupportedUnit("ct".into()))
        );
    }

    #[test]
    fn commands_encode_and_parse() {
        assert_eq!(Command::WeighImmediately.encode(), b"SI\r\n");
        assert_eq!(Command::TareClear.encode(), b"TAC\r\n");
        for command in Command::ALL {
            assert_eq!(Command::parse(command.name().as_bytes()), Some(command));
        }
        assert_eq!(Command::parse(b"XYZ"), None);
        assert_eq!(
            value_line("S S", weight("100.00"), Unit::Gram),
            b"S S     100.00 g\r\n"
        );
    }
}
