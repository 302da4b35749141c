//! The dispatch manifest: every shipment handed to the carrier in one run,
//! with totals and the signatures that make the hand-over binding.

use super::layout::{Align, Page, bold, regular};
use super::table::{self, A4_HEIGHT, A4_MARGIN, A4_WIDTH, Table, Tail, col};
use super::{Manifest, format_time, format_weight};

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

    let packages: u64 = man.shipments.iter().map(|s| u64::from(s.packages)).sum();
    let weight = man
        .shipments
        .iter()
        .fold(0i64, |w, s| w.saturating_add(s.weight_g));
    let summary = [
        ("Shipments", man.shipments.len().to_string()),
        ("Packages", packages.to_string()),
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

    let shipments = Table {
        caption: None,
        columns: vec![
            col("#", 28.0, Align::Right),
            col("Tracking number", 150.0, Align::Left),
            col("Order", 95.0, Align::Left),
            col("Pkgs", 40.0, Align::Right),
            col("Weight", 62.0, Align::Right),
            col("City", 85.0, Align::Left),
            col("Country", 55.0, Align::Left),
        ],
        rows: man
            .shipments
            .iter()
            .enumerate()
            .map(|(i, s)| {
                vec![
                    (i + 1).to_string(),
                    s.tracking_number.clone(),
                    s.order_ref.clone(),
                    s.packages.to_string(),
                    format_weight(s.weight_g),
                    s.city.clone(),
                    s.country.clone(),
                ]
            })
            .collect(),
        total: Some(vec![
            String::new(),
            "Total".into(),
            format!("{} shipments", man.shipments.len()),
            packages.to_string(),
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
    let mut pages = table::flow(p, 160.0, &[shipments], &continued, Some(tail));
    let foot = format!("Run {}, {}, closed {closed}", man.run_id, man.carrier);
    table::footers(&mut pages, &foot);
    pages
}

#[cfg(test)]
mod tests {
    use super::super::fixtures;
    use super::*;

    #[test]
    fn totals_and_signatures() {
        let pages = pages(&fixtures::manifest(3));
        assert_eq!(pages.len(), 1);
        let texts = pages[0].texts();
        assert!(texts.contains(&"3 shipments"), "{texts:?}");
        // 1+2+3 packages and 1.5+3.0+4.5 kg.
        assert!(texts.contains(&"6"));
        assert!(texts.contains(&"9 kg"));
        assert!(texts.contains(&"Driver signature"));
    }

    #[test]
    fn long_manifest_paginates_with_every_row() {
        let pages = pages(&fixtures::manifest(150));
        assert!(pages.len() >= 4, "{}", pages.len());
        let tracked: usize = pages
            .iter()
            .map(|p| p.texts().iter().filter(|t| t.starts_with("JD0146")).count())
            .sum();
        assert_eq!(tracked, 150);
        let last = pages.last().map(|p| p.texts()).unwrap_or_default();
        assert!(last.contains(&"Driver signature"));
    }
}
