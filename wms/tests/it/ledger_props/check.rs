//! What must hold after a sequence: the engine's levels, reservations
//! and bins are the model's, every channel's figure is what its rules
//! make of the model's free stock, and the ledger agrees with itself.

use super::world::World;
use super::*;

pub(super) async fn books_agree(w: &World, m: &Model) {
    for (i, item) in w.items.iter().enumerate() {
        for (j, wh) in w.whs.iter().enumerate() {
            let (on_hand, reserved) = w.wms.stock_level(*item, *wh).await.expect("level");
            assert_eq!(
                on_hand,
                m.total(i, j),
                "on-hand of item {i} in warehouse {j}"
            );
            let filter = depot_wms::ledger::StockFilter {
                warehouse_id: Some(*wh),
                item_id: Some(*item),
                ..Default::default()
            };
            let page = depot_protocol::Page::parse(None, None).expect("page");
            let depot_protocol::Listed { rows, .. } = w
                .wms
                .list_stock(w.caller.business_id, filter, page)
                .await
                .expect("list");
            for r in &rows {
                assert_eq!(
                    r.negative,
                    r.on_hand < 0,
                    "below zero is flagged, and only then: {r:?}"
                );
            }
            let mut bins: Vec<(Option<String>, i64)> = rows
                .iter()
                .flat_map(|r| &r.bins)
                .map(|b| (b.location.clone(), b.on_hand))
                .collect();
            bins.sort();
            let mut expected: Vec<(Option<String>, i64)> = (0..=QUAR)
                .map(|at| (code(at), m.on_hand.get(&(i, j, at)).copied().unwrap_or(0)))
                .filter(|(_, n)| *n != 0)
                .collect();
            expected.sort();
            assert_eq!(bins, expected, "where item {i} is in warehouse {j}");
            let expected_reserved = if j == 0 { m.reserved(i) } else { 0 };
            assert_eq!(
                reserved, expected_reserved,
                "reserved of item {i} in warehouse {j}"
            );
        }
    }
    // Each channel's figure, kept write by write, is what its rules make
    // of the model's free stock (less what pending orders sold).
    for (code, whs_of, rules) in CHANNELS {
        let mut a = depot_protocol::channel::Allocation::default();
        for (k, v) in rules {
            match *k {
                "buffer_units" => a.buffer_units = *v,
                "buffer_percent" => a.buffer_percent = Some(*v),
                "cap_units" => a.cap_units = Some(*v),
                _ => a.cap_percent = Some(*v),
            }
        }
        let page = depot_protocol::Page::parse(None, None).expect("page");
        let depot_protocol::Listed { rows, .. } = w
            .wms
            .channel_availability(w.caller.business_id, code.into(), None, page)
            .await
            .expect("availability");
        for (i, item) in w.items.iter().enumerate() {
            let pool: i64 = whs_of
                .iter()
                .map(|j| {
                    let held = if *j == 0 {
                        m.reserved(i) + m.pending(i)
                    } else {
                        0
                    };
                    (m.total(i, *j) - held).max(0)
                })
                .sum();
            let got = rows
                .iter()
                .find(|r| r.item_id == *item)
                .map(|r| r.available);
            assert_eq!(
                got,
                Some(depot_protocol::channel::available(pool, &a)),
                "what channel {code} may sell of item {i}"
            );
        }
    }
    assert!(w.wms.check_ledger().await.expect("check").is_empty());
}
