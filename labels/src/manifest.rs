//! The dispatch manifest: every shipment handed to the carrier in one run,
//! with totals and the signatures that make the hand-over binding.

use super::layout::{Align, Page, bold, regular};
use super::table::{self, A4_HEIGHT, A4_MARGIN, A4_WIDTH, Kind, Table, Tail, code_col, col};
use super::{Manifest, format_time, format_weight};
use std::collections::BTreeSet;

pub(crate) fn pages(man: &Manifest) -> Vec<Page> {
    let m = A4_MARGIN;
    let inner = A4_WIDTH - 2.0 * m;
    let mut p = Page::new(A4_WIDTH, A4_HEIGHT);
    p.text(m, 40.0, 300.0, bold(22.0), Align::Left, "DISPATCH MANIFEST");
    p.text_shrink(
        350.0,
        42.0,
        inner - 310.0,
        bold(16.0),
        9.0,
        Align::Right,
        &man.carrier,
    );

    let closed = format_time(&man.closed_at);
    let info = [
        ("Run", man.run_id.as_str()),
        ("Carrier", man.carrier.as_str()),
        ("Warehouse", man.warehouse.as_str()),
        ("Closed", closed.as_str()),
    ];
    for (k, (label, value)) in info.iter().enumerate() {
        let y = 80.0 + 15.0 * k as f32;
        p.text(m, y + 1.0, 70.0, regular(9.0), Align::Left, label);
        p.text(m + 72.0, y, 220.0, bold(10.0), Align::Left, value);
    }

    let shipments: BTreeSet<&str> = man
        .packages
        .iter()
        .map(|p| p.tracking_number.as_str())
        .collect();
    let weight = man
        .packages
        .iter()
        .fold(0i64, |w, p| w.saturating_add(p.package.weight_g));
    let summary = [
        ("Shipments", shipments.len().to_string()),
        ("Packages", man.packages.len().to_string()),
        ("Total weight", format_weight(weight)),
    ];
    let box_x = 360.0;
    let box_w = A4_WIDTH - m - box_x;
    p.stroke(box_x, 76.0, box_w, 58.0, 1.0);
    for (k, (label, value)) in summary.iter().enumerate() {
        let y = 82.0 + 16.0 * k as f32;
        p.text(box_x + 8.0, y + 1.0, 80.0, regular(9.0), Align::Left, label);
        p.text(
            box_x + 8.0,
            y,
            box_w - 16.0,
            bold(11.0),
            Align::Right,
            value,
        );
    }
    p.hline(m, 150.0, inner, 1.0);

    // One row per package, each with the barcodes a driver or a hub scans
    // (its own tracking number, its SSCC) and where it goes; text wraps,
    // nothing is cut.
    let rows = Table {
        caption: None,
        columns: vec![
            col("#", 20.0, Align::Right),
            code_col("Package", 165.0, Kind::Code),
            code_col("SSCC", 130.0, Kind::Sscc),
            col("Order", 52.0, Align::Left),
            col("Weight", 44.0, Align::Right),
            col("Postcode", 50.0, Align::Left),
            col("City", 54.0, Align::Left),
        ],
        rows: man
            .packages
            .iter()
            .enumerate()
            .map(|(i, p)| {
                vec![
                    (i + 1).to_string(),
                    p.piece_number.clone(),
                    p.sscc.clone().unwrap_or_default(),
                    format!("{} ({}/{})", p.order_ref, p.package.index, p.package.count),
                    format_weight(p.package.weight_g),
                    p.postal_code.clone(),
                    format!("{}, {}", p.city, p.country),
                ]
            })
            .collect(),
        total: Some(vec![
            String::new(),
            format!("{} shipments", shipments.len()),
            format!("{} packages", man.packages.len()),
            String::new(),
            format_weight(weight),
            String::new(),
            String::new(),
        ]),
    };
    let continued = |page: &mut Page| {
        let title = format!(
            "DISPATCH MANIFEST {}, {} (continued)",
            man.run_id, man.carrier
        );
        page.text(m, 40.0, inner, bold(12.0), Align::Left, &title);
        70.0
    };
    let signatures = |page: &mut Page, y: f32| {
        page.text(
            m,
            y + 4.0,
            inner,
            bold(10.0),
            Align::Left,
            "Handed over to the carrier",
        );
        let half = (inner - 30.0) / 2.0;
        let fields = [
            (m, 40.0, "Driver name"),
            (m, 76.0, "Driver signature"),
            (m + half + 30.0, 40.0, "Warehouse staff"),
            (m + half + 30.0, 76.0, "Date and time"),
        ];
        for (x, dy, label) in fields {
            page.hline(x, y + dy, half, 0.75);
            page.text(x, y + dy + 3.0, half, regular(7.5), Align::Left, label);
        }
    };
    let tail = Tail {
        height: 92.0,
        draw: &signatures,
    };
    let mut pages = table::flow(p, 160.0, &[rows], &continued, Some(tail));
    let foot = format!("Run {}, {}, closed {closed}", man.run_id, man.carrier);
    table::footers(&mut pages, &foot);
    pages
}

#[cfg(test)]
mod tests {
    use super::super::{fixtures, readback};
    use super::*;

    /// Every package's own barcode and its SSCC read back from the page.
    #[test]
    fn every_package_barcode_reads_back() {
        let man = fixtures::manifest(4);
        let pages = pages(&man);
        let found: Vec<String> = pages
            .iter()
            .flat_map(readback::decode)
            .map(|(_, t)| t)
            .collect();
        for p in &man.packages {
            assert!(
                found.contains(&p.piece_number),
                "{} in {found:?}",
                p.piece_number
            );
            let sscc = p.sscc.clone().unwrap_or_default();
            assert!(found.contains(&format!("00{sscc}")), "{sscc} in {found:?}");
        }
    }

    #[test]
    fn totals_and_signatures() {
        let pages = pages(&fixtures::manifest(3));
        assert_eq!(pages.len(), 1);
        let texts = pages[0].texts();
        assert!(texts.contains(&"3 shipments"), "{texts:?}");
        // 1+2+3 packages and 1.5+3.0+4.5 kg.
        assert!(texts.contains(&"6 packages"));
        assert!(texts.contains(&"9 kg"));
        assert!(texts.contains(&"Driver signature"));
        assert!(texts.contains(&"75002"), "the postcode");
    }

    #[test]
    fn long_manifest_paginates_with_every_row() {
        let man = fixtures::manifest(150);
        let pages = pages(&man);
        assert!(pages.len() >= 4, "{}", pages.len());
        let tracked: usize = pages
            .iter()
            .map(|p| p.texts().iter().filter(|t| t.starts_with("JD0146")).count())
            .sum();
        assert_eq!(tracked, man.packages.len());
        let last = pages.last().map(|p| p.texts()).unwrap_or_default();
        assert!(last.contains(&"Driver signature"));
    }
}
