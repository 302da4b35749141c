//! PDF backend: draws layout pages as a PDF written with lopdf.
//!
//! Text Helvetica can show (every character in WinAnsi) is written with
//! the two built-in Helvetica fonts, as WinAnsi bytes in literal strings:
//! nothing is embedded, so a Latin document stays a few kilobytes and
//! costs no shaping. Any other line is shaped (`shape`) and written with
//! the vendored Noto fonts as CID fonts (Type0, Identity-H), each cut per
//! document to the glyphs it uses (typst's subsetter): TrueType outlines
//! as CIDFontType2, the CJK font's CFF as CIDFontType0. Glyphs are written
//! in logical order (the order of the text), each placed where the shaper
//! put it, so right-to-left text is drawn right to left yet reads back in
//! the order it was given; a /ToUnicode CMap gives each glyph its
//! characters (a ligature all of them), and in the TrueType fonts a glyph
//! drawn for different characters gets a CID for each, so the text
//! extracts as given (in the CJK font, whose CIDs are its glyph ids, a
//! glyph keeps the first character it was drawn for: only compatibility
//! ideographs share a glyph with another character there). Barcodes are
//! filled rectangles, one per bar, so they print sharp at any resolution.
//!
//! Written with lopdf (printpdf's) directly rather than through printpdf,
//! whose external fonts are neither shaped nor subset and cannot be
//! replaced by font objects of our own.

use super::RenderError;
use super::fonts::{self, FontKey};
use super::layout::{Bars, Item, Page, Paint, Square, Text};
use super::metrics::{helvetica_draws, winansi_bytes};
use super::shape::{self, Glyph};
use printpdf::lopdf::content::{Content, Operation};
use printpdf::lopdf::{Dictionary, Document, Object, ObjectId, Stream, StringFormat};
use rustybuzz::ttf_parser::{self, GlyphId};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// Top of the em box to the baseline: Helvetica's ascender is 0.718 em; a
/// little more keeps accents inside the box the layout reserved. The ZPL
/// graphic fields use the same baseline.
pub(crate) const ASCENT: f32 = 0.78;

fn pdf_error(e: impl std::fmt::Display) -> RenderError {
    RenderError::Pdf(e.to_string())
}

fn real(v: f32) -> Object {
    Object::Real(v)
}

fn op(operator: &str, operands: Vec<Object>) -> Operation {
    Operation::new(operator, operands)
}

pub(crate) fn render(title: &str, pages: &[Page]) -> Result<Vec<u8>, RenderError> {
    if pages.is_empty() {
        return Err(RenderError::Pdf(
            "a document needs at least one page".into(),
        ));
    }
    let mut doc = Document::with_version("1.4");
    let pages_id = doc.new_object_id();
    let resources_id = doc.new_object_id();
    let mut embedded = Embedded::default();
    let mut kids = Vec::with_capacity(pages.len());
    for page in pages {
        let operations = draw_page(page, &mut embedded, &mut doc);
        let content = Content { operations }.encode().map_err(pdf_error)?;
        let content_id = doc.add_object(Stream::new(Dictionary::new(), content));
        let page_id = doc.add_object(Dictionary::from_iter(vec![
            ("Type", Object::Name(b"Page".to_vec())),
            ("Parent", Object::Reference(pages_id)),
            (
                "MediaBox",
                Object::Array(vec![
                    0.into(),
                    0.into(),
                    real(page.width),
                    real(page.height),
                ]),
            ),
            ("Resources", Object::Reference(resources_id)),
            ("Contents", Object::Reference(content_id)),
        ]));
        kids.push(Object::Reference(page_id));
    }

    let mut font_resources = Dictionary::new();
    for (name, base) in [
        ("Helvetica", "Helvetica"),
        ("Helvetica-Bold", "Helvetica-Bold"),
    ] {
        let id = doc.add_object(Dictionary::from_iter(vec![
            ("Type", Object::Name(b"Font".to_vec())),
            ("Subtype", Object::Name(b"Type1".to_vec())),
            ("BaseFont", Object::Name(base.as_bytes().to_vec())),
            ("Encoding", Object::Name(b"WinAnsiEncoding".to_vec())),
        ]));
        font_resources.set(name, Object::Reference(id));
    }
    embedded.write(&mut doc, &mut font_resources)?;
    doc.objects.insert(
        resources_id,
        Object::Dictionary(Dictionary::from_iter(vec![(
            "Font",
            Object::Dictionary(font_resources),
        )])),
    );
    let count = i64::try_from(kids.len()).unwrap_or(i64::MAX);
    doc.objects.insert(
        pages_id,
        Object::Dictionary(Dictionary::from_iter(vec![
            ("Type", Object::Name(b"Pages".to_vec())),
            ("Count", Object::Integer(count)),
            ("Kids", Object::Array(kids)),
        ])),
    );
    let catalog_id = doc.add_object(Dictionary::from_iter(vec![
        ("Type", Object::Name(b"Catalog".to_vec())),
        ("Pages", Object::Reference(pages_id)),
    ]));
    let info_id = doc.add_object(Dictionary::from_iter(vec![
        ("Title", text_string(title)),
        ("Producer", Object::string_literal("Depot")),
        ("Creator", Object::string_literal("Depot")),
    ]));
    doc.trailer.set("Root", Object::Reference(catalog_id));
    doc.trailer.set("Info", Object::Reference(info_id));
    let mut out = Vec::new();
    doc.save_to(&mut out).map_err(pdf_error)?;
    Ok(out)
}

/// A PDF text string: ASCII as is, anything else UTF-16BE with its byte
/// order mark.
fn text_string(s: &str) -> Object {
    if s.is_ascii() {
        return Object::string_literal(s);
    }
    let mut bytes = vec![0xFE, 0xFF];
    bytes.extend(s.encode_utf16().flat_map(u16::to_be_bytes));
    Object::String(bytes, StringFormat::Hexadecimal)
}

fn draw_page(page: &Page, embedded: &mut Embedded, doc: &mut Document) -> Vec<Operation> {
    // Layout y runs down from the top; PDF y runs up from the bottom.
    let flip = |y: f32| page.height - y;
    let mut ops = Vec::new();
    for item in &page.items {
        match item {
            Item::Text(t) if helvetica_draws(&t.text) => {
                helvetica_text(&mut ops, t, flip(t.y + ASCENT * t.size));
            }
            Item::Text(t) => {
                shaped_text(&mut ops, t, flip(t.y + ASCENT * t.size), embedded, doc);
            }
            Item::Rect { x, y, w, h, paint } => {
                let rect = vec![real(*x), real(flip(y + h)), real(*w), real(*h)];
                match paint {
                    Paint::Fill(grey) => {
                        ops.push(op("g", vec![real(*grey)]));
                        ops.push(op("re", rect));
                        ops.push(op("f", vec![]));
                        ops.push(op("g", vec![real(0.0)]));
                    }
                    Paint::Stroke(line) => {
                        ops.push(op("w", vec![real(*line)]));
                        ops.push(op("re", rect));
                        ops.push(op("S", vec![]));
                    }
                }
            }
            Item::Bars(b) => bars(&mut ops, b, flip(b.y + b.height)),
            Item::Square(q) => square(&mut ops, q, &flip),
        }
    }
    ops
}

fn helvetica_text(ops: &mut Vec<Operation>, t: &Text, baseline: f32) {
    let font = if t.bold {
        "Helvetica-Bold"
    } else {
        "Helvetica"
    };
    ops.push(op("BT", vec![]));
    ops.push(op(
        "Tf",
        vec![Object::Name(font.as_bytes().to_vec()), real(t.size)],
    ));
    ops.push(op("Td", vec![real(t.x), real(baseline)]));
    ops.push(op(
        "Tj",
        vec![Object::String(
            winansi_bytes(&t.text),
            StringFormat::Literal,
        )],
    ));
    ops.push(op("ET", vec![]));
}

/// A shaped line: glyphs in logical order, each string of glyphs that sit
/// where the previous one's advance leaves the pen in one `Tj`, a new text
/// matrix wherever the shaper moved a glyph (kerning, marks, right to
/// left).
fn shaped_text(
    ops: &mut Vec<Operation>,
    t: &Text,
    baseline: f32,
    embedded: &mut Embedded,
    doc: &mut Document,
) {
    let shaped = shape::shape(&t.text, t.bold);
    let mut glyphs: Vec<&Glyph> = shaped.glyphs.iter().collect();
    // Stable: glyphs of one cluster keep their drawing order.
    glyphs.sort_by_key(|g| g.text.start);
    ops.push(op("BT", vec![]));
    let mut font: Option<FontKey> = None;
    let mut run: Vec<u8> = Vec::new();
    // Where the pen is after the run so far, in ems from the line start.
    let mut pen: Option<(f32, f32)> = None;
    let flush = |ops: &mut Vec<Operation>, run: &mut Vec<u8>| {
        if !run.is_empty() {
            ops.push(op(
                "Tj",
                vec![Object::String(
                    std::mem::take(run),
                    StringFormat::Hexadecimal,
                )],
            ));
        }
    };
    for g in glyphs {
        let text = t.text.get(g.text.clone()).unwrap_or("");
        let Some((cid, width)) = embedded.cid(g, text, doc) else {
            continue;
        };
        if font != Some(g.font) {
            flush(ops, &mut run);
            ops.push(op(
                "Tf",
                vec![
                    Object::Name(g.font.postscript_name().as_bytes().to_vec()),
                    real(t.size),
                ],
            ));
            font = Some(g.font);
            pen = None;
        }
        let here = (g.x, g.y);
        let continues = pen.is_some_and(|(x, y)| (x - here.0).abs() < 1e-4 && y == here.1);
        if !continues {
            flush(ops, &mut run);
            ops.push(op(
                "Tm",
                vec![
                    real(1.0),
                    real(0.0),
                    real(0.0),
                    real(1.0),
                    real(t.x + g.x * t.size),
                    real(baseline + g.y * t.size),
                ],
            ));
        }
        run.extend(cid.to_be_bytes());
        // The PDF viewer advances by the glyph's width in the font.
        pen = Some((g.x + width, g.y));
    }
    flush(ops, &mut run);
    ops.push(op("ET", vec![]));
}

/// One filled rectangle per horizontal run of dark modules.
fn square(ops: &mut Vec<Operation>, q: &Square, flip: &dyn Fn(f32) -> f32) {
    let m = &q.matrix;
    for row in 0..m.size {
        let bottom = flip(q.y + (row + 1) as f32 * q.module);
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
            let w = (col - start) as f32 * q.module;
            ops.push(op(
                "re",
                vec![real(x0), real(bottom), real(w), real(q.module)],
            ));
            ops.push(op("f", vec![]));
        }
    }
}

/// One filled rectangle per run of dark modules.
fn bars(ops: &mut Vec<Operation>, b: &Bars, bottom: f32) {
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
        ops.push(op(
            "re",
            vec![real(x0), real(bottom), real(x1 - x0), real(b.height)],
        ));
        ops.push(op("f", vec![]));
    }
}

mod embed;
#[cfg(test)]
mod tests;

use embed::Embedded;
