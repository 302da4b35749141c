//! CAS continuous output, sans-IO: indicators and bench scales (CAS CI,
//! PD-II, DB-II and many clones) that stream their weight without being
//! asked.
//!
//! What this relies on (CAS indicator manuals, "data format" appendix):
//!
//! - Each frame is ASCII ended by CR LF: `ST,GS,+  1.234kg`. The first
//!   header is `ST` (stable), `US` (unstable) or `OL` (overload); the second
//!   `GS` (gross) or `NT` (net).
//! - The weight is 8 characters, a sign then the value right-aligned with
//!   spaces or zeros (`+  1.234`, `+001.234`), then the unit (`kg`, `lb`,
//!   ` g`), sometimes after a space.
//! - The 22-byte variant inserts a device-ID byte and a lamp-status byte
//!   (bit 7 set, so never a comma) and a comma before the weight:
//!   `ST,GS,` ID LAMP `,+  1.234 kg`. Both variants are accepted.
//! - The weight field of an `OL` frame is not specified; it is reported as
//!   an overload whatever it holds.
//!
//! The 10-byte format (weight only, no status) cannot tell stable from
//! moving weights and is not supported.

use super::{ScaleError, Unit, Weight, error::show_bytes, framer::Framer};

/// 22 bytes is the longest format; 64 tolerates padding variants.
const MAX_LINE: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Header {
    /// `ST`
    Stable,
    /// `US`
    Unstable,
    /// `OL`
    Overload,
}

impl Header {
    const fn code(self) -> &'static str {
        match self {
            Self::Stable => "ST",
            Self::Unstable => "US",
            Self::Overload => "OL",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    pub header: Header,
    /// `NT` (net, a tare is set) rather than `GS`.
    pub net: bool,
    pub weight: Weight,
    pub unit: Unit,
}

/// Decodes one line (without CR LF).
pub fn decode(line: &[u8]) -> Result<Frame, ScaleError> {
    let malformed = || ScaleError::Malformed(show_bytes(line));
    let header = match line.get(..3) {
        Some(b"ST,") => Header::Stable,
        Some(b"US,") => Header::Unstable,
        Some(b"OL,") => Header::Overload,
        _ => return Err(malformed()),
    };
    let net = match line.get(3..6) {
        Some(b"GS,") => false,
        Some(b"NT,") => true,
        _ => return Err(malformed()),
    };
    let mut rest = &line[6..];
    if rest.get(2) == Some(&b',') {
        // 22-byte format: device ID and lamp status.
        rest = &rest[3..];
    }
    // ASCII only, so that byte offsets below are character boundaries.
    let Some(text) = std::str::from_utf8(rest).ok().filter(|t| t.is_ascii()) else {
        return Err(if header == Header::Overload {
            ScaleError::Overload
        } else {
            malformed()
        });
    };
    let text = text.trim();
    let unit_at = text
        .rfind(|c: char| !c.is_ascii_alphabetic())
        .map_or(0, |i| i + 1);
    let (number, unit) = text.split_at(unit_at);
    let number: String = number.chars().filter(|c| *c != ' ').collect();
    match (number.parse::<Weight>(), header) {
        (Err(_), Header::Overload) => Err(ScaleError::Overload),
        (Err(_), _) => Err(malformed()),
        (Ok(_), _) if unit.is_empty() => Err(malformed()),
        (Ok(weight), _) => Ok(Frame {
            header,
            net,
            weight,
            unit: unit.parse()?,
        }),
    }
}

/// A frame as the 18-byte format sends it: `ST,GS,+  1.234kg` CR LF.
pub fn encode(frame: &Frame) -> Vec<u8> {
    let text = frame.weight.to_string();
    let (sign, digits) = match text.strip_prefix('-') {
        Some(digits) => ('-', digits),
        None => ('+', text.as_str()),
    };
    format!(
        "{},{},{sign}{digits:>7}{:>2}\r\n",
        frame.header.code(),
        if frame.net { "NT" } else { "GS" },
        frame.unit.symbol()
    )
    .into_bytes()
}

/// Turns the stream into frames, skipping what is not one.
#[derive(Debug)]
pub struct Decoder {
    framer: Framer,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder {
    pub fn new() -> Self {
        Self {
            framer: Framer::lines(MAX_LINE),
        }
    }

    /// Feeds bytes read from the port; returns one result per line they end.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Result<Frame, ScaleError>> {
        bytes
            .iter()
            .filter_map(|b| self.framer.push(*b))
            .map(|line| line.and_then(|line| decode(&line)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(header: Header, net: bool, weight: &str, unit: Unit) -> Frame {
        Frame {
            header,
            net,
            weight: weight.parse().expect("valid weight"),
            unit,
        }
    }

    #[test]
    fn eighteen_byte_frames() {
        assert_eq!(
            decode(b"ST,GS,+  1.234kg"),
            Ok(frame(Header::Stable, false, "1.234", Unit::Kilogram))
        );
        assert_eq!(
            decode(b"US,NT,-0013.50lb"),
            Ok(frame(Header::Unstable, true, "-13.50", Unit::Pound))
        );
        assert_eq!(
            decode(b"ST,GS,+  250.0 g"),
            Ok(frame(Header::Stable, false, "250.0", Unit::Gram))
        );
        assert_eq!(
            encode(&frame(Header::Stable, false, "1.234", Unit::Kilogram)),
            b"ST,GS,+  1.234kg\r\n"
        );
        assert_eq!(
            encode(&frame(Header::Unstable, true, "-250", Unit::Gram)).len(),
            18
        );
    }

    #[test]
    fn twenty_two_byte_frames() {
        // Device ID '1', lamp status 0xC1 (stable, zero point).
        assert_eq!(
            decode(b"ST,GS,1\xc1,+ 13.500 kg"),
            Ok(frame(Header::Stable, false, "13.5", Unit::Kilogram))
        );
    }

    #[test]
    fn overload_and_bad_frames() {
        assert_eq!(decode(b"OL,GS,+  OL   kg"), Err(ScaleError::Overload));
        assert_eq!(
            decode(b"OL,GS,+ 99.999kg"),
            Ok(frame(Header::Overload, false, "99.999", Unit::Kilogram))
        );
        assert_eq!(
            decode(b"ST,GS,+  1.234 t"),
            Err(ScaleError::UnsupportedUnit("t".into()))
        );
        for bad in [
            &b""[..],
            b"ST",
            b"XX,GS,+  1.234kg",
            b"ST,XX,+  1.234kg",
            b"ST,GS,",
            b"ST,GS,+  1.2.3kg",
            b"ST,GS,+  1.234",
            b"ST,GS,kg",
        ] {
            assert!(
                matches!(decode(bad), Err(ScaleError::Malformed(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn decoder_resynchronises_after_garbage() {
        let mut decoder = Decoder::new();
        let mut results = decoder.push(b"1.234kg\r\n\xff\xfe#garbage\r\nST,GS,+  1.");
        results.extend(decoder.push(b"234kg\r\nUS,GS,+  1.240kg\r\n"));
        let frames: Vec<Frame> = results.into_iter().filter_map(Result::ok).collect();
        assert_eq!(
            frames,
            vec![
                frame(Header::Stable, false, "1.234", Unit::Kilogram),
                frame(Header::Unstable, false, "1.240", Unit::Kilogram)
            ]
        );
    }
}
