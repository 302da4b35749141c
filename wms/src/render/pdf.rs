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
    for (key, used) in std::mem::take(&mut embedded.fonts) {
        font_resources.set(key.postscript_name(), Object::Reference(used.id));
        used.write(key, &mut doc)?;
    }
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

/// The vendored fonts a document uses, and the glyphs of each.
#[derive(Default)]
struct Embedded {
    fonts: BTreeMap<FontKey, UsedFont>,
}

impl Embedded {
    /// The CID that draws `g` as `text`, and the glyph's width in ems;
    /// `None` where the font did not parse (see `fonts::FONTS`).
    fn cid(&mut self, g: &Glyph, text: &str, doc: &mut Document) -> Option<(u16, f32)> {
        let font = fonts::font(g.font)?;
        let used = self.fonts.entry(g.font).or_insert_with(|| UsedFont {
            id: doc.new_object_id(),
            remapper: subsetter::GlyphRemapper::new(),
            cids: HashMap::new(),
            glyphs: vec![(0, String::new())],
        });
        let width =
            f32::from(font.face.glyph_hor_advance(GlyphId(g.id)).unwrap_or(0)) / font.units_per_em;
        let new_gid = used.remapper.remap(g.id);
        let cid = if font.cff {
            // CFF: the CID is the glyph's id in the subset (the subsetter
            // makes the font CID-keyed with an identity charset), so a
            // glyph has one text: the first it was used for.
            if usize::from(new_gid) >= used.glyphs.len() {
                used.glyphs
                    .resize(usize::from(new_gid) + 1, (0, String::new()));
            }
            if let Some(slot) = used.glyphs.get_mut(usize::from(new_gid)) {
                slot.0 = g.id;
                if slot.1.is_empty() {
                    slot.1 = text.to_owned();
                }
            }
            new_gid
        } else {
            // TrueType: CIDs are ours, mapped to glyphs by /CIDToGIDMap, one
            // per glyph and text, so a glyph drawn for two characters (a
            // shared Arabic form, the .notdef box) extracts as each.
            let next = u16::try_from(used.glyphs.len()).ok()?;
            let cid = *used.cids.entry((g.id, text.to_owned())).or_insert(next);
            if cid == next {
                used.glyphs.push((g.id, text.to_owned()));
            }
            cid
        };
        Some((cid, width))
    }
}

struct UsedFont {
    /// The Type0 font dictionary's object.
    id: ObjectId,
    remapper: subsetter::GlyphRemapper,
    /// TrueType: the CID of each glyph and text.
    cids: HashMap<(u16, String), u16>,
    /// By CID: the glyph id in the vendored font and the text it stands
    /// for (CID 0 is .notdef).
    glyphs: Vec<(u16, String)>,
}

impl UsedFont {
    fn write(self, key: FontKey, doc: &mut Document) -> Result<(), RenderError> {
        let font = fonts::font(key).ok_or_else(|| pdf_error("font does not parse"))?;
        let subset = subsetter::subset(font.data, 0, &self.remapper).map_err(pdf_error)?;
        let em = font.units_per_em;
        let per_mille = |units: f32| units * 1000.0 / em;
        let name = format!("{}+{}", self.tag(), key.postscript_name());

        let file = if font.cff {
            // CIDFontType0C: the bare CFF table of the subset.
            let raw = ttf_parser::RawFace::parse(&subset, 0).map_err(pdf_error)?;
            let cff = raw
                .table(ttf_parser::Tag::from_bytes(b"CFF "))
                .ok_or_else(|| pdf_error("CFF subset without its CFF table"))?;
            let mut s = Stream::new(
                Dictionary::from_iter(vec![("Subtype", Object::Name(b"CIDFontType0C".to_vec()))]),
                cff.to_vec(),
            );
            s.compress().map_err(pdf_error)?;
            s
        } else {
            let length = i64::try_from(subset.len()).unwrap_or(i64::MAX);
            let mut s = Stream::new(
                Dictionary::from_iter(vec![("Length1", Object::Integer(length))]),
                subset,
            );
            s.compress().map_err(pdf_error)?;
            s
        };
        let file_id = doc.add_object(file);

        let face = &font.face;
        let bbox = face.global_bounding_box();
        let descriptor = Dictionary::from_iter(vec![
            ("Type", Object::Name(b"FontDescriptor".to_vec())),
            ("FontName", Object::Name(name.as_bytes().to_vec())),
            // Symbolic: glyphs are addressed by CID, not a standard encoding.
            ("Flags", Object::Integer(4)),
            (
                "FontBBox",
                Object::Array(vec![
                    real(per_mille(f32::from(bbox.x_min))),
                    real(per_mille(f32::from(bbox.y_min))),
                    real(per_mille(f32::from(bbox.x_max))),
                    real(per_mille(f32::from(bbox.y_max))),
                ]),
            ),
            ("ItalicAngle", Object::Integer(0)),
            ("Ascent", real(per_mille(f32::from(face.ascender())))),
            ("Descent", real(per_mille(f32::from(face.descender())))),
            (
                "CapHeight",
                real(per_mille(f32::from(
                    face.capital_height().unwrap_or(face.ascender()),
                ))),
            ),
            ("StemV", Object::Integer(if key.bold { 140 } else { 80 })),
            (
                if font.cff { "FontFile3" } else { "FontFile2" },
                Object::Reference(file_id),
            ),
        ]);
        let descriptor_id = doc.add_object(descriptor);

        // Widths by CID, as one array from CID 0.
        let widths: Vec<Object> = self
            .glyphs
            .iter()
            .map(|(gid, _)| {
                real(per_mille(f32::from(
                    face.glyph_hor_advance(GlyphId(*gid)).unwrap_or(0),
                )))
            })
            .collect();
        let mut cid_font = Dictionary::from_iter(vec![
            ("Type", Object::Name(b"Font".to_vec())),
            (
                "Subtype",
                Object::Name(if font.cff {
                    b"CIDFontType0".to_vec()
                } else {
                    b"CIDFontType2".to_vec()
                }),
            ),
            ("BaseFont", Object::Name(name.as_bytes().to_vec())),
            (
                "CIDSystemInfo",
                Object::Dictionary(Dictionary::from_iter(vec![
                    ("Registry", Object::string_literal("Adobe")),
                    ("Ordering", Object::string_literal("Identity")),
                    ("Supplement", Object::Integer(0)),
                ])),
            ),
            ("FontDescriptor", Object::Reference(descriptor_id)),
            ("W", Object::Array(vec![0.into(), Object::Array(widths)])),
        ]);
        if !font.cff {
            let map: Vec<u8> = self
                .glyphs
                .iter()
                .flat_map(|(gid, _)| self.remapper.get(*gid).unwrap_or(0).to_be_bytes())
                .collect();
            let mut s = Stream::new(Dictionary::new(), map);
            s.compress().map_err(pdf_error)?;
            cid_font.set("CIDToGIDMap", Object::Reference(doc.add_object(s)));
        }
        let cid_font_id = doc.add_object(cid_font);

        let mut to_unicode = Stream::new(Dictionary::new(), self.to_unicode().into_bytes());
        to_unicode.compress().map_err(pdf_error)?;
        let to_unicode_id = doc.add_object(to_unicode);

        doc.objects.insert(
            self.id,
            Object::Dictionary(Dictionary::from_iter(vec![
                ("Type", Object::Name(b"Font".to_vec())),
                ("Subtype", Object::Name(b"Type0".to_vec())),
                ("BaseFont", Object::Name(name.as_bytes().to_vec())),
                ("Encoding", Object::Name(b"Identity-H".to_vec())),
                (
                    "DescendantFonts",
                    Object::Array(vec![Object::Reference(cid_font_id)]),
                ),
                ("ToUnicode", Object::Reference(to_unicode_id)),
            ])),
        );
        Ok(())
    }

    /// The subset tag: six capital letters from the glyphs it holds, so
    /// that two different subsets of one font never share a name.
    fn tag(&self) -> String {
        // FNV-1a: stable across builds, unlike std's hasher.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for (gid, _) in &self.glyphs {
            for b in gid.to_be_bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
        (0..6)
            .map(|i| char::from(b'A' + ((h >> (i * 8)) % 26) as u8))
            .collect()
    }

    /// The /ToUnicode CMap: each CID to the text it was drawn for (CIDs of
    /// glyphs that stand for no character of their own are left out).
    fn to_unicode(&self) -> String {
        let entries: Vec<(usize, &str)> = self
            .glyphs
            .iter()
            .enumerate()
            .filter(|(_, (_, text))| !text.is_empty())
            .map(|(cid, (_, text))| (cid, text.as_str()))
            .collect();
        let mut out = String::from(
            "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n\
             /CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n\
             /CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n\
             1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n",
        );
        // At most 100 entries per block.
        for block in entries.chunks(100) {
            let _ = writeln!(out, "{} beginbfchar", block.len());
            for (cid, text) in block {
                let _ = write!(out, "<{cid:04X}> <");
                for unit in text.encode_utf16() {
                    let _ = write!(out, "{unit:04X}");
                }
                out.push_str(">\n");
            }
            out.push_str("endbfchar\n");
        }
        out.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::{
        Manifest, ManifestRow, PackageInfo, Party, RenderError, address_lines, corpus, fixtures,
        manifest_pdf, metrics::one_line, packing_slip_pdf, shipping_label_pdf,
    };
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
        let page = doc.get_object(doc.page_iter().next().ok_or("no page")?)?;
        let media_box = page.as_dict()?.get(b"MediaBox")?.as_array()?;
        let size: Vec<f32> = media_box
            .iter()
            .map(|v| v.as_float().or_else(|_| v.as_i64().map(|i| i as f32)))
            .collect::<Result<_, _>>()?;
        assert_eq!(size, [0.0, 0.0, 288.0, 432.0]);
        // Latin text embeds nothing: the built-in Helvetica draws it.
        assert!(!contains(&pdf, "FontFile"));
        assert!(pdf.len() < 8_000, "{}", pdf.len());
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

    /// Every page's text as lopdf reads it back: content stream order,
    /// each string through its font's encoding or /ToUnicode CMap.
    fn extract(pdf: &[u8]) -> Result<String, Box<dyn std::error::Error>> {
        let doc = lopdf::Document::load_mem(pdf)?;
        let pages: Vec<u32> = doc.get_pages().keys().copied().collect();
        Ok(doc.extract_text(&pages)?)
    }

    /// `s` without its whitespace: an address line wraps where it must (a
    /// space becomes a line break, a CJK line breaks between characters),
    /// and every character must still come back, in order.
    fn squash(s: &str) -> String {
        s.chars().filter(|c| !c.is_whitespace()).collect()
    }

    /// The recipient's lines as the documents print them.
    fn lines_of(party: &Party) -> Vec<String> {
        let mut lines = vec![one_line(&party.name)];
        lines.extend(address_lines(party).iter().map(|l| one_line(l)));
        lines
    }

    #[test]
    fn every_script_extracts_as_given() -> Result<(), Box<dyn std::error::Error>> {
        for (script, to) in corpus::parties() {
            let pdf = shipping_label_pdf(&corpus::label_to(&to))?;
            let text = extract(&pdf)?;
            for line in lines_of(&to) {
                assert!(
                    squash(&text).contains(&squash(&line)),
                    "{script}: {line:?} not in\n{text}"
                );
            }
            // Nothing is replaced: no '?' unless the data has one.
            assert!(!text.contains('?'), "{script}: {text}");
            assert!(pdf.len() < 40_000, "{script}: {} bytes", pdf.len());
        }
        Ok(())
    }

    #[test]
    fn slips_and_manifests_carry_every_script() -> Result<(), Box<dyn std::error::Error>> {
        let parties = corpus::parties();
        for (script, to) in &parties {
            let mut slip = fixtures::slip(3);
            slip.ship_to = to.clone();
            slip.lines[0].name = to.name.clone();
            let text = extract(&packing_slip_pdf(&slip)?)?;
            for line in lines_of(to) {
                assert!(
                    squash(&text).contains(&squash(&line)),
                    "{script}: {line:?} not in\n{text}"
                );
            }
        }
        let manifest = Manifest {
            packages: parties
                .iter()
                .enumerate()
                .map(|(i, (_, to))| ManifestRow {
                    tracking_number: format!("JD{i:016}"),
                    piece_number: format!("JD{i:016}"),
                    sscc: Some(fixtures::sscc(i)),
                    order_ref: format!("SO-{i}"),
                    package: PackageInfo {
                        index: 1,
                        count: 1,
                        weight_g: 1000,
                        dimensions_mm: None,
                    },
                    postal_code: to.postal_code.clone(),
                    city: to.city.clone(),
                    country: to.country.clone(),
                })
                .collect(),
            ..fixtures::manifest(0)
        };
        let text = extract(&manifest_pdf(&manifest)?)?;
        // What the layout printed is what must come back, and the city,
        // postcode and country of every package are printed whole (wrapped
        // in the narrow columns, never cut).
        for page in super::super::manifest::pages(&manifest) {
            for printed in page.texts() {
                assert!(text.contains(printed), "{printed:?} not in\n{text}");
            }
        }
        for (script, to) in &parties {
            for part in [&to.city, &to.postal_code, &to.country] {
                assert!(
                    squash(&text).contains(&squash(&one_line(part))),
                    "{script}: {part:?} not in\n{text}"
                );
            }
        }
        Ok(())
    }

    #[test]
    fn fonts_are_subset_cid_fonts() -> Result<(), Box<dyn std::error::Error>> {
        let mut label = fixtures::label();
        label.ship_to.name = "Ζωή 王小明 محمد".into();
        let pdf = shipping_label_pdf(&label)?;
        let doc = Document::load_mem(&pdf)?;
        let mut subtypes = Vec::new();
        for object in doc.objects.values() {
            let Ok(dict) = object.as_dict() else { continue };
            if dict.get(b"Subtype").and_then(|s| s.as_name()).ok() == Some(b"Type0".as_ref()) {
                assert_eq!(dict.get(b"Encoding")?.as_name()?, b"Identity-H");
                assert!(dict.get(b"ToUnicode").is_ok());
                let name = String::from_utf8_lossy(dict.get(b"BaseFont")?.as_name()?).into_owned();
                // A subset's name: six capitals, '+', the font.
                assert_eq!(name.find('+'), Some(6), "{name}");
                let cid =
                    doc.get_object(dict.get(b"DescendantFonts")?.as_array()?[0].as_reference()?)?;
                subtypes.push(cid.as_dict()?.get(b"Subtype")?.as_name()?.to_vec());
            }
        }
        subtypes.sort();
        // Noto Sans and Arabic (TrueType) and CJK (CFF), bold: the name.
        assert_eq!(
            subtypes,
            [
                b"CIDFontType0".to_vec(),
                b"CIDFontType2".to_vec(),
                b"CIDFontType2".to_vec()
            ]
        );
        // The CJK font alone is megabytes: subset, the label stays small.
        assert!(pdf.len() < 30_000, "{}", pdf.len());
        Ok(())
    }

    #[test]
    fn latin_beyond_winansi_is_drawn_not_replaced() -> Result<(), Box<dyn std::error::Error>> {
        let mut label = fixtures::label();
        label.ship_to.name = "Łukasz (東京)".into();
        let pdf = shipping_label_pdf(&label)?;
        assert!(!contains(&pdf, "?ukasz"));
        assert!(extract(&pdf)?.contains("Łukasz (東京)"));
        Ok(())
    }

    /// Characters outside WinAnsi that no vendored font has (emoji) print as
    /// an empty box but keep their character in the text layer.
    #[test]
    fn uncovered_characters_keep_their_text() -> Result<(), Box<dyn std::error::Error>> {
        let mut label = fixtures::label();
        label.ship_to.name = "Ada 😀 🏠 Lovelace".into();
        let text = extract(&shipping_label_pdf(&label)?)?;
        assert!(text.contains("Ada 😀 🏠 Lovelace"), "{text}");
        Ok(())
    }

    /// With poppler's pdftotext, where it is installed (`apt-get install
    /// poppler-utils`): every line comes back as given, except that
    /// poppler orders a line by the glyphs' positions. On a page written
    /// mostly left to right it wraps right-to-left text in U+202B…U+202C
    /// and gives a line mixing right-to-left words with digits or Latin as
    /// its runs from left to right, each run in logical order: those lines
    /// are checked run by run.
    #[test]
    fn pdftotext_reads_every_script() -> Result<(), Box<dyn std::error::Error>> {
        let probe = std::process::Command::new("pdftotext").arg("-v").output();
        if probe.is_err() {
            eprintln!("pdftotext not on PATH: skipped");
            return Ok(());
        }
        let dir = tempfile::tempdir()?;
        for (script, to) in corpus::parties() {
            let path = dir.path().join(format!("{script}.pdf"));
            std::fs::write(&path, shipping_label_pdf(&corpus::label_to(&to))?)?;
            let out = std::process::Command::new("pdftotext")
                .args(["-enc", "UTF-8"])
                .arg(&path)
                .arg("-")
                .output()?;
            assert!(out.status.success(), "{script}: {out:?}");
            let raw = String::from_utf8(out.stdout)?;
            let text: String = raw
                .chars()
                .filter(|c| !('\u{202A}'..='\u{202E}').contains(c))
                .collect();
            for line in lines_of(&to) {
                if !line.chars().any(is_rtl) {
                    assert!(
                        squash(&text).contains(&squash(&line)),
                        "{script}: {line:?} not in\n{raw}"
                    );
                    continue;
                }
                if script == "arabic" || script == "hebrew" {
                    eprintln!("{script}: given {line:?}");
                }
                for run in runs(&line) {
                    assert!(
                        squash(&text).contains(&squash(&run)),
                        "{script}: {run:?} of {line:?} not in\n{raw}"
                    );
                }
            }
            if script == "arabic" {
                eprintln!("pdftotext, arabic label:\n{raw}");
            }
        }
        Ok(())
    }

    fn is_rtl(c: char) -> bool {
        matches!(c, '\u{0590}'..='\u{08FF}' | '\u{FB1D}'..='\u{FDFF}' | '\u{FE70}'..='\u{FEFF}')
    }

    /// A line cut where it changes between right-to-left letters and
    /// anything else that is not a space or punctuation (digits, Latin),
    /// each piece trimmed of spaces and punctuation.
    fn runs(line: &str) -> Vec<String> {
        let mut runs: Vec<(bool, String)> = Vec::new();
        for c in line.chars() {
            let neutral = !c.is_alphanumeric();
            match runs.last_mut() {
                Some((_, run)) if neutral => run.push(c),
                Some((rtl, run)) if *rtl == is_rtl(c) => run.push(c),
                _ => runs.push((is_rtl(c), c.to_string())),
            }
        }
        runs.into_iter()
            .map(|(_, r)| r.trim_matches(|c: char| !c.is_alphanumeric()).to_owned())
            .filter(|r| !r.is_empty())
            .collect()
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
        assert!(n >= 7, "140 packages of 38 pt rows: {n} pages");
        let all: Vec<u32> = (1..=n as u32).collect();
        assert!(doc.extract_text(&all)?.contains("70 shipments"));
        let last = doc.extract_text(&[n as u32])?;
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
        for (script, to) in super::super::corpus::parties() {
            let label = super::super::corpus::label_to(&to);
            std::fs::write(
                dir.join(format!("label-{script}.pdf")),
                shipping_label_pdf(&label)?,
            )?;
            let zpl = super::super::shipping_label_zpl(&label);
            std::fs::write(dir.join(format!("label-{script}.zpl")), zpl)?;
        }
        Ok(())
    }
}
