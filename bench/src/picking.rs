//! The pick workload: waves of confirmed orders, each worked through by one
//! scanner, one unit per scan, order after order, as a station working one
//! order at a time does.

use crate::load::{PARALLEL, load};
use crate::{sku, stock};
use anyhow::bail;
use depot_protocol::order_request::{OrderCreate, OrderLineCreate};
use depot_protocol::picking::{DEFAULT_WAVE_ORDERS, WaveCreate};
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, OrderId, OrderStatus, PickLineId, WarehouseId, WaveId};
use depot_wms::Wms;

/// Orders per wave, and lines per order (fewer if the catalog is smaller).
pub const WAVE_ORDERS: u32 = DEFAULT_WAVE_ORDERS;
const ORDER_LINES: u64 = 3;
/// Units per pick line at least.
const MIN_LINE_UNITS: i64 = 200;

/// The workload's size.
pub struct Workload {
    waves: usize,
    items: u64,
    pub orders: usize,
    pub lines_per_order: u64,
    /// Pick lines in all.
    lines: u64,
    pub units_per_line: i64,
    /// SKUs with stock for the workload.
    skus: usize,
}

impl Workload {
    /// `waves` waves on a catalog of `items` items, sized for `secs`
    /// seconds of `scan_budget` scans per second.
    pub fn new(waves: usize, items: u64, secs: u64, scan_budget: u64) -> Self {
        let lines_per_order = ORDER_LINES.min(items);
        let orders = waves * WAVE_ORDERS as usize;
        let lines = orders as u64 * lines_per_order;
        Self {
            waves,
            items,
            orders,
            lines_per_order,
            lines,
            units_per_line: MIN_LINE_UNITS.max((scan_budget * secs).div_ceil(lines.max(1)) as i64),
            // Line `g` of the whole set is for SKU `g % items`: an order's
            // lines are consecutive, so distinct.
            skus: items.min(lines) as usize,
        }
    }

    /// The engine writes that [`Self::seed`] and [`Self::waves`] make.
    pub fn writes(&self) -> usize {
        self.skus + 2 * self.orders + self.waves
    }

    /// Receives in `warehouse` the stock the orders need, and creates the
    /// orders there, confirmed; `at` names the place in the progress.
    pub async fn seed(
        &self,
        wms: &Wms,
        caller: Caller,
        warehouse: WarehouseId,
        at: &str,
    ) -> anyhow::Result<()> {
        let (items, per_order, units) = (self.items, self.lines_per_order, self.units_per_line);
        let lines = self.lines;
        // Each SKU gets exactly what its lines need.
        let received = |s: usize| (lines - s as u64).div_ceil(items) as i64 * units;
        let what = format!("stock ({at})");
        stock::receive(wms, caller, warehouse, &what, self.skus, received).await?;
        let what = format!("confirmed orders ({at})");
        load(&what, self.orders, PARALLEL, |o| {
            let wms = wms.clone();
            let req = OrderCreate {
                channel: "web".into(),
                external_ref: format!("P-{o}"),
                warehouse_id: Some(warehouse),
                buyer: None,
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
                lines: (0..per_order)
                    .map(|k| OrderLineCreate {
                        sku: sku((o as u64 * per_order + k) % items),
                        quantity: units,
                        unit_price: None,
                    })
                    .collect(),
                currency: None,
                carrier: None,
                service: None,
                ordered_at: None,
            };
            async move {
                let id = wms.create_order(caller, req).await?.0.id;
                wms.set_order_status(caller, id, OrderStatus::Confirmed, None)
                    .await?;
                Ok(())
            }
        })
        .await?;
        Ok(())
    }

    /// Makes the waves in `warehouse` of `wms`, `parallel` at a time, and
    /// answers their walks in the order the waves were made; fails unless
    /// each wave took a full share of the orders.
    pub async fn waves(
        &self,
        wms: &Wms,
        business: BusinessId,
        warehouse: WarehouseId,
        parallel: usize,
        at: &str,
    ) -> anyhow::Result<Vec<Walk>> {
        let mut built = load(&format!("waves ({at})"), self.waves, parallel, |_| {
            let wms = wms.clone();
            let req = WaveCreate {
                warehouse_id: warehouse,
                max_orders: Some(WAVE_ORDERS),
                carrier: None,
                cutoff: None,
            };
            async move { Ok(wms.create_wave(business, req).await?) }
        })
        .await?;
        built.sort_by_key(|w| w.id);
        let expected = i64::from(WAVE_ORDERS) * self.lines_per_order as i64 * self.units_per_line;
        let mut walks = Vec::with_capacity(built.len());
        for w in built {
            if w.pick_lists.len() != WAVE_ORDERS as usize || w.units_total != expected {
                bail!(
                    "wave {} has {} orders and {} units, not {WAVE_ORDERS} and {expected}",
                    w.id,
                    w.pick_lists.len(),
                    w.units_total
                );
            }
            let lines = w
                .pick_lists
                .into_iter()
                .flat_map(|p| p.lines)
                .map(|l| Line {
                    id: l.id,
                    order: l.order_id,
                    sku: l.sku,
                    units: l.remaining,
                })
                .collect();
            walks.push(Walk { wave: w.id, lines });
        }
        Ok(walks)
    }
}

/// One pick line: `units` of `sku` for `order`.
pub struct Line {
    pub id: PickLineId,
    pub order: OrderId,
    pub sku: String,
    pub units: i64,
}

/// A wave's pick lines as its scanner walks them: order after order, each
/// order's lines in walking order.
pub struct Walk {
    pub wave: WaveId,
    lines: Vec<Line>,
}

impl Walk {
    /// Where a scanner starts: on the first line, with all its units left.
    pub fn position(&self) -> Position {
        Position {
            line: 0,
            left: self.lines.first().map_or(0, |l| l.units),
        }
    }

    /// Takes the next unit to scan at `at`: one unit of its line while the
    /// line has units left, else of the next that has; none at the end of
    /// the walk. The position is owned, so tasks that share a station (an
    /// open loop's, each sending one scan) can keep it behind a lock and
    /// take a unit each.
    pub fn take(&self, at: &mut Position) -> Option<&Line> {
        loop {
            let line = self.lines.get(at.line)?;
            if at.left > 0 {
                at.left -= 1;
                return Some(line);
            }
            at.line += 1;
            at.left = self.lines.get(at.line)?.units;
        }
    }

    /// A scanner at the start of the walk.
    pub fn start(&self) -> Walker<'_> {
        let mut lines = self.lines.iter();
        let line = lines.next();
        Walker {
            lines,
            line,
            left: line.map_or(0, |l| l.units),
        }
    }
}

/// Where a scanner is on its walk, as owned state ([`Walk::take`] moves
/// it): the index of its line in the walk, and the units left to take on
/// that line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub left: i64,
}

/// Where a scanner is on its walk.
pub struct Walker<'a> {
    lines: std::slice::Iter<'a, Line>,
    line: Option<&'a Line>,
    /// Units the scanner has left to scan on its line.
    pub left: i64,
}

impl<'a> Walker<'a> {
    /// The line to scan: this one while it has units left, else the next
    /// that has; none at the end of the walk.
    pub fn line(&mut self) -> Option<&'a Line> {
        while self.left <= 0 {
            self.line = self.lines.next();
            self.left = self.line?.units;
        }
        self.line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(id: i64, units: i64) -> Line {
        Line {
            id: PickLineId(id),
            order: OrderId(id / 10),
            sku: crate::sku(id as u64),
            units,
        }
    }

    #[test]
    fn a_position_takes_every_unit_of_each_line_then_ends() {
        // A line with nothing to pick is passed over.
        let walk = Walk {
            wave: WaveId(7),
            lines: vec![line(11, 2), line(12, 0), line(21, 1), line(22, 3)],
        };
        let mut at = walk.position();
        assert_eq!(at, Position { line: 0, left: 2 });
        let taken: Vec<i64> = std::iter::from_fn(|| walk.take(&mut at))
            .map(|l| l.id.0)
            .collect();
        assert_eq!(taken, [11, 11, 21, 22, 22, 22]);
        assert_eq!(walk.take(&mut at).map(|l| l.id), None);
        assert_eq!(walk.take(&mut at).map(|l| l.id), None);

        let mut at = walk.position();
        assert_eq!(walk.take(&mut at).map(|l| l.id), Some(PickLineId(11)));
        assert_eq!(at, Position { line: 0, left: 1 });
        walk.take(&mut at);
        assert_eq!(walk.take(&mut at).map(|l| l.id), Some(PickLineId(21)));
        assert_eq!(at, Position { line: 2, left: 0 });

        let empty = Walk {
            wave: WaveId(8),
            lines: Vec::new(),
        };
        let mut at = empty.position();
        assert_eq!(at, Position { line: 0, left: 0 });
        assert!(empty.take(&mut at).is_none());
    }
}
