//! Text to positioned glyphs of the vendored fonts, for everything the
//! built-in fonts cannot draw: the one shaper behind the measurement
//! (`metrics`), the PDF text (`pdf`) and the ZPL graphic fields (`raster`),
//! so all three agree on every glyph and advance.
//!
//! A line is split into bidirectional runs (Unicode Bidi Algorithm, the
//! paragraph direction taken from its first strong character), each run
//! into font runs (`fonts::family_for`), and each font run is shaped by
//! rustybuzz (Arabic joining and ligatures, marks, kerning). Glyphs come
//! out in visual order, left to right, as they are drawn.

use super::fonts::{self, Family, FontKey};
use rustybuzz::{BufferClusterLevel, Direction, Face, Script, ShapePlan, UnicodeBuffer};
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::ops::Range;
use unicode_bidi::BidiInfo;

/// One glyph of a shaped line. Lengths are in ems of the text size.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Glyph {
    pub font: FontKey,
    /// Glyph id in the vendored font (0: .notdef, for characters no
    /// vendored font has).
    pub id: u16,
    /// Where the glyph's origin is drawn, from the line's start (shaping
    /// offsets included).
    pub x: f32,
    /// Upward shift from the baseline (marks).
    pub y: f32,
    pub advance: f32,
    /// The characters of the source text this glyph stands for: a whole
    /// cluster (a ligature's characters) on the cluster's logically first
    /// glyph, empty on the others (a character drawn as several glyphs).
    pub text: Range<usize>,
}

/// A shaped line: glyphs in visual order and the line's advance width.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Shaped {
    pub glyphs: Vec<Glyph>,
    pub width: f32,
}

/// The advance width of `text` in ems.
pub(crate) fn width(text: &str, bold: bool) -> f32 {
    // Fitting measures the same line several times (each size tried by
    // `text_shrink`, then `truncate`, then the alignment): the last few
    // widths are kept per thread so a line is shaped once for its layout.
    const KEPT: usize = 8;
    thread_local! {
        static WIDTHS: RefCell<VecDeque<(String, bool, f32)>> = const { RefCell::new(VecDeque::new()) };
    }
    let known = WIDTHS.with_borrow(|w| {
        w.iter()
            .find(|(t, b, _)| *b == bold && t == text)
            .map(|(_, _, width)| *width)
    });
    if let Some(width) = known {
        return width;
    }
    let width = shape(text, bold).width;
    WIDTHS.with_borrow_mut(|w| {
        if w.len() == KEPT {
            w.pop_front();
        }
        w.push_back((text.to_owned(), bold, width));
    });
    width
}

/// Whether a line reads right to left: its first strong character is
/// Hebrew, Arabic or another right-to-left script's (the Unicode
/// bidirectional algorithm's rule for a paragraph's direction). Such a
/// line is aligned to the right of its box, as its readers write it.
pub(crate) fn right_to_left(text: &str) -> bool {
    BidiInfo::new(text, None)
        .paragraphs
        .first()
        .is_some_and(|p| p.level.is_rtl())
}

/// Shapes one line of text (no line breaks: callers pass `one_line` text).
pub(crate) fn shape(text: &str, bold: bool) -> Shaped {
    let mut out = Shaped::default();
    if text.is_empty() {
        return out;
    }
    let bidi = BidiInfo::new(text, None);
    for para in &bidi.paragraphs {
        let (levels, runs) = bidi.visual_runs(para, para.range.clone());
        for run in runs {
            let rtl = levels.get(run.start).is_some_and(|l| l.is_rtl());
            let mut pieces = font_runs(text, run, bold);
            if rtl {
                pieces.reverse();
            }
            for (family, range) in pieces {
                shape_piece(text, range, family, bold, rtl, &mut out);
            }
        }
    }
    out
}

/// Splits `run` into maximal pieces drawn by one family (`None`: no
/// vendored font has these characters), in logical order.
fn font_runs(text: &str, run: Range<usize>, bold: bool) -> Vec<(Option<Family>, Range<usize>)> {
    let mut pieces: Vec<(Option<Family>, Range<usize>)> = Vec::new();
    let Some(slice) = text.get(run.clone()) else {
        return pieces;
    };
    let mut current = None;
    for (i, c) in slice.char_indices() {
        let family = fonts::family_for(c, current, bold);
        let start = run.start + i;
        let end = start + c.len_utf8();
        match pieces.last_mut() {
            Some((f, r)) if *f == family => r.end = end,
            _ => pieces.push((family, start..end)),
        }
        if family.is_some() {
            current = family;
        }
    }
    pieces
}

fn shape_piece(
    text: &str,
    range: Range<usize>,
    family: Option<Family>,
    bold: bool,
    rtl: bool,
    out: &mut Shaped,
) {
    let Some(piece) = text.get(range.clone()) else {
        return;
    };
    // Characters no font has are drawn as Noto Sans's .notdef (an empty
    // box), one per character, each standing for its character.
    let key = FontKey::new(family.unwrap_or(Family::Sans), bold);
    let Some(font) = fonts::font(key) else {
        return;
    };
    let em = font.units_per_em;
    if family.is_none() {
        let advance = f32::from(
            font.face
                .glyph_hor_advance(rustybuzz::ttf_parser::GlyphId(0))
                .unwrap_or(0),
        ) / em;
        for (i, c) in piece.char_indices() {
            let start = range.start + i;
            out.glyphs.push(Glyph {
                font: key,
                id: 0,
                x: out.width,
                y: 0.0,
                advance,
                text: start..start + c.len_utf8(),
            });
            out.width += advance;
        }
        return;
    }
    let mut buffer = UnicodeBuffer::new();
    buffer.push_str(piece);
    // The text around the piece, so Arabic letters join across a change
    // of font or direction as they would within one run.
    buffer.set_pre_context(text.get(..range.start).unwrap_or(""));
    buffer.set_post_context(text.get(range.end..).unwrap_or(""));
    buffer.set_direction(if rtl {
        Direction::RightToLeft
    } else {
        Direction::LeftToRight
    });
    buffer.guess_segment_properties();
    // One cluster per character where the font allows (marks are not
    // merged into their base), so each glyph maps back to as few
    // characters as possible.
    buffer.set_cluster_level(BufferClusterLevel::MonotoneCharacters);
    let (direction, script) = (buffer.direction(), buffer.script());
    let shaped = with_plan(key, &font.face, direction, script, |plan| {
        rustybuzz::shape_with_plan(&font.face, plan, buffer)
    });
    let infos = shaped.glyph_infos();
    let positions = shaped.glyph_positions();

    // Cluster values are byte offsets into the piece; a cluster spans to
    // the next larger one.
    let mut starts: Vec<usize> = infos.iter().map(|g| g.cluster as usize).collect();
    starts.sort_unstable();
    starts.dedup();
    let cluster_end = |c: usize| {
        starts
            .iter()
            .copied()
            .find(|&s| s > c)
            .unwrap_or(piece.len())
    };
    // The logically first glyph of each cluster carries its text: in a
    // right-to-left buffer glyphs come out reversed, so that is the last
    // one of the cluster in output order.
    let mut carries = vec![false; infos.len()];
    let mut seen = std::collections::HashSet::new();
    let order: Box<dyn Iterator<Item = usize>> = if rtl {
        Box::new((0..infos.len()).rev())
    } else {
        Box::new(0..infos.len())
    };
    for i in order {
        if seen.insert(infos[i].cluster) {
            carries[i] = true;
        }
    }

    for ((info, pos), carries) in infos.iter().zip(positions).zip(carries) {
        let cluster = info.cluster as usize;
        let text_range = if carries {
            range.start + cluster..range.start + cluster_end(cluster)
        } else {
            range.start + cluster..range.start + cluster
        };
        let advance = pos.x_advance as f32 / em;
        out.glyphs.push(Glyph {
            font: key,
            // Glyph ids of an OpenType font are 16-bit.
            id: u16::try_from(info.glyph_id).unwrap_or(0),
            x: out.width + pos.x_offset as f32 / em,
            y: pos.y_offset as f32 / em,
            advance,
            text: text_range,
        });
        out.width += advance;
    }
}

/// Runs `f` with the shaping plan for the buffer's font, direction and
/// script, compiled once per thread (compiling the feature lookups is most
/// of what shaping a short line costs, Arabic above all).
fn with_plan<T>(
    key: FontKey,
    face: &Face<'static>,
    direction: Direction,
    script: Script,
    f: impl FnOnce(&ShapePlan) -> T,
) -> T {
    type Plans = HashMap<(FontKey, bool, Script), ShapePlan>;
    thread_local! {
        static PLANS: RefCell<Plans> = RefCell::new(HashMap::new());
    }
    PLANS.with_borrow_mut(|plans| {
        let plan = plans
            .entry((key, direction == Direction::RightToLeft, script))
            .or_insert_with(|| ShapePlan::new(face, direction, Some(script), None, &[]));
        f(plan)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(text: &str, shaped: &Shaped) -> String {
        let mut glyphs: Vec<&Glyph> = shaped.glyphs.iter().collect();
        glyphs.sort_by_key(|g| g.text.start);
        glyphs
            .iter()
            .filter_map(|g| text.get(g.text.clone()))
            .collect()
    }

    #[test]
    fn latin_advances_are_the_fonts() {
        let s = shape("Hello", false);
        assert_eq!(s.glyphs.len(), 5);
        assert!(
            s.glyphs
                .iter()
                .all(|g| g.font.family == Family::Sans && g.id != 0)
        );
        // Noto Sans: a little wider than Helvetica's 2.278 em.
        assert!(s.width > 2.2 && s.width < 2.8, "{}", s.width);
        assert!(width("Hello", true) > s.width);
        let xs: Vec<f32> = s.glyphs.iter().map(|g| g.x).collect();
        assert!(xs.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn every_character_is_accounted_for_once() {
        for text in [
            "Ζωή Παπαδοπούλου",
            "ул. Тверская, д. 7",
            "Łódź, ul. Piotrkowska 12",
            "İstanbul Şişli Çağlayan",
            "北京市朝阳区建国路88号",
            "شارع الملك فهد 12، الرياض",
            "רחוב הרצל 5, תל אביב",
            "ﻻ بِسْمِ",
            "mix 東京 and עברית 3 😀",
        ] {
            let s = shape(text, false);
            assert_eq!(text_of(text, &s), text, "{text}");
            assert!(s.width > 0.0);
        }
    }

    #[test]
    fn arabic_is_joined_and_right_to_left() {
        let text = "سلام";
        let s = shape(text, false);
        assert!(s.glyphs.iter().all(|g| g.font.family == Family::Arabic));
        // Visual order: the first letter (seen) is drawn rightmost.
        let first = s.glyphs.iter().find(|g| g.text.start == 0);
        let rightmost = s.glyphs.iter().max_by(|a, b| a.x.total_cmp(&b.x));
        assert_eq!(first, rightmost);
        // Joined forms differ from the isolated letters.
        let isolated: Vec<u16> = text
            .chars()
            .map(|c| shape(&c.to_string(), false).glyphs[0].id)
            .collect();
        let mut joined: Vec<u16> = s.glyphs.iter().map(|g| g.id).collect();
        joined.reverse();
        assert_ne!(isolated, joined);
    }

    #[test]
    fn uncovered_characters_are_notdef_boxes() {
        let s = shape("a😀b", false);
        assert_eq!(s.glyphs.len(), 3);
        assert_eq!(s.glyphs[1].id, 0);
        assert!(s.glyphs[1].advance > 0.0);
    }
}
