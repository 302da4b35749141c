//! PDF backend: draws layout pages with printpdf 0.7 and the two built-in
//! Helvetica fonts (nothing embedded, so files stay a few kilobytes).
//!
//! Text is written as WinAnsi bytes in literal strings (not printpdf's
//! `write_text`, which silently drops characters the font lacks): characters
//! outside WinAnsi are printed as '?', and the text stays searchable in the
//! uncompressed content streams. Barcodes are filled rectangles, one per
//! bar, so they print sharp at any resolution.

use super::RenderError;
use super::layout::{Bars, Item, Page, Paint, Square, Text};
use super::metrics::winansi_bytes;
use printpdf::lopdf::content::Operation;
use printpdf::lopdf::{Object, StringFormat};
use printpdf::path::PaintMode;
use printpdf::{
    BuiltinFont, Color, Greyscale, IndirectFontRef, Mm, PdfDocument, PdfLayerReference, Pt, Rect,
};

/// Top of the em box to the baseline: Helvetica's ascender is 0.718 em; a
/// little more keeps accents inside the box the layout reserved.
const ASCENT: f32 = 0.78;

struct Fonts {
    regular: IndirectFontRef,
    bold: IndirectFontRef,
}

fn pdf_error(e: impl std::fmt::Display) -> RenderError {
    RenderError::Pdf(e.to_string())
}

fn mm(pt: f32) -> Mm {
    Mm::from(Pt(pt))
}

pub(crate) fn render(title: &str, pages: &[Page]) -> Result<Vec<u8>, RenderError> {
    let Some(first) = pages.first() else {
        return Err(RenderError::Pdf(
            "a document needs at least one page".into(),
        ));
    };
    let (doc, page0, layer0) =
        PdfDocument::new(title, mm(first.width), mm(first.height), "content");
    let doc = doc.with_producer("Depot").with_creator("Depot");
    let fonts = Fonts {
        regular: doc
            .add_builtin_font(BuiltinFont::Helvetica)
            .map_err(pdf_error)?,
        bold: doc
            .add_builtin_font(BuiltinFont::HelveticaBold)
            .map_err(pdf_error)?,
    };
    for (i, page) in pages.iter().enumerate() {
        let (page_index, layer_index) = if i == 0 {
            (page0, layer0)
        } else {
            doc.add_page(mm(page.width), mm(page.height), "content")
        };
        let layer = doc.get_page(page_index).get_layer(layer_index);
        draw_page(&layer, page, &fonts);
    }
    doc.save_to_bytes().map_err(pdf_error)
}

fn draw_page(layer: &PdfLayerReference, page: &Page, fonts: &Fonts) {
    // Layout y runs down from the top; PDF y runs up from the bottom.
    let flip = |y: f32| page.height - y;
    for item in &page.items {
        match item {
            Item::Text(t) => text(layer, t, fonts, flip(t.y + ASCENT * t.size)),
            Item::Rect { x, y, w, h, paint } => {
                let rect = Rect::new(mm(*x), mm(flip(y + h)), mm(x + w), mm(flip(*y)));
                match paint {
                    Paint::Fill(grey) => {
                        layer.set_fill_color(grey_color(*grey));
                        layer.add_rect(rect.with_mode(PaintMode::Fill));
                        layer.set_fill_color(grey_color(0.0));
                    }
                    Paint::Stroke(line) => {
                        layer.set_outline_thickness(*line);
                        layer.add_rect(rect.with_mode(PaintMode::Stroke));
                    }
                }
            }
            Item::Bars(b) => bars(layer, b, flip(b.y + b.height)),
            Item::Square(q) => square(layer, q, &flip),
        }
    }
}

fn grey_color(level: f32) -> Color {
    Color::Greyscale(Greyscale::new(level, None))
}

fn text(layer: &PdfLayerReference, t: &Text, fonts: &Fonts, baseline: f32) {
    let font = if t.bold { &fonts.bold } else { &fonts.regular };
    layer.begin_text_section();
    layer.set_font(font, t.size);
    layer.set_text_cursor(mm(t.x), mm(baseline));
    layer.add_operation(Operation::new(
        "Tj",
        vec![Object::String(
            winansi_bytes(&t.text),
            StringFormat::Literal,
        )],
    ));
    layer.end_text_section();
}

/// One filled rectangle per horizontal run of dark modules.
fn square(layer: &PdfLayerReference, q: &Square, flip: &dyn Fn(f32) -> f32) {
    let m = &q.matrix;
    for row in 0..m.size {
        let top = q.y + row as f32 * q.module;
        let mut col = 0;
        while col < m.size {
            if !m.is_dark(col, row) {
                col += 1;
                continue;
            }
            let start = col;
            while col < m.size && m.is_dark(col, row) {
                col += 1;
            }
            let x0 = q.x + start as f32 * q.module;
            let x1 = q.x + col as f32 * q.module;
            let rect = Rect::new(mm(x0), mm(flip(top + q.module)), mm(x1), mm(flip(top)));
            layer.add_rect(rect.with_mode(PaintMode::Fill));
        }
    }
}

/// One filled rectangle per run of dark modules.
fn bars(layer: &PdfLayerReference, b: &Bars, bottom: f32) {
    let top = bottom + b.height;
    let mut i = 0;
    let bits = &b.symbol.bits;
    while i < bits.len() {
        if bits[i] == 0 {
            i += 1;
            continue;
        }
        let start = i;
        while i < bits.len() && bits[i] == 1 {
            i += 1;
        }
        let x0 = b.x + start as f32 * b.module;
        let x1 = b.x + i as f32 * b.module;
        layer.add_rect(Rect::new(mm(x0), mm(bottom), mm(x1), mm(top)).with_mode(PaintMode::Fill));
    }
}

#[cfg(test)]
mod tests {
    use super::super::{RenderError, fixtures, manifest_pdf, packing_slip_pdf, shipping_label_pdf};
    use printpdf::lopdf::Document;

    fn well_formed(pdf: &[u8]) {
        assert!(pdf.starts_with(b"%PDF-"));
        let end = String::from_utf8_lossy(&pdf[pdf.len().saturating_sub(32)..]).into_owned();
        assert!(end.trim_end().ends_with("%%EOF"), "{end}");
    }

    fn pages_of(pdf: &[u8]) -> Result<(Document, usize), Box<dyn std::error::Error>> {
        let doc = Document::load_mem(pdf)?;
        let n = doc.get_pages().len();
        Ok((doc, n))
    }

    fn contains(pdf: &[u8], needle: &str) -> bool {
        pdf.windows(needle.len()).any(|w| w == needle.as_bytes())
    }

    #[test]
    fn label_pdf_is_one_4x6_page_with_text_and_bars() -> Result<(), Box<dyn std::error::Error>> {
        let pdf = shipping_label_pdf(&fixtures::label())?;
        well_formed(&pdf);
        let (doc, n) = pages_of(&pdf)?;
        assert_eq!(n, 1);
        let text = doc.extract_text(&[1])?;
        assert!(text.contains("1Z999AA10123456784-01"), "{text}");
        assert!(text.contains("Ada Lovelace"));
        assert!(contains(&pdf, "(1Z999AA10123456784-01) Tj"));
        assert!(contains(&pdf, "/MediaBox[0 0 288.0") && contains(&pdf, " 432.0"));
        // 16 symbols of 3 bars plus the 4-bar stop: 52 bar rectangles.
        let rects = String::from_utf8_lossy(&pdf).matches(" re\n").count();
        assert!(rects >= 52, "{rects}");
        Ok(())
    }

    #[test]
    fn data_code_128_cannot_carry_does_not_fail_the_pdf() -> Result<(), RenderError> {
        let mut label = fixtures::label();
        label.piece_number = "ÉTÉ".into();
        assert!(shipping_label_pdf(&label)?.starts_with(b"%PDF-"));
        Ok(())
    }

    #[test]
    fn non_winansi_text_becomes_question_marks() -> Result<(), Box<dyn std::error::Error>> {
        let mut label = fixtures::label();
        label.ship_to.name = "Łukasz (東京)".into();
        let pdf = shipping_label_pdf(&label)?;
        assert!(contains(&pdf, "(?ukasz \\(??\\)) Tj") || contains(&pdf, "(?ukasz (??)) Tj"));
        Ok(())
    }

    #[test]
    fn slip_pdf_paginates() -> Result<(), Box<dyn std::error::Error>> {
        let short = packing_slip_pdf(&fixtures::slip(4))?;
        well_formed(&short);
        assert_eq!(pages_of(&short)?.1, 1);
        let long = packing_slip_pdf(&fixtures::slip(100))?;
        well_formed(&long);
        let (doc, n) = pages_of(&long)?;
        assert_eq!(n, 3);
        let last = doc.extract_text(&[3])?;
        assert!(last.contains("Widget 100"), "{last}");
        assert!(last.contains("Page 3 of 3"));
        Ok(())
    }

    #[test]
    fn manifest_pdf_paginates_with_totals() -> Result<(), Box<dyn std::error::Error>> {
        let pdf = manifest_pdf(&fixtures::manifest(70))?;
        well_formed(&pdf);
        let (doc, n) = pages_of(&pdf)?;
        assert_eq!(n, 2);
        let last = doc.extract_text(&[2])?;
        assert!(last.contains("70 shipments"), "{last}");
        assert!(last.contains("Driver signature"));
        Ok(())
    }

    /// Writes sample documents for a visual check:
    /// `SAMPLES=1 cargo test -p depot-wms --lib render::pdf::tests::samples`.
    #[test]
    fn samples() -> Result<(), Box<dyn std::error::Error>> {
        if std::env::var_os("SAMPLES").is_none() {
            return Ok(());
        }
        let dir = std::env::temp_dir().join("depot-render");
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join("label.pdf"),
            shipping_label_pdf(&fixtures::label())?,
        )?;
        std::fs::write(dir.join("slip.pdf"), packing_slip_pdf(&fixtures::slip(60))?)?;
        std::fs::write(
            dir.join("manifest.pdf"),
            manifest_pdf(&fixtures::manifest(70))?,
        )?;
        let mut odd = fixtures::label();
        odd.carrier = "Deutsche Post DHL Parcel International".into();
        odd.service = "Warenpost International Premium Tracked".into();
        odd.ship_to.name = "Zoë Ångström-Łukasiewicz, Müller & Söhne Ltd (東京)".into();
        odd.ship_to.line1 = "Very Long Street Name Number 12345, Building C, Floor 7".into();
        odd.ship_to.region = Some("Île-de-France".into());
        odd.tracking_number = "00340123450000000018".into();
        odd.package.dimensions_mm = Some((1205, 800, 1455));
        std::fs::write(dir.join("label-odd.pdf"), shipping_label_pdf(&odd)?)?;
        let zpl = super::super::shipping_label_zpl(&fixtures::label());
        std::fs::write(dir.join("label.zpl"), zpl)?;
        let slip = super::super::packing_slip_zpl(&fixtures::slip(20));
        std::fs::write(dir.join("slip.zpl"), slip)?;
        Ok(())
    }
}
