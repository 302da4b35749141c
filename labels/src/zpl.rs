//! ZPL II for 203 dpi Zebra printers: one `^XA…^XZ` format per page.
//!
//! Every field's data goes through `^FH_` hex escaping, so '^' (format
//! prefix), '~' (control prefix, acted on even mid-field: `~JA` would cancel
//! every queued job) and '_' (the escape itself) can never appear raw, and
//! non-ASCII travels as UTF-8 bytes under `^CI28`.
//!
//! Text goes to the printer as text in its resident scalable font 0 where
//! that font can draw it: we count Latin-1 and Latin Extended-A (U+0020 to
//! U+017F, the Western and Central European alphabets, Turkish included),
//! which Zebra's font 0 covers under `^CI28` on every current firmware.
//! Anything else (Greek, Cyrillic, Hebrew, Arabic, CJK, and Latin beyond
//! Extended-A such as Vietnamese) would print as boxes, so such a line is
//! shaped with the vendored Noto fonts and sent as a graphic field (`^GFA`,
//! Zebra's ASCII compression) at the same position and size as the PDF
//! draws it. Graphic data is hex digits and compression letters only, so it
//! cannot carry a command either.

use super::layout::{DOT, Item, Page, Paint, Square, Text};
use super::pdf::ASCENT;
use super::raster::{self, Bitmap, Placement};
use super::shape;
use std::fmt::Write as _;

/// `s` as `^FD` data for a field preceded by `^FH_`: printable ASCII other
/// than '^', '~' and '_' is kept; everything else becomes `_XX` per UTF-8
/// byte ("é" → "_C3_A9", "^" → "_5E"). Not for `^FB` fields, where '\'
/// has meanings of its own.
pub fn escape_field(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, ' '..='~') && !matches!(c, '^' | '~' | '_') {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                // Writing to a String cannot fail.
                let _ = write!(out, "_{b:02X}");
            }
        }
    }
    out
}

/// Points to whole dots.
fn dots(pt: f32) -> i64 {
    // Label coordinates are a few thousand dots at most: no overflow.
    (pt / DOT).round() as i64
}

pub(crate) fn render(pages: &[Page]) -> String {
    let mut out = String::new();
    for page in pages {
        // UTF-8 (^CI28), the page size in dots, origin at the top left.
        let _ = writeln!(out, "^XA");
        let _ = writeln!(out, "^CI28");
        let _ = writeln!(out, "^PW{}", dots(page.width));
        let _ = writeln!(out, "^LL{}", dots(page.height));
        let _ = writeln!(out, "^LH0,0");
        let size = (
            u32::try_from(dots(page.width)).unwrap_or(0),
            u32::try_from(dots(page.height)).unwrap_or(0),
        );
        for item in &page.items {
            item_zpl(&mut out, item, size);
        }
        let _ = writeln!(out, "^XZ");
    }
    out
}

/// Whether the resident font 0 draws every character of `text` (see the
/// module documentation).
pub(crate) fn font0_draws(text: &str) -> bool {
    text.chars()
        .all(|c| matches!(c, ' '..='~' | '\u{A0}'..='\u{17F}'))
}

/// The image of a text the resident font cannot draw, where the PDF draws
/// it: same origin, size and baseline.
pub(crate) fn text_bitmap(t: &Text, page: (u32, u32)) -> Option<Bitmap> {
    let shaped = shape::shape(&t.text, t.bold);
    let at = Placement::from_points(t.x, t.y + ASCENT * t.size, t.size, page);
    raster::rasterize(&shaped, at)
}

fn item_zpl(out: &mut String, item: &Item, page: (u32, u32)) {
    match item {
        Item::Text(t) if !font0_draws(&t.text) => {
            if let Some(b) = text_bitmap(t, page) {
                graphic(out, &b);
            }
        }
        Item::Text(t) => {
            let h = dots(t.size).max(1);
            let _ = writeln!(
                out,
                "^FO{},{}^A0N,{h},{h}^FH_^FD{}^FS",
                dots(t.x).max(0),
                dots(t.y).max(0),
                escape_field(&t.text)
            );
        }
        Item::Rect { x, y, w, h, paint } => {
            let (w, h) = (dots(*w).max(1), dots(*h).max(1));
            let thickness = match paint {
                // ZPL has no grey: light fills (table shading) are left out.
                Paint::Fill(grey) if *grey >= 0.5 => return,
                // A box whose border is as thick as it is narrow is solid.
                Paint::Fill(_) => w.min(h),
                Paint::Stroke(line) => dots(*line).max(1),
            };
            let _ = writeln!(
                out,
                "^FO{},{}^GB{w},{h},{thickness}^FS",
                dots(*x).max(0),
                dots(*y).max(0)
            );
        }
        Item::Square(q) => square(out, q),
        Item::Bars(b) => {
            // No interpretation line: the layout prints the number itself,
            // in the same font as the rest of the label.
            let _ = writeln!(
                out,
                "^FO{},{}^BY{}^BCN,{},N,N,N,N^FH_^FD{}^FS",
                dots(b.x).max(0),
                dots(b.y).max(0),
                dots(b.module).max(1),
                dots(b.height).max(1),
                escape_field(&b.symbol.zpl)
            );
        }
    }
}

/// A QR code as a graphic field of our own modules, not the printer's
/// `^BQ`: the printer then prints exactly the symbol the PDF shows and the
/// tests decode, whatever its firmware's QR encoder does with UTF-8.
fn square(out: &mut String, q: &Square) {
    let per_module = u32::try_from(dots(q.module).max(1)).unwrap_or(1);
    // A QR code is at most 177 modules: the side fits a u32.
    let side = u32::try_from(q.matrix.size).unwrap_or(0) * per_module;
    let (left, top) = (dots(q.x).max(0), dots(q.y).max(0));
    let mut b = Bitmap::new(
        u32::try_from(left).unwrap_or(0),
        u32::try_from(top).unwrap_or(0),
        side,
        side,
    );
    for y in 0..side {
        for x in 0..side {
            if q.matrix
                .is_dark((x / per_module) as usize, (y / per_module) as usize)
            {
                b.set(x, y);
            }
        }
    }
    graphic(out, &b);
}

/// A bitmap as a compressed graphic field at its place on the label.
fn graphic(out: &mut String, b: &Bitmap) {
    let bytes = b.data.len();
    let _ = writeln!(
        out,
        "^FO{},{}^GFA,{bytes},{bytes},{},{}^FS",
        b.left,
        b.top,
        b.bytes_per_row(),
        compress(b)
    );
}

/// `^GFA` data in Zebra's ASCII compression: each row as hex digits, a
/// run of one digit as a repeat count before it (G..Y: 1..19, g..z:
/// 20..400), ',' for a row's remaining zeros, '!' for its remaining ones,
/// ':' for a row equal to the one before.
fn compress(b: &Bitmap) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let bpr = b.bytes_per_row();
    let mut out = String::new();
    let mut previous: Option<&[u8]> = None;
    for row in b.data.chunks(bpr.max(1)) {
        if previous == Some(row) {
            out.push(':');
            continue;
        }
        previous = Some(row);
        let hex: Vec<u8> = row
            .iter()
            .flat_map(|byte| [HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xF)]])
            .collect();
        let fill = hex.last().copied().filter(|&d| d == b'0' || d == b'F');
        let kept = match fill {
            Some(d) => hex.len() - hex.iter().rev().take_while(|&&x| x == d).count(),
            None => hex.len(),
        };
        let mut i = 0;
        while i < kept {
            let digit = hex[i];
            let run = hex[i..kept].iter().take_while(|&&x| x == digit).count();
            i += run;
            // Longer runs than one count can say (419 digits) are split.
            let mut left = run;
            while left > 0 {
                let chunk = left.min(419);
                push_count(&mut out, chunk);
                out.push(char::from(digit));
                left -= chunk;
            }
        }
        match fill {
            Some(b'0') if kept < hex.len() => out.push(','),
            Some(b'F') if kept < hex.len() => out.push('!'),
            _ => {}
        }
    }
    out
}

/// The repeat count letters for `n` (2..=419) copies of a digit; none
/// for one.
fn push_count(out: &mut String, n: usize) {
    if n < 2 {
        return;
    }
    let (twenties, ones) = (n / 20, n % 20);
    // At most 20 twenties (z) and 19 ones (Y): the casts cannot wrap.
    if twenties > 0 {
        out.push(char::from(b'g' + (twenties - 1) as u8));
    }
    if ones > 0 {
        out.push(char::from(b'G' + (ones - 1) as u8));
    }
}

#[cfg(test)]
mod tests {
    use super::super::{
        corpus, fixtures, label, packing_slip_zpl, shipping_label_zpl, slip::ROWS_PER_LABEL,
    };
    use super::*;
    use proptest::prelude::*;

    /// Commands this module emits; anything else after a '^' means data
    /// leaked into the command stream.
    const COMMANDS: [&str; 15] = [
        "XA", "XZ", "CI", "PW", "LL", "LH", "FO", "A0", "FH", "FD", "FS", "GB", "BY", "BC", "GF",
    ];

    fn assert_only_our_commands(zpl: &str) {
        assert!(!zpl.contains('~'), "control prefix in {zpl}");
        for (i, _) in zpl.match_indices('^') {
            let cmd = zpl.get(i + 1..i + 3).unwrap_or("");
            assert!(COMMANDS.contains(&cmd), "unexpected ^{cmd} at {i} in {zpl}");
        }
    }

    #[test]
    fn escaping() {
        assert_eq!(escape_field("ABC 123-/.,"), "ABC 123-/.,");
        assert_eq!(escape_field("^XZ^XA"), "_5EXZ_5EXA");
        assert_eq!(escape_field("~JA"), "_7EJA");
        assert_eq!(escape_field("a_b"), "a_5Fb");
        assert_eq!(escape_field("café"), "caf_C3_A9");
        assert_eq!(escape_field("Łódź"), "_C5_81_C3_B3d_C5_BA");
        assert_eq!(escape_field("東"), "_E6_9D_B1");
        assert_eq!(escape_field("a\nb"), "a_0Ab");
        // An already escaped-looking input is escaped again, not decoded.
        assert_eq!(escape_field("_5E"), "_5F5E");
        assert_eq!(escape_field("Order 1042, box 3/4"), "Order 1042, box 3/4");
        assert_eq!(escape_field("^XZ~JA_"), "_5EXZ_7EJA_5F");
        assert_eq!(escape_field("Zoë"), "Zo_C3_AB");
        assert_eq!(escape_field("€"), "_E2_82_AC");
        assert_eq!(escape_field("a\nb\x02\x7f"), "a_0Ab_02_7F");
        assert_eq!(escape_field(""), "");
    }

    #[test]
    fn label_is_one_well_formed_format() {
        let zpl = shipping_label_zpl(&fixtures::label());
        assert!(zpl.starts_with("^XA"));
        assert!(zpl.trim_end().ends_with("^XZ"));
        assert_eq!(zpl.matches("^XA").count(), 1);
        assert!(zpl.contains("^CI28"));
        assert!(zpl.contains("^PW812") && zpl.contains("^LL1218"));
        assert!(zpl.contains("^BCN,"));
        assert!(
            zpl.contains("^FH_^FD>:1Z999AA1>50123456784>6-01^FS"),
            "{zpl}"
        );
        assert!(zpl.contains("^FD1Z999AA10123456784-01^FS"));
        assert!(zpl.contains("^FD1/2^FS"));
        assert!(zpl.contains("^FD2.345 kg^FS"));
        assert!(zpl.contains("^FD>;>800340123450000000017^FS"), "the SSCC");
        assert!(zpl.contains("^FDDHL Express^FS"));
        assert!(zpl.contains("^FDSO-1001^FS"));
        assert!(zpl.contains("^FD75002 Paris^FS"));
        assert!(zpl.contains("^FDB_C3_A2timent B^FS"));
        assert_only_our_commands(&zpl);
    }

    #[test]
    fn compression_letters() {
        let mut b = Bitmap::new(0, 0, 64, 3);
        b.data[..8].copy_from_slice(&[0, 0, 0xFF, 0xFF, 0xFF, 0x12, 0, 0]);
        b.data[8..16].copy_from_slice(&[0, 0, 0xFF, 0xFF, 0xFF, 0x12, 0, 0]);
        b.data[16..24].copy_from_slice(&[0xFF; 8]);
        // Four zeros, six Fs, "12", the rest zeros; the same row; all ones.
        assert_eq!(compress(&b), "J0LF12,:!");
        let mut wide = Bitmap::new(0, 0, 8 * 300, 1);
        wide.data[299] = 1;
        // 599 zeros: 419 (z Y) and 180 (o).
        assert_eq!(compress(&wide), "zY0o01");
    }

    #[test]
    fn injection_cannot_end_the_label_or_send_commands() {
        let mut label = fixtures::label();
        label.ship_to.name = "Mallory^FS^XZ^XA^FO0,0^FDpwned".into();
        label.ship_to.line1 = "~JA~JR cancel everything".into();
        label.order_ref = "SO_^XZ".into();
        label.carrier = "^XZ".into();
        label.piece_number = "TR^XZ~JA_1".into();
        let zpl = shipping_label_zpl(&label);
        assert_eq!(zpl.matches("^XA").count(), 1);
        assert_eq!(zpl.matches("^XZ").count(), 1);
        assert!(zpl.trim_end().ends_with("^XZ"));
        assert_only_our_commands(&zpl);
        // The barcode carries '^' and '~' as Code 128 invocation codes.
        assert!(zpl.contains("^FD>:TR><XZ>=JA_5F1^FS"), "{zpl}");

        let mut label = fixtures::label();
        label.ship_to.name = "Zoë ^Customer~".into();
        label.ship_to.line1 = "2 Rue_Haute".into();
        let zpl = shipping_label_zpl(&label);
        assert!(zpl.contains("^FDZo_C3_AB _5ECustomer_7E^FS"), "{zpl}");
        assert!(zpl.contains("^FD2 Rue_5FHaute^FS"), "{zpl}");
        assert!(!zpl.contains('~'));
    }

    #[test]
    fn latin_text_travels_as_utf8_bytes() {
        let mut label = fixtures::label();
        label.ship_to.city = "Zürich".into();
        label.ship_to.name = "Łukasz Şahin".into();
        let zpl = shipping_label_zpl(&label);
        assert!(zpl.contains("Z_C3_BCrich"));
        assert!(zpl.contains("^FD_C5_81ukasz _C5_9Eahin^FS"));
        assert!(!zpl.contains("^GF"));
        assert!(zpl.is_ascii());
    }

    /// One `^GFA` field read back: Zebra's ASCII compression undone.
    fn decode_field(left: u32, top: u32, params: &str) -> Result<Bitmap, String> {
        let mut parts = params.splitn(4, ',');
        let mut number = |what: &str| -> Result<usize, String> {
            let p = parts.next().ok_or(format!("no {what}"))?;
            p.parse().map_err(|e| format!("{what} {p:?}: {e}"))
        };
        let (total, count, bpr) = (number("total")?, number("count")?, number("bytes per row")?);
        let data = parts.next().ok_or("no data")?;
        assert_eq!(total, count);
        if bpr == 0 || total % bpr != 0 {
            return Err(format!("{total} bytes in rows of {bpr}"));
        }
        let mut rows: Vec<Vec<u8>> = Vec::new();
        let mut row = String::new();
        let mut repeat = 0;
        for c in data.chars() {
            match c {
                'G'..='Y' => repeat += c as usize - 'G' as usize + 1,
                'g'..='z' => repeat += 20 * (c as usize - 'g' as usize + 1),
                ',' | '!' => {
                    let fill = if c == ',' { '0' } else { 'F' };
                    while row.len() < 2 * bpr {
                        row.push(fill);
                    }
                }
                ':' => row = rows.last().map(hex::encode_upper).ok_or("':' first")?,
                '0'..='9' | 'A'..='F' => {
                    for _ in 0..repeat.max(1) {
                        row.push(c);
                    }
                    repeat = 0;
                }
                _ => return Err(format!("{c:?} in graphic data")),
            }
            if row.len() > 2 * bpr {
                return Err(format!("row overflows: {row}"));
            }
            if row.len() == 2 * bpr {
                rows.push(hex::decode(&row).map_err(|e| e.to_string())?);
                row.clear();
            }
        }
        if !row.is_empty() || rows.len() * bpr != total {
            return Err(format!("{} rows of {bpr} for {total} bytes", rows.len()));
        }
        let height = u32::try_from(rows.len()).map_err(|e| e.to_string())?;
        let width = u32::try_from(bpr * 8).map_err(|e| e.to_string())?;
        Ok(Bitmap {
            left,
            top,
            width,
            height,
            data: rows.concat(),
        })
    }

    /// Every `^FOx,y^GFA,...^FS` of a format, decoded.
    fn graphic_fields(zpl: &str) -> Result<Vec<Bitmap>, String> {
        let mut out = Vec::new();
        for line in zpl.lines().filter(|l| l.contains("^GFA,")) {
            let rest = line.strip_prefix("^FO").ok_or(format!("no ^FO: {line}"))?;
            let (at, rest) = rest.split_once("^GFA,").ok_or("no ^GFA")?;
            let (x, y) = at.split_once(',').ok_or("no y")?;
            let params = rest.strip_suffix("^FS").ok_or("no ^FS")?;
            let parse = |v: &str| v.parse::<u32>().map_err(|e| e.to_string());
            out.push(decode_field(parse(x)?, parse(y)?, params)?);
        }
        Ok(out)
    }

    /// The bitmap padded to whole bytes, as it travels.
    fn padded(b: &Bitmap) -> Bitmap {
        Bitmap {
            width: b.bytes_per_row() as u32 * 8,
            ..b.clone()
        }
    }

    #[test]
    fn every_script_prints_as_text_or_as_its_image() -> Result<(), String> {
        for (script, to) in corpus::parties() {
            let label = corpus::label_to(&to);
            let zpl = shipping_label_zpl(&label);
            assert_only_our_commands(&zpl);
            assert_eq!(zpl.matches("^XA").count(), 1, "{script}");
            assert!(zpl.is_ascii());
            // The same text items, drawn again the same way: each line the
            // resident font cannot draw is one graphic field, in order.
            let page = label::layout(&label);
            let expected: Vec<Bitmap> = page
                .items
                .iter()
                .filter_map(|i| match i {
                    Item::Text(t) if !font0_draws(&t.text) => text_bitmap(t, (812, 1218)),
                    _ => None,
                })
                .map(|b| padded(&b))
                .collect();
            let fields = graphic_fields(&zpl)?;
            assert_eq!(fields.len(), expected.len(), "{script}");
            for (got, want) in fields.iter().zip(&expected) {
                assert_eq!(got, want, "{script}");
                assert!(got.count() > 20, "{script}: an empty image");
                // Within the 4x6 in label.
                assert!(got.left + got.width <= 812 + 7 && got.top + got.height <= 1218);
            }
            let latin = matches!(script, "polish" | "turkish");
            assert_eq!(fields.is_empty(), latin, "{script}");
        }
        Ok(())
    }

    #[test]
    fn a_graphic_field_sits_where_the_pdf_draws_the_text() -> Result<(), String> {
        // One ideograph: its ink box on the label, from the font's own
        // outline box, must be where the field is.
        let mut label = fixtures::label();
        label.ship_to.name = "東".into();
        let zpl = shipping_label_zpl(&label);
        let fields = graphic_fields(&zpl)?;
        let [field] = fields.as_slice() else {
            return Err(format!("{} fields", fields.len()));
        };
        let page = label::layout(&label);
        let Some(Item::Text(t)) = page
            .items
            .iter()
            .find(|i| matches!(i, Item::Text(t) if t.text == "東"))
        else {
            return Err("no text item".into());
        };
        let font = super::super::fonts::font(super::super::fonts::FontKey::new(
            super::super::fonts::Family::Cjk,
            t.bold,
        ))
        .ok_or("no CJK font")?;
        let id = font.face.glyph_index('東').ok_or("no glyph")?;
        let bbox = font.face.glyph_bounding_box(id).ok_or("no box")?;
        let k = t.size / DOT / font.units_per_em;
        let left = t.x / DOT + f32::from(bbox.x_min) * k;
        let top = (t.y + ASCENT * t.size) / DOT - f32::from(bbox.y_max) * k;
        assert!(
            (field.left as f32 - left).abs() <= 1.0,
            "{} {left}",
            field.left
        );
        assert!((field.top as f32 - top).abs() <= 1.0, "{} {top}", field.top);
        // Ink in the first and last rows and columns of the glyph's box.
        let w = (f32::from(bbox.x_max - bbox.x_min) * k).round() as u32;
        let h = (f32::from(bbox.y_max - bbox.y_min) * k).round() as u32;
        let dark_row = |y: u32| (0..field.width).any(|x| field.get(x, y));
        let dark_col = |x: u32| (0..field.height).any(|y| field.get(x, y));
        assert!(dark_row(0) || dark_row(1));
        assert!(dark_row(h - 1) || dark_row(h.saturating_sub(2)));
        assert!(dark_col(0) || dark_col(1));
        assert!(dark_col(w - 1) || dark_col(w.saturating_sub(2)));
        Ok(())
    }

    #[test]
    fn latin_labels_are_all_text() {
        for zpl in [
            shipping_label_zpl(&fixtures::label()),
            packing_slip_zpl(&fixtures::slip(20)),
        ] {
            assert!(!zpl.contains("^GF"));
            let texts = zpl.matches("^A0N,").count();
            assert_eq!(
                texts,
                zpl.matches("^FD").count() - zpl.matches("^BC").count()
            );
        }
    }

    proptest! {
        #[test]
        fn compression_round_trips(
            width in 1u32..120,
            rows in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 15), 1..12),
            runs in proptest::collection::vec((0usize..180, 0usize..15, any::<bool>()), 0..12),
        ) {
            // Random rows, some repeated, with long runs of white and black.
            let bpr = (width as usize).div_ceil(8);
            let mut b = Bitmap::new(3, 5, width, rows.len() as u32 * 2);
            for (y, row) in rows.iter().enumerate() {
                for copy in 0..2 {
                    let i = (2 * y + copy) * bpr;
                    for (x, byte) in b.data[i..i + bpr].iter_mut().enumerate() {
                        *byte = row[x % row.len()];
                    }
                }
            }
            for (start, len, black) in runs {
                for i in start..(start + len * 8).min(b.data.len()) {
                    b.data[i] = if black { 0xFF } else { 0 };
                }
            }
            let data = compress(&b);
            let total = b.data.len();
            let back = decode_field(3, 5, &format!("{total},{total},{bpr},{data}"));
            prop_assert_eq!(back, Ok(padded(&b)));
        }
    }

    #[test]
    fn what_code_128_cannot_carry_is_a_graphic_qr_code() {
        let mut label = fixtures::label();
        label.piece_number = "ÉTÉ".into();
        label.sscc = None;
        let zpl = shipping_label_zpl(&label);
        assert!(!zpl.contains("^BC"));
        assert!(zpl.contains("^GFA,"));
        assert!(zpl.contains("_C3_89T_C3_89"));
        assert_only_our_commands(&zpl);
    }

    #[test]
    fn long_slip_is_several_labels() {
        let slip = fixtures::slip(ROWS_PER_LABEL * 3 + 2);
        let zpl = packing_slip_zpl(&slip);
        assert_eq!(zpl.matches("^XA").count(), 4);
        assert_eq!(zpl.matches("^XZ").count(), 4);
        assert!(zpl.starts_with("^XA") && zpl.trim_end().ends_with("^XZ"));
        for i in 1..=4 {
            assert!(zpl.contains(&format!("^FDpage {i}/4^FS")));
        }
        // The order barcode on every label.
        assert_eq!(zpl.matches("^FH_^FD>:SO->51001^FS").count(), 4);
        assert_only_our_commands(&zpl);
        let short = packing_slip_zpl(&fixtures::slip(2));
        assert_eq!(short.matches("^XA").count(), 1);
        assert!(short.contains("^FDpage 1/1^FS"));
        // A full label's worth of lines is still one label; none is one too.
        let full = packing_slip_zpl(&fixtures::slip(ROWS_PER_LABEL));
        assert_eq!(full.matches("^XA").count(), 1);
        let empty = packing_slip_zpl(&fixtures::slip(0));
        assert_eq!(empty.matches("^XA").count(), 1);
        assert!(empty.contains("^FDpage 1/1^FS"));
    }
}
