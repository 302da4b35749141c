//! HID Keyboard/Keypad page (0x07) usages to characters, as a US layout
//! produces them: scanners in keyboard mode type for a US layout unless told
//! otherwise, and decoding the usages ourselves, instead of taking characters
//! from the host, keeps a scan the same whatever the host's layout is.

pub(crate) const ENTER: u8 = 0x28;
pub(crate) const TAB: u8 = 0x2B;
pub(crate) const KEYPAD_ENTER: u8 = 0x58;

const LETTER_A: u8 = 0x04;
const LETTER_Z: u8 = 0x1D;
const DIGIT_1: u8 = 0x1E;
const SPACE: u8 = 0x2C;
const MINUS: u8 = 0x2D;
const KEYPAD_SLASH: u8 = 0x54;
const KEYPAD_1: u8 = 0x59;
const KEYPAD_0: u8 = 0x62;

/// Usages 0x1E..=0x27: the digit row, plain and shifted.
const DIGITS: &[u8; 10] = b"1234567890";
const DIGITS_SHIFTED: &[u8; 10] = b"!@#$%^&*()";
/// Usages 0x2D..=0x38. 0x32 is the ISO key beside Enter ("Non-US #"); a US
/// layout has it produce the same as 0x31, the backslash key.
const PUNCTUATION: &[u8; 12] = b"-=[]\\\\;'`,./";
const PUNCTUATION_SHIFTED: &[u8; 12] = b"_+{}||:\"~<>?";
/// Usages 0x54..=0x63 with Num Lock on (scanners assume it); 0x58 is Enter.
const KEYPAD: &[u8; 16] = b"/*-+\r1234567890.";

/// The printable character a key types, `None` for keys that type none.
pub(crate) fn char_for(usage: u8, shift: bool) -> Option<char> {
    let byte = match usage {
        LETTER_A..=LETTER_Z => {
            let lower = b'a' + (usage - LETTER_A);
            if shift {
                lower.to_ascii_uppercase()
            } else {
                lower
            }
        }
        0x1E..=0x27 => {
            let table = if shift { DIGITS_SHIFTED } else { DIGITS };
            table[usize::from(usage - DIGIT_1)]
        }
        SPACE => b' ',
        0x2D..=0x38 => {
            let table = if shift {
                PUNCTUATION_SHIFTED
            } else {
                PUNCTUATION
            };
            table[usize::from(usage - MINUS)]
        }
        KEYPAD_ENTER => return None,
        0x54..=0x63 => KEYPAD[usize::from(usage - KEYPAD_SLASH)],
        _ => return None,
    };
    Some(char::from(byte))
}

/// The digit a keypad key stands for in an Alt+keypad character code.
pub(crate) fn keypad_digit(usage: u8) -> Option<u8> {
    match usage {
        KEYPAD_1..=0x61 => Some(usage - KEYPAD_1 + 1),
        KEYPAD_0 => Some(0),
        _ => None,
    }
}

/// The control character Ctrl with a key types, as terminals have it: Ctrl
/// with a letter is 0x01..=0x1A, Ctrl+[ ESC, Ctrl+\ FS, Ctrl+] GS, Ctrl+^
/// (Ctrl+6) RS and Ctrl+_ (Ctrl+-) US. This is how scanners in "control
/// character" mode send GS. NUL (Ctrl+@) is never passed on.
pub(crate) fn ctrl_char_for(usage: u8) -> Option<char> {
    let byte = match usage {
        LETTER_A..=LETTER_Z => usage - LETTER_A + 1,
        0x2F => 0x1B,
        0x31 | 0x32 => 0x1C,
        0x30 => 0x1D,
        0x23 => 0x1E,
        MINUS => 0x1F,
        _ => return None,
    };
    Some(char::from(byte))
}

/// The key, and whether Shift is held, that types `c`: the inverse of
/// [`char_for`] on the main block, for the encoder of the simulator.
pub(crate) fn key_for(c: char) -> Option<(u8, bool)> {
    let byte = u8::try_from(c).ok()?;
    let position = |table: &[u8]| table.iter().position(|&b| b == byte);
    let offset = |index: usize| u8::try_from(index).ok();
    match byte {
        b'a'..=b'z' => Some((LETTER_A + (byte - b'a'), false)),
        b'A'..=b'Z' => Some((LETTER_A + (byte - b'A'), true)),
        b' ' => Some((SPACE, false)),
        _ => {
            if let Some(i) = position(DIGITS) {
                Some((DIGIT_1 + offset(i)?, false))
            } else if let Some(i) = position(DIGITS_SHIFTED) {
                Some((DIGIT_1 + offset(i)?, true))
            } else if let Some(i) = position(PUNCTUATION) {
                Some((MINUS + offset(i)?, false))
            } else {
                position(PUNCTUATION_SHIFTED).and_then(|i| Some((MINUS + offset(i)?, true)))
            }
        }
    }
}

/// The key that, with Ctrl, types control character `c`: the inverse of
/// [`ctrl_char_for`]. Shift is held for RS and US as on a US keyboard, where
/// `^` and `_` are shifted; the decoder accepts them either way.
pub(crate) fn ctrl_key_for(c: char) -> Option<(u8, bool)> {
    match u8::try_from(c).ok()? {
        byte @ 0x01..=0x1A => Some((LETTER_A + byte - 1, false)),
        0x1B => Some((0x2F, false)),
        0x1C => Some((0x31, false)),
        0x1D => Some((0x30, false)),
        0x1E => Some((0x23, true)),
        0x1F => Some((MINUS, true)),
        _ => None,
    }
}

/// The keypad key for a digit, for Alt+keypad codes.
pub(crate) fn keypad_key_for(digit: u8) -> Option<u8> {
    match digit {
        0 => Some(KEYPAD_0),
        1..=9 => Some(KEYPAD_1 + digit - 1),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_printable_ascii_character_has_a_key_that_types_it() {
        for byte in 0x20u8..=0x7E {
            let c = char::from(byte);
            let (usage, shift) = key_for(c).expect("printable ASCII is on a US keyboard");
            assert_eq!(char_for(usage, shift), Some(c), "{c:?} via {usage:#04x}");
        }
    }

    #[test]
    fn keypad_types_digits_and_operators() {
        assert_eq!(char_for(0x59, false), Some('1'));
        assert_eq!(char_for(0x62, true), Some('0'));
        assert_eq!(char_for(0x56, false), Some('-'));
        assert_eq!(char_for(0x63, false), Some('.'));
        assert_eq!(char_for(KEYPAD_ENTER, false), None);
        for digit in 0..=9 {
            let usage = keypad_key_for(digit).expect("a digit");
            assert_eq!(keypad_digit(usage), Some(digit));
        }
    }

    #[test]
    fn control_characters_round_trip_through_ctrl_keys() {
        for byte in 0x01u8..=0x1F {
            let c = char::from(byte);
            let (usage, _) = ctrl_key_for(c).expect("every C0 control but NUL");
            assert_eq!(ctrl_char_for(usage), Some(c));
        }
        assert_eq!(ctrl_char_for(0x30), Some('\u{1d}'), "Ctrl+] is GS");
    }

    #[test]
    fn non_us_hash_key_types_backslash_on_a_us_layout() {
        assert_eq!(char_for(0x32, false), Some('\\'));
        assert_eq!(char_for(0x32, true), Some('|'));
    }
}
