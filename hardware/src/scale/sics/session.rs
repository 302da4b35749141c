//! Matching MT-SICS answers to the command they answer.

use std::time::Instant;

use super::{Command, Response, decode};
use crate::scale::{ScaleError, error::show_bytes, exchange::Exchange, framer::Framer};

/// MT-SICS lines are short; 128 bytes leaves room for long serial numbers.
const MAX_LINE: usize = 128;

/// The answer to one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub command: Command,
    pub result: Result<Response, ScaleError>,
}

/// The host side of an MT-SICS link: frames the incoming bytes and matches
/// answers to the one outstanding command. Time comes in as arguments.
#[derive(Debug)]
pub struct Session {
    framer: Framer,
    exchange: Exchange<Command>,
    /// The last line that was not MT-SICS at all while a command waited: if
    /// the command then times out, the error says the scale spoke gibberish
    /// rather than nothing.
    garbage: Option<String>,
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

impl Session {
    pub fn new() -> Self {
        Self {
            framer: Framer::lines(MAX_LINE),
            exchange: Exchange::new(),
            garbage: None,
        }
    }

    /// Starts `command`, to be answered by `deadline`; returns the bytes to
    /// write. `Busy` while another command is outstanding.
    pub fn request(&mut self, command: Command, deadline: Instant) -> Result<Vec<u8>, ScaleError> {
        self.exchange.start(command, deadline)?;
        self.garbage = None;
        Ok(command.encode())
    }

    /// Feeds bytes read from the port; returns the answers they complete.
    pub fn receive(&mut self, bytes: &[u8]) -> Vec<Answer> {
        let mut answers = Vec::new();
        for byte in bytes {
            let Some(frame) = self.framer.push(*byte) else {
                continue;
            };
            let Some(command) = self.exchange.pending() else {
                let frame = frame.map(|f| show_bytes(&f));
                tracing::debug!(?frame, "MT-SICS: unsolicited line discarded");
                continue;
            };
            let result = match frame {
                Ok(line) => match decode(command, &line) {
                    Some(result) => result,
                    None => {
                        if is_sics_line(&line) {
                            let line = show_bytes(&line);
                            tracing::debug!(%line, "MT-SICS: late or foreign answer discarded");
                        } else {
                            self.garbage = Some(show_bytes(&line));
                        }
                        continue;
                    }
                },
                Err(overlong) => Err(overlong),
            };
            self.exchange.finish();
            answers.push(Answer { command, result });
        }
        answers
    }

    /// Gives up on the outstanding command if its deadline has passed.
    pub fn expire(&mut self, now: Instant) -> Option<Answer> {
        let command = self.exchange.expire(now)?;
        let result = Err(match self.garbage.take() {
            Some(garbage) => ScaleError::Malformed(format!(
                "no valid answer to {}, got {garbage}",
                command.name()
            )),
            None => ScaleError::Timeout {
                command: command.name(),
            },
        });
        Some(Answer { command, result })
    }

    /// When the outstanding command times out.
    pub fn deadline(&self) -> Option<Instant> {
        self.exchange.deadline()
    }

    pub fn is_idle(&self) -> bool {
        self.exchange.pending().is_none()
    }
}

/// Printable ASCII starting with a command name: an answer, if not ours.
fn is_sics_line(line: &[u8]) -> bool {
    line.first().is_some_and(u8::is_ascii_alphabetic)
        && line.iter().all(|b| b.is_ascii_graphic() || *b == b' ')
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn session_matches_answers_across_reads() {
        let now = Instant::now();
        let mut session = Session::new();
        assert_eq!(
            session.request(Command::WeighImmediately, now + Duration::from_secs(1)),
            Ok(b"SI\r\n".to_vec())
        );
        assert_eq!(session.request(Command::Zero, now), Err(ScaleError::Busy));
        assert!(session.receive(b"S S     1").is_empty());
        let answers = session.receive(b"00.00 g\r\n");
        assert_eq!(answers.len(), 1);
        assert!(answers[0].result.is_ok());
        assert!(session.is_idle());
    }

    #[test]
    fn late_answer_after_timeout_is_discarded() {
        let now = Instant::now();
        let mut session = Session::new();
        session
            .request(Command::Zero, now + Duration::from_millis(10))
            .expect("idle");
        assert_eq!(session.expire(now), None);
        let expired = session
            .expire(now + Duration::from_millis(10))
            .expect("deadline passed");
        assert_eq!(expired.result, Err(ScaleError::Timeout { command: "Z" }));
        // The balance finally answers Z while we wait for SI: not SI's answer.
        session
            .request(Command::WeighImmediately, now + Duration::from_secs(1))
            .expect("idle");
        assert!(session.receive(b"Z A\r\n").is_empty());
        let answers = session.receive(b"S D      5.0 g\r\n");
        assert_eq!(answers.len(), 1);
        // With nothing outstanding, any answer is dropped.
        assert!(session.receive(b"S S      5.0 g\r\n").is_empty());
    }

    #[test]
    fn gibberish_then_timeout_says_so() {
        let now = Instant::now();
        let mut session = Session::new();
        session
            .request(Command::WeighImmediately, now)
            .expect("idle");
        assert!(session.receive(b"\xff\x00#!\r\n").is_empty());
        let expired = session.expire(now).expect("deadline passed");
        assert!(matches!(expired.result, Err(ScaleError::Malformed(m)) if m.contains("\\xff")));
    }

    #[test]
    fn overlong_line_fails_the_outstanding_command() {
        let now = Instant::now();
        let mut session = Session::new();
        session
            .request(Command::WeighImmediately, now)
            .expect("idle");
        let mut flood = vec![b'S'; 1000];
        flood.extend_from_slice(b"\r\n");
        let answers = session.receive(&flood);
        assert_eq!(answers[0].result, Err(ScaleError::Overlong(MAX_LINE)));
    }
}
