//! Sample inputs shared by the render tests.

use super::{Manifest, ManifestRow, PackageInfo, PackingSlip, Party, ShippingLabel, SlipLine};
use chrono::{DateTime, NaiveDate, TimeZone, Utc};

pub(crate) fn party(name: &str) -> Party {
    Party {
        name: name.into(),
        line1: "12 Rue de la Paix".into(),
        line2: Some("Bâtiment B".into()),
        city: "Paris".into(),
        postal_code: "75002".into(),
        region: None,
        country: "FR".into(),
    }
}

fn at() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 14, 9, 26, 53)
        .single()
        .unwrap_or_default()
}

pub(crate) fn label() -> ShippingLabel {
    ShippingLabel {
        carrier: "DHL Express".into(),
        service: "Express Worldwide".into(),
        tracking_number: "1Z999AA10123456784".into(),
        piece_number: "1Z999AA10123456784-01".into(),
        sscc: Some("340123450000000017".into()),
        ship_from: Party {
            name: "Depot Fulfilment Lyon".into(),
            line1: "4 Allée des Entrepôts".into(),
            line2: None,
            city: "Vénissieux".into(),
            postal_code: "69200".into(),
            region: None,
            country: "FR".into(),
        },
        ship_to: party("Ada Lovelace"),
        order_ref: "SO-1001".into(),
        package: PackageInfo {
            index: 1,
            count: 2,
            weight_g: 2345,
            dimensions_mm: Some((300, 200, 100)),
        },
        shipped_on: NaiveDate::from_ymd_opt(2025, 3, 14).unwrap_or_default(),
    }
}

/// A slip with `lines` lines "Widget 1".. and two packages of 3.60 kg.
pub(crate) fn slip(lines: usize) -> PackingSlip {
    PackingSlip {
        order_ref: "SO-1001".into(),
        order_id: "0195a3c2-7d1e-7b8a-9c4f-2b6e8d1a0f37".into(),
        channel: "web".into(),
        ship_to: party("Ada Lovelace"),
        lines: (1..=lines)
            .map(|i| SlipLine {
                sku: format!("SKU-{i:05}"),
                name: format!("Widget {i}"),
                quantity: (i % 3 + 1) as i64,
            })
            .collect(),
        packages: vec![
            PackageInfo {
                index: 1,
                count: 2,
                weight_g: 1200,
                dimensions_mm: Some((300, 200, 100)),
            },
            PackageInfo {
                index: 2,
                count: 2,
                weight_g: 2400,
                dimensions_mm: None,
            },
        ],
        packed_at: at(),
        warehouse: "Lyon".into(),
    }
}

/// A valid SSCC of the GS1 example prefix 4012345 and serial `n`.
pub(crate) fn sscc(n: usize) -> String {
    let body = format!("340123450{:08}", n % 100_000_000);
    let digits: Vec<u8> = body.bytes().map(|b| b - b'0').collect();
    format!(
        "{body}{}",
        depot_protocol::barcode::gs1_check_digit(&digits)
    )
}

/// `shipments` shipments with 1, 2, 3, 1, ... packages of 1.5 kg each.
pub(crate) fn manifest(shipments: usize) -> Manifest {
    let mut packages = Vec::new();
    for i in 0..shipments {
        let count = (i % 3) as u32 + 1;
        for index in 1..=count {
            let tracking = format!("JD0146{i:012}");
            packages.push(ManifestRow {
                piece_number: format!("{tracking}-{index:02}"),
                tracking_number: tracking,
                sscc: Some(sscc(i * 3 + index as usize)),
                order_ref: format!("SO-{}", 2000 + i),
                package: PackageInfo {
                    index,
                    count,
                    weight_g: 1500,
                    dimensions_mm: None,
                },
                postal_code: "75002".into(),
                city: "Paris".into(),
                country: "FR".into(),
            });
        }
    }
    Manifest {
        run_id: "RUN-2025-03-14-01".into(),
        carrier: "DHL Express".into(),
        closed_at: at(),
        warehouse: "Lyon".into(),
        packages,
    }
}
