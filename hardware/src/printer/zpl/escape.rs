//! Field data escaping.
//!
//! A Zebra printer acts on `^` and `~` wherever they appear in the byte
//! stream, field data included: `~JA` inside an address line would cancel
//! every queued label, and a stray `^` ends the field and starts a command.
//! Every field this crate emits is therefore preceded by `^FH` (field hex),
//! and any byte that is not plain printable ASCII, or that is one of `^`, `~`
//! or the hex indicator `_` itself, is written as `_XX`. With `^CI28` in the
//! format, the printer reassembles the UTF-8 sequences from those bytes.

use std::fmt::Write as _;

/// The `^FH` hex indicator: `_` is the printer's default, so `^FH` needs no
/// parameter.
pub const HEX_INDICATOR: u8 = b'_';

/// Escapes `data` for a `^FH^FD…^FS` field: the result is printable ASCII
/// without `^` or `~`.
pub fn escape_field_data(data: &str) -> String {
    let mut out = String::with_capacity(data.len());
    for &byte in data.as_bytes() {
        let plain = (byte == b' ' || byte.is_ascii_graphic())
            && !matches!(byte, b'^' | b'~' | HEX_INDICATOR);
        if plain {
            out.push(char::from(byte));
        } else {
            // Writing to a String cannot fail.
            let _ = write!(out, "_{byte:02X}");
        }
    }
    out
}

/// Prepares text for a field formatted with `^FB` (field block), where the
/// printer gives `\&` (line break) and `\\` (backslash) their meaning after
/// undoing `^FH`: backslashes are doubled, and line feeds become line breaks.
pub fn block_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\&"),
            // A CR of a CRLF pair would print as a glyph; the LF breaks the line.
            '\r' => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_ascii_is_unchanged() {
        assert_eq!(
            escape_field_data("Order 1042, box 3/4"),
            "Order 1042, box 3/4"
        );
    }

    #[test]
    fn command_prefixes_and_the_indicator_are_hex() {
        assert_eq!(escape_field_data("^XZ~JA_"), "_5EXZ_7EJA_5F");
    }

    #[test]
    fn utf8_is_escaped_byte_by_byte() {
        assert_eq!(escape_field_data("Zoë"), "Zo_C3_AB");
        assert_eq!(escape_field_data("€"), "_E2_82_AC");
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(escape_field_data("a\nb\x02\x7f"), "a_0Ab_02_7F");
    }

    #[test]
    fn empty_stays_empty() {
        assert_eq!(escape_field_data(""), "");
    }

    #[test]
    fn block_text_marks_line_breaks_and_doubles_backslashes() {
        assert_eq!(block_text("a\\b\r\nc"), "a\\\\b\\&c");
    }
}
