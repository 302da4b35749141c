//! `depot-labels`: every document Depot prints, as bytes: 4×6 in shipping
//! labels (ZPL and PDF), packing slips (4×6 ZPL, A4 PDF), dispatch
//! manifests (A4 PDF) and 50×25 mm item labels (ZPL and PDF).
//!
//! This is the workspace's one ZPL and PDF writer. The warehouse engine
//! (`depot-wms`) renders its shipping documents here; the edge's self-test
//! renders through it on the box's own CPU, so the aarch64 check in CI
//! covers the path labels ship by; the printer simulator's tests print
//! what it makes. The printer drivers (`depot-hardware`) only carry its
//! bytes: no layout lives there.
//!
//! Pure functions of plain input structs: no database, no I/O. Each document
//! is laid out once into a display list (`layout`), which the ZPL and PDF
//! backends draw, so a label printed on a Zebra and its PDF say the same
//! thing in the same places.
//!
//! What a caller must know:
//! - Text is one line per field: newlines and control characters become
//!   spaces. Addresses and references wrap onto more lines and shrink
//!   before anything is cut ([`label_problems`] lists what a label could
//!   still not print whole, so packing can refuse it first); other text too
//!   wide for its box is shrunk (names) or cut with "...".
//! - Every script prints, on PDF and on a stock Zebra, with the Noto fonts
//!   vendored in `labels/fonts/` (Latin, Greek, Cyrillic, Hebrew, Arabic, and
//!   CJK cut to GB 2312, JIS X 0208 and KS X 1001; its README says what is
//!   in them). Text is measured with the font that draws it (`metrics`),
//!   so fitting holds in every script. Arabic and Hebrew are shaped
//!   (`shape`, rustybuzz) and drawn right to left, but laid out in the same
//!   left-aligned boxes as everything else.
//! - PDFs draw a line that is all WinAnsi (Windows-1252) with the built-in
//!   Helvetica, embedding nothing (a Latin label is about 4 KB). Any other
//!   line is shaped and drawn with the Noto fonts, embedded as CID fonts
//!   subset to the glyphs the document uses (a label in Greek, Arabic or
//!   Chinese is 8 to 16 KB), with a /ToUnicode map: the text extracts as
//!   given, right-to-left lines in logical order in the content stream
//!   (pdftotext, which orders by position, gives a line that mixes
//!   right-to-left words with digits as its runs from left to right).
//!   Characters no vendored font has (emoji) print as an empty box and
//!   still extract as themselves; nothing prints as '?'.
//! - ZPL is sent as UTF-8 (`^CI28`) with every field `^FH`-escaped, so no
//!   data can inject commands. A line within Latin-1 and Latin Extended-A
//!   is text in the printer's resident font 0; any other line is rendered
//!   here at 203 dpi, shaped as in the PDF, and sent as a compressed
//!   graphic field (`^GFA`) at the same place and size, so a printer with
//!   only its resident fonts prints it (a label in another script is 4 to
//!   8 KB of ZPL instead of about 1 KB). Latin lines cost no shaping, no
//!   rasterising and no font parsing; the fonts are parsed once, at the
//!   first line that needs them.
//! - No data fails a document for its barcode. Each symbol is chosen before
//!   anything is drawn: Code 128 where the data is printable ASCII and fits
//!   the width with modules of at least two 203 dpi dots; else a QR code of
//!   the UTF-8 text (accents, other scripts, long references); else, when
//!   not even that fits, no symbol, and the text printed beside it stands
//!   alone. SSCCs are GS1-128 (FNC1, application identifier 00).
//! - Weights are printed in grams below 1 kg and in kg to the gram above
//!   ("850 g", "2.35 kg", "999.999 kg"), dimensions in cm, times in UTC.

mod code128;
mod fonts;
mod item;
mod label;
mod layout;
mod manifest;
mod metrics;
mod pdf;
mod qr;
mod raster;
#[cfg(test)]
pub(crate) mod readback;
mod shape;
mod slip;
mod table;
mod wrap;
mod zpl;

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

pub use zpl::escape_field;

/// Why a document could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// The PDF writer failed.
    #[error("cannot write PDF: {0}")]
    Pdf(String),
}

/// An address on a label or a slip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Party {
    pub name: String,
    pub line1: String,
    pub line2: Option<String>,
    pub city: String,
    pub postal_code: String,
    /// State, province or county, where the country uses one.
    pub region: Option<String>,
    /// As it should be printed: an ISO 3166 code or a name.
    pub country: String,
}

/// One parcel of a shipment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageInfo {
    /// 1-based position in the shipment ("index of count").
    pub index: u32,
    pub count: u32,
    pub weight_g: i64,
    /// Length, width, height in millimetres.
    pub dimensions_mm: Option<(i64, i64, i64)>,
}

/// A 4×6 in carrier label for one package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShippingLabel {
    pub carrier: String,
    pub service: String,
    /// The shipment's tracking number.
    pub tracking_number: String,
    /// This package's own number, printed as its tracking barcode: a hub
    /// scanner tells the pieces of a shipment apart by it.
    pub piece_number: String,
    /// The package's SSCC (18 digits), where the business has a GS1
    /// company prefix.
    pub sscc: Option<String>,
    pub ship_from: Party,
    pub ship_to: Party,
    pub order_ref: String,
    pub package: PackageInfo,
    pub shipped_on: NaiveDate,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlipLine {
    pub sku: String,
    pub name: String,
    pub quantity: i64,
}

/// What went into the box(es) of one order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackingSlip {
    pub order_ref: String,
    pub order_id: String,
    /// Sales channel the order came from ("web", "amazon", ...).
    pub channel: String,
    pub ship_to: Party,
    pub lines: Vec<SlipLine>,
    pub packages: Vec<PackageInfo>,
    pub packed_at: DateTime<Utc>,
    pub warehouse: String,
}

/// A 50×25 mm label for a shelf, a bin or an item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemLabel {
    /// What the barcode carries, printed in clear under it too.
    pub sku: String,
    /// The line a picker reads: the item's or the bin's name.
    pub name: String,
    /// A smaller line under the name, if any: a GTIN, a zone.
    pub detail: Option<String>,
}

/// One package handed over: everything the driver checks it by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestRow {
    /// Its shipment's tracking number.
    pub tracking_number: String,
    /// Its own number, the tracking barcode on its label.
    pub piece_number: String,
    /// Its SSCC, where the business has a GS1 company prefix.
    pub sscc: Option<String>,
    pub order_ref: String,
    pub package: PackageInfo,
    pub postal_code: String,
    pub city: String,
    pub country: String,
}

/// The hand-over list of one dispatch run, signed by the driver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub run_id: String,
    pub carrier: String,
    pub closed_at: DateTime<Utc>,
    pub warehouse: String,
    /// One row per package, the packages of a shipment together.
    pub packages: Vec<ManifestRow>,
}

/// The shipping label as one ZPL label (203 dpi, 812×1218 dots).
pub fn shipping_label_zpl(label: &ShippingLabel) -> String {
    zpl::render(&[label::layout(label)])
}

/// What a label could not print whole (an address too long even wrapped
/// and at its smallest type): empty when the label is good to print.
pub fn label_problems(label: &ShippingLabel) -> Vec<String> {
    label::layout(label).cut
}

/// The shipping label as a one-page 4×6 in PDF (288×432 pt).
pub fn shipping_label_pdf(label: &ShippingLabel) -> Result<Vec<u8>, RenderError> {
    pdf::render(
        &format!("Label {}", label.tracking_number),
        &[label::layout(label)],
    )
}

/// The packing slip as one or more 4×6 ZPL labels ("page i/n").
pub fn packing_slip_zpl(slip: &PackingSlip) -> String {
    zpl::render(&slip::zpl_pages(slip))
}

/// The packing slip as an A4 portrait PDF, paginated.
pub fn packing_slip_pdf(slip: &PackingSlip) -> Result<Vec<u8>, RenderError> {
    let pages = slip::pdf_pages(slip);
    pdf::render(&format!("Packing slip {}", slip.order_ref), &pages)
}

/// The dispatch manifest as an A4 portrait PDF, paginated, with totals.
pub fn manifest_pdf(manifest: &Manifest) -> Result<Vec<u8>, RenderError> {
    let pages = manifest::pages(manifest);
    pdf::render(&format!("Manifest {}", manifest.run_id), &pages)
}

/// The item label as one ZPL label (203 dpi, 400×200 dots).
pub fn item_label_zpl(label: &ItemLabel) -> String {
    zpl::render(&[item::layout(label)])
}

/// The item label as a one-page 50×25 mm PDF.
pub fn item_label_pdf(label: &ItemLabel) -> Result<Vec<u8>, RenderError> {
    pdf::render(&format!("Item {}", label.sku), &[item::layout(label)])
}

/// "850 g" below a kilogram, "2.35 kg" above: every gram the scale gave
/// is printed (a carrier bills by it), trailing zeros dropped.
pub(crate) fn format_weight(grams: i64) -> String {
    let sign = if grams < 0 { "-" } else { "" };
    let g = grams.unsigned_abs();
    if g < 1000 {
        return format!("{sign}{g} g");
    }
    let (kg, rest) = (g / 1000, g % 1000);
    if rest == 0 {
        return format!("{sign}{kg} kg");
    }
    let decimals = format!("{rest:03}");
    format!("{sign}{kg}.{} kg", decimals.trim_end_matches('0'))
}

/// "30 x 20 x 10.5 cm" from millimetres.
pub(crate) fn format_dimensions((l, w, h): (i64, i64, i64)) -> String {
    let cm = |mm: i64| {
        let sign = if mm < 0 { "-" } else { "" };
        let abs = mm.unsigned_abs();
        match abs % 10 {
            0 => format!("{sign}{}", abs / 10),
            d => format!("{sign}{}.{d}", abs / 10),
        }
    };
    format!("{} x {} x {} cm", cm(l), cm(w), cm(h))
}

pub(crate) fn format_time(at: &DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// The lines of an address after the name, as printed: "City, Region
/// Postcode" where a region is given (North American style), else
/// "Postcode City" (European style); the country last.
pub(crate) fn address_lines(p: &Party) -> Vec<String> {
    let mut lines = vec![p.line1.clone()];
    if let Some(l2) = p.line2.as_deref().filter(|s| !s.trim().is_empty()) {
        lines.push(l2.to_owned());
    }
    let city = match p.region.as_deref().filter(|s| !s.trim().is_empty()) {
        Some(region) => format!("{}, {} {}", p.city, region, p.postal_code),
        None => format!("{} {}", p.postal_code, p.city),
    };
    lines.push(city.trim().to_owned());
    lines.push(p.country.clone());
    lines.retain(|l| !l.trim().is_empty());
    lines
}

#[cfg(test)]
pub(crate) mod corpus;
#[cfg(test)]
pub(crate) mod fixtures;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_and_dimensions() {
        assert_eq!(format_weight(2345), "2.345 kg");
        assert_eq!(format_weight(2350), "2.35 kg");
        assert_eq!(format_weight(120), "120 g");
        assert_eq!(format_weight(0), "0 g");
        assert_eq!(format_weight(1000), "1 kg");
        assert_eq!(format_weight(1250), "1.25 kg");
        assert_eq!(format_weight(30_005), "30.005 kg");
        assert_eq!(format_weight(999_999), "999.999 kg");
        assert_eq!(format_weight(1_000_000), "1000 kg");
        assert_eq!(format_weight(-1500), "-1.5 kg");
        assert_eq!(format_dimensions((300, 205, 100)), "30 x 20.5 x 10 cm");
    }

    #[test]
    fn address_styles() {
        let mut p = fixtures::party("Ada");
        assert_eq!(
            address_lines(&p),
            vec!["12 Rue de la Paix", "Bâtiment B", "75002 Paris", "FR"]
        );
        p.line2 = None;
        p.region = Some("NY".into());
        p.city = "New York".into();
        p.postal_code = "10001".into();
        assert_eq!(
            address_lines(&p),
            vec!["12 Rue de la Paix", "New York, NY 10001", "FR"]
        );
    }

    /// Every symbol on every label and slip, drawn at 203 dpi and read by
    /// rxing, gives back exactly the data it was made from.
    #[test]
    fn every_barcode_reads_back() {
        use rxing::BarcodeFormat::{CODE_128, QR_CODE};
        let label = fixtures::label();
        let found = readback::decode(&label::layout(&label));
        assert!(
            found.contains(&(CODE_128, "1Z999AA10123456784-01".into())),
            "{found:?}"
        );
        assert!(
            found.contains(&(CODE_128, "00340123450000000017".into())),
            "the SSCC with its AI: {found:?}"
        );
        let long = format!("AMZ-{}", "7".repeat(63));
        for reference in [
            "SO-1001",
            "Commande-Éric-12",
            "Παραγγελία-Ω12",
            "Заказ № 17",
            "订单-2024-东京",
            "طلب-٤٥",
            "ZPL ^XA~JA_^FS",
            long.as_str(),
        ] {
            let mut slip = fixtures::slip(2);
            slip.order_ref = reference.to_owned();
            let pages = slip::zpl_pages(&slip)
                .into_iter()
                .chain(slip::pdf_pages(&slip));
            for page in pages {
                let found = readback::decode(&page);
                let texts: Vec<&str> = found.iter().map(|(_, t)| t.as_str()).collect();
                assert_eq!(texts, [reference], "{found:?}");
                let format = found.first().map(|f| f.0);
                let linear = reference.is_ascii() && reference.len() < 40;
                assert_eq!(format, Some(if linear { CODE_128 } else { QR_CODE }));
            }
            let mut piece = fixtures::label();
            piece.piece_number = reference.to_owned();
            piece.sscc = None;
            let found = readback::decode(&label::layout(&piece));
            assert_eq!(found.len(), 1, "{found:?}");
            assert_eq!(found[0].1, reference);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Any printable text (any script, any length a 4×6 label's QR
        /// code holds), as a piece's number, is one symbol that reads back
        /// as exactly that text: Code 128 or a QR code of its UTF-8.
        #[test]
        fn any_data_reads_back_from_its_symbol(data in "\\PC{1,60}") {
            let mut piece = fixtures::label();
            piece.piece_number = data.clone();
            piece.sscc = None;
            let found = readback::decode(&label::layout(&piece));
            let texts: Vec<&str> = found.iter().map(|(_, t)| t.as_str()).collect();
            proptest::prop_assert_eq!(texts, [data.as_str()]);
        }
    }

    #[test]
    fn inputs_round_trip_through_json() -> Result<(), serde_json::Error> {
        let label = fixtures::label();
        let json = serde_json::to_string(&label)?;
        assert_eq!(serde_json::from_str::<ShippingLabel>(&json)?, label);
        Ok(())
    }
}
