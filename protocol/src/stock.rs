//! The stock ledger's records: movements with reason codes, and levels.

use crate::validate::Check;
use crate::{BusinessId, FieldError, ItemId, MovementId, WarehouseId};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Largest quantity one movement may carry: beyond it is a typo.
pub const MAX_QUANTITY: i64 = 1_000_000_000;
/// The most units of one item one warehouse (or one lot of it) may hold,
/// and the furthest below zero it may go as a discrepancy. Every running
/// count of units (reserved, received, rejected, picked) stays within it
/// too, so sums of them never leave the `i64` range: a movement, reception
/// or reservation that would take one beyond is refused, not stored.
pub const MAX_ON_HAND: i64 = 10 * MAX_QUANTITY;

/// `level + delta`, if the result stays within `-MAX_ON_HAND..=MAX_ON_HAND`.
pub fn next_level(level: i64, delta: i64) -> Option<i64> {
    level
        .checked_add(delta)
        .filter(|v| (-MAX_ON_HAND..=MAX_ON_HAND).contains(v))
}

/// `count + more` for a running count that never goes below zero, if the
/// result stays within `0..=MAX_ON_HAND`.
pub fn next_count(count: i64, more: i64) -> Option<i64> {
    count
        .checked_add(more)
        .filter(|v| (0..=MAX_ON_HAND).contains(v))
}
pub const MAX_NOTE: usize = 500;
pub const MAX_REF: usize = 100;

/// Why stock moved. Stored and sent as its snake_case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MovementReason {
    Received,
    Picked,
    Shipped,
    Adjusted,
    CycleCount,
    Damaged,
    Returned,
    Transfer,
}

impl MovementReason {
    pub const ALL: [MovementReason; 8] = [
        Self::Received,
        Self::Picked,
        Self::Shipped,
        Self::Adjusted,
        Self::CycleCount,
        Self::Damaged,
        Self::Returned,
        Self::Transfer,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Received => "received",
            Self::Picked => "picked",
            Self::Shipped => "shipped",
            Self::Adjusted => "adjusted",
            Self::CycleCount => "cycle_count",
            Self::Damaged => "damaged",
            Self::Returned => "returned",
            Self::Transfer => "transfer",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// The sign a `quantity` takes for reasons whose direction is implied.
    fn direction(self) -> Option<i64> {
        match self {
            Self::Received | Self::Returned => Some(1),
            Self::Picked | Self::Shipped | Self::Damaged => Some(-1),
            Self::Adjusted | Self::CycleCount | Self::Transfer => None,
        }
    }
}

impl fmt::Display for MovementReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One entry of the ledger. On-hand is the sum of the deltas.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Movement {
    pub id: MovementId,
    pub business_id: BusinessId,
    pub item_id: ItemId,
    pub warehouse_id: WarehouseId,
    pub location: Option<String>,
    pub delta: i64,
    pub reason: MovementReason,
    /// What caused it: an order, a count sheet, a transfer.
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    pub note: Option<String>,
    /// The lot, for lot-tracked items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lot: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiry: Option<chrono::NaiveDate>,
    /// Who recorded it.
    pub actor: String,
    /// Where it was recorded ("cloud", "edge:<id>").
    pub origin: String,
    pub at: DateTime<Utc>,
}

/// Stock of one item in one warehouse, with where it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct StockLevel {
    pub item_id: ItemId,
    pub sku: String,
    pub name: String,
    pub warehouse_id: WarehouseId,
    /// The item's own location in the warehouse (its pick face), if any.
    pub location: Option<String>,
    /// Physical stock: the sum of movements.
    pub on_hand: i64,
    /// Held by confirmed orders not yet dispatched.
    pub reserved: i64,
    /// Available to promise: on-hand minus reserved.
    pub available: i64,
    /// On-hand went below zero: a discrepancy to investigate.
    pub negative: bool,
    /// Where the on-hand is: per location and lot, the places holding any
    /// (or, with the list's `location`, that location alone).
    #[serde(default)]
    pub bins: Vec<BinStock>,
}

/// Stock of an item at one location (and lot).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct BinStock {
    /// The location's code; `null` for stock booked before it had one
    /// (movements that named no location, of an item with no location of
    /// its own).
    pub location: Option<String>,
    /// The lot, for lot-tracked items.
    pub lot: Option<String>,
    pub on_hand: i64,
}

/// Body of `POST /v1/inventory/{business_id}/adjust`.
///
/// - `adjusted`: `delta`, a signed non-zero correction;
/// - `cycle_count`: `counted`, what is physically there (turned into a delta);
/// - `received`, `returned`: `quantity` added; `picked`, `shipped`, `damaged`:
///   `quantity` removed;
/// - `transfer`: `quantity` moved to `to_warehouse_id`.
///
/// On-hand per item and warehouse stays within -10000000000 to 10000000000
/// (`MAX_ON_HAND`): an adjustment that would take it beyond is refused with
/// 422 naming its field, and nothing is written.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct AdjustRequest {
    pub warehouse_id: WarehouseId,
    /// The item, by id or by SKU (one of them).
    pub item_id: Option<ItemId>,
    pub sku: Option<String>,
    pub reason: MovementReason,
    /// Units moved, 1 to 1000000000 (all reasons but `adjusted` and
    /// `cycle_count`).
    #[schema(minimum = 1, maximum = 1_000_000_000)]
    pub quantity: Option<i64>,
    /// The signed correction of `adjusted`: -1000000000 to 1000000000, not 0.
    #[schema(minimum = -1_000_000_000, maximum = 1_000_000_000)]
    pub delta: Option<i64>,
    /// What a `cycle_count` found: 0 to 1000000000.
    #[schema(minimum = 0, maximum = 1_000_000_000)]
    pub counted: Option<i64>,
    /// Where a `transfer` goes: another warehouse, another location
    /// (`to_location`), or both. Absent: this warehouse.
    pub to_warehouse_id: Option<WarehouseId>,
    /// The location of `warehouse_id` the stock is at, by its code: a
    /// location that exists there. Absent: the item's own location in the
    /// warehouse (a count then counts the whole warehouse).
    #[schema(format = "code", max_length = 32)]
    pub location: Option<String>,
    /// Where a `transfer` puts the stock, by code, in the destination
    /// warehouse. Absent: the item's own location there.
    #[schema(format = "code", max_length = 32)]
    pub to_location: Option<String>,
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    pub note: Option<String>,
}

/// Which item an adjustment is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemRef {
    Id(ItemId),
    Sku(String),
}

/// What the adjustment does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdjustKind {
    /// A signed delta with its reason.
    Delta { reason: MovementReason, delta: i64 },
    /// A cycle count: the ledger is brought to `counted`.
    Count { counted: i64 },
    /// Stock leaves one warehouse and enters another.
    Transfer { to: WarehouseId, quantity: i64 },
}

/// A checked adjustment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adjustment {
    pub warehouse_id: WarehouseId,
    pub item: ItemRef,
    pub kind: AdjustKind,
    pub location: Option<String>,
    /// Where a transfer puts the stock (in `AdjustKind::Transfer`'s `to`).
    pub to_location: Option<String>,
    pub reference: Option<String>,
    pub note: Option<String>,
}

impl AdjustRequest {
    pub fn parse(self) -> Result<Adjustment, Vec<FieldError>> {
        let mut c = Check::new();
        let item = match (self.item_id, self.sku.as_deref()) {
            (Some(id), None) => ItemRef::Id(id),
            (None, Some(sku)) => ItemRef::Sku(c.code("sku", sku, crate::catalog::MAX_SKU)),
            (Some(_), Some(_)) => {
                c.fail("item_id", "give item_id or sku, not both");
                ItemRef::Id(ItemId(0))
            }
            (None, None) => {
                c.fail("item_id", "item_id or sku is required");
                ItemRef::Id(ItemId(0))
            }
        };
        let forbid = |c: &mut Check, name: &str, present: bool| {
            if present {
                c.fail(name, format!("is not used with reason {}", self.reason));
            }
        };
        let kind = match self.reason {
            MovementReason::Adjusted => {
                forbid(&mut c, "quantity", self.quantity.is_some());
                forbid(&mut c, "counted", self.counted.is_some());
                let delta = self.delta.unwrap_or(0);
                if delta == 0 {
                    c.fail("delta", "a non-zero delta is required");
                } else if !(-MAX_QUANTITY..=MAX_QUANTITY).contains(&delta) {
                    c.fail(
                        "delta",
                        format!("must be at most {MAX_QUANTITY} either way"),
                    );
                }
                AdjustKind::Delta {
                    reason: MovementReason::Adjusted,
                    delta,
                }
            }
            MovementReason::CycleCount => {
                forbid(&mut c, "quantity", self.quantity.is_some());
                forbid(&mut c, "delta", self.delta.is_some());
                let counted = match self.counted {
                    Some(n) if (0..=MAX_QUANTITY).contains(&n) => n,
                    Some(_) => {
                        c.fail("counted", format!("must be between 0 and {MAX_QUANTITY}"));
                        0
                    }
                    None => {
                        c.fail("counted", "is required for a cycle count");
                        0
                    }
                };
                AdjustKind::Count { counted }
            }
            MovementReason::Transfer => {
                forbid(&mut c, "delta", self.delta.is_some());
                forbid(&mut c, "counted", self.counted.is_some());
                let quantity = c.positive("quantity", self.quantity.unwrap_or(0), MAX_QUANTITY);
                let to = self.to_warehouse_id.unwrap_or(self.warehouse_id);
                if to == self.warehouse_id && self.to_location.is_none() {
                    c.fail(
                        "to_warehouse_id",
                        "a transfer goes to another warehouse, another location (to_location), or both",
                    );
                }
                AdjustKind::Transfer { to, quantity }
            }
            reason => {
                forbid(&mut c, "delta", self.delta.is_some());
                forbid(&mut c, "counted", self.counted.is_some());
                let quantity = c.positive("quantity", self.quantity.unwrap_or(0), MAX_QUANTITY);
                let sign = reason.direction().unwrap_or(1);
                AdjustKind::Delta {
                    reason,
                    // Saturating: a quantity out of range was refused above.
                    delta: sign.saturating_mul(quantity),
                }
            }
        };
        if self.reason != MovementReason::Transfer && self.to_warehouse_id.is_some() {
            c.fail("to_warehouse_id", "is only used with reason transfer");
        }
        if self.reason != MovementReason::Transfer && self.to_location.is_some() {
            c.fail("to_location", "is only used with reason transfer");
        }
        let location = self
            .location
            .as_deref()
            .map(|l| crate::location::check_code(&mut c, "location", l));
        let to_location = self
            .to_location
            .as_deref()
            .map(|l| crate::location::check_code(&mut c, "to_location", l));
        if matches!(kind, AdjustKind::Transfer { to, .. } if to == self.warehouse_id)
            && location.is_some()
            && location == to_location
        {
            c.fail("to_location", "must differ from location");
        }
        let reference = c.opt_text("ref", self.reference.as_deref(), MAX_REF);
        let note = c.note("note", self.note.as_deref(), MAX_NOTE);
        c.finish(Adjustment {
            warehouse_id: self.warehouse_id,
            item,
            kind,
            location,
            to_location,
            reference,
            note,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: serde_json::Value) -> Result<Adjustment, Vec<FieldError>> {
        let raw: AdjustRequest =
            serde_json::from_value(v).map_err(|e| vec![FieldError::new("body", e.to_string())])?;
        raw.parse()
    }

    fn kind(v: serde_json::Value) -> Option<AdjustKind> {
        parse(v).ok().map(|a| a.kind)
    }

    fn first_error(v: serde_json::Value) -> Option<String> {
        parse(v)
            .err()
            .and_then(|e| e.first().map(|e| e.name.clone()))
    }

    #[test]
    fn directions_follow_the_reason() {
        let cases = [
            ("received", 5),
            ("returned", 5),
            ("picked", -5),
            ("shipped", -5),
            ("damaged", -5),
        ];
        for (reason, delta) in cases {
            let k = kind(json!({"warehouse_id": 1, "item_id": 1, "reason": reason, "quantity": 5}));
            let expected =
                MovementReason::parse(reason).map(|reason| AdjustKind::Delta { reason, delta });
            assert_eq!(k, expected, "{reason}");
        }
    }

    #[test]
    fn adjusted_takes_a_signed_delta() {
        let k = kind(json!({"warehouse_id": 1, "sku": "A", "reason": "adjusted", "delta": -3}));
        assert_eq!(
            k,
            Some(AdjustKind::Delta {
                reason: MovementReason::Adjusted,
                delta: -3
            })
        );
        assert_eq!(
            first_error(json!({"warehouse_id": 1, "sku": "A", "reason": "adjusted", "delta": 0}))
                .as_deref(),
            Some("delta")
        );
    }

    #[test]
    fn cycle_count_takes_counted() {
        let k = kind(json!({"warehouse_id": 1, "sku": "A", "reason": "cycle_count", "counted": 0}));
        assert_eq!(k, Some(AdjustKind::Count { counted: 0 }));
        assert_eq!(
            first_error(json!({"warehouse_id": 1, "sku": "A", "reason": "cycle_count"})).as_deref(),
            Some("counted")
        );
        assert_eq!(
            first_error(
                json!({"warehouse_id": 1, "sku": "A", "reason": "cycle_count", "counted": -1})
            )
            .as_deref(),
            Some("counted")
        );
    }

    #[test]
    fn zero_and_negative_quantities_are_refused() {
        for q in [0, -1] {
            let e = first_error(
                json!({"warehouse_id": 1, "item_id": 1, "reason": "received", "quantity": q}),
            );
            assert_eq!(e.as_deref(), Some("quantity"));
        }
        let e = first_error(json!({"warehouse_id": 1, "item_id": 1, "reason": "received"}));
        assert_eq!(e.as_deref(), Some("quantity"));
    }

    #[test]
    fn transfer_needs_another_warehouse() {
        let k = kind(
            json!({"warehouse_id": 1, "item_id": 1, "reason": "transfer", "quantity": 2, "to_warehouse_id": 2}),
        );
        assert_eq!(
            k,
            Some(AdjustKind::Transfer {
                to: WarehouseId(2),
                quantity: 2
            })
        );
        let same = first_error(
            json!({"warehouse_id": 1, "item_id": 1, "reason": "transfer", "quantity": 2, "to_warehouse_id": 1}),
        );
        assert_eq!(same.as_deref(), Some("to_warehouse_id"));
        let nowhere = first_error(
            json!({"warehouse_id": 1, "item_id": 1, "reason": "transfer", "quantity": 2}),
        );
        assert_eq!(nowhere.as_deref(), Some("to_warehouse_id"));
        let stray = first_error(
            json!({"warehouse_id": 1, "item_id": 1, "reason": "received", "quantity": 2, "to_warehouse_id": 2}),
        );
        assert_eq!(stray.as_deref(), Some("to_warehouse_id"));
    }

    #[test]
    fn a_transfer_within_a_warehouse_names_another_location() {
        let within = parse(
            json!({"warehouse_id": 1, "item_id": 1, "reason": "transfer",
                                  "quantity": 2, "location": "DOCK", "to_location": "A-01"}),
        )
        .expect("valid");
        assert_eq!(
            within.kind,
            AdjustKind::Transfer {
                to: WarehouseId(1),
                quantity: 2
            }
        );
        assert_eq!(within.to_location.as_deref(), Some("A-01"));
        let same = first_error(
            json!({"warehouse_id": 1, "item_id": 1, "reason": "transfer",
                                      "quantity": 2, "location": "A-01", "to_location": "A-01"}),
        );
        assert_eq!(same.as_deref(), Some("to_location"));
        let stray = first_error(
            json!({"warehouse_id": 1, "item_id": 1, "reason": "received",
                                       "quantity": 2, "to_location": "A-01"}),
        );
        assert_eq!(stray.as_deref(), Some("to_location"));
        let spaced = first_error(
            json!({"warehouse_id": 1, "item_id": 1, "reason": "received",
                                        "quantity": 2, "location": "shelf 3"}),
        );
        assert_eq!(spaced.as_deref(), Some("location"));
    }

    #[test]
    fn item_must_be_named_once() {
        assert_eq!(
            first_error(json!({"warehouse_id": 1, "reason": "received", "quantity": 1})).as_deref(),
            Some("item_id")
        );
        assert_eq!(
            first_error(json!({"warehouse_id": 1, "item_id": 1, "sku": "A", "reason": "received", "quantity": 1})).as_deref(),
            Some("item_id")
        );
    }

    #[test]
    fn unknown_reason_is_a_deserialize_error() {
        assert!(
            serde_json::from_value::<AdjustRequest>(
                json!({"warehouse_id": 1, "item_id": 1, "reason": "stolen"})
            )
            .is_err()
        );
    }

    #[test]
    fn mixing_fields_of_other_reasons_is_refused() {
        let e = first_error(
            json!({"warehouse_id": 1, "item_id": 1, "reason": "received", "quantity": 1, "delta": 1}),
        );
        assert_eq!(e.as_deref(), Some("delta"));
    }
}
