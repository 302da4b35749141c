//! The packing slip: 4×6 in labels for the ZPL printer at the packing
//! station, A4 for the PDF that goes in the box or to the customer.

use super::label::{HEIGHT, MARGIN, WIDTH};
use super::layout::{Align, Page, bold, regular};
use super::table::{self, A4_HEIGHT, A4_MARGIN, A4_WIDTH, Table, col};
use super::{PackingSlip, SlipLine, address_lines, format_dimensions, format_time, format_weight};
use depot_protocol::plural::counted;

/// Item rows on one 4×6 label, below the header.
pub(crate) const ROWS_PER_LABEL: usize = 16;
const ROW: f32 = 13.0;
const FIRST_ROW_Y: f32 = 206.0;

/// One label per `ROWS_PER_LABEL` lines (at least one), each a complete
/// slip header with "page i/n", so any one of them identifies the order.
pub(crate) fn zpl_pages(s: &PackingSlip) -> Vec<Page> {
    let chunks: Vec<&[SlipLine]> = if s.lines.is_empty() {
        vec![&[]]
    } else {
        s.lines.chunks(ROWS_PER_LABEL).collect()
    };
    let n = chunks.len();
    let inner = WIDTH - 2.0 * MARGIN;
    let units: i64 = s.lines.iter().map(|l| l.quantity).sum();
    chunks
        .iter()
        .enumerate()
        .map(|(i, chunk)| {
            let mut p = Page::new(WIDTH, HEIGHT);
            p.text(MARGIN, 10.0, 180.0, bold(14.0), Align::Left, "PACKING SLIP");
            let of = format!("page {}/{n}", i + 1);
            p.text(MARGIN, 13.0, inner, bold(9.0), Align::Right, &of);
            p.text(MARGIN, 30.0, inner, bold(6.0), Align::Left, "ORDER");
            p.text_shrink(
                MARGIN,
                38.0,
                inner,
                bold(13.0),
                8.0,
                Align::Left,
                &s.order_ref,
            );
            p.code(0.0, 56.0, WIDTH, 36.0, 3, &s.order_ref);
            let order_id = format!("Order ID: {}", s.order_id);
            p.text(MARGIN, 98.0, inner, regular(8.0), Align::Left, &order_id);
            let channel = format!("Channel: {}", s.channel);
            p.text(MARGIN, 108.0, 120.0, regular(8.0), Align::Left, &channel);
            let warehouse = format!("Warehouse: {}", s.warehouse);
            p.text(
                140.0,
                108.0,
                WIDTH - MARGIN - 140.0,
                regular(8.0),
                Align::Left,
                &warehouse,
            );
            let packed = format!("Packed: {}", format_time(&s.packed_at));
            p.text(MARGIN, 118.0, inner, regular(8.0), Align::Left, &packed);
            p.hline(MARGIN, 130.0, inner, 1.0);
            p.text(MARGIN, 134.0, inner, bold(6.0), Align::Left, "SHIP TO");
            // The whole address, wrapped and shrunk to fit, never cut.
            let mut address = address_lines(&s.ship_to);
            let tail = address.split_off(address.len().saturating_sub(2));
            let (street, place) = (address.join(", "), tail.join(", "));
            let paras = [
                (s.ship_to.name.as_str(), true),
                (street.as_str(), false),
                (place.as_str(), false),
            ];
            p.text_block(MARGIN, 142.0, inner, 32.0, 9.0, 5.0, &paras);
            p.text(
                MARGIN,
                175.0,
                inner,
                bold(8.0),
                Align::Left,
                &packages_summary(s),
            );
            p.hline(MARGIN, 188.0, inner, 1.5);

            p.text(MARGIN, 192.0, 30.0, bold(7.0), Align::Right, "QTY");
            p.text(48.0, 192.0, 76.0, bold(7.0), Align::Left, "SKU");
            p.text(128.0, 192.0, 150.0, bold(7.0), Align::Left, "ITEM");
            p.hline(MARGIN, 202.0, inner, 0.5);
            for (k, line) in chunk.iter().enumerate() {
                let y = FIRST_ROW_Y + ROW * k as f32;
                let qty = line.quantity.to_string();
                p.text(MARGIN, y, 30.0, bold(9.0), Align::Right, &qty);
                p.text(48.0, y, 76.0, regular(9.0), Align::Left, &line.sku);
                p.text(128.0, y, 150.0, regular(9.0), Align::Left, &line.name);
            }
            if s.lines.is_empty() {
                p.text(
                    48.0,
                    FIRST_ROW_Y,
                    200.0,
                    regular(9.0),
                    Align::Left,
                    "No items",
                );
            }
            let foot = format!(
                "{} in {}",
                counted(units, "unit"),
                counted(s.lines.len(), "line")
            );
            p.text(MARGIN, 416.0, inner, regular(7.0), Align::Left, &foot);
            p
        })
        .collect()
}

/// The A4 slip: header with the order barcode and address, then the item
/// and package tables over as many pages as they need.
pub(crate) fn pdf_pages(s: &PackingSlip) -> Vec<Page> {
    let mut p = Page::new(A4_WIDTH, A4_HEIGHT);
    let m = A4_MARGIN;
    p.text(m, 40.0, 290.0, bold(22.0), Align::Left, "PACKING SLIP");
    let code_x = 335.0;
    let code_w = A4_WIDTH - m - code_x;
    p.code(code_x, 20.0, code_w, 56.0, 3, &s.order_ref);
    p.text_block(
        code_x,
        78.0,
        code_w,
        20.0,
        8.0,
        5.0,
        &[(s.order_ref.as_str(), false)],
    );

    let packed = format_time(&s.packed_at);
    let info = [
        ("Order", s.order_ref.as_str()),
        ("Order ID", s.order_id.as_str()),
        ("Channel", s.channel.as_str()),
        ("Warehouse", s.warehouse.as_str()),
        ("Packed", packed.as_str()),
    ];
    for (k, (label, value)) in info.iter().enumerate() {
        let y = 100.0 + 15.0 * k as f32;
        p.text(m, y + 1.0, 70.0, regular(9.0), Align::Left, label);
        p.text(m + 72.0, y, 200.0, bold(10.0), Align::Left, value);
    }
    p.text(code_x, 100.0, code_w, bold(8.0), Align::Left, "SHIP TO");
    // The whole address, wrapped and shrunk to fit, never cut.
    let lines = address_lines(&s.ship_to);
    let last = lines.len().saturating_sub(1);
    let mut paras = vec![(s.ship_to.name.as_str(), true)];
    paras.extend(
        lines
            .iter()
            .enumerate()
            .map(|(i, l)| (l.as_str(), i == last)),
    );
    p.text_block(code_x, 111.0, code_w, 86.0, 11.0, 6.0, &paras);
    p.hline(m, 200.0, A4_WIDTH - 2.0 * m, 1.0);

    let units: i64 = s.lines.iter().map(|l| l.quantity).sum();
    let items = Table {
        caption: Some("Items".into()),
        columns: vec![
            col("#", 30.0, Align::Right),
            col("SKU", 120.0, Align::Left),
            col("Item", 305.0, Align::Left),
            col("Qty", 60.0, Align::Right),
        ],
        rows: s
            .lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let n = (i + 1).to_string();
                vec![n, l.sku.clone(), l.name.clone(), l.quantity.to_string()]
            })
            .collect(),
        total: Some(vec![
            String::new(),
            "Total".into(),
            counted(s.lines.len(), "line"),
            units.to_string(),
        ]),
    };
    let total_g = s
        .packages
        .iter()
        .fold(0i64, |w, p| w.saturating_add(p.weight_g));
    let packages = Table {
        caption: Some("Packages".into()),
        columns: vec![
            col("Package", 80.0, Align::Left),
            col("Weight", 100.0, Align::Right),
            col("Dimensions", 335.0, Align::Left),
        ],
        rows: s
            .packages
            .iter()
            .map(|p| {
                vec![
                    format!("{}/{}", p.index, p.count),
                    format_weight(p.weight_g),
                    p.dimensions_mm.map_or_else(String::new, format_dimensions),
                ]
            })
            .collect(),
        total: Some(vec![
            count(s.packages.len(), "package"),
            format_weight(total_g),
            String::new(),
        ]),
    };
    let continued = |page: &mut Page| {
        let title = format!("PACKING SLIP, order {} (continued)", s.order_ref);
        page.text(m, 40.0, A4_WIDTH - 2.0 * m, bold(12.0), Align::Left, &title);
        70.0
    };
    let mut pages = table::flow(p, 210.0, &[items, packages], &continued, None);
    let foot = format!("Order {}, {}, packed {packed}", s.order_ref, s.warehouse);
    table::footers(&mut pages, &foot);
    pages
}

fn packages_summary(s: &PackingSlip) -> String {
    let total = s
        .packages
        .iter()
        .fold(0i64, |w, p| w.saturating_add(p.weight_g));
    format!(
        "{}, {}",
        count(s.packages.len(), "package"),
        format_weight(total)
    )
}

fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures;
    use super::*;

    #[test]
    fn short_slip_is_one_label() {
        let pages = zpl_pages(&fixtures::slip(3));
        assert_eq!(pages.len(), 1);
        let texts = pages[0].texts();
        assert!(texts.contains(&"page 1/1"));
        assert!(texts.contains(&"Widget 2"));
        assert!(texts.contains(&"2 packages, 3.6 kg"));
    }

    #[test]
    fn long_slip_continues_on_further_labels() {
        let lines = ROWS_PER_LABEL * 2 + 1;
        let pages = zpl_pages(&fixtures::slip(lines));
        assert_eq!(pages.len(), 3);
        for (i, page) in pages.iter().enumerate() {
            let of = format!("page {}/3", i + 1);
            assert!(page.texts().contains(&of.as_str()));
        }
        assert!(pages[2].texts().contains(&"Widget 33"));
        assert!(!pages[1].texts().contains(&"Widget 33"));
    }

    #[test]
    fn empty_slip_says_so() {
        let pages = zpl_pages(&fixtures::slip(0));
        assert_eq!(pages.len(), 1);
        assert!(pages[0].texts().contains(&"No items"));
    }

    #[test]
    fn a4_slip_paginates() {
        assert_eq!(pdf_pages(&fixtures::slip(5)).len(), 1);
        let long = pdf_pages(&fixtures::slip(120));
        assert!(long.len() >= 3, "{}", long.len());
    }

    #[test]
    fn any_order_reference_gets_a_symbol_and_prints_whole() {
        use super::super::layout::Item;
        for reference in ["Commande-Éric-12", &"R".repeat(67), "订单-2024-东京"] {
            let mut slip = fixtures::slip(1);
            slip.order_ref = reference.to_owned();
            for page in pdf_pages(&slip).iter().chain(&zpl_pages(&slip)) {
                assert!(
                    page.items
                        .iter()
                        .any(|i| matches!(i, Item::Square(_) | Item::Bars(_))),
                    "{reference}"
                );
            }
            let a4 = pdf_pages(&slip);
            assert!(a4[0].cut.is_empty(), "{:?}", a4[0].cut);
        }
    }
}
