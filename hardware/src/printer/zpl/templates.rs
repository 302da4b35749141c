//! The labels Depot prints. Layouts are drawn in 203-dpi dots and scaled to
//! the printer's resolution, so a 300-dpi printer gets the same label.

use serde::{Deserialize, Serialize};

use super::ZplError;
use super::label::{Align, BarStyle, Dpi, Font, Label, LabelSize, TextBlock};

/// A postal address as printed: a name, then the lines the edge formatted
/// for the destination country.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Address {
    pub name: String,
    pub lines: Vec<String>,
}

impl Address {
    fn text(&self) -> String {
        std::iter::once(self.name.as_str())
            .chain(self.lines.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// A 4×6 inch carrier shipping label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShippingLabel {
    pub ship_from: Address,
    pub ship_to: Address,
    pub carrier: String,
    pub service: String,
    pub tracking_number: String,
    pub order_number: String,
    pub weight_grams: u32,
}

/// `1250` → `1.250 kg`: integer arithmetic, so no float rounding surprises.
fn format_weight(grams: u32) -> String {
    format!("{}.{:03} kg", grams / 1000, grams % 1000)
}

fn block(size: &LabelSize, x: u32, lines: u32) -> TextBlock {
    TextBlock {
        width_dots: size.width_dots.saturating_sub(x + size.scale(20)).max(1),
        max_lines: lines,
        align: Align::Left,
    }
}

impl ShippingLabel {
    pub fn to_zpl(&self, dpi: Dpi) -> Result<Vec<u8>, ZplError> {
        let size = LabelSize::four_by_six(dpi);
        let s = |dots| size.scale(dots);
        let full_width = size.width_dots;
        let font = Font::SCALABLE;
        let mut label = Label::new(size);

        label
            .text(s(20), s(16), font, s(20), "FROM")?
            .text_block(
                s(20),
                s(40),
                font,
                s(22),
                block(&size, s(20), 5),
                &self.ship_from.text(),
            )?
            .rect(0, s(170), full_width, s(3), s(3))?
            .text(s(20), s(186), font, s(20), "SHIP TO")?
            .text_block(
                s(20),
                s(212),
                font,
                s(38),
                block(&size, s(20), 6),
                &self.ship_to.text(),
            )?
            .rect(0, s(460), full_width, s(3), s(3))?
            .text(s(20), s(480), font, s(56), &self.carrier)?
            .text(s(20), s(545), font, s(32), &self.service)?
            .rect(0, s(595), full_width, s(3), s(3))?
            .text(s(20), s(612), font, s(22), "TRACKING #")?;
        let bars = BarStyle {
            height_dots: s(190),
            module_dots: s(2).min(10),
            human_readable: true,
        };
        label
            .code128(s(40), s(645), bars, &self.tracking_number)?
            .rect(0, s(900), full_width, s(3), s(3))?
            .text(
                s(20),
                s(925),
                font,
                s(32),
                &format!("Order {}", self.order_number),
            )?
            .text(
                s(20),
                s(975),
                font,
                s(32),
                &format!("Weight {}", format_weight(self.weight_grams)),
            )?;
        Ok(label.to_zpl())
    }
}

/// One line of a packing slip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackingLine {
    pub sku: String,
    pub name: String,
    pub quantity: u32,
}

/// A 4×6 inch packing slip; orders with more lines than fit print as
/// several labels, each marked "page n/m".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackingSlip {
    pub order_number: String,
    pub lines: Vec<PackingLine>,
}

impl PackingSlip {
    /// Lines that fit under the header of a 4×6 slip, two text rows each.
    pub const LINES_PER_PAGE: usize = 14;

    pub fn to_zpl(&self, dpi: Dpi) -> Result<Vec<u8>, ZplError> {
        let pages: Vec<&[PackingLine]> = if self.lines.is_empty() {
            vec![&[]]
        } else {
            self.lines.chunks(Self::LINES_PER_PAGE).collect()
        };
        let mut out = Vec::new();
        for (index, lines) in pages.iter().enumerate() {
            let page = format!("page {}/{}", index + 1, pages.len());
            out.extend(self.page(dpi, lines, &page)?);
        }
        Ok(out)
    }

    fn page(&self, dpi: Dpi, lines: &[PackingLine], page: &str) -> Result<Vec<u8>, ZplError> {
        let size = LabelSize::four_by_six(dpi);
        let s = |dots| size.scale(dots);
        let font = Font::SCALABLE;
        let mut label = Label::new(size);
        let bars = BarStyle {
            height_dots: s(70),
            module_dots: s(2).min(10),
            human_readable: false,
        };
        label
            .text(s(20), s(20), font, s(44), "PACKING SLIP")?
            .text(s(600), s(30), font, s(24), page)?
            .text(
                s(20),
                s(80),
                font,
                s(32),
                &format!("Order {}", self.order_number),
            )?
            .code128(s(20), s(125), bars, &self.order_number)?
            .rect(0, s(215), size.width_dots, s(3), s(3))?
            .text(s(20), s(228), font, s(24), "QTY")?
            .text(s(100), s(228), font, s(24), "SKU")?
            .text(s(330), s(228), font, s(24), "ITEM")?
            .rect(0, s(260), size.width_dots, s(2), s(2))?;
        let row_height = 66;
        for (row, line) in (0u32..).zip(lines) {
            let y = s(275 + row * row_height);
            label
                .text(s(20), y, font, s(28), &line.quantity.to_string())?
                .text(s(100), y, font, s(24), &line.sku)?
                .text_block(s(330), y, font, s(24), block(&size, s(330), 2), &line.name)?;
        }
        Ok(label.to_zpl())
    }
}

/// A shelf, bin or item label: a Code 128 of the code and its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemLabel {
    /// The SKU or bin code the barcode carries.
    pub code: String,
    /// The big human line: the bin name, or the item's name.
    pub title: String,
    /// A smaller line under it (a description, a zone), if any.
    pub detail: Option<String>,
}

impl ItemLabel {
    /// Lays the label out proportionally to `size`: bars in the top half,
    /// text under them.
    pub fn to_zpl(&self, size: LabelSize) -> Result<Vec<u8>, ZplError> {
        let margin = size.scale(16);
        let height = size.height_dots;
        let bars = BarStyle {
            height_dots: (height * 2 / 5).max(1),
            module_dots: size.scale(2).min(10),
            human_readable: true,
        };
        let title_y = height * 2 / 5 + margin + height / 7;
        let mut label = Label::new(size);
        label
            .code128(margin, margin, bars, &self.code)?
            .text_block(
                margin,
                title_y,
                Font::SCALABLE,
                (height / 7).max(1),
                block(&size, margin, 1),
                &self.title,
            )?;
        if let Some(detail) = &self.detail {
            let detail_y = title_y + height / 7 + margin / 2;
            label.text(
                margin,
                detail_y,
                Font::SCALABLE,
                (height / 10).max(1),
                detail,
            )?;
        }
        Ok(label.to_zpl())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: &[u8]) -> String {
        String::from_utf8(bytes.to_vec()).expect("ZPL is ASCII")
    }

    fn shipping() -> ShippingLabel {
        ShippingLabel {
            ship_from: Address {
                name: "Depot Warehouse".into(),
                lines: vec!["1 Dock Road".into(), "75001 Paris".into()],
            },
            ship_to: Address {
                name: "Zoë ^Customer~".into(),
                lines: vec!["2 Rue_Haute".into(), "1000 Bruxelles".into()],
            },
            carrier: "UPS".into(),
            service: "Express Saver".into(),
            tracking_number: "1Z999AA10123456784".into(),
            order_number: "SO-1042".into(),
            weight_grams: 1250,
        }
    }

    #[test]
    fn weight_formatting() {
        assert_eq!(format_weight(0), "0.000 kg");
        assert_eq!(format_weight(1250), "1.250 kg");
        assert_eq!(format_weight(30_005), "30.005 kg");
    }

    #[test]
    fn shipping_label_is_one_escaped_format() {
        let zpl = text(&shipping().to_zpl(Dpi::D203).expect("valid label"));
        assert!(zpl.starts_with("^XA^CI28^PW812^LL1218"));
        assert_eq!(zpl.matches("^XA").count(), 1);
        assert!(zpl.ends_with("^XZ\n"));
        assert!(zpl.contains("^FDZo_C3_AB _5ECustomer_7E\\&2 Rue_5FHaute\\&1000 Bruxelles^FS"));
        assert!(zpl.contains("^FD>:1Z999AA1>50123456784^FS"));
        assert!(zpl.contains("^FDOrder SO-1042^FS"));
        assert!(zpl.contains("^FDWeight 1.250 kg^FS"));
        assert!(!zpl.contains('~'));
    }

    #[test]
    fn shipping_label_scales_with_resolution() {
        let zpl = text(&shipping().to_zpl(Dpi::D300).expect("valid label"));
        assert!(zpl.starts_with("^XA^CI28^PW1200^LL1800"));
        // The carrier line: 56 dots at 203 dpi is 84 at 300.
        assert!(zpl.contains("^A0N,84,84^FH^FDUPS^FS"));
    }

    #[test]
    fn shipping_label_with_unencodable_tracking_number_fails() {
        let mut label = shipping();
        label.tracking_number = "1Z–99".into();
        assert_eq!(
            label.to_zpl(Dpi::D203),
            Err(ZplError::NotCode128 { ch: '–' })
        );
    }

    fn slip(lines: usize) -> PackingSlip {
        PackingSlip {
            order_number: "SO-7".into(),
            lines: (0..lines)
                .map(|i| PackingLine {
                    sku: format!("SKU-{i}"),
                    name: format!("Item number {i}"),
                    quantity: u32::try_from(i).expect("small") + 1,
                })
                .collect(),
        }
    }

    #[test]
    fn packing_slip_paginates() {
        let zpl = text(&slip(15).to_zpl(Dpi::D203).expect("valid slip"));
        assert_eq!(zpl.matches("^XA").count(), 2);
        assert!(zpl.contains("^FDpage 1/2^FS"));
        assert!(zpl.contains("^FDpage 2/2^FS"));
        assert!(zpl.contains("^FDSKU-14^FS"));
        assert!(zpl.contains("^FDItem number 13^FS"));
    }

    #[test]
    fn packing_slip_single_and_empty() {
        let full = text(
            &slip(PackingSlip::LINES_PER_PAGE)
                .to_zpl(Dpi::D203)
                .expect("valid"),
        );
        assert_eq!(full.matches("^XA").count(), 1);
        let empty = text(&slip(0).to_zpl(Dpi::D203).expect("valid"));
        assert_eq!(empty.matches("^XA").count(), 1);
        assert!(empty.contains("^FDpage 1/1^FS"));
    }

    #[test]
    fn item_label() {
        let item = ItemLabel {
            code: "A-01-03".into(),
            title: "Bin A-01-03".into(),
            detail: Some("Zone A, cold".into()),
        };
        let zpl = text(
            &item
                .to_zpl(LabelSize::from_mm(50, 25, Dpi::D203))
                .expect("valid"),
        );
        assert!(zpl.contains("^BCN,80,Y,N,N,N^FH^FD>:A-01-03^FS"));
        assert!(zpl.contains("^FDBin A-01-03^FS"));
        assert!(zpl.contains("^FDZone A, cold^FS"));
    }
}
