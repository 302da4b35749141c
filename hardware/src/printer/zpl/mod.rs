//! ZPL II: the label builder and the labels Depot prints.

mod code128;
mod escape;
mod label;
mod templates;

pub use code128::Gs1Element;
pub use escape::{HEX_INDICATOR, escape_field_data};
pub use label::{Align, BarStyle, Dpi, Font, Label, LabelSize, QrEcc, TextBlock};
pub use templates::{Address, ItemLabel, PackingLine, PackingSlip, ShippingLabel};

/// Why a label could not be built. Nothing is sent for such a label: the
/// data (a tracking number with a non-ASCII dash, a GTIN with a wrong check
/// digit) has to be corrected first.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZplError {
    #[error("{what} is {value}, outside {min}..={max}")]
    OutOfRange {
        what: &'static str,
        value: u32,
        min: u32,
        max: u32,
    },
    #[error("a barcode needs data")]
    EmptyBarcode,
    #[error("{ch:?} cannot be encoded in Code 128 (printable ASCII only)")]
    NotCode128 { ch: char },
    #[error("GS1 element ({ai}): {reason}")]
    Gs1 { ai: String, reason: String },
    #[error("a GS1-128 barcode holds at most 48 characters, this one has {chars}")]
    Gs1TooLong { chars: usize },
    #[error(
        "QR data is {bytes} bytes, more than the {max} a QR code holds at this error correction"
    )]
    QrTooLong { bytes: usize, max: usize },
    #[error("font name {0:?} is not 0-9 or A-Z")]
    Font(char),
}
