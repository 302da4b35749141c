//! STX…ETX framing shared by the status answers.

use super::StatusError;

pub const STX: u8 = 0x02;
pub const ETX: u8 = 0x03;

fn is_filler(byte: u8) -> bool {
    matches!(byte, b'\r' | b'\n' | b' ' | b'\t' | 0)
}

/// Splits the first `count` STX…ETX frames off `input`, returning their
/// contents and the number of bytes consumed (the CR LF after the last ETX
/// included when present).
///
/// Bytes before the first STX are skipped: on a serial line they are noise,
/// or the tail of an answer to an earlier query. Between frames only line
/// ends and blanks may appear; anything else means the answer is garbled.
pub fn split(
    input: &[u8],
    count: usize,
    max_len: usize,
) -> Result<(Vec<&[u8]>, usize), StatusError> {
    let mut frames = Vec::with_capacity(count);
    let Some(first) = input.iter().position(|&b| b == STX) else {
        return Err(StatusError::Incomplete);
    };
    let mut pos = first;
    while frames.len() < count {
        while pos < input.len() && is_filler(input[pos]) {
            pos += 1;
        }
        let Some(&byte) = input.get(pos) else {
            return Err(StatusError::Incomplete);
        };
        if byte != STX {
            return Err(StatusError::UnexpectedByte { offset: pos, byte });
        }
        let body_start = pos + 1;
        let window = &input[body_start..input.len().min(body_start + max_len + 1)];
        match window.iter().position(|&b| b == ETX || b == STX) {
            Some(len) if window[len] == ETX => {
                frames.push(&input[body_start..body_start + len]);
                pos = body_start + len + 1;
            }
            Some(len) => {
                return Err(StatusError::UnexpectedByte {
                    offset: body_start + len,
                    byte: STX,
                });
            }
            None if window.len() > max_len => {
                return Err(StatusError::FrameTooLong { max: max_len });
            }
            None => return Err(StatusError::Incomplete),
        }
    }
    for expected in [b'\r', b'\n'] {
        if input.get(pos) == Some(&expected) {
            pos += 1;
        }
    }
    Ok((frames, pos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_frames_and_consumes_the_line_end() {
        let input = b"\x02a\x03\r\n\x02b\x03\r\nrest";
        let (frames, used) = split(input, 2, 16).expect("two frames");
        assert_eq!(frames, vec![&b"a"[..], &b"b"[..]]);
        assert_eq!(&input[used..], b"rest");
    }

    #[test]
    fn skips_noise_before_the_first_frame() {
        let (frames, _) = split(b"\r\nxx\x02a\x03", 1, 16).expect("one frame");
        assert_eq!(frames, vec![&b"a"[..]]);
    }

    #[test]
    fn incomplete_until_every_frame_is_there() {
        assert_eq!(split(b"", 1, 16), Err(StatusError::Incomplete));
        assert_eq!(split(b"noise", 1, 16), Err(StatusError::Incomplete));
        assert_eq!(split(b"\x02abc", 1, 16), Err(StatusError::Incomplete));
        assert_eq!(split(b"\x02a\x03\r\n", 2, 16), Err(StatusError::Incomplete));
    }

    #[test]
    fn garbage_between_frames_is_an_error() {
        assert_eq!(
            split(b"\x02a\x03x\x02b\x03", 2, 16),
            Err(StatusError::UnexpectedByte {
                offset: 3,
                byte: b'x'
            })
        );
    }

    #[test]
    fn restarted_frame_is_an_error() {
        assert_eq!(
            split(b"\x02ab\x02c\x03", 1, 16),
            Err(StatusError::UnexpectedByte {
                offset: 3,
                byte: STX
            })
        );
    }

    #[test]
    fn overlong_frame_is_an_error() {
        let mut input = vec![STX];
        input.extend([b'1'; 20]);
        assert_eq!(
            split(&input, 1, 16),
            Err(StatusError::FrameTooLong { max: 16 })
        );
        // Exactly the limit is fine once the ETX arrives.
        let mut input = vec![STX];
        input.extend([b'1'; 16]);
        assert_eq!(split(&input, 1, 16), Err(StatusError::Incomplete));
        input.push(ETX);
        assert!(split(&input, 1, 16).is_ok());
    }
}
