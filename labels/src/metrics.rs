//! Text measurement and the WinAnsi character set of the PDF built-in fonts.
//!
//! Layouts are computed once and drawn by both backends, so text is fitted
//! here with the metrics of the font the PDF draws it in: Helvetica's for a
//! line Helvetica can show (all of it WinAnsi), else the vendored Noto
//! fonts' advances after shaping (`shape`), exactly as `pdf` draws it and
//! `zpl` rasterises it. Zebra's scalable font 0 (CG Triumvirate Bold
//! Condensed), which prints the Latin lines on labels, is narrower than
//! either at the same height, so a string that fits in the PDF also fits on
//! the thermal label.

use super::shape;

/// Glyph advance widths in 1/1000 em of Helvetica for ASCII 32..=126, from
/// Adobe's Core 14 AFM files.
const HELVETICA: [u16; 95] = [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, // ' '../
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, // 0..?
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778, // @..O
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556, // P.._
    333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, // `..o
    556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584, // p..~
];

/// The same for Helvetica-Bold.
const HELVETICA_BOLD: [u16; 95] = [
    278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278, // ' '../
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611, // 0..?
    975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833, 722, 778, // @..O
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556, // P.._
    333, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611, // `..o
    611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584, // p..~
];

/// Width assumed for anything outside ASCII: as wide as a capital, so
/// accented and substituted text is never under-measured.
const OTHER_WIDTH: u16 = 722;

/// Whether the PDF draws `text` with built-in Helvetica (every character
/// in WinAnsi); anything else is shaped and drawn with the vendored fonts.
pub(crate) fn helvetica_draws(text: &str) -> bool {
    text.chars().all(|c| winansi_byte(c).is_some())
}

/// Width of `text` in points at `size`.
pub(crate) fn text_width(text: &str, size: f32, bold: bool) -> f32 {
    if helvetica_draws(text) {
        helvetica_width(text, size, bold)
    } else {
        shape::width(text, bold) * size
    }
}

fn helvetica_width(text: &str, size: f32, bold: bool) -> f32 {
    let table = if bold { &HELVETICA_BOLD } else { &HELVETICA };
    let units: u32 = text
        .chars()
        .map(|c| {
            let i = (c as usize).wrapping_sub(32);
            u32::from(table.get(i).copied().unwrap_or(OTHER_WIDTH))
        })
        .sum();
    units as f32 * size / 1000.0
}

/// Keeps `text` within `max_width`: as is if it fits, else cut and ended
/// with "..." (ASCII, so that every font on every printer has it).
pub(crate) fn truncate(text: &str, size: f32, bold: bool, max_width: f32) -> String {
    if text_width(text, size, bold) <= max_width {
        return text.to_owned();
    }
    if !helvetica_draws(text) {
        return truncate_shaped(text, size, bold, max_width);
    }
    let mut kept: Vec<char> = text.chars().collect();
    while !kept.is_empty() {
        kept.pop();
        let candidate: String = kept.iter().collect::<String>().trim_end().to_owned() + "...";
        if text_width(&candidate, size, bold) <= max_width {
            return candidate;
        }
    }
    String::new()
}

/// `truncate` for shaped text: the longest prefix (in characters) that fits
/// with "..." after it, found by bisection, since shaping a line costs
/// tens of microseconds rather than a table look-up per character.
fn truncate_shaped(text: &str, size: f32, bold: bool, max_width: f32) -> String {
    let chars: Vec<char> = text.chars().collect();
    let candidate = |n: usize| -> String {
        let kept: String = chars.iter().take(n).collect();
        kept.trim_end().to_owned() + "..."
    };
    let fits = |n: usize| text_width(&candidate(n), size, bold) <= max_width;
    // The whole text does not fit: look in 0..len for the longest prefix
    // that does. Widths grow with the prefix (up to shaping's small
    // contextual changes, which the final check below catches).
    let (mut lo, mut hi) = (0, chars.len());
    if !fits(0) {
        return String::new();
    }
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if fits(mid) { lo = mid } else { hi = mid }
    }
    while lo > 0 && !fits(lo) {
        lo -= 1;
    }
    candidate(lo)
}

/// Single-line text: control characters (newlines, tabs, NUL) become spaces
/// and runs of whitespace collapse, so data pasted from elsewhere cannot
/// break a line out of its box.
pub(crate) fn one_line(text: &str) -> String {
    text.split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The WinAnsiEncoding (Windows-1252) byte for `c`, if the PDF built-in
/// fonts can show it.
pub(crate) fn winansi_byte(c: char) -> Option<u8> {
    let code = u32::from(c);
    match code {
        0x20..=0x7E | 0xA0..=0xFF => u8::try_from(code).ok(),
        _ => {
            // Windows-1252 puts typographic characters where Latin-1 has C1
            // controls.
            let byte = match c {
                '€' => 0x80,
                '‚' => 0x82,
                'ƒ' => 0x83,
                '„' => 0x84,
                '…' => 0x85,
                '†' => 0x86,
                '‡' => 0x87,
                'ˆ' => 0x88,
                '‰' => 0x89,
                'Š' => 0x8A,
                '‹' => 0x8B,
                'Œ' => 0x8C,
                'Ž' => 0x8E,
                '\u{2018}' => 0x91,
                '\u{2019}' => 0x92,
                '\u{201C}' => 0x93,
                '\u{201D}' => 0x94,
                '•' => 0x95,
                '–' => 0x96,
                '—' => 0x97,
                '˜' => 0x98,
                '™' => 0x99,
                'š' => 0x9A,
                '›' => 0x9B,
                'œ' => 0x9C,
                'ž' => 0x9E,
                'Ÿ' => 0x9F,
                _ => return None,
            };
            Some(byte)
        }
    }
}

/// `text` in WinAnsi bytes. Characters the built-in fonts cannot show
/// become '?', one per character, so the substitution is visible and
/// deterministic instead of the character silently disappearing.
pub(crate) fn winansi_bytes(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| winansi_byte(c).unwrap_or(b'?'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_follow_helvetica() {
        // "Hello": H 722 + e 556 + l 222 + l 222 + o 556 = 2278.
        assert!((text_width("Hello", 10.0, false) - 22.78).abs() < 1e-3);
        assert!(text_width("Hello", 10.0, true) > text_width("Hello", 10.0, false));
        assert!((text_width("é", 10.0, false) - 7.22).abs() < 1e-3);
    }

    #[test]
    fn truncation_fits_and_marks_the_cut() {
        let long = "A very long product name that cannot possibly fit";
        let cut = truncate(long, 10.0, false, 100.0);
        assert!(cut.ends_with("..."), "{cut}");
        assert!(text_width(&cut, 10.0, false) <= 100.0);
        assert_eq!(truncate("Short", 10.0, false, 100.0), "Short");
        assert_eq!(truncate("Anything", 10.0, false, 1.0), "");
    }

    #[test]
    fn other_scripts_are_measured_with_their_fonts() {
        let greek = "Ζωή Παπαδοπούλου";
        let shaped = shape::width(greek, true) * 10.0;
        assert!((text_width(greek, 10.0, true) - shaped).abs() < 1e-4);
        assert!(shaped > 0.0);
        // Ideographs are one em each; Arabic joins into less than its
        // letters at Helvetica's guess.
        assert!((text_width("北京市", 10.0, false) - 30.0).abs() < 0.5);
        let arabic = "السعودية";
        assert!(text_width(arabic, 10.0, false) < 7.22 * arabic.chars().count() as f32);
        // A line with one character outside WinAnsi is measured whole in
        // the font that draws it.
        assert!(
            (text_width("Łódź", 10.0, false) - shape::width("Łódź", false) * 10.0).abs() < 1e-4
        );
    }

    #[test]
    fn shaped_truncation_keeps_the_longest_prefix_that_fits() {
        for text in [
            "Οδός Ερμού 25, 3ος όροφος, Αθήνα, Ελλάδα",
            "朝阳区建国路88号国贸大厦3层 北京市 中国",
            "شارع الملك فهد 12، حي العليا، الرياض",
            "רחוב הרצל 5, דירה 3, תל אביב",
        ] {
            let cut = truncate(text, 12.0, false, 100.0);
            assert!(cut.ends_with("...") && cut.chars().count() > 4, "{cut}");
            assert!(text_width(&cut, 12.0, false) <= 100.0);
            // The same as trying every prefix from the longest.
            let chars: Vec<char> = text.chars().collect();
            let linear = (0..chars.len())
                .rev()
                .map(|n| chars[..n].iter().collect::<String>().trim_end().to_owned() + "...")
                .find(|c| text_width(c, 12.0, false) <= 100.0);
            assert_eq!(Some(cut), linear, "{text}");
        }
        assert_eq!(truncate("東京", 12.0, false, 1.0), "");
    }

    #[test]
    fn one_line_removes_controls() {
        assert_eq!(one_line(" a\nb\t\tc\u{0}d  "), "a b c d");
        // A CRLF is one break; a backslash is only a backslash.
        assert_eq!(one_line("a\\b\r\nc"), "a\\b c");
    }

    #[test]
    fn winansi_maps_or_substitutes() {
        assert_eq!(
            winansi_bytes("Zoë €5 – ok"),
            b"Zo\xEB \x805 \x96 ok".to_vec()
        );
        // Polish, Greek and CJK are outside the built-in fonts: one '?' each.
        assert_eq!(winansi_bytes("Łódź"), b"?\xF3d?".to_vec());
        assert_eq!(winansi_bytes("Ωx東"), b"?x?".to_vec());
    }
}
