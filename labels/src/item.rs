//! The 50×25 mm item label (a shelf, a bin or a tote): the SKU as a
//! barcode and in clear, the name, and a smaller line under it, laid out
//! once for ZPL and PDF like every other document here.
//!
//! The symbol is chosen as everywhere ([`Page::code`]): Code 128 where the
//! SKU is printable ASCII and fits the label's width at a readable module
//! size, else a QR code of it, else none, and the SKU in clear stands
//! alone.

use super::ItemLabel;
use super::layout::{Align, Page, bold, regular};

/// 50×25 mm in points: 400×200 dots at 203 dpi, a common roll size.
pub(crate) const WIDTH: f32 = 50.0 * 72.0 / 25.4;
pub(crate) const HEIGHT: f32 = 25.0 * 72.0 / 25.4;
/// Kept clear left and right: thermal printers do not print to the edge.
const MARGIN: f32 = 6.0;
/// Widest module: 3 dots (0.375 mm). A short SKU would fit wider bars, but
/// a symbol wider than a hand scanner's window at shelf distance reads
/// worse, not better.
const MAX_MODULE_DOTS: u32 = 3;
/// The symbol's box: its top and height (about 10 mm of bars).
const BARS_Y: f32 = 4.0;
const BARS_HEIGHT: f32 = 28.0;

/// The label page. What could not be printed whole is in its `cut`.
pub(crate) fn layout(l: &ItemLabel) -> Page {
    let mut p = Page::new(WIDTH, HEIGHT);
    let inner = WIDTH - 2.0 * MARGIN;
    // The quiet zones reach into the margins, which is why the symbol gets
    // the full label width (as on the shipping label).
    p.code(0.0, BARS_Y, WIDTH, BARS_HEIGHT, MAX_MODULE_DOTS, &l.sku);
    let below = BARS_Y + BARS_HEIGHT + 1.0;
    p.text_shrink(MARGIN, below, inner, bold(9.0), 6.0, Align::Center, &l.sku);
    // The name, shrunk before it is cut: it is what a picker reads.
    p.text_shrink(
        MARGIN,
        below + 11.0,
        inner,
        bold(10.0),
        6.0,
        Align::Left,
        &l.name,
    );
    if let Some(detail) = &l.detail {
        p.text_shrink(
            MARGIN,
            below + 23.0,
            inner,
            regular(7.0),
            5.0,
            Align::Left,
            detail,
        );
    }
    p
}

#[cfg(test)]
mod tests {
    use super::super::layout::{DOT, Item, QUIET_MODULES};
    use super::super::{item_label_pdf, item_label_zpl, readback};
    use super::*;
    use rxing::BarcodeFormat::{CODE_128, QR_CODE};

    fn bin() -> ItemLabel {
        ItemLabel {
            sku: "A-01-03".into(),
            name: "Bin A-01-03".into(),
            detail: Some("Zone A, cold".into()),
        }
    }

    #[test]
    fn is_400_by_200_dots() {
        assert_eq!(
            ((WIDTH / DOT).round(), (HEIGHT / DOT).round()),
            (400.0, 200.0)
        );
    }

    #[test]
    fn everything_is_on_the_label_and_inside_it() {
        let long = ItemLabel {
            sku: "SKU-0000000042".into(),
            name: "Heavy duty stainless steel shelf bracket, left hand, 300 mm".into(),
            detail: Some("4006381333931".into()),
        };
        for label in [bin(), long] {
            let page = layout(&label);
            let texts = page.texts();
            assert!(texts.contains(&label.sku.as_str()), "{texts:?}");
            assert!(
                texts
                    .iter()
                    .any(|t| t.starts_with("Bin") || t.starts_with("Heavy"))
            );
            assert_eq!(texts.len(), 3, "{texts:?}");
            let bars = page.items.iter().filter(|i| matches!(i, Item::Bars(_)));
            assert_eq!(bars.count(), 1);
            for item in &page.items {
                match item {
                    Item::Text(t) => {
                        assert!(t.x >= 0.0 && t.y >= 0.0 && t.y + t.size <= HEIGHT, "{t:?}")
                    }
                    Item::Bars(b) => {
                        let quiet = QUIET_MODULES as f32 * b.module;
                        let end = b.x + b.symbol.modules() as f32 * b.module;
                        assert!(b.x >= quiet && end + quiet <= WIDTH, "{} {}", b.x, end);
                        assert!(b.y + b.height <= HEIGHT);
                    }
                    other => panic!("only text and bars: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn zpl_is_one_format_with_the_sku_as_code_128() {
        let zpl = item_label_zpl(&bin());
        assert!(
            zpl.starts_with("^XA\n^CI28\n^PW400\n^LL200\n^LH0,0\n"),
            "{zpl}"
        );
        assert!(zpl.trim_end().ends_with("^XZ"));
        assert_eq!(zpl.matches("^XA").count(), 1);
        assert!(zpl.contains("^PW400") && zpl.contains("^LL200"), "{zpl}");
        assert!(
            zpl.contains("^BCN,") && zpl.contains("^FH_^FD>:A-01-03^FS"),
            "{zpl}"
        );
        assert!(zpl.contains("^FDBin A-01-03^FS"), "{zpl}");
        assert!(zpl.contains("^FDZone A, cold^FS"), "{zpl}");
        assert!(!zpl.contains('~'));
        // The bars' data escaped like any field's, '>' as its invocation code.
        let mut odd = bin();
        odd.sku = "BIN_A>1".into();
        let zpl = item_label_zpl(&odd);
        assert!(
            zpl.contains("^BY3^BCN,") && zpl.contains("^FH_^FD>:BIN_5FA>01^FS"),
            "{zpl}"
        );
    }

    #[test]
    fn the_barcode_reads_back_as_the_sku() {
        let found = readback::decode(&layout(&bin()));
        assert_eq!(found, [(CODE_128, "A-01-03".to_owned())]);
        // Beyond Code 128: a QR code of the UTF-8 text.
        let mut accented = bin();
        accented.sku = "ÉTÉ-7".into();
        let found = readback::decode(&layout(&accented));
        assert_eq!(found, [(QR_CODE, "ÉTÉ-7".to_owned())]);
    }

    #[test]
    fn pdf_is_one_page_of_50_by_25_mm() -> Result<(), Box<dyn std::error::Error>> {
        let pdf = item_label_pdf(&bin())?;
        assert!(pdf.starts_with(b"%PDF-"));
        let doc = lopdf::Document::load_mem(&pdf)?;
        assert_eq!(doc.get_pages().len(), 1);
        let text = doc.extract_text(&[1])?;
        assert!(
            text.contains("Bin A-01-03") && text.contains("Zone A, cold"),
            "{text}"
        );
        Ok(())
    }
}
