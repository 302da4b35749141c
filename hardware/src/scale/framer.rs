//! Cuts a serial byte stream into frames.
//!
//! A serial line delivers whatever arrives: the tail of a frame sent before we
//! opened the port, noise while a cable is plugged in, a device talking at the
//! wrong baud rate. The framer keeps at most `max` bytes, drops an overlong
//! frame whole (reporting it once), and starts afresh at the next delimiter,
//! so no input can make it grow or lose sync for more than one frame.

use super::ScaleError;

const STX: u8 = 0x02;
const CR: u8 = b'\r';
const LF: u8 = b'\n';

#[derive(Debug)]
pub(crate) struct Framer {
    buf: Vec<u8>,
    max: usize,
    kind: Kind,
    in_frame: bool,
    overflowed: bool,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    /// Text lines ended by CR LF; a lone CR or LF also ends a line, and the
    /// empty "line" between CR and LF is skipped.
    Lines,
    /// `STX payload CR`; bytes outside a frame are noise, and an STX inside a
    /// frame restarts it (the earlier one was cut short).
    StxCr,
}

impl Framer {
    pub(crate) fn lines(max: usize) -> Self {
        Self::new(Kind::Lines, max)
    }

    pub(crate) fn stx_cr(max: usize) -> Self {
        Self::new(Kind::StxCr, max)
    }

    fn new(kind: Kind, max: usize) -> Self {
        Self {
            buf: Vec::with_capacity(max),
            max,
            kind,
            in_frame: false,
            overflowed: false,
        }
    }

    /// Feeds one byte; returns a frame (without its delimiters) when one ends.
    pub(crate) fn push(&mut self, byte: u8) -> Option<Result<Vec<u8>, ScaleError>> {
        let ends = match self.kind {
            Kind::Lines => byte == CR || byte == LF,
            Kind::StxCr => {
                if byte == STX {
                    self.restart();
                    self.in_frame = true;
                    return None;
                }
                if !self.in_frame {
                    return None;
                }
                byte == CR
            }
        };
        if ends {
            let overflowed = self.overflowed;
            let frame = std::mem::take(&mut self.buf);
            self.restart();
            if overflowed {
                return Some(Err(ScaleError::Overlong(self.max)));
            }
            if frame.is_empty() && matches!(self.kind, Kind::Lines) {
                return None;
            }
            return Some(Ok(frame));
        }
        if !self.overflowed {
            if self.buf.len() < self.max {
                self.buf.push(byte);
            } else {
                self.overflowed = true;
                self.buf.clear();
            }
        }
        None
    }

    fn restart(&mut self) {
        self.buf.clear();
        self.in_frame = false;
        self.overflowed = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(framer: &mut Framer, bytes: &[u8]) -> Vec<Result<Vec<u8>, ScaleError>> {
        bytes.iter().filter_map(|b| framer.push(*b)).collect()
    }

    #[test]
    fn lines_across_reads_and_terminators() {
        let mut framer = Framer::lines(16);
        assert!(frames(&mut framer, b"S S   1").is_empty());
        assert_eq!(
            frames(&mut framer, b"0.0 g\r\nZ A\r\n\r\nES\n"),
            vec![
                Ok(b"S S   10.0 g".to_vec()),
                Ok(b"Z A".to_vec()),
                Ok(b"ES".to_vec())
            ]
        );
    }

    #[test]
    fn overlong_line_is_reported_once_then_sync_resumes() {
        let mut framer = Framer::lines(4);
        assert_eq!(
            frames(&mut framer, b"0123456789\r\nZ A\r\n"),
            vec![Err(ScaleError::Overlong(4)), Ok(b"Z A".to_vec())]
        );
        // Exactly `max` bytes still fit.
        assert_eq!(frames(&mut framer, b"1234\r"), vec![Ok(b"1234".to_vec())]);
    }

    #[test]
    fn stx_frames_skip_noise_and_restart_on_stx() {
        let mut framer = Framer::stx_cr(8);
        assert_eq!(
            frames(
                &mut framer,
                b"noise\r\x0201.2\x0201.234\rjunk\x02?a\r\x02\r"
            ),
            vec![Ok(b"01.234".to_vec()), Ok(b"?a".to_vec()), Ok(Vec::new())]
        );
    }
}
