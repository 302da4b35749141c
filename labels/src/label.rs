//! The 4×6 in shipping label, laid out once for ZPL and PDF.
//!
//! Top to bottom, as carriers' labels read: sender and carrier, the
//! recipient in the largest type, package facts, the order, then the
//! tracking barcode with its number in clear.

use super::layout::{Align, Page, bold, regular};
use super::{ShippingLabel, address_lines, format_dimensions, format_weight};

/// 4×6 in in points.
pub(crate) const WIDTH: f32 = 288.0;
pub(crate) const HEIGHT: f32 = 432.0;
/// Kept clear all round: thermal printers do not print to the very edge.
pub(crate) const MARGIN: f32 = 10.0;
/// Widest module on a label: 4 dots (0.5 mm), readable by any scanner.
const MAX_MODULE_DOTS: u32 = 4;
/// The smallest type an address may shrink to: about 2.5 mm capitals,
/// still read by a sorter at arm's length.
pub(crate) const MIN_ADDRESS_SIZE: f32 = 7.0;

/// The label page. Text that could not be printed whole is listed in its
/// `cut` (see [`super::label_problems`]).
pub(crate) fn layout(l: &ShippingLabel) -> Page {
    let mut p = Page::new(WIDTH, HEIGHT);
    let inner = WIDTH - 2.0 * MARGIN;
    let right = WIDTH - MARGIN;

    // Sender, top left; carrier and service, top right.
    let from_w = 150.0;
    p.text(MARGIN, 8.0, from_w, bold(6.0), Align::Left, "FROM");
    let from = address_lines(&l.ship_from);
    let mut paras = vec![(l.ship_from.name.as_str(), true)];
    paras.extend(from.iter().map(|line| (line.as_str(), false)));
    p.text_block(MARGIN, 16.0, from_w, 46.0, 8.0, 5.0, &paras);
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
    p.hline(MARGIN, 64.0, inner, 1.5);

    // Recipient: the part a sorter reads from a distance. Every line is
    // printed whole, wrapped and shrunk as needed; the country (last line)
    // in bold: it routes the parcel.
    p.text(MARGIN, 68.0, inner, bold(7.0), Align::Left, "SHIP TO");
    let to = address_lines(&l.ship_to);
    let last = to.len().saturating_sub(1);
    let mut paras = vec![(l.ship_to.name.as_str(), true)];
    paras.extend(
        to.iter()
            .enumerate()
            .map(|(i, line)| (line.as_str(), i == last)),
    );
    p.text_block(MARGIN, 77.0, inner, 95.0, 13.0, MIN_ADDRESS_SIZE, &paras);
    p.hline(MARGIN, 174.0, inner, 1.5);

    // Package, weight, dimensions in three cells.
    let cells = [MARGIN, 100.0, 190.0];
    p.vline(cells[1] - 5.0, 174.0, 38.0, 1.0);
    p.vline(cells[2] - 5.0, 174.0, 38.0, 1.0);
    p.text(cells[0], 178.0, 80.0, bold(6.0), Align::Left, "PACKAGE");
    let of = format!("{}/{}", l.package.index, l.package.count);
    p.text_shrink(cells[0], 186.0, 80.0, bold(20.0), 10.0, Align::Left, &of);
    p.text(cells[1], 178.0, 84.0, bold(6.0), Align::Left, "WEIGHT");
    let weight = format_weight(l.package.weight_g);
    p.text_shrink(cells[1], 188.0, 84.0, bold(14.0), 8.0, Align::Left, &weight);
    p.text(
        cells[2],
        178.0,
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
        190.0,
        right - cells[2],
        bold(10.0),
        6.0,
        Align::Left,
        &dims,
    );
    p.hline(MARGIN, 212.0, inner, 1.0);

    // Order reference (on two lines if it must) and ship date.
    p.text(cells[0], 216.0, 170.0, bold(6.0), Align::Left, "ORDER");
    p.text_block(
        cells[0],
        224.0,
        170.0,
        20.0,
        12.0,
        6.0,
        &[(l.order_ref.as_str(), true)],
    );
    p.text(
        cells[2],
        216.0,
        right - cells[2],
        bold(6.0),
        Align::Left,
        "SHIP DATE",
    );
    let date = l.shipped_on.format("%Y-%m-%d").to_string();
    p.text(
        cells[2],
        226.0,
        right - cells[2],
        regular(10.0),
        Align::Left,
        &date,
    );
    p.hline(MARGIN, 246.0, inner, 1.5);

    // The piece's tracking barcode and, where the business has a GS1
    // company prefix, its SSCC. The quiet zones reach into the margins'
    // width, which is why each gets the full label width.
    p.text(MARGIN, 250.0, inner, bold(7.0), Align::Left, "TRACKING #");
    let tall = if l.sscc.is_some() { 56.0 } else { 108.0 };
    p.code(0.0, 260.0, WIDTH, tall, MAX_MODULE_DOTS, &l.piece_number);
    p.text_shrink(
        MARGIN,
        262.0 + tall,
        inner,
        bold(12.0),
        8.0,
        Align::Center,
        &l.piece_number,
    );
    if let Some(sscc) = &l.sscc {
        p.text(MARGIN, 336.0, inner, bold(7.0), Align::Left, "SSCC");
        p.sscc(0.0, 345.0, WIDTH, 52.0, MAX_MODULE_DOTS, sscc);
        let readable = format!("(00) {sscc}");
        p.text(MARGIN, 399.0, inner, bold(10.0), Align::Center, &readable);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::super::fixtures;
    use super::super::layout::{Item, QUIET_MODULES};
    use super::*;

    #[test]
    fn everything_is_on_the_label() {
        let l = fixtures::label();
        let page = layout(&l);
        assert!(page.cut.is_empty());
        let texts = page.texts();
        for expected in [
            "DHL Express",
            "Express Worldwide",
            "Ada Lovelace",
            "1/2",
            "2.345 kg",
            "30 x 20 x 10 cm",
            "SO-1001",
            "2025-03-14",
            "1Z999AA10123456784-01",
            "(00) 340123450000000017",
        ] {
            assert!(
                texts.contains(&expected),
                "{expected} missing from {texts:?}"
            );
        }
        let bars = page.items.iter().filter(|i| matches!(i, Item::Bars(_)));
        assert_eq!(bars.count(), 2, "the piece and its SSCC");
    }

    #[test]
    fn items_stay_inside_the_label_with_quiet_zones() {
        let mut long = fixtures::label();
        long.ship_to.city =
            "Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch Town".into();
        long.ship_to.line1 = "Very Long Street Name Avenue of the Republic Number 12345".into();
        for label in [fixtures::label(), long] {
            let page = layout(&label);
            assert!(page.cut.is_empty(), "{:?}", page.cut);
            for item in &page.items {
                match item {
                    Item::Text(t) => {
                        assert!(t.x >= 0.0 && t.x < WIDTH && t.y + t.size < HEIGHT - 5.0)
                    }
                    Item::Rect { x, y, w, h, .. } => {
                        assert!(*x >= 0.0 && x + w <= WIDTH && *y >= 0.0 && y + h <= HEIGHT)
                    }
                    Item::Bars(b) => {
                        let quiet = QUIET_MODULES as f32 * b.module;
                        let end = b.x + b.symbol.modules() as f32 * b.module;
                        assert!(b.x >= quiet && end + quiet <= WIDTH, "{} {}", b.x, end);
                    }
                    Item::Square(q) => panic!("no QR code for ASCII data: {q:?}"),
                }
            }
        }
    }

    #[test]
    fn a_long_address_wraps_and_keeps_every_word() {
        let mut l = fixtures::label();
        l.ship_to.city = "Saint-Remy-en-Bouzemont-Saint-Genest-et-Isson sur la Marne".into();
        l.ship_to.postal_code = "51290".into();
        l.ship_to.region = Some("Grand Est".into());
        l.ship_to.line1 = "Chemin de la Fontaine aux Loups prolongé, lieu-dit 1234bis".into();
        let page = layout(&l);
        assert!(page.cut.is_empty(), "{:?}", page.cut);
        let all = page.texts().join(" ");
        for word in ["51290", "Grand Est", "1234bis", "Marne", "FR"] {
            assert!(all.contains(word), "{word} missing from {all}");
        }
        assert!(!all.contains("..."), "{all}");
    }

    #[test]
    fn an_address_that_cannot_fit_is_reported() {
        let mut l = fixtures::label();
        l.ship_to.line1 = "Street ".repeat(200);
        assert!(!layout(&l).cut.is_empty());
    }

    #[test]
    fn data_code_128_cannot_carry_prints_as_a_qr_code() {
        let mut l = fixtures::label();
        l.piece_number = "TRACK-É".into();
        let page = layout(&l);
        assert!(page.items.iter().any(|i| matches!(i, Item::Square(_))));
        assert!(page.texts().contains(&"TRACK-É"));
    }
}
