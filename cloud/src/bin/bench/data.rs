//! The data set the cloud bench loads: deterministic, so every run loads
//! the same orders, spread over channels, buyers, dates and statuses as a
//! business's history would be.

use depot_bench::sku;
use depot_protocol::order::Buyer;
use depot_protocol::order_request::{OrderCreate, OrderLineCreate};
use depot_protocol::{OrderStatus, Timestamp};
use std::time::Duration;

pub const CHANNELS: [&str; 3] = ["web", "marketplace", "pos"];
pub const CATEGORIES: [&str; 5] = ["tools", "garden", "kitchen", "toys", "office"];
pub const DAY: u64 = 86_400;

/// splitmix64: a deterministic spread of bits, so the data set is the same
/// on every run without a `rand` dependency.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// One order of the loaded history: 1–3 lines, a channel, a buyer
/// and an order date within the last 90 days.
pub fn order(i: u64, items: u64, now: Timestamp) -> OrderCreate {
    let r = mix(i);
    let first = r % items;
    let lines = (0..1 + (r >> 8) % 3)
        .map(|k| OrderLineCreate {
            sku: sku((first + k * 7919) % items),
            quantity: 1 + ((r >> (16 + k * 2)) % 3) as i64,
            unit_price: None,
        })
        .collect();
    OrderCreate {
        channel: CHANNELS[(i % 3) as usize].into(),
        external_ref: format!("L-{i}"),
        warehouse_id: None,
        buyer: Some(Buyer {
            name: None,
            email: Some(format!("buyer{}@example.com", r % 5000)),
            phone: None,
        }),
        shipping_address: Some(depot_protocol::order::Address {
            name: Some("Ana García".into()),
            line1: Some("Calle de Alcalá 123".into()),
            line2: None,
            city: Some("Madrid".into()),
            region: Some("Madrid".into()),
            postal_code: Some("28009".into()),
            country: Some("ES".into()),
        }),
        payments: None,
        lines,
        currency: None,
        carrier: None,
        service: None,
        ordered_at: Some(now - Duration::from_secs((r >> 24) % (90 * DAY))),
    }
}

/// The statuses an order is walked through after loading, so that status
/// filters select a realistic share: 30% confirmed, 10% picking, 10%
/// cancelled, the rest pending.
pub fn status_path(i: u64) -> &'static [OrderStatus] {
    match mix(i ^ 0xA5A5) % 10 {
        0..=2 => &[OrderStatus::Confirmed],
        3 => &[OrderStatus::Confirmed, OrderStatus::Picking],
        4 => &[OrderStatus::Cancelled],
        _ => &[],
    }
}
