//! The 4×6 in shipping label, laid out once for ZPL and PDF.
//!
//! Top to bottom, as carriers' labels read: sender and carrier, the
//! recipient in the largest type, package facts, the order, then the
//! tracking barcode with its number in clear.

use super::layout::{Align, Page, bold, regular};
use super::{RenderError, ShippingLabel, address_lines, format_dimensions, format_weight};

/// 4×6 in in points.
pub(crate) const WIDTH: f32 = 288.0;
pub(crate) const HEIGHT: f32 = 432.0;
/// Kept clear all round: thermal printers do not print to the very edge.
pub(crate) const MARGIN: f32 = 10.0;
/// Widest module on a label: 4 dots (0.5 mm), readable by any scanner.
const MAX_MODULE_DOTS: u32 = 4;

/// The label page, and the barcode error if the tracking number could not
/// be encoded (the page then carries a notice in its place).
pub(crate) fn layout(l: &ShippingLabel) -> (Page, Option<RenderError>) {
    let mut p = Page::new(WIDTH, HEIGHT);
    let inner = WIDTH - 2.0 * MARGIN;
    let right = WIDTH - MARGIN;

    // Sender, top left; carrier and service, top right.
    let from_w = 150.0;
    p.text(MARGIN, 10.0, from_w, bold(6.0), Align::Left, "FROM");
    p.text(
        MARGIN,
        18.0,
        from_w,
        bold(8.0),
        Align::Left,
        &l.ship_from.name,
    );
    for (i, line) in address_lines(&l.ship_from).iter().take(4).enumerate() {
        let y = 28.0 + 9.5 * i as f32;
        p.text(MARGIN, y, from_w, regular(8.0), Align::Left, line);
    }
    let carrier_x = MARGIN + from_w + 8.0;
    let carrier_w = right - carrier_x;
    p.text_shrink(
        carrier_x,
        10.0,
        carrier_w,
        bold(18.0),
        10.0,
        Align::Right,
        &l.carrier,
    );
    p.text_shrink(
        carrier_x,
        32.0,
        carrier_w,
        bold(10.0),
        7.0,
        Align::Right,
        &l.service,
    );
    p.hline(MARGIN, 70.0, inner, 1.5);

    // Recipient: the part a sorter reads from a distance.
    p.text(MARGIN, 76.0, inner, bold(7.0), Align::Left, "SHIP TO");
    p.text_shrink(
        MARGIN,
        86.0,
        inner,
        bold(14.0),
        9.0,
        Align::Left,
        &l.ship_to.name,
    );
    let lines = address_lines(&l.ship_to);
    let last = lines.len().saturating_sub(1);
    for (i, line) in lines.iter().take(5).enumerate() {
        let y = 104.0 + 14.0 * i as f32;
        // The country (last line) in bold: it routes the parcel.
        let style = if i == last { bold(12.0) } else { regular(12.0) };
        p.text_shrink(MARGIN, y, inner, style, 9.0, Align::Left, line);
    }
    p.hline(MARGIN, 176.0, inner, 1.5);

    // Package, weight, dimensions in three cells.
    let cells = [MARGIN, 100.0, 190.0];
    p.vline(cells[1] - 5.0, 176.0, 46.0, 1.0);
    p.vline(cells[2] - 5.0, 176.0, 46.0, 1.0);
    p.text(cells[0], 182.0, 80.0, bold(6.0), Align::Left, "PACKAGE");
    let of = format!("{}/{}", l.package.index, l.package.count);
    p.text_shrink(cells[0], 192.0, 80.0, bold(22.0), 10.0, Align::Left, &of);
    p.text(cells[1], 182.0, 84.0, bold(6.0), Align::Left, "WEIGHT");
    let weight = format_weight(l.package.weight_g);
    p.text_shrink(cells[1], 194.0, 84.0, bold(14.0), 8.0, Align::Left, &weight);
    p.text(
        cells[2],
        182.0,
        right - cells[2],
        bold(6.0),
        Align::Left,
        "DIMENSIONS",
    );
    let dims = l
        .package
        .dimensions_mm
        .map_or_else(|| "-".to_owned(), format_dimensions);
    p.text_shrink(
        cells[2],
        196.0,
        right - cells[2],
        bold(10.0),
        6.0,
        Align::Left,
        &dims,
    );
    p.hline(MARGIN, 222.0, inner, 1.0);

    // Order reference and ship date.
    p.text(cells[0], 228.0, 170.0, bold(6.0), Align::Left, "ORDER");
    p.text_shrink(
        cells[0],
        237.0,
        170.0,
        bold(12.0),
        8.0,
        Align::Left,
        &l.order_ref,
    );
    p.text(
        cells[2],
        228.0,
        right - cells[2],
        bold(6.0),
        Align::Left,
        "SHIP DATE",
    );
    let date = l.shipped_on.format("%Y-%m-%d").to_string();
    p.text(
        cells[2],
        238.0,
        right - cells[2],
        regular(10.0),
        Align::Left,
        &date,
    );
    p.hline(MARGIN, 258.0, inner, 1.5);

    // Tracking barcode: the quiet zones reach into the margins' width, which
    // is why it gets the full label width.
    p.text(MARGIN, 264.0, inner, bold(7.0), Align::Left, "TRACKING #");
    let barcode_error =
        p.barcode_or_notice(0.0, 278.0, WIDTH, 96.0, MAX_MODULE_DOTS, &l.tracking_number);
    p.text_shrink(
        MARGIN,
        380.0,
        inner,
        bold(13.0),
        8.0,
        Align::Center,
        &l.tracking_number,
    );
    (p, barcode_error)
}

#[cfg(test)]
mod tests {
    use super::super::fixtures;
    use super::super::layout::{Item, QUIET_MODULES};
    use super::*;

    #[test]
    fn everything_is_on_the_label() {
        let l = fixtures::label();
        let (page, err) = layout(&l);
        assert!(err.is_none());
        let texts = page.texts();
        for expected in [
            "DHL Express",
            "Express Worldwide",
            "Ada Lovelace",
            "1/2",
            "2.35 kg",
            "30 x 20 x 10 cm",
            "SO-1001",
            "2025-03-14",
            "1Z999AA10123456784",
        ] {
            assert!(
                texts.contains(&expected),
                "{expected} missing from {texts:?}"
            );
        }
    }

    #[test]
    fn items_stay_inside_the_label_with_quiet_zones() {
        let (page, _) = layout(&fixtures::label());
        for item in &page.items {
            match item {
                Item::Text(t) => assert!(t.x >= 0.0 && t.x < WIDTH && t.y + t.size < HEIGHT),
                Item::Rect { x, y, w, h, .. } => {
                    assert!(*x >= 0.0 && x + w <= WIDTH && *y >= 0.0 && y + h <= HEIGHT)
                }
                Item::Bars(b) => {
                    let quiet = QUIET_MODULES as f32 * b.module;
                    let end = b.x + b.symbol.modules() as f32 * b.module;
                    assert!(b.x >= quiet && end + quiet <= WIDTH, "{} {}", b.x, end);
                }
            }
        }
    }

    #[test]
    fn unencodable_tracking_number_gives_a_notice() {
        let mut l = fixtures::label();
        l.tracking_number = "TRACK-É".into();
        let (page, err) = layout(&l);
        assert!(matches!(err, Some(RenderError::Barcode(_))));
        assert!(page.texts().contains(&"NO BARCODE"));
        assert!(!page.items.iter().any(|i| matches!(i, Item::Bars(_))));
    }
}
