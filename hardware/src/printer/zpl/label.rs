//! A label format (`^XA`…`^XZ`) built field by field. Positions and sizes
//! are printer dots; every field's data goes through `^FH` escaping.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::ZplError;
use super::code128::{self, Gs1Element};
use super::escape::{block_text, escape_field_data};

/// ZPL accepts coordinates and sizes up to 32000 dots.
const MAX_DOTS: u32 = 32_000;

/// Print head resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Dpi {
    #[serde(rename = "203")]
    D203,
    #[serde(rename = "300")]
    D300,
    #[serde(rename = "600")]
    D600,
}

impl Dpi {
    /// Dots per inch, as printers are sold.
    pub fn per_inch(self) -> u32 {
        match self {
            Dpi::D203 => 203,
            Dpi::D300 => 300,
            Dpi::D600 => 600,
        }
    }

    /// Dots per millimetre, which is what the heads actually have (203 dpi
    /// is 8 dots/mm).
    pub fn per_mm(self) -> u32 {
        match self {
            Dpi::D203 => 8,
            Dpi::D300 => 12,
            Dpi::D600 => 24,
        }
    }
}

/// The printable area of a label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelSize {
    pub width_dots: u32,
    pub height_dots: u32,
    pub dpi: Dpi,
}

impl LabelSize {
    pub fn from_mm(width_mm: u32, height_mm: u32, dpi: Dpi) -> Self {
        Self {
            width_dots: width_mm * dpi.per_mm(),
            height_dots: height_mm * dpi.per_mm(),
            dpi,
        }
    }

    /// The 4×6 inch shipping label carriers use.
    pub fn four_by_six(dpi: Dpi) -> Self {
        Self {
            width_dots: 4 * dpi.per_inch(),
            height_dots: 6 * dpi.per_inch(),
            dpi,
        }
    }

    /// Scales a length given in 203-dpi dots (eighths of a millimetre) to
    /// this label's resolution, so layouts are written once.
    pub fn scale(&self, dots_at_203: u32) -> u32 {
        dots_at_203 * self.dpi.per_mm() / 8
    }
}

/// A printer font: `0` is the scalable font every ZPL printer has; `A`-`H`
/// and the others are bitmap fonts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Font(u8);

impl Font {
    pub const SCALABLE: Font = Font(b'0');

    pub fn named(name: char) -> Result<Self, ZplError> {
        match u8::try_from(name) {
            Ok(byte) if byte.is_ascii_digit() || byte.is_ascii_uppercase() => Ok(Font(byte)),
            _ => Err(ZplError::Font(name)),
        }
    }
}

/// Alignment of the lines of a text block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Center,
    Right,
}

/// A wrapped text area (`^FB`): long text wraps at `width_dots`, and lines
/// beyond `max_lines` overprint the last one, so callers size it generously.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextBlock {
    pub width_dots: u32,
    pub max_lines: u32,
    pub align: Align,
}

/// Bar dimensions of a linear barcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarStyle {
    pub height_dots: u32,
    /// Narrow bar width in dots (`^BY`), 1 to 10.
    pub module_dots: u32,
    /// Print the human-readable line under the bars.
    pub human_readable: bool,
}

/// QR error correction level, from 7 % (L) to 30 % (H) of the symbol
/// recoverable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QrEcc {
    L,
    M,
    Q,
    H,
}

impl QrEcc {
    fn letter(self) -> char {
        match self {
            QrEcc::L => 'L',
            QrEcc::M => 'M',
            QrEcc::Q => 'Q',
            QrEcc::H => 'H',
        }
    }

    /// Bytes a version 40 symbol holds in byte mode at this level.
    fn capacity(self) -> usize {
        match self {
            QrEcc::L => 2953,
            QrEcc::M => 2331,
            QrEcc::Q => 1663,
            QrEcc::H => 1273,
        }
    }
}

fn check(what: &'static str, value: u32, min: u32, max: u32) -> Result<u32, ZplError> {
    if (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(ZplError::OutOfRange {
            what,
            value,
            min,
            max,
        })
    }
}

fn check_origin(x: u32, y: u32) -> Result<(), ZplError> {
    check("x", x, 0, MAX_DOTS)?;
    check("y", y, 0, MAX_DOTS)?;
    Ok(())
}

/// One label format under construction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    size: LabelSize,
    fields: String,
}

impl Label {
    pub fn new(size: LabelSize) -> Self {
        Self {
            size,
            fields: String::new(),
        }
    }

    pub fn size(&self) -> LabelSize {
        self.size
    }

    /// Writes `^FOx,y` and the field's leading commands; the field data
    /// follows `^FH^FD`.
    fn field(&mut self, x: u32, y: u32, commands: &str, data: &str) {
        let data = escape_field_data(data);
        // Writing to a String cannot fail.
        let _ = write!(self.fields, "^FO{x},{y}{commands}^FH^FD{data}^FS");
    }

    fn font_command(font: Font, height: u32) -> Result<String, ZplError> {
        let height = check("font height", height, 1, MAX_DOTS)?;
        Ok(format!("^A{}N,{height},{height}", char::from(font.0)))
    }

    /// A line of text with its top-left corner at (x, y).
    pub fn text(
        &mut self,
        x: u32,
        y: u32,
        font: Font,
        height: u32,
        text: &str,
    ) -> Result<&mut Self, ZplError> {
        check_origin(x, y)?;
        let commands = Self::font_command(font, height)?;
        self.field(x, y, &commands, text);
        Ok(self)
    }

    /// Text wrapped into a block; `\n` in `text` starts a new line.
    pub fn text_block(
        &mut self,
        x: u32,
        y: u32,
        font: Font,
        height: u32,
        block: TextBlock,
        text: &str,
    ) -> Result<&mut Self, ZplError> {
        check_origin(x, y)?;
        let width = check("block width", block.width_dots, 1, MAX_DOTS)?;
        let lines = check("block lines", block.max_lines, 1, 9999)?;
        let align = match block.align {
            Align::Left => 'L',
            Align::Center => 'C',
            Align::Right => 'R',
        };
        let commands = format!(
            "{}^FB{width},{lines},0,{align},0",
            Self::font_command(font, height)?
        );
        self.field(x, y, &commands, &block_text(text));
        Ok(self)
    }

    fn bar_commands(style: BarStyle, interpretation: bool) -> Result<String, ZplError> {
        let height = check("barcode height", style.height_dots, 1, MAX_DOTS)?;
        let module = check("module width", style.module_dots, 1, 10)?;
        let line = if interpretation { 'Y' } else { 'N' };
        Ok(format!("^BY{module}^BCN,{height},{line},N,N,N"))
    }

    /// A Code 128 barcode of printable ASCII (a SKU, bin, tracking number).
    pub fn code128(
        &mut self,
        x: u32,
        y: u32,
        style: BarStyle,
        data: &str,
    ) -> Result<&mut Self, ZplError> {
        check_origin(x, y)?;
        let commands = Self::bar_commands(style, style.human_readable)?;
        let encoded = code128::encode(data)?;
        self.field(x, y, &commands, &encoded);
        Ok(self)
    }

    /// A GS1-128 barcode. Its human-readable line, with the AIs in
    /// parentheses, is drawn as text: the printer's own line would show the
    /// raw data without them.
    pub fn gs1_128(
        &mut self,
        x: u32,
        y: u32,
        style: BarStyle,
        elements: &[Gs1Element],
    ) -> Result<&mut Self, ZplError> {
        check_origin(x, y)?;
        let commands = Self::bar_commands(style, false)?;
        let encoded = code128::encode_gs1(elements)?;
        // Checked before anything is written, so an error leaves no half field.
        let text_y = check(
            "y",
            y + style.height_dots + 4 * style.module_dots,
            0,
            MAX_DOTS,
        )?;
        self.field(x, y, &commands, &encoded);
        if style.human_readable {
            let text_height = 10 * style.module_dots + 4;
            let text = Self::font_command(Font::SCALABLE, text_height)?;
            self.field(x, text_y, &text, &code128::gs1_human_readable(elements));
        }
        Ok(self)
    }

    /// A QR code (model 2, byte data in automatic mode); `magnification`
    /// is the module size in dots, 1 to 10.
    pub fn qr(
        &mut self,
        x: u32,
        y: u32,
        magnification: u32,
        ecc: QrEcc,
        data: &str,
    ) -> Result<&mut Self, ZplError> {
        check_origin(x, y)?;
        let magnification = check("QR magnification", magnification, 1, 10)?;
        if data.is_empty() {
            return Err(ZplError::EmptyBarcode);
        }
        if data.len() > ecc.capacity() {
            return Err(ZplError::QrTooLong {
                bytes: data.len(),
                max: ecc.capacity(),
            });
        }
        let commands = format!("^BQN,2,{magnification}");
        // The QR field data starts with the error correction letter and the
        // input mode (A: automatic), then a comma.
        let data = format!("{}A,{data}", ecc.letter());
        self.field(x, y, &commands, &data);
        Ok(self)
    }

    /// A rectangle outline (`^GB`); a thickness equal to the smaller side
    /// draws a filled bar, which is how ZPL draws lines.
    pub fn rect(
        &mut self,
        x: u32,
        y: u32,
        width: u32,
        height: u32,
        thickness: u32,
    ) -> Result<&mut Self, ZplError> {
        check_origin(x, y)?;
        let width = check("box width", width, 1, MAX_DOTS)?;
        let height = check("box height", height, 1, MAX_DOTS)?;
        let thickness = check("line thickness", thickness, 1, MAX_DOTS)?;
        let _ = write!(
            self.fields,
            "^FO{x},{y}^GB{width},{height},{thickness},B,0^FS"
        );
        Ok(self)
    }

    /// The complete format: `^CI28` makes the printer read the hex-escaped
    /// bytes as UTF-8, `^PW`/`^LL` set the label size.
    pub fn to_zpl(&self) -> Vec<u8> {
        format!(
            "^XA^CI28^PW{}^LL{}^LH0,0{}^XZ\n",
            self.size.width_dots, self.size.height_dots, self.fields
        )
        .into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Label {
        Label::new(LabelSize::from_mm(50, 25, Dpi::D203))
    }

    fn zpl(label: &Label) -> String {
        String::from_utf8(label.to_zpl()).expect("ZPL is ASCII")
    }

    #[test]
    fn empty_label_has_header_and_size() {
        assert_eq!(zpl(&small()), "^XA^CI28^PW400^LL200^LH0,0^XZ\n");
    }

    #[test]
    fn sizes() {
        let six = LabelSize::four_by_six(Dpi::D203);
        assert_eq!((six.width_dots, six.height_dots), (812, 1218));
        let six = LabelSize::four_by_six(Dpi::D300);
        assert_eq!((six.width_dots, six.height_dots), (1200, 1800));
        assert_eq!(LabelSize::from_mm(100, 150, Dpi::D600).width_dots, 2400);
        assert_eq!(LabelSize::four_by_six(Dpi::D300).scale(80), 120);
    }

    #[test]
    fn text_field() {
        let mut label = small();
        label
            .text(10, 20, Font::SCALABLE, 30, "Hello ^XZ")
            .expect("valid text");
        assert!(zpl(&label).contains("^FO10,20^A0N,30,30^FH^FDHello _5EXZ^FS"));
    }

    #[test]
    fn text_block_field() {
        let mut label = small();
        let block = TextBlock {
            width_dots: 300,
            max_lines: 3,
            align: Align::Center,
        };
        label
            .text_block(0, 0, Font::SCALABLE, 20, block, "Line 1\nC:\\dir")
            .expect("valid block");
        assert!(zpl(&label).contains("^FB300,3,0,C,0^FH^FDLine 1\\&C:\\\\dir^FS"));
    }

    #[test]
    fn code128_field() {
        let style = BarStyle {
            height_dots: 80,
            module_dots: 2,
            human_readable: true,
        };
        let mut label = small();
        label.code128(5, 6, style, "BIN_A>1").expect("encodable");
        assert!(zpl(&label).contains("^FO5,6^BY2^BCN,80,Y,N,N,N^FH^FD>:BIN_5FA>01^FS"));
    }

    #[test]
    fn gs1_field_with_human_readable_text() {
        let style = BarStyle {
            height_dots: 100,
            module_dots: 3,
            human_readable: true,
        };
        let mut label = small();
        label
            .gs1_128(0, 0, style, &[Gs1Element::new("00", "106141411234567897")])
            .expect("valid SSCC");
        let out = zpl(&label);
        assert!(out.contains("^BCN,100,N,N,N,N^FH^FD>;>800106141411234567897^FS"));
        assert!(out.contains("^FO0,112^A0N,34,34^FH^FD(00)106141411234567897^FS"));
    }

    #[test]
    fn qr_field() {
        let mut label = small();
        label
            .qr(1, 2, 4, QrEcc::M, "https://x.test/?a=1&b=^")
            .expect("fits");
        assert!(zpl(&label).contains("^FO1,2^BQN,2,4^FH^FDMA,https://x.test/?a=1&b=_5E^FS"));
    }

    #[test]
    fn rect_field() {
        let mut label = small();
        label.rect(0, 100, 400, 3, 3).expect("valid box");
        assert!(zpl(&label).contains("^FO0,100^GB400,3,3,B,0^FS"));
    }

    #[test]
    fn out_of_range_values_are_refused() {
        let mut label = small();
        assert!(matches!(
            label.text(40_000, 0, Font::SCALABLE, 10, "x"),
            Err(ZplError::OutOfRange { what: "x", .. })
        ));
        assert!(matches!(
            label.text(0, 0, Font::SCALABLE, 0, "x"),
            Err(ZplError::OutOfRange { .. })
        ));
        assert!(matches!(
            label.qr(0, 0, 11, QrEcc::L, "x"),
            Err(ZplError::OutOfRange { .. })
        ));
        let thin = BarStyle {
            height_dots: 10,
            module_dots: 11,
            human_readable: false,
        };
        assert!(label.code128(0, 0, thin, "x").is_err());
        assert!(label.rect(0, 0, 0, 10, 1).is_err());
        // Nothing was added by the refused calls.
        assert_eq!(label, small());
    }

    #[test]
    fn qr_capacity() {
        let mut label = small();
        let big = "x".repeat(1274);
        assert_eq!(
            label.qr(0, 0, 2, QrEcc::H, &big).map(|_| ()),
            Err(ZplError::QrTooLong {
                bytes: 1274,
                max: 1273
            })
        );
        assert!(label.qr(0, 0, 2, QrEcc::L, &big).is_ok());
        assert_eq!(
            label.qr(0, 0, 2, QrEcc::L, "").map(|_| ()),
            Err(ZplError::EmptyBarcode)
        );
    }

    #[test]
    fn fonts() {
        assert_eq!(Font::named('D'), Ok(Font(b'D')));
        assert_eq!(Font::named('d'), Err(ZplError::Font('d')));
        assert_eq!(Font::named('^'), Err(ZplError::Font('^')));
    }
}
