//! Barcode symbologies, from AIM symbology identifiers (ISO/IEC 15424): a
//! `]`, a code character naming the symbology and a modifier character whose
//! meaning depends on it.

use std::fmt;

/// The kind of barcode a scan came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Symbology {
    Code128,
    /// Code 128 with FNC1 in first position (`]C1`).
    Gs1_128,
    Ean13,
    Ean8,
    UpcA,
    UpcE,
    DataMatrix,
    /// Data Matrix with FNC1 in first position (`]d2`, or `]d5` with ECI).
    Gs1DataMatrix,
    Qr,
    Code39,
    Interleaved2of5,
    /// Any other symbology, as its AIM identifier (`]e0` is GS1 DataBar,
    /// `]E3` EAN/UPC with an add-on, …).
    Other(String),
}

impl Symbology {
    /// The symbology an AIM identifier names. `data` is the barcode text that
    /// followed it: EAN-13, UPC-A and UPC-E all share `]E0` and only the
    /// number of digits tells them apart.
    pub fn from_aim(code: char, modifier: char, data: &str) -> Self {
        match (code, modifier) {
            ('C', '1') => Symbology::Gs1_128,
            ('C', _) => Symbology::Code128,
            ('E', '0') => match data.len() {
                12 => Symbology::UpcA,
                6..=8 => Symbology::UpcE,
                _ => Symbology::Ean13,
            },
            ('E', '4') => Symbology::Ean8,
            ('d', '2' | '5') => Symbology::Gs1DataMatrix,
            ('d', _) => Symbology::DataMatrix,
            ('Q', _) => Symbology::Qr,
            ('A', _) => Symbology::Code39,
            ('I', _) => Symbology::Interleaved2of5,
            _ => Symbology::Other(format!("]{code}{modifier}")),
        }
    }
}

impl fmt::Display for Symbology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Symbology::Code128 => "Code 128",
            Symbology::Gs1_128 => "GS1-128",
            Symbology::Ean13 => "EAN-13",
            Symbology::Ean8 => "EAN-8",
            Symbology::UpcA => "UPC-A",
            Symbology::UpcE => "UPC-E",
            Symbology::DataMatrix => "Data Matrix",
            Symbology::Gs1DataMatrix => "GS1 DataMatrix",
            Symbology::Qr => "QR Code",
            Symbology::Code39 => "Code 39",
            Symbology::Interleaved2of5 => "Interleaved 2 of 5",
            Symbology::Other(aim) => return write!(f, "AIM {aim}"),
        };
        f.write_str(name)
    }
}

/// Whether two characters can be an AIM identifier's code and modifier: AIM
/// assigns letters as codes and letters or digits as modifiers.
pub(crate) fn is_aim_pair(code: char, modifier: char) -> bool {
    code.is_ascii_alphabetic() && modifier.is_ascii_alphanumeric()
}

/// Splits a leading AIM identifier off `text`, for scanners configured to
/// prefix one. `None` when `text` does not start with one.
pub(crate) fn split_aim(text: &str) -> Option<(Symbology, &str)> {
    let mut chars = text.chars();
    let (Some(']'), Some(code), Some(modifier)) = (chars.next(), chars.next(), chars.next()) else {
        return None;
    };
    if !is_aim_pair(code, modifier) {
        return None;
    }
    let data = chars.as_str();
    Some((Symbology::from_aim(code, modifier, data), data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aim_identifiers_map_to_symbologies() {
        let cases = [
            ("]C0", "ABC", Symbology::Code128),
            ("]C1", "0109506000134352", Symbology::Gs1_128),
            ("]E0", "4006381333931", Symbology::Ean13),
            ("]E0", "036000291452", Symbology::UpcA),
            ("]E0", "01234565", Symbology::UpcE),
            ("]E4", "96385074", Symbology::Ean8),
            ("]d1", "x", Symbology::DataMatrix),
            ("]d2", "01", Symbology::Gs1DataMatrix),
            ("]Q1", "https://example.com", Symbology::Qr),
            ("]A0", "CODE39", Symbology::Code39),
            ("]I0", "1234", Symbology::Interleaved2of5),
            ("]e0", "0100", Symbology::Other("]e0".into())),
        ];
        for (aim, data, expected) in cases {
            let text = format!("{aim}{data}");
            assert_eq!(split_aim(&text), Some((expected, data)), "{aim}");
        }
    }

    #[test]
    fn text_without_an_aim_identifier_is_not_split() {
        assert_eq!(split_aim("0109506000134352"), None);
        assert_eq!(split_aim("]C"), None);
        assert_eq!(split_aim("]!1data"), None);
        assert_eq!(split_aim("]C-data"), None);
        assert_eq!(split_aim(""), None);
    }

    #[test]
    fn symbologies_display_their_names() {
        assert_eq!(Symbology::Gs1_128.to_string(), "GS1-128");
        assert_eq!(Symbology::Other("]e0".into()).to_string(), "AIM ]e0");
    }
}
