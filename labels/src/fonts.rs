//! The vendored Noto fonts (labels/fonts/, see its README): which font draws
//! which character, parsed once for the life of the process.
//!
//! Text the PDF built-in Helvetica or the Zebra's resident font can draw
//! never comes here (see `metrics` and `zpl`): a Latin label costs no font
//! parsing at all, and the first label in another script pays it once
//! (the faces borrow the bytes compiled into the binary, so parsing only
//! reads table directories).

use rustybuzz::Face;
use std::sync::LazyLock;

/// A family of the vendored set. The order is the fallback order: a
/// character is drawn by the first family that has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Family {
    /// Noto Sans: Latin, Greek, Cyrillic and the common punctuation.
    Sans,
    Hebrew,
    Arabic,
    /// Noto Sans CJK SC, cut to GB 2312, JIS X 0208 and KS X 1001.
    Cjk,
}

const FAMILIES: [Family; 4] = [Family::Sans, Family::Hebrew, Family::Arabic, Family::Cjk];

/// One vendored font file: a family in a weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct FontKey {
    pub family: Family,
    pub bold: bool,
}

impl FontKey {
    pub const fn new(family: Family, bold: bool) -> Self {
        Self { family, bold }
    }

    fn index(self) -> usize {
        2 * self.family as usize + usize::from(self.bold)
    }

    /// The font's PostScript name, for the PDF font dictionaries.
    pub fn postscript_name(self) -> &'static str {
        match (self.family, self.bold) {
            (Family::Sans, false) => "NotoSans-Regular",
            (Family::Sans, true) => "NotoSans-Bold",
            (Family::Hebrew, false) => "NotoSansHebrew-Regular",
            (Family::Hebrew, true) => "NotoSansHebrew-Bold",
            (Family::Arabic, false) => "NotoSansArabic-Regular",
            (Family::Arabic, true) => "NotoSansArabic-Bold",
            (Family::Cjk, false) => "NotoSansCJKsc-Regular",
            (Family::Cjk, true) => "NotoSansCJKsc-Bold",
        }
    }
}

/// The font files, in `FontKey::index` order.
static DATA: [&[u8]; 8] = [
    include_bytes!("../fonts/NotoSans-Regular.ttf"),
    include_bytes!("../fonts/NotoSans-Bold.ttf"),
    include_bytes!("../fonts/NotoSansHebrew-Regular.ttf"),
    include_bytes!("../fonts/NotoSansHebrew-Bold.ttf"),
    include_bytes!("../fonts/NotoSansArabic-Regular.ttf"),
    include_bytes!("../fonts/NotoSansArabic-Bold.ttf"),
    include_bytes!("../fonts/NotoSansCJKsc-Regular.otf"),
    include_bytes!("../fonts/NotoSansCJKsc-Bold.otf"),
];

/// A parsed font and what the backends need to know about it.
pub(crate) struct Font {
    pub face: Face<'static>,
    /// The file as vendored, for the PDF subsetter.
    pub data: &'static [u8],
    /// Font units per em, as a float for scaling.
    pub units_per_em: f32,
    /// CFF outlines (embedded in PDF as CIDFontType0) rather than TrueType
    /// (CIDFontType2).
    pub cff: bool,
}

static FONTS: LazyLock<Vec<Font>> = LazyLock::new(|| {
    DATA.iter()
        .filter_map(|&data| {
            // The files are compiled in and checked by the tests, so a face
            // that does not parse is a broken build: it is left out, and its
            // characters fall back to the next family (or .notdef) instead
            // of taking the process down.
            let face = Face::from_slice(data, 0)?;
            let units_per_em = face.units_per_em() as f32;
            let cff = face
                .raw_face()
                .table(rustybuzz::ttf_parser::Tag::from_bytes(b"CFF "))
                .is_some();
            Some(Font {
                face,
                data,
                units_per_em,
                cff,
            })
        })
        .collect()
});

/// The parsed font for `key`; `None` only if the vendored file did not
/// parse (see `FONTS`).
pub(crate) fn font(key: FontKey) -> Option<&'static Font> {
    let fonts = &*FONTS;
    if fonts.len() == DATA.len() {
        fonts.get(key.index())
    } else {
        None
    }
}

/// Whether `key`'s font has a glyph for `c`.
pub(crate) fn covers(key: FontKey, c: char) -> bool {
    font(key).is_some_and(|f| f.face.glyph_index(c).is_some())
}

/// The family that draws `c` in a run currently in `current`: letters go
/// to the first family that has them; anything else (spaces, digits,
/// punctuation, combining marks) stays in the current family when it can,
/// so a run is not split at every space. `None`: no vendored font has it
/// (emoji, scripts outside the set).
pub(crate) fn family_for(c: char, current: Option<Family>, bold: bool) -> Option<Family> {
    if let Some(family) = current {
        if !c.is_alphabetic() && covers(FontKey::new(family, bold), c) {
            return Some(family);
        }
    }
    FAMILIES
        .into_iter()
        .find(|&family| covers(FontKey::new(family, bold), c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_vendored_font_parses() {
        for family in FAMILIES {
            for bold in [false, true] {
                let key = FontKey::new(family, bold);
                let f = font(key);
                assert!(f.is_some(), "{key:?} does not parse");
                assert_eq!(f.is_some_and(|f| f.cff), family == Family::Cjk);
            }
        }
    }

    #[test]
    fn scripts_go_to_their_family() {
        let cases = [
            ('a', Family::Sans),
            ('Ł', Family::Sans),
            ('ğ', Family::Sans),
            ('Ω', Family::Sans),
            ('Ж', Family::Sans),
            ('ש', Family::Hebrew),
            ('ع', Family::Arabic),
            ('東', Family::Cjk),
            ('カ', Family::Cjk),
            ('한', Family::Cjk),
            ('、', Family::Cjk),
        ];
        for (c, family) in cases {
            for bold in [false, true] {
                assert_eq!(family_for(c, None, bold), Some(family), "{c}");
            }
        }
        // A space stays in the run it is in; a digit after CJK goes to Sans
        // (the CJK cut has no Latin).
        assert_eq!(
            family_for(' ', Some(Family::Arabic), false),
            Some(Family::Arabic)
        );
        assert_eq!(
            family_for('1', Some(Family::Cjk), false),
            Some(Family::Sans)
        );
        assert_eq!(family_for('😀', None, false), None);
    }
}
