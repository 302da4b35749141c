//! ZPL II for 203 dpi Zebra printers: one `^XA…^XZ` format per page.
//!
//! Every field's data goes through `^FH_` hex escaping, so '^' (format
//! prefix), '~' (control prefix, acted on even mid-field: `~JA` would cancel
//! every queued job) and '_' (the escape itself) can never appear raw, and
//! non-ASCII travels as UTF-8 bytes under `^CI28`.

use super::layout::{DOT, Item, Page, Paint, Square};
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
        for item in &page.items {
            item_zpl(&mut out, item);
        }
        let _ = writeln!(out, "^XZ");
    }
    out
}

fn item_zpl(out: &mut String, item: &Item) {
    match item {
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

/// A QR code as a graphic field of our own modules (`^GFA`, one bit per
/// dot, 1 black), not the printer's `^BQ`: the printer then prints exactly
/// the symbol the PDF shows and the tests decode, whatever its firmware's
/// QR encoder does with UTF-8.
fn square(out: &mut String, q: &Square) {
    let dots_per_module = usize::try_from(dots(q.module).max(1)).unwrap_or(1);
    let side = q.matrix.size * dots_per_module;
    let row_bytes = side.div_ceil(8);
    let total = row_bytes * side;
    let _ = write!(
        out,
        "^FO{},{}^GFA,{total},{total},{row_bytes},",
        dots(q.x).max(0),
        dots(q.y).max(0)
    );
    for y in 0..side {
        for byte in 0..row_bytes {
            let mut bits = 0u8;
            for bit in 0..8 {
                let x = byte * 8 + bit;
                if x < side && q.matrix.is_dark(x / dots_per_module, y / dots_per_module) {
                    bits |= 0x80 >> bit;
                }
            }
            let _ = write!(out, "{bits:02X}");
        }
    }
    let _ = writeln!(out, "^FS");
}

#[cfg(test)]
mod tests {
    use super::super::{fixtures, packing_slip_zpl, shipping_label_zpl, slip::ROWS_PER_LABEL};
    use super::*;

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
    }

    #[test]
    fn non_ascii_text_travels_as_utf8_bytes() {
        let mut label = fixtures::label();
        label.ship_to.city = "Zürich".into();
        label.ship_to.name = "Ωmega 東京".into();
        let zpl = shipping_label_zpl(&label);
        assert!(zpl.contains("Z_C3_BCrich"));
        assert!(zpl.contains("_CE_A9mega _E6_9D_B1_E4_BA_AC"));
        assert!(zpl.is_ascii());
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
    }
}
