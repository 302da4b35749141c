//! Pages drawn into 203 dpi bitmaps for tests, and every barcode on them
//! read back with rxing, a decoder no one here wrote: what a scanner would
//! read off the printed label. Text is not drawn (the PDF tests check it).

use super::layout::{DOT, Item, Page, Paint};
use rxing::{BarcodeFormat, DecodeHintValue, DecodeHints};
use std::collections::HashSet;

pub(crate) struct Bitmap {
    pub width: usize,
    pub height: usize,
    /// Row by row, 0 black, 255 white.
    pub luma: Vec<u8>,
}

impl Bitmap {
    fn fill(&mut self, x: f32, y: f32, w: f32, h: f32) {
        let px = |v: f32| (v / DOT).round().max(0.0) as usize;
        let (x0, y0) = (px(x), px(y));
        let (x1, y1) = (px(x + w).min(self.width), px(y + h).min(self.height));
        for row in y0..y1 {
            for col in x0..x1 {
                self.luma[row * self.width + col] = 0;
            }
        }
    }
}

/// The page's rules, boxes, bars and 2D symbols at 203 dpi.
pub(crate) fn draw(page: &Page) -> Bitmap {
    let width = (page.width / DOT).round() as usize;
    let height = (page.height / DOT).round() as usize;
    let mut b = Bitmap {
        width,
        height,
        luma: vec![255; width * height],
    };
    for item in &page.items {
        match item {
            Item::Text(_) => {}
            Item::Rect {
                x,
                y,
                w,
                h,
                paint: Paint::Fill(grey),
            } => {
                if *grey < 0.5 {
                    b.fill(*x, *y, *w, *h);
                }
            }
            Item::Rect {
                x,
                y,
                w,
                h,
                paint: Paint::Stroke(t),
            } => {
                b.fill(*x, *y, *w, *t);
                b.fill(*x, y + h - t, *w, *t);
                b.fill(*x, *y, *t, *h);
                b.fill(x + w - t, *y, *t, *h);
            }
            Item::Bars(bars) => {
                for (i, bit) in bars.symbol.bits.iter().enumerate() {
                    if *bit == 1 {
                        let x = bars.x + i as f32 * bars.module;
                        b.fill(x, bars.y, bars.module, bars.height);
                    }
                }
            }
            Item::Square(q) => {
                for row in 0..q.matrix.size {
                    for col in 0..q.matrix.size {
                        if q.matrix.is_dark(col, row) {
                            let x = q.x + col as f32 * q.module;
                            let y = q.y + row as f32 * q.module;
                            b.fill(x, y, q.module, q.module);
                        }
                    }
                }
            }
        }
    }
    b
}

/// Every barcode on the page as rxing reads it, as (format, text), each
/// symbol drawn alone on white with room around it, as a scanner aimed at
/// it sees it. GS1-128 symbols come back with their FNC1 dropped and the
/// AI in the text ("00" then the SSCC), as a scanner in GS1 mode sends
/// them. A symbol that does not read is absent.
pub(crate) fn decode(page: &Page) -> Vec<(BarcodeFormat, String)> {
    let mut out: Vec<(BarcodeFormat, String)> = page
        .items
        .iter()
        .filter(|i| matches!(i, Item::Bars(_) | Item::Square(_)))
        .filter_map(|item| {
            let alone = Page {
                items: vec![item.clone()],
                ..Page::new(page.width, page.height)
            };
            let b = draw(&alone);
            let mut hints = DecodeHints::default()
                .with(DecodeHintValue::TryHarder(true))
                .with(DecodeHintValue::PossibleFormats(HashSet::from([
                    BarcodeFormat::CODE_128,
                    BarcodeFormat::QR_CODE,
                ])));
            rxing::helpers::detect_in_luma_with_hints(
                b.luma,
                b.width as u32,
                b.height as u32,
                None,
                &mut hints,
            )
            .ok()
            .map(|r| (*r.getBarcodeFormat(), r.getText().to_owned()))
        })
        .collect();
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out.dedup();
    out
}
