//! Locations: the places in a warehouse stock is held (a dock door, a bulk
//! rack, a pick face), each a record with a type, a zone, a place in the
//! walking order and, optionally, a capacity.
//!
//! A location is known by its code within its warehouse (`A-01-02-03`,
//! what its label says and what a scanner reads). Stock and movements name
//! it by that code, so what a box books offline never depends on which
//! node made the record; the code never changes once made (a renamed bin
//! is a new location the stock moves to).

use crate::catalog::MAX_LOCATION;
use crate::validate::Check;
use crate::{BusinessId, FieldError, LocationId, WarehouseId};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The longest zone name.
pub const MAX_ZONE: usize = 40;
/// The largest walking-order position.
pub const MAX_SEQUENCE: i64 = 1_000_000_000;
/// The largest capacity in any unit (units, cm³, grams): a thousand tonnes
/// or cubic metres, past which a number is a typo.
pub const MAX_CAPACITY: i64 = 1_000_000_000;

/// What a location is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LocationKind {
    /// Where goods arrive and are received.
    Dock,
    /// Reserve stock, in full cases or pallets.
    Bulk,
    /// A pick face: what picking walks.
    Pick,
    /// Goods between two steps (received, waiting for putaway; picked,
    /// waiting for packing).
    Staging,
    /// Customer returns waiting for inspection.
    Returns,
    /// Held back: damaged, recalled, or waiting for a decision.
    Quarantine,
}

impl LocationKind {
    pub const ALL: [LocationKind; 6] = [
        Self::Dock,
        Self::Bulk,
        Self::Pick,
        Self::Staging,
        Self::Returns,
        Self::Quarantine,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Dock => "dock",
            Self::Bulk => "bulk",
            Self::Pick => "pick",
            Self::Staging => "staging",
            Self::Returns => "returns",
            Self::Quarantine => "quarantine",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl std::fmt::Display for LocationKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A location as stored and as sync carries it (`location.saved`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LocationRecord {
    pub id: LocationId,
    pub business_id: BusinessId,
    pub warehouse_id: WarehouseId,
    /// Unique within the warehouse; never changes.
    pub code: String,
    pub zone: Option<String>,
    #[serde(rename = "type")]
    pub kind: LocationKind,
    /// The place in the walking order (picking walks pick locations by it;
    /// locations without one come last, by code).
    pub sequence: Option<i64>,
    /// The most units it holds, of all items together.
    pub max_units: Option<i64>,
    /// The most volume it holds, in cm³ (from the items' dimensions).
    pub max_volume_cm3: Option<i64>,
    /// The most weight it holds, in grams.
    pub max_weight_g: Option<i64>,
    /// Lots of one item may share it; otherwise a lot-tracked item's lots
    /// are never put away together.
    #[serde(default)]
    pub mixed_lots: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A location with what it holds now, as the API answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Location {
    #[serde(flatten)]
    pub record: LocationRecord,
    /// Units held, of all items and lots (below zero only where the books
    /// show a discrepancy).
    pub on_hand: i64,
    /// How many items have stock here.
    pub items: i64,
}

/// Body of `POST /v1/locations/{business_id}/create` and of the edit: on
/// edit, absent fields are kept, and `warehouse_id` and `code` may only
/// repeat what they are; `null` clears an optional field.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
pub struct LocationFields {
    pub warehouse_id: Option<WarehouseId>,
    /// Letters, digits and punctuation, no spaces: what the label says.
    #[schema(format = "code", max_length = 32)]
    pub code: Option<String>,
    #[serde(default, with = "double_option")]
    /// Blank clears it, as `null` does.
    #[schema(value_type = Option<String>, format = "opt-line", max_length = 40)]
    pub zone: Option<Option<String>>,
    #[serde(rename = "type")]
    pub kind: Option<LocationKind>,
    /// 0 to 1000000000.
    #[serde(default, with = "double_option")]
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 1_000_000_000)]
    pub sequence: Option<Option<i64>>,
    /// 1 to 1000000000.
    #[serde(default, with = "double_option")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 1_000_000_000)]
    pub max_units: Option<Option<i64>>,
    /// 1 to 1000000000.
    #[serde(default, with = "double_option")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 1_000_000_000)]
    pub max_volume_cm3: Option<Option<i64>>,
    /// 1 to 1000000000.
    #[serde(default, with = "double_option")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 1_000_000_000)]
    pub max_weight_g: Option<Option<i64>>,
    /// Whether lots of one item may share it (default false: a lot-tracked
    /// item's lots are kept apart).
    pub mixed_lots: Option<bool>,
}

/// A field given as `null` is `Some(None)`, an absent one `None`.
mod double_option {
    use serde::{Deserialize, Deserializer};

    pub fn deserialize<'de, T, D>(d: D) -> Result<Option<Option<T>>, D::Error>
    where
        T: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        Option::<T>::deserialize(d).map(Some)
    }
}

/// What a create or an edit leaves: every field checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedLocation {
    pub warehouse_id: WarehouseId,
    pub code: String,
    pub zone: Option<String>,
    pub kind: LocationKind,
    pub sequence: Option<i64>,
    pub max_units: Option<i64>,
    pub max_volume_cm3: Option<i64>,
    pub max_weight_g: Option<i64>,
    pub mixed_lots: bool,
}

impl From<&LocationRecord> for CheckedLocation {
    fn from(r: &LocationRecord) -> Self {
        Self {
            warehouse_id: r.warehouse_id,
            code: r.code.clone(),
            zone: r.zone.clone(),
            kind: r.kind,
            sequence: r.sequence,
            max_units: r.max_units,
            max_volume_cm3: r.max_volume_cm3,
            max_weight_g: r.max_weight_g,
            mixed_lots: r.mixed_lots,
        }
    }
}

/// A location code as the label and the scanner give it: trimmed, one
/// word, at most [`MAX_LOCATION`] characters as sent (the description's
/// bound counts what is sent, whitespace around it included).
pub fn check_code(c: &mut Check, name: &str, raw: &str) -> String {
    if raw.chars().count() > MAX_LOCATION {
        c.fail(name, format!("must be at most {MAX_LOCATION} characters"));
        return raw.trim().to_owned();
    }
    c.code(name, raw, MAX_LOCATION)
}

impl LocationFields {
    /// Checks the fields over `current` (create passes `None`: the
    /// warehouse, the code and the type are then required).
    pub fn apply(
        self,
        current: Option<CheckedLocation>,
    ) -> Result<CheckedLocation, Vec<FieldError>> {
        let mut c = Check::new();
        let warehouse_id = match (self.warehouse_id, &current) {
            (Some(w), Some(cur)) if w != cur.warehouse_id => {
                c.fail(
                    "warehouse_id",
                    "a location cannot move to another warehouse",
                );
                w
            }
            (Some(w), _) => w,
            (None, Some(cur)) => cur.warehouse_id,
            (None, None) => {
                c.fail("warehouse_id", "is required");
                WarehouseId(0)
            }
        };
        let code = match (self.code, &current) {
            (Some(raw), Some(cur)) => {
                let code = check_code(&mut c, "code", &raw);
                if code != cur.code {
                    c.fail(
                        "code",
                        "a location's code never changes: make a new location and move the stock",
                    );
                }
                code
            }
            (Some(raw), None) => check_code(&mut c, "code", &raw),
            (None, Some(cur)) => cur.code.clone(),
            (None, None) => check_code(&mut c, "code", ""),
        };
        let kind = match (self.kind, &current) {
            (Some(k), _) => k,
            (None, Some(cur)) => cur.kind,
            (None, None) => {
                c.fail(
                    "type",
                    "is required: dock, bulk, pick, staging, returns or quarantine",
                );
                LocationKind::Bulk
            }
        };
        let keep = |given: Option<Option<i64>>, cur: Option<i64>| given.unwrap_or(cur);
        let zone = match self.zone {
            Some(Some(z)) if z.chars().count() > MAX_ZONE => {
                c.fail("zone", format!("must be at most {MAX_ZONE} characters"));
                None
            }
            Some(z) => c.opt_text("zone", z.as_deref(), MAX_ZONE),
            None => current.as_ref().and_then(|cur| cur.zone.clone()),
        };
        let sequence = keep(self.sequence, current.as_ref().and_then(|x| x.sequence));
        let sequence = c.opt_range("sequence", sequence, 0, MAX_SEQUENCE);
        let max_units = keep(self.max_units, current.as_ref().and_then(|x| x.max_units));
        let max_units = c.opt_range("max_units", max_units, 1, MAX_CAPACITY);
        let max_volume_cm3 = keep(
            self.max_volume_cm3,
            current.as_ref().and_then(|x| x.max_volume_cm3),
        );
        let max_volume_cm3 = c.opt_range("max_volume_cm3", max_volume_cm3, 1, MAX_CAPACITY);
        let max_weight_g = keep(
            self.max_weight_g,
            current.as_ref().and_then(|x| x.max_weight_g),
        );
        let max_weight_g = c.opt_range("max_weight_g", max_weight_g, 1, MAX_CAPACITY);
        let mixed_lots = self
            .mixed_lots
            .or(current.as_ref().map(|x| x.mixed_lots))
            .unwrap_or(false);
        c.finish(CheckedLocation {
            warehouse_id,
            code,
            zone,
            kind,
            sequence,
            max_units,
            max_volume_cm3,
            max_weight_g,
            mixed_lots,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(v: serde_json::Value) -> LocationFields {
        serde_json::from_value(v).expect("fields")
    }

    fn names(r: Result<CheckedLocation, Vec<FieldError>>) -> Vec<String> {
        r.err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| e.name)
            .collect()
    }

    #[test]
    fn a_create_needs_a_warehouse_a_code_and_a_type() {
        let all = names(fields(json!({})).apply(None));
        assert_eq!(all, ["warehouse_id", "code", "type"]);
        let ok = fields(
            json!({"warehouse_id": 1, "code": " Α-01-02 ", "type": "pick",
                               "zone": "Ζώνη A", "sequence": 10, "max_units": 40}),
        )
        .apply(None)
        .expect("valid");
        assert_eq!(ok.code, "Α-01-02");
        assert_eq!(ok.kind, LocationKind::Pick);
        assert_eq!(ok.zone.as_deref(), Some("Ζώνη A"));
        assert_eq!((ok.sequence, ok.max_units), (Some(10), Some(40)));
    }

    #[test]
    fn codes_are_one_word_and_short() {
        for bad in [
            "A 01",
            "",
            "\u{1}A",
            &"X".repeat(33),
            &format!(" {} ", "X".repeat(31)),
        ] {
            let r = fields(json!({"warehouse_id": 1, "code": bad, "type": "bulk"})).apply(None);
            assert_eq!(names(r), ["code"], "{bad:?}");
        }
    }

    #[test]
    fn an_edit_keeps_what_it_does_not_name_and_null_clears() {
        let cur = fields(json!({"warehouse_id": 1, "code": "B-1", "type": "bulk",
                                "zone": "north", "max_units": 5, "sequence": 3}))
        .apply(None)
        .expect("valid");
        let edited = fields(json!({"zone": null, "max_units": 9}))
            .apply(Some(cur.clone()))
            .expect("valid");
        assert_eq!(edited.zone, None);
        assert_eq!(edited.max_units, Some(9));
        assert_eq!(edited.sequence, Some(3));
        assert_eq!(edited.code, "B-1");
        let same = fields(json!({"code": "B-1", "warehouse_id": 1}))
            .apply(Some(cur.clone()))
            .expect("repeating is fine");
        assert_eq!(same, cur);
        let moved = fields(json!({"code": "B-2", "warehouse_id": 2})).apply(Some(cur));
        assert_eq!(names(moved), ["warehouse_id", "code"]);
    }

    #[test]
    fn numbers_stay_in_range() {
        let r = fields(json!({"warehouse_id": 1, "code": "C", "type": "dock",
                              "sequence": -1, "max_units": 0, "max_volume_cm3": 1_000_000_001i64,
                              "max_weight_g": 0}))
        .apply(None);
        assert_eq!(
            names(r),
            ["sequence", "max_units", "max_volume_cm3", "max_weight_g"]
        );
    }

    #[test]
    fn unknown_types_are_refused() {
        assert!(serde_json::from_value::<LocationFields>(json!({"type": "attic"})).is_err());
    }
}
