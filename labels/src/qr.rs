//! QR codes for data a Code 128 symbol cannot carry: text outside
//! printable ASCII (an accented or Greek order reference) or too long for
//! the width a document gives it.
//!
//! The data is encoded as UTF-8 bytes behind an ECI 26 designator, so a
//! decoder reads it as UTF-8 rather than guessing (the QR default for byte
//! data is ISO 8859-1). ASCII data needs no designator and gets none, which
//! keeps the symbol one version smaller for most references.

use qrcode::bits::Bits;
use qrcode::{Color, EcLevel, QrCode, Version};

/// Light modules each side that a reader needs (ISO/IEC 18004).
pub(crate) const QUIET_MODULES: usize = 4;

/// ECI designator of UTF-8.
const ECI_UTF8: u32 = 26;

/// The modules of one QR symbol, row by row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Matrix {
    /// Modules per side, without the quiet zone.
    pub size: usize,
    /// `size * size` entries, true for dark.
    pub dark: Vec<bool>,
}

impl Matrix {
    /// The smallest symbol holding `data` at error correction level M (15 %
    /// of the symbol may be lost: a scuffed label still reads), or `None`
    /// when no version can hold it.
    pub fn encode(data: &str) -> Option<Self> {
        if data.is_empty() {
            return None;
        }
        (1..=40).find_map(|v| Self::with_version(data, v))
    }

    fn with_version(data: &str, version: i16) -> Option<Self> {
        let level = EcLevel::M;
        let mut bits = Bits::new(Version::Normal(version));
        if !data.is_ascii() {
            bits.push_eci_designator(ECI_UTF8).ok()?;
        }
        bits.push_byte_data(data.as_bytes()).ok()?;
        bits.push_terminator(level).ok()?;
        let code = QrCode::with_bits(bits, level).ok()?;
        Some(Self {
            size: code.width(),
            dark: code
                .into_colors()
                .into_iter()
                .map(|c| c == Color::Dark)
                .collect(),
        })
    }

    /// Whether the module at column `x`, row `y` is dark.
    pub fn is_dark(&self, x: usize, y: usize) -> bool {
        x < self.size && y < self.size && self.dark.get(y * self.size + x).copied() == Some(true)
    }

    /// Modules per side with the quiet zone both sides.
    pub fn span(&self) -> usize {
        self.size + 2 * QUIET_MODULES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smallest_version_and_utf8_designator() {
        let ascii = Matrix::encode("SO-1001").expect("fits");
        assert_eq!(ascii.size, 21, "version 1");
        assert_eq!(ascii.dark.len(), 21 * 21);
        let greek = Matrix::encode("Παραγγελία-12").expect("fits");
        assert!(greek.size >= 25, "UTF-8 bytes and the ECI need version 2+");
        assert!(Matrix::encode("").is_none());
        assert!(Matrix::encode(&"x".repeat(5000)).is_none());
        // The finder pattern's corner is dark.
        assert!(ascii.is_dark(0, 0) && !ascii.is_dark(21, 0));
    }
}
