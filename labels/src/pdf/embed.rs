//! The vendored fonts a PDF embeds: the glyphs each document uses, cut
//! down to them, with the CIDs and /ToUnicode maps that keep the text
//! extractable as given.

use super::*;

/// The vendored fonts a document uses, and the glyphs of each.
#[derive(Default)]
pub(super) struct Embedded {
    fonts: BTreeMap<FontKey, UsedFont>,
}

impl Embedded {
    /// Writes every font the document used into `doc`, each named in the
    /// page resources' `fonts`.
    pub(super) fn write(
        &mut self,
        doc: &mut Document,
        fonts: &mut Dictionary,
    ) -> Result<(), RenderError> {
        for (key, used) in std::mem::take(&mut self.fonts) {
            fonts.set(key.postscript_name(), Object::Reference(used.id));
            used.write(key, doc)?;
        }
        Ok(())
    }

    /// The CID that draws `g` as `text`, and the glyph's width in ems;
    /// `None` where the font did not parse (see `fonts::FONTS`).
    pub(super) fn cid(&mut self, g: &Glyph, text: &str, doc: &mut Document) -> Option<(u16, f32)> {
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
