//! Splits a ZPL byte stream into commands, incrementally, the way a printer
//! reads it: `^` starts a format command whose parameters run to the next
//! `^` or `~`; `~` starts a control command that is acted on at once,
//! wherever it appears, field data included. Line ends are ignored.

/// The most parameter bytes kept for one command; a longer one (a huge
/// downloaded graphic) is truncated, which the simulator never needs.
const MAX_PARAMS: usize = 1 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `^XX…`: a format command and its parameters (for `^FD`, the data).
    Caret { code: [u8; 2], params: Vec<u8> },
    /// `~XX…`: a control command; `~HQ` carries its two-letter query type.
    Tilde { code: [u8; 2], params: Vec<u8> },
}

#[derive(Debug, Default)]
enum State {
    #[default]
    Outside,
    CaretCode(Vec<u8>),
    CaretParams {
        code: [u8; 2],
        params: Vec<u8>,
    },
}

/// The incremental parser of one connection's stream.
#[derive(Debug, Default)]
pub struct StreamParser {
    state: State,
    /// A control command being read, possibly in the middle of a format
    /// command, which resumes after it.
    tilde: Option<Vec<u8>>,
}

impl StreamParser {
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<Command>) {
        for &byte in bytes {
            self.byte(byte, out);
        }
    }

    fn byte(&mut self, byte: u8, out: &mut Vec<Command>) {
        if matches!(byte, b'\r' | b'\n') {
            return;
        }
        if let Some(tilde) = &mut self.tilde {
            tilde.push(byte.to_ascii_uppercase());
            let needed = if tilde.starts_with(b"HQ") { 4 } else { 2 };
            if tilde.len() == needed {
                let code = [tilde[0], tilde[1]];
                let params = tilde[2..].to_vec();
                self.tilde = None;
                out.push(Command::Tilde { code, params });
            }
            return;
        }
        match byte {
            b'~' => self.tilde = Some(Vec::with_capacity(4)),
            b'^' => {
                self.finish(out);
                self.state = State::CaretCode(Vec::with_capacity(2));
            }
            _ => match &mut self.state {
                State::Outside => {}
                State::CaretCode(code) => {
                    code.push(byte.to_ascii_uppercase());
                    if let [a, b] = code[..] {
                        if matches!(&[a, b], b"XA" | b"XZ" | b"FS") {
                            // Commands without parameters are complete at
                            // once: a format ending in ^XZ prints now, not
                            // when the next command arrives.
                            out.push(Command::Caret {
                                code: [a, b],
                                params: Vec::new(),
                            });
                            self.state = State::Outside;
                        } else {
                            self.state = State::CaretParams {
                                code: [a, b],
                                params: Vec::new(),
                            };
                        }
                    }
                }
                State::CaretParams { params, .. } => {
                    if params.len() < MAX_PARAMS {
                        params.push(byte);
                    }
                }
            },
        }
    }

    fn finish(&mut self, out: &mut Vec<Command>) {
        if let State::CaretParams { code, params } = std::mem::take(&mut self.state) {
            out.push(Command::Caret { code, params });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chunks: &[&[u8]]) -> Vec<Command> {
        let mut parser = StreamParser::default();
        let mut out = Vec::new();
        for chunk in chunks {
            parser.feed(chunk, &mut out);
        }
        out
    }

    fn caret(code: &[u8; 2], params: &str) -> Command {
        Command::Caret {
            code: *code,
            params: params.as_bytes().to_vec(),
        }
    }

    #[test]
    fn format_commands_and_their_parameters() {
        assert_eq!(
            parse(&[b"^XA^FO10,20^FDhi there^FS^XZ"]),
            vec![
                caret(b"XA", ""),
                caret(b"FO", "10,20"),
                caret(b"FD", "hi there"),
                caret(b"FS", ""),
                caret(b"XZ", ""),
            ]
        );
    }

    #[test]
    fn split_anywhere() {
        let whole = parse(&[b"^XA^A0N,30,30^FDx^FS^XZ"]);
        let pieces = parse(&[b"^", b"X", b"A^A0", b"N,30", b",30^F", b"Dx^FS^X", b"Z"]);
        assert_eq!(whole, pieces);
    }

    #[test]
    fn control_commands_act_inside_field_data() {
        assert_eq!(
            parse(&[b"^FDab~HScd^FS"]),
            vec![
                Command::Tilde {
                    code: *b"HS",
                    params: vec![]
                },
                caret(b"FD", "abcd"),
                caret(b"FS", ""),
            ]
        );
    }

    #[test]
    fn host_query_carries_its_type() {
        assert_eq!(
            parse(&[b"~hq", b"es~HS"]),
            vec![
                Command::Tilde {
                    code: *b"HQ",
                    params: b"ES".to_vec()
                },
                Command::Tilde {
                    code: *b"HS",
                    params: vec![]
                },
            ]
        );
    }

    #[test]
    fn line_ends_and_noise_outside_commands_are_ignored() {
        assert_eq!(
            parse(&[b"junk\r\n^XA\r\n^XZ\r\n"]),
            vec![caret(b"XA", ""), caret(b"XZ", "")]
        );
    }

    #[test]
    fn unfinished_command_is_held_back() {
        assert_eq!(parse(&[b"^FDpartial"]), vec![]);
        assert_eq!(parse(&[b"^FDdone^X"]), vec![caret(b"FD", "done")]);
    }
}
