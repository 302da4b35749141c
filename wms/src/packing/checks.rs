//! What is checked before a pack writes anything: whether the parcel can
//! reach its recipient at all.

use super::{package_info, party};
use crate::carriers::{Carrier, PieceLimits};
use depot_labels::{Party, ShippingLabel};
use depot_protocol::order::Order;
use depot_protocol::shipping::Package;
use depot_protocol::{FieldError, now};

/// What keeps a parcel from being delivered, found before anything is
/// written: an address its country's rules find wanting (no one, no
/// street, a postcode not of the country's form, ...); a piece the
/// carrier's service does not take; an address too long to print whole on
/// a label.
pub(super) fn shipping_problems(
    order: &Order,
    carrier: &dyn Carrier,
    limits: PieceLimits,
    packages: &[Package],
    from: &Party,
    with_sscc: bool,
) -> Vec<FieldError> {
    let a = &order.shipping_address;
    let mut errors = order.address_issues.clone();
    for (i, p) in packages.iter().enumerate() {
        let dims = p.dimensions.map(|d| [d.length_mm, d.width_mm, d.height_mm]);
        for problem in limits.problems(p.weight_g, dims) {
            errors.push(FieldError::new(
                format!("packages[{i}]"),
                format!(
                    "package {} {problem} ({} {})",
                    i + 1,
                    carrier.name(),
                    order.service
                ),
            ));
        }
    }
    if let (true, Some(first)) = (errors.is_empty(), packages.first()) {
        // The label of the first package stands for all: they differ only
        // in numbers of a fixed width.
        let sample = carrier.tracking_number(i64::MAX >> 11, 0);
        let label = ShippingLabel {
            carrier: carrier.name().to_owned(),
            service: order.service.clone(),
            piece_number: carrier.piece_number(&sample, 99, 99),
            tracking_number: sample,
            // Every SSCC takes the same room.
            sscc: with_sscc.then(|| "106141412345678908".to_owned()),
            ship_from: from.clone(),
            ship_to: party(a, order.buyer.name.as_deref().unwrap_or("")),
            order_ref: order.external_ref.clone(),
            package: package_info(first, packages.len() as u32),
            shipped_on: now().date_naive(),
        };
        let cut = depot_labels::label_problems(&label);
        if !cut.is_empty() {
            errors.push(FieldError::new(
                "shipping_address",
                format!(
                    "too long to print whole on a 4x6 label even wrapped in small type (it would lose {:?}): shorten the address",
                    cut.join(" ")
                ),
            ));
        }
    }
    errors
}
