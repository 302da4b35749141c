//! The Mettler Toledo 8217 protocol, sans-IO: the serial protocol of
//! checkout scales and scanner-scales, also spoken by many other vendors'
//! POS scales ("Toledo" or "8217" mode).
//!
//! What this relies on (the 8213/8217 descriptions published by scales that
//! implement it; Mettler Toledo's own document is not public):
//!
//! - 9600 baud, 7 data bits, even parity, 1 stop bit. Commands are single
//!   ASCII characters, no terminator: `W` (weight), `S` (status), `Z` (zero).
//! - The answer to `W` is `STX` + the displayed weight as digits with a
//!   decimal point (`01.234` in lb, `00.450` in kg: the unit is configured
//!   on the scale, never sent) + `CR`, but only when the weight is valid.
//!   Otherwise, and always for `S` and `Z`, it is a status record:
//!   `STX ? status CR`.
//! - Status byte bits: 0 motion, 1 over capacity, 2 under zero (negative
//!   weight), 3 outside zero capture range, 4 center of zero, 5 and 6
//!   always 1 (so the byte is printable), 7 parity. We ignore bits 5 and 6
//!   rather than reject a scale that sets them differently.
//! - `Z` is ignored by the scale when in motion, overloaded or outside the
//!   zero range; the status record tells which. A zero that took shows
//!   "center of zero" and no motion.
//!
//! Tare is not part of 8217 (some scales map `T` to their tare key, with no
//! way to confirm it), so the driver reports it as unsupported.

use std::time::Instant;

use super::{ScaleError, Weight, error::show_bytes, exchange::Exchange, framer::Framer};

const STX: u8 = 0x02;
const CR: u8 = b'\r';
/// The longest frame is a few digits; a bit of slack for 6-digit scales.
const MAX_FRAME: usize = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `W`: the weight, or the status when there is no valid weight.
    Weigh,
    /// `S`: the status.
    Status,
    /// `Z`: zero the scale; answered with the status.
    Zero,
}

impl Command {
    pub const fn byte(self) -> u8 {
        match self {
            Self::Weigh => b'W',
            Self::Status => b'S',
            Self::Zero => b'Z',
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Self::Weigh => "W",
            Self::Status => "S",
            Self::Zero => "Z",
        }
    }

    pub fn encode(self) -> Vec<u8> {
        vec![self.byte()]
    }

    /// Recognises a command byte, as a scale does.
    pub fn parse(byte: u8) -> Option<Self> {
        [Self::Weigh, Self::Status, Self::Zero]
            .into_iter()
            .find(|c| c.byte() == byte & 0x7f)
    }
}

/// The 8217 status byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status(u8);

impl Status {
    pub const MOTION: u8 = 1 << 0;
    pub const OVER_CAPACITY: u8 = 1 << 1;
    pub const UNDER_ZERO: u8 = 1 << 2;
    pub const OUTSIDE_ZERO_RANGE: u8 = 1 << 3;
    pub const CENTER_OF_ZERO: u8 = 1 << 4;
    const ALWAYS_SET: u8 = 0b0110_0000;

    /// A status with the given flag bits (the `const`s above), as a scale
    /// would send it.
    pub const fn from_flags(flags: u8) -> Self {
        Self(Self::ALWAYS_SET | (flags & 0x1f))
    }

    /// The byte as received; the parity bit, if a port set up as 8N1 let it
    /// through, is dropped.
    pub const fn from_byte(byte: u8) -> Self {
        Self(byte & 0x7f)
    }

    pub const fn byte(self) -> u8 {
        self.0
    }

    const fn has(self, flag: u8) -> bool {
        self.0 & flag != 0
    }

    pub const fn motion(self) -> bool {
        self.has(Self::MOTION)
    }

    pub const fn over_capacity(self) -> bool {
        self.has(Self::OVER_CAPACITY)
    }

    pub const fn under_zero(self) -> bool {
        self.has(Self::UNDER_ZERO)
    }

    pub const fn outside_zero_range(self) -> bool {
        self.has(Self::OUTSIDE_ZERO_RANGE)
    }

    pub const fn center_of_zero(self) -> bool {
        self.has(Self::CENTER_OF_ZERO)
    }

    /// The condition that keeps the scale from giving a weight, other than
    /// motion (which only needs patience).
    pub fn error(self) -> Option<ScaleError> {
        if self.over_capacity() {
            Some(ScaleError::Overload)
        } else if self.under_zero() {
            Some(ScaleError::Underload)
        } else if self.outside_zero_range() {
            Some(ScaleError::OutsideZeroRange)
        } else {
            None
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Response {
    Weight(Weight),
    Status(Status),
}

/// Decodes a frame's payload (between STX and CR).
pub fn decode(payload: &[u8]) -> Result<Response, ScaleError> {
    let malformed = || ScaleError::Malformed(show_bytes(payload));
    if let [b'?', status] = payload {
        return Ok(Response::Status(Status::from_byte(*status)));
    }
    let text = payload.trim_ascii();
    let plausible = !text.is_empty()
        && text.len() <= 8
        && text.iter().all(|b| b.is_ascii_digit() || *b == b'.');
    if !plausible {
        return Err(malformed());
    }
    std::str::from_utf8(text)
        .map_err(|_| malformed())?
        .parse()
        .map(Response::Weight)
        .map_err(|_| malformed())
}

/// A weight record as the scale sends it: zero-padded to six characters
/// (`STX 01.234 CR`). 8217 has no sign: a negative weight is a status.
pub fn encode_weight(weight: Weight) -> Result<Vec<u8>, ScaleError> {
    if weight.is_negative() {
        return Err(ScaleError::InvalidWeight(format!(
            "{weight}: 8217 cannot send negative weights"
        )));
    }
    let mut frame = vec![STX];
    frame.extend_from_slice(format!("{weight:0>6}").as_bytes());
    frame.push(CR);
    Ok(frame)
}

/// A status record: `STX ? status CR`.
pub fn encode_status(status: Status) -> Vec<u8> {
    vec![STX, b'?', status.byte(), CR]
}

/// The answer to one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub command: Command,
    pub result: Result<Response, ScaleError>,
}

/// The host side of an 8217 link. Answers carry no command name, so any
/// frame is the answer to the outstanding command, and frames arriving with
/// nothing outstanding (late answers, a print key) are dropped.
#[derive(Debug)]
pub struct Session {
    framer: Framer,
    exchange: Exchange<Command>,
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

impl Session {
    pub fn new() -> Self {
        Self {
            framer: Framer::stx_cr(MAX_FRAME),
            exchange: Exchange::new(),
        }
    }

    /// Starts `command`, to be answered by `deadline`; returns the bytes to
    /// write. `Busy` while another command is outstanding.
    pub fn request(&mut self, command: Command, deadline: Instant) -> Result<Vec<u8>, ScaleError> {
        self.exchange.start(command, deadline)?;
        Ok(command.encode())
    }

    /// Feeds bytes read from the port; returns the answers they complete.
    pub fn receive(&mut self, bytes: &[u8]) -> Vec<Answer> {
        let mut answers = Vec::new();
        for byte in bytes {
            // 7-bit protocol: drop a parity bit a misconfigured port passed on.
            let Some(frame) = self.framer.push(byte & 0x7f) else {
                continue;
            };
            let Some(command) = self.exchange.finish() else {
                let frame = frame.map(|f| show_bytes(&f));
                tracing::debug!(?frame, "8217: unsolicited frame discarded");
                continue;
            };
            answers.push(Answer {
                command,
                result: frame.and_then(|payload| decode(&payload)),
            });
        }
        answers
    }

    /// Gives up on the outstanding command if its deadline has passed.
    pub fn expire(&mut self, now: Instant) -> Option<Answer> {
        let command = self.exchange.expire(now)?;
        Some(Answer {
            command,
            result: Err(ScaleError::Timeout {
                command: command.name(),
            }),
        })
    }

    /// When the outstanding command times out.
    pub fn deadline(&self) -> Option<Instant> {
        self.exchange.deadline()
    }

    pub fn is_idle(&self) -> bool {
        self.exchange.pending().is_none()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn weight(text: &str) -> Weight {
        text.parse().expect("valid weight")
    }

    #[test]
    fn weight_records() {
        assert_eq!(decode(b"01.234"), Ok(Response::Weight(weight("1.234"))));
        assert_eq!(decode(b"00.450"), Ok(Response::Weight(weight("0.450"))));
        assert_eq!(decode(b"0012.5"), Ok(Response::Weight(weight("12.5"))));
        assert_eq!(encode_weight(weight("1.234")), Ok(b"\x0201.234\r".to_vec()));
        assert_eq!(encode_weight(weight("0.45")), Ok(b"\x02000.45\r".to_vec()));
        assert!(encode_weight(weight("-1.0")).is_err());
    }

    #[test]
    fn status_records() {
        // 'a' = 0x61: bits 5 and 6 set, motion.
        let Ok(Response::Status(status)) = decode(b"?a") else {
            panic!("status record");
        };
        assert!(status.motion() && !status.over_capacity());
        assert_eq!(status.error(), None);
        // 'b' = 0x62: over capacity.
        let Ok(Response::Status(status)) = decode(b"?b") else {
            panic!("status record");
        };
        assert_eq!(status.error(), Some(ScaleError::Overload));
        // 'd' = 0x64: under zero; 'h' = 0x68: outside zero capture range.
        assert_eq!(Status::from_byte(b'd').error(), Some(ScaleError::Underload));
        assert_eq!(
            Status::from_byte(b'h').error(),
            Some(ScaleError::OutsideZeroRange)
        );
        // 'p' = 0x70: center of zero. With the parity bit still on: the same.
        assert!(Status::from_byte(b'p').center_of_zero());
        assert_eq!(Status::from_byte(0xf0), Status::from_byte(b'p'));
        assert_eq!(
            encode_status(Status::from_flags(Status::MOTION)),
            b"\x02?a\r".to_vec()
        );
    }

    #[test]
    fn malformed_records() {
        for bad in [
            &b""[..],
            b"?",
            b"?ab",
            b"12a.4",
            b"1.2.3",
            b"123456789",
            b"-1.00",
        ] {
            assert!(
                matches!(decode(bad), Err(ScaleError::Malformed(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn commands() {
        assert_eq!(Command::Weigh.encode(), b"W");
        assert_eq!(Command::parse(b'Z'), Some(Command::Zero));
        assert_eq!(Command::parse(b'S' | 0x80), Some(Command::Status));
        assert_eq!(Command::parse(b'T'), None);
    }

    #[test]
    fn session_answers_timeouts_and_late_frames() {
        let now = Instant::now();
        let mut session = Session::new();
        assert_eq!(
            session.request(Command::Weigh, now + Duration::from_millis(5)),
            Ok(b"W".to_vec())
        );
        assert_eq!(session.request(Command::Zero, now), Err(ScaleError::Busy));
        // Noise before STX is skipped; the frame may come in pieces.
        assert!(session.receive(b"\xff\x13\x0201.").is_empty());
        let answers = session.receive(b"234\r");
        assert_eq!(
            answers,
            vec![Answer {
                command: Command::Weigh,
                result: Ok(Response::Weight(weight("1.234")))
            }]
        );
        session
            .request(Command::Weigh, now + Duration::from_millis(5))
            .expect("idle");
        let expired = session.expire(now + Duration::from_millis(5));
        assert_eq!(
            expired.map(|a| a.result),
            Some(Err(ScaleError::Timeout { command: "W" }))
        );
        // The late answer finds nothing outstanding.
        assert!(session.receive(b"\x0201.234\r").is_empty());
        // A parity bit on every byte (port opened 8N1) still decodes.
        session.request(Command::Status, now).expect("idle");
        let answers = session.receive(&[0x82, b'?', b'a' | 0x80, 0x8d]);
        assert!(matches!(
            answers[0].result,
            Ok(Response::Status(s)) if s.motion()
        ));
    }
}
