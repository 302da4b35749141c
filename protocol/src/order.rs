//! Orders: the wire records and the one state machine both sides apply.

pub use crate::address::Address;
use crate::{BusinessId, ItemId, Money, OrderId, WarehouseId};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Order status, in the order the warehouse moves an order along.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum OrderStatus {
    Pending,
    Confirmed,
    Picking,
    Packed,
    Dispatched,
    Delivered,
    Cancelled,
}

impl OrderStatus {
    pub const ALL: [OrderStatus; 7] = [
        Self::Pending,
        Self::Confirmed,
        Self::Picking,
        Self::Packed,
        Self::Dispatched,
        Self::Delivered,
        Self::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Confirmed => "confirmed",
            Self::Picking => "picking",
            Self::Packed => "packed",
            Self::Dispatched => "dispatched",
            Self::Delivered => "delivered",
            Self::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// Whether the order still holds a stock reservation in this status.
    pub fn holds_reservation(self) -> bool {
        matches!(self, Self::Confirmed | Self::Picking | Self::Packed)
    }

    /// Whether an order in this status can be packed: confirmed or being
    /// picked. Packing in the cloud and at a station both ask here.
    pub fn is_packable(self) -> bool {
        matches!(self, Self::Confirmed | Self::Picking)
    }

    /// [`is_packable`](Self::is_packable), with what to tell the packer
    /// when it is not.
    pub fn check_packable(self, order: OrderId) -> Result<(), String> {
        if self.is_packable() {
            Ok(())
        } else {
            Err(format!(
                "order {order} is {self}: only confirmed or picking orders can be packed"
            ))
        }
    }
}

/// Units per item over lines that may name an item more than once (an
/// order's lines, a pack plan's). Saturating: a sum beyond `i64`, which
/// only an order from elsewhere could carry, is then refused by the
/// ledger's limits rather than wrapped.
pub fn units_per_item(
    lines: impl IntoIterator<Item = (ItemId, i64)>,
) -> std::collections::BTreeMap<ItemId, i64> {
    let mut units = std::collections::BTreeMap::new();
    for (item, quantity) in lines {
        let n: &mut i64 = units.entry(item).or_insert(0);
        *n = n.saturating_add(quantity);
    }
    units
}

impl fmt::Display for OrderStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a legal transition does to stock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StockEffect {
    /// Nothing changes in stock.
    None,
    /// Reserve every line's quantity (the order is promised).
    Reserve,
    /// Give the reservation back (the order will not ship).
    Release,
    /// The goods leave: release the reservation and book `shipped` movements.
    Ship,
}

/// A transition the state machine allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition {
    pub from: OrderStatus,
    pub to: OrderStatus,
    pub effect: StockEffect,
}

impl Transition {
    /// Setting the status an order already has is accepted and changes nothing,
    /// so a retried request or a duplicated sync message is harmless.
    pub fn is_noop(&self) -> bool {
        self.from == self.to
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("illegal status transition from {from} to {to}")]
pub struct TransitionError {
    pub from: OrderStatus,
    pub to: OrderStatus,
}

/// The one function that decides every status change, on the cloud and on
/// the edge. Orders move forward one step at a time along
/// `pending → confirmed → picking → packed → dispatched → delivered`; they
/// can be cancelled from any state before `dispatched`; nothing leaves
/// `cancelled` or `delivered`.
pub fn transition(from: OrderStatus, to: OrderStatus) -> Result<Transition, TransitionError> {
    use OrderStatus::*;
    let effect = match (from, to) {
        (a, b) if a == b => StockEffect::None,
        (Pending, Confirmed) => StockEffect::Reserve,
        (Confirmed, Picking) | (Picking, Packed) | (Dispatched, Delivered) => StockEffect::None,
        (Packed, Dispatched) => StockEffect::Ship,
        (Pending, Cancelled) => StockEffect::None,
        (Confirmed | Picking | Packed, Cancelled) => StockEffect::Release,
        _ => return Err(TransitionError { from, to }),
    };
    Ok(Transition { from, to, effect })
}

/// The buyer as the sales channel gave it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Buyer {
    pub name: Option<String>,
    pub email: Option<String>,
    pub phone: Option<String>,
}

/// A payment recorded against the order by the channel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Payment {
    #[schema(format = "code", max_length = 64)]
    pub method: String,
    /// 0 to 999999999999999.99.
    #[schema(value_type = String, format = "amount")]
    pub amount: Money,
    #[schema(format = "opt-line", max_length = 200)]
    pub reference: Option<String>,
    pub paid_at: Option<DateTime<Utc>>,
}

/// One order line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct OrderLine {
    pub line_no: u32,
    pub item_id: ItemId,
    pub sku: String,
    pub name: String,
    pub quantity: i64,
    pub unit_price: Money,
}

/// A recorded status change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct StatusChange {
    pub from: Option<OrderStatus>,
    pub to: OrderStatus,
    pub actor: String,
    pub note: Option<String>,
    pub at: DateTime<Utc>,
}

/// An order with everything the detail view shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Order {
    pub id: OrderId,
    pub business_id: BusinessId,
    pub warehouse_id: WarehouseId,
    pub channel: String,
    pub external_ref: String,
    pub status: OrderStatus,
    /// The carrier that will take it ("own": the built-in fleet).
    pub carrier: String,
    pub service: String,
    pub buyer: Buyer,
    pub shipping_address: Address,
    pub payments: Vec<Payment>,
    pub lines: Vec<OrderLine>,
    pub currency: String,
    pub total: Money,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// What keeps the shipping address from being shipped to, field by
    /// field (missing street, a postcode not of the country's form, ...),
    /// from each country's address rules; empty when it can be. An order
    /// with issues cannot be confirmed or packed until its address is
    /// corrected (`PUT .../address`).
    #[serde(default)]
    pub address_issues: Vec<crate::FieldError>,
    /// Status changes, oldest first (detail view only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<StatusChange>,
    /// Its customer returns, oldest first (detail view only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub returns: Vec<crate::returns::ReturnSummary>,
    /// It came for more of an item than its channel was told it could
    /// sell (see `docs/channels.md`).
    #[serde(default)]
    pub oversold: bool,
    /// While it waits for stock as a backorder: since when, and the lines
    /// its channel could not sell when it came. Gone once it is confirmed
    /// or cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backorder: Option<Backorder>,
    /// The order whose units in stock went ahead while this rest waited
    /// (its channel splits backorders).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_from: Option<OrderId>,
}

/// An order waiting for stock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Backorder {
    /// When it began to wait; backorders of a warehouse are confirmed in
    /// this order.
    pub since: DateTime<Utc>,
    /// The lines beyond what the channel could sell.
    pub lines: Vec<ShortLine>,
}

/// An order line beyond what its channel could sell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ShortLine {
    pub line_no: u32,
    pub item_id: ItemId,
    pub sku: String,
    /// Units of the item the order wants (over all its lines of it).
    pub quantity: i64,
    /// What the channel could sell of the item when the order came.
    pub available: i64,
}

/// `order.oversold`: an order came for more than its channel could sell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Oversold {
    pub order_id: OrderId,
    pub warehouse_id: WarehouseId,
    pub channel: String,
    pub lines: Vec<ShortLine>,
    /// It waits as a backorder (its channel may oversell); otherwise it
    /// stays pending for someone to decide.
    pub backordered: bool,
}

/// `order.split`: a backorder's units in stock go ahead as the order
/// itself, confirmed next; the rest waits as a new order, `backorder_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Split {
    pub order_id: OrderId,
    pub warehouse_id: WarehouseId,
    /// The lines the order keeps, whole, with the quantities that go ahead.
    pub lines: Vec<OrderLine>,
    pub total: Money,
    /// The new order holding the rest.
    pub backorder_id: OrderId,
}

impl Order {
    /// Fills in `address_issues` from the address and the buyer.
    pub fn with_address_issues(mut self) -> Self {
        self.address_issues =
            crate::address::issues(&self.shipping_address, self.buyer.name.as_deref());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::OrderStatus::*;
    use super::*;

    /// The whole table, written out by hand: every (from, to) pair and what
    /// it must do. `None` means illegal.
    fn expected(from: OrderStatus, to: OrderStatus) -> Option<StockEffect> {
        let table: &[(OrderStatus, OrderStatus, StockEffect)] = &[
            (Pending, Confirmed, StockEffect::Reserve),
            (Pending, Cancelled, StockEffect::None),
            (Confirmed, Picking, StockEffect::None),
            (Confirmed, Cancelled, StockEffect::Release),
            (Picking, Packed, StockEffect::None),
            (Picking, Cancelled, StockEffect::Release),
            (Packed, Dispatched, StockEffect::Ship),
            (Packed, Cancelled, StockEffect::Release),
            (Dispatched, Delivered, StockEffect::None),
        ];
        if from == to {
            return Some(StockEffect::None);
        }
        table
            .iter()
            .find(|(f, t, _)| *f == from && *t == to)
            .map(|(_, _, e)| *e)
    }

    #[test]
    fn every_pair_of_states() {
        let mut legal = 0;
        for from in OrderStatus::ALL {
            for to in OrderStatus::ALL {
                let got = transition(from, to);
                match expected(from, to) {
                    Some(effect) => {
                        let t = got.unwrap_or_else(|e| panic!("{from} -> {to} refused: {e}"));
                        assert_eq!(t.effect, effect, "{from} -> {to}");
                        assert_eq!((t.from, t.to), (from, to));
                        legal += 1;
                    }
                    None => assert_eq!(got, Err(TransitionError { from, to }), "{from} -> {to}"),
                }
            }
        }
        assert_eq!(legal, 9 + 7, "nine moves plus seven no-ops");
    }

    #[test]
    fn no_way_back_from_terminal_states() {
        for to in OrderStatus::ALL {
            if to != Cancelled {
                assert!(transition(Cancelled, to).is_err());
            }
            if to != Delivered {
                assert!(transition(Delivered, to).is_err());
            }
        }
    }

    #[test]
    fn cancellation_only_before_dispatch() {
        for from in OrderStatus::ALL {
            let ok = transition(from, Cancelled).is_ok();
            assert_eq!(ok, !matches!(from, Dispatched | Delivered), "{from}");
        }
    }

    #[test]
    fn units_are_summed_per_item_and_saturate() {
        let units = units_per_item([
            (ItemId(2), 3),
            (ItemId(1), 1),
            (ItemId(2), 4),
            (ItemId(3), i64::MAX),
            (ItemId(3), 1),
        ]);
        assert_eq!(
            units.into_iter().collect::<Vec<_>>(),
            [(ItemId(1), 1), (ItemId(2), 7), (ItemId(3), i64::MAX)]
        );
    }

    #[test]
    fn only_confirmed_and_picking_orders_are_packed() {
        let packable: Vec<_> = OrderStatus::ALL
            .into_iter()
            .filter(|s| s.is_packable())
            .collect();
        assert_eq!(packable, [OrderStatus::Confirmed, OrderStatus::Picking]);
        assert_eq!(
            OrderStatus::Packed.check_packable(OrderId(7)),
            Err("order 7 is packed: only confirmed or picking orders can be packed".into())
        );
        assert_eq!(OrderStatus::Picking.check_packable(OrderId(7)), Ok(()));
    }

    #[test]
    fn reservation_is_taken_and_returned_consistently() {
        // Walking any legal path, reservation is taken exactly when entering
        // a holding state and given back exactly when leaving one.
        for from in OrderStatus::ALL {
            for to in OrderStatus::ALL {
                if let Ok(t) = transition(from, to) {
                    let held_before = from.holds_reservation();
                    let held_after = to.holds_reservation();
                    let expected = match (held_before, held_after) {
                        (false, true) => StockEffect::Reserve,
                        (true, false) if to == Dispatched => StockEffect::Ship,
                        (true, false) => StockEffect::Release,
                        _ => StockEffect::None,
                    };
                    assert_eq!(t.effect, expected, "{from} -> {to}");
                }
            }
        }
    }

    #[test]
    fn error_names_both_states() {
        let err = transition(Delivered, Pending).err().map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("illegal status transition from delivered to pending")
        );
    }

    #[test]
    fn status_strings_round_trip() {
        for st in OrderStatus::ALL {
            assert_eq!(OrderStatus::parse(st.as_str()), Some(st));
            let json = serde_json::to_string(&st).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", st.as_str()));
        }
        assert_eq!(OrderStatus::parse("shipped"), None);
    }
}
