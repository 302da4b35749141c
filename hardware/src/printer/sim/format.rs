//! Turns format commands into the fields of a label, decoding field data
//! the way a printer does: `^FH` hex escapes, UTF-8 (`^CI28`), `^FB` line
//! breaks, Code 128 invocation codes and the QR data prefix.

use super::parse::Command;

/// What a field draws.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldKind {
    Text,
    Code128,
    /// Code 128 starting with FNC1; FNC1 separators appear as GS (0x1D)
    /// in the data, as a scanner transmits them.
    Gs1_128,
    Qr,
    /// Another barcode command, e.g. `BX`.
    OtherBarcode(String),
    /// A `^GB` box; the data is its parameters.
    Box,
}

/// One field of a label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub x: u32,
    pub y: u32,
    pub kind: FieldKind,
    /// The decoded data: what is printed, or what the barcode carries.
    pub data: String,
}

/// Undoes `^FH`: `indicator` followed by two hex digits is that byte; an
/// indicator without them is kept as is.
pub fn decode_field_hex(data: &[u8], indicator: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut i = 0;
    while i < data.len() {
        let hex = data.get(i + 1..i + 3).and_then(|pair| {
            std::str::from_utf8(pair)
                .ok()
                .filter(|pair| pair.bytes().all(|b| b.is_ascii_hexdigit()))
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
        });
        match hex {
            Some(byte) if data[i] == indicator => {
                out.push(byte);
                i += 3;
            }
            _ => {
                out.push(data[i]);
                i += 1;
            }
        }
    }
    out
}

/// Undoes the `^FB` escapes: `\&` line break, `\\` backslash.
fn decode_block(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(ch) = chars.next() {
        if ch != '\\' {
            out.push(ch);
            continue;
        }
        match chars.next() {
            Some('&') => out.push('\n'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Reads `^BC` mode N data: start codes, subset changes and FNC1 as
/// invocation codes, digit pairs in subset C.
fn decode_code128(text: &str) -> (FieldKind, String) {
    let mut out = String::with_capacity(text.len());
    let mut subset_c = false;
    let mut gs1 = false;
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let ch = chars[i];
        if ch == '>' {
            if let Some(&code) = chars.get(i + 1) {
                i += 2;
                match code {
                    ';' | '5' => subset_c = true,
                    ':' | '9' => subset_c = false,
                    // CODE B from C, CODE A from B or C.
                    '6' if subset_c => subset_c = false,
                    '7' => subset_c = false,
                    '8' if out.is_empty() && !gs1 => gs1 = true,
                    '8' => out.push('\u{1d}'),
                    '0' => out.push('>'),
                    '<' => out.push('^'),
                    '=' => out.push('~'),
                    _ => {}
                }
                continue;
            }
        }
        if subset_c {
            // Pairs of digits; the manual says a pair with a non-digit is
            // ignored.
            if let Some(&next) = chars.get(i + 1) {
                if ch.is_ascii_digit() && next.is_ascii_digit() {
                    out.push(ch);
                    out.push(next);
                }
            }
            i += 2;
            continue;
        }
        out.push(ch);
        i += 1;
    }
    let kind = if gs1 {
        FieldKind::Gs1_128
    } else {
        FieldKind::Code128
    };
    (kind, out)
}

#[derive(Debug, Default)]
struct FieldState {
    x: u32,
    y: u32,
    kind: Option<FieldKind>,
    hex_indicator: Option<u8>,
    block: bool,
    data: Option<Vec<u8>>,
}

fn numbers(params: &[u8]) -> impl Iterator<Item = u32> + '_ {
    params.split(|&b| b == b',').map(|part| {
        std::str::from_utf8(part)
            .ok()
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or(0)
    })
}

/// Collects the fields of the format between `^XA` and `^XZ`.
#[derive(Debug, Default)]
pub struct FormatAssembler {
    in_format: bool,
    fields: Vec<Field>,
    field: FieldState,
}

impl FormatAssembler {
    /// Applies one command; `^XZ` returns the finished format's fields.
    pub fn apply(&mut self, command: &Command) -> Option<Vec<Field>> {
        let Command::Caret { code, params } = command else {
            return None;
        };
        match code {
            b"XA" => {
                self.in_format = true;
                self.fields.clear();
                self.field = FieldState::default();
            }
            b"XZ" if self.in_format => {
                self.in_format = false;
                self.field = FieldState::default();
                return Some(std::mem::take(&mut self.fields));
            }
            b"FO" | b"FT" => {
                let mut values = numbers(params);
                self.field.x = values.next().unwrap_or(0);
                self.field.y = values.next().unwrap_or(0);
            }
            b"BC" => self.field.kind = Some(FieldKind::Code128),
            b"BQ" => self.field.kind = Some(FieldKind::Qr),
            [b'B', letter] if *letter != b'Y' => {
                let name = String::from_utf8_lossy(&[b'B', *letter]).into_owned();
                self.field.kind = Some(FieldKind::OtherBarcode(name));
            }
            b"GB" => {
                self.field.kind = Some(FieldKind::Box);
                self.field.data = Some(params.clone());
            }
            b"FH" => self.field.hex_indicator = Some(params.first().copied().unwrap_or(b'_')),
            b"FB" => self.field.block = true,
            b"FD" => self.field.data = Some(params.clone()),
            b"FS" => self.finish_field(),
            _ => {}
        }
        None
    }

    fn finish_field(&mut self) {
        let state = std::mem::take(&mut self.field);
        let Some(raw) = state.data else {
            return;
        };
        if !self.in_format {
            return;
        }
        let bytes = match state.hex_indicator {
            Some(indicator) => decode_field_hex(&raw, indicator),
            None => raw,
        };
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        if state.block {
            text = decode_block(&text);
        }
        let (kind, data) = match state.kind.unwrap_or(FieldKind::Text) {
            FieldKind::Code128 => decode_code128(&text),
            // "QA,data": error correction, input mode, comma.
            FieldKind::Qr => match text.split_once(',') {
                Some((_, data)) => (FieldKind::Qr, data.to_owned()),
                None => (FieldKind::Qr, text),
            },
            other => (other, text),
        };
        self.fields.push(Field {
            x: state.x,
            y: state.y,
            kind,
            data,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::read_formats;
    use super::*;

    fn fields(zpl: &str) -> Vec<Vec<Field>> {
        read_formats(zpl.as_bytes())
    }

    #[test]
    fn hex_decoding() {
        assert_eq!(decode_field_hex(b"a_5Eb_c3_A9", b'_'), b"a^b\xc3\xa9");
        // An indicator without two hex digits stays.
        assert_eq!(decode_field_hex(b"_x_5", b'_'), b"_x_5");
        assert_eq!(decode_field_hex(b"#41_41", b'#'), b"A_41");
    }

    #[test]
    fn text_field_with_position() {
        let labels = fields("^XA^FO10,20^A0N,30,30^FH^FDZo_C3_AB _5E^FS^XZ");
        assert_eq!(
            labels,
            vec![vec![Field {
                x: 10,
                y: 20,
                kind: FieldKind::Text,
                data: "Zoë ^".into()
            }]]
        );
    }

    #[test]
    fn block_field() {
        let labels = fields("^XA^FO0,0^FB100,2,0,L,0^FH^FDa\\&b\\\\c^FS^XZ");
        assert_eq!(labels[0][0].data, "a\nb\\c");
    }

    #[test]
    fn code128_fields() {
        let labels = fields(
            "^XA^BCN,50^FD>:1Z999AA1>50123456784^FS^BC^FD>:a>0b><c>=d^FS^BC^FD>;1234>6AB^FS^XZ",
        );
        let data: Vec<&str> = labels[0].iter().map(|f| f.data.as_str()).collect();
        assert_eq!(data, vec!["1Z999AA10123456784", "a>b^c~d", "1234AB"]);
        assert!(labels[0].iter().all(|f| f.kind == FieldKind::Code128));
    }

    #[test]
    fn gs1_field() {
        let labels = fields("^XA^BCN,50,N,N,N,N^FD>;>810>6AB12>80>5109501101530003217^FS^XZ");
        assert_eq!(labels[0][0].kind, FieldKind::Gs1_128);
        assert_eq!(labels[0][0].data, "10AB12\u{1d}0109501101530003217");
    }

    #[test]
    fn qr_field() {
        let labels = fields("^XA^BQN,2,4^FH^FDMA,https://x.test/?a=1,b_5E^FS^XZ");
        assert_eq!(labels[0][0].kind, FieldKind::Qr);
        assert_eq!(labels[0][0].data, "https://x.test/?a=1,b^");
    }

    #[test]
    fn boxes_and_other_barcodes() {
        let labels = fields("^XA^FO1,2^GB10,20,3^FS^BY2^BXN,5^FDdm^FS^XZ");
        assert_eq!(labels[0][0].kind, FieldKind::Box);
        assert_eq!(labels[0][0].data, "10,20,3");
        assert_eq!(labels[0][1].kind, FieldKind::OtherBarcode("BX".into()));
    }

    #[test]
    fn fields_outside_a_format_are_ignored() {
        assert_eq!(fields("^FDstray^FS^XA^FDin^FS^XZ^FDafter^FS")[0].len(), 1);
    }

    #[test]
    fn unescaped_caret_truncates_the_field() {
        // What escaping prevents: the raw ^ starts a command.
        let labels = fields("^XA^FDa^b^FS^XZ");
        assert_eq!(labels[0][0].data, "a");
    }
}
