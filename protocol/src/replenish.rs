//! Replenishment: a pick location keeps a min and a max of an item; when
//! what leaves it (a dispatch, an adjustment) takes it below its min, or a
//! wave needs more of it than it holds, a task moves stock up to its max
//! (or to what the wave needs) from reserve, the lot that expires first
//! first (FEFO). What to move and from where is decided here; nothing here
//! reads a database.

use crate::validate::Check;
use crate::{BusinessId, FieldError, ItemId, ReplenishTaskId, WarehouseId};
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

/// The most a level may keep.
pub const MAX_LEVEL: i64 = 1_000_000;

/// A pick location's level of one item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ReplenishLevel {
    pub business_id: BusinessId,
    pub warehouse_id: WarehouseId,
    /// The pick location's code.
    pub location: String,
    pub item_id: ItemId,
    /// Below this many units, a task refills the location.
    pub min: i64,
    /// What a refill brings it up to.
    pub max: i64,
    pub updated_at: DateTime<Utc>,
}

/// Body of `PUT /v1/replenishment/{business_id}/levels`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct LevelSet {
    pub warehouse_id: WarehouseId,
    /// A `pick` location of the warehouse.
    #[schema(format = "code", max_length = 32)]
    pub location: String,
    pub item_id: ItemId,
    /// 0 to 1000000, less than `max`.
    #[schema(minimum = 0, maximum = 1_000_000)]
    pub min: i64,
    /// 1 to 1000000.
    #[schema(minimum = 1, maximum = 1_000_000)]
    pub max: i64,
}

impl LevelSet {
    pub fn parse(self) -> Result<Self, Vec<FieldError>> {
        let mut c = Check::new();
        let location = crate::location::check_code(&mut c, "location", &self.location);
        c.range("min", self.min, 0, MAX_LEVEL);
        c.range("max", self.max, 1, MAX_LEVEL);
        if self.min >= self.max {
            c.fail("min", format!("must be less than max ({})", self.max));
        }
        c.finish(Self { location, ..self })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReplenishStatus {
    /// Units are still to move.
    Open,
    /// Every unit moved.
    Done,
}

impl ReplenishStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Done => "done",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Open, Self::Done]
            .into_iter()
            .find(|x| x.as_str() == s)
    }
}

/// Stock to move from reserve to a pick location.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ReplenishTask {
    pub id: ReplenishTaskId,
    pub business_id: BusinessId,
    pub warehouse_id: WarehouseId,
    pub item_id: ItemId,
    pub sku: String,
    pub lot: Option<String>,
    pub expiry: Option<NaiveDate>,
    /// Where the stock is taken from (a `bulk` location).
    pub from_location: String,
    /// The pick location it refills.
    pub to_location: String,
    pub quantity: i64,
    /// Units moved so far.
    pub moved: i64,
    pub remaining: i64,
    pub status: ReplenishStatus,
    /// What made it (`order:<id>`, `adjust`).
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Body of `POST /v1/replenishment/{business_id}/scan`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct ReplenishScan {
    pub task_id: ReplenishTaskId,
    /// The goods, as scanned: a barcode, GTIN, SKU or GS1 element string.
    #[schema(format = "scan", max_length = 200)]
    pub code: String,
    /// The location they were put at, as scanned from its label: the
    /// task's pick location.
    #[schema(format = "code", max_length = 32)]
    pub location: String,
    /// Units moved with this scan, 1 to 1000000; defaults to a GS1 count,
    /// else what is left of the task.
    #[schema(minimum = 1, maximum = 1_000_000)]
    pub quantity: Option<i64>,
}

impl ReplenishScan {
    pub fn parse(self) -> Result<Self, Vec<FieldError>> {
        let mut c = Check::new();
        if self.code.chars().count() > 200 {
            c.fail("code", "must be at most 200 characters");
        }
        let code = c.scan("code", &self.code, 200);
        let location = crate::location::check_code(&mut c, "location", &self.location);
        if let Some(q) = self.quantity {
            c.positive("quantity", q, MAX_LEVEL);
        }
        c.finish(Self {
            code,
            location,
            ..self
        })
    }
}

/// What a replenishment scan did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ReplenishResult {
    pub task: ReplenishTask,
    /// Units moved with this scan.
    pub moved: i64,
    /// What to tell the operator.
    pub message: String,
}

/// Units to bring a location holding `on_hand` back to `max` when it is
/// below `min`, or up to what a wave `wanted` of it when that is more than
/// it holds (and more than `max`).
pub fn need(on_hand: i64, min: i64, max: i64, wanted: i64) -> Option<i64> {
    if on_hand >= min && on_hand >= wanted {
        return None;
    }
    Some(max.max(wanted).saturating_sub(on_hand.max(0))).filter(|n| *n > 0)
}

/// Reserve stock a refill may take: a location, a lot and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub location: String,
    pub lot: Option<String>,
    pub expiry: Option<NaiveDate>,
    pub on_hand: i64,
}

/// Where a refill of `units` takes from: the lot that expires first (those
/// without an expiry last), then the location holding the least of it (to
/// empty locations), then by code; as much as that source holds, up to
/// `units`. `None` when no reserve holds any.
pub fn first_expiring(sources: &[Source], units: i64) -> Option<(Source, i64)> {
    sources
        .iter()
        .filter(|s| s.on_hand > 0)
        .min_by(|a, b| {
            (a.expiry.is_none(), a.expiry, a.on_hand, &a.location, &a.lot).cmp(&(
                b.expiry.is_none(),
                b.expiry,
                b.on_hand,
                &b.location,
                &b.lot,
            ))
        })
        .map(|s| (s.clone(), s.on_hand.min(units)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn source(location: &str, lot: Option<&str>, expiry: Option<&str>, on_hand: i64) -> Source {
        Source {
            location: location.into(),
            lot: lot.map(str::to_owned),
            expiry: expiry.and_then(|d| d.parse().ok()),
            on_hand,
        }
    }

    #[test]
    fn a_refill_is_needed_below_min_and_brings_it_to_max() {
        assert_eq!(need(4, 5, 20, 0), Some(16));
        assert_eq!(need(5, 5, 20, 0), None);
        assert_eq!(need(-3, 5, 20, 0), Some(20));
        assert_eq!(need(0, 0, 20, 0), None);
        // A wave wanting more than the face holds: up to the max, or to
        // what it wants when that is more.
        assert_eq!(need(6, 5, 20, 8), Some(14));
        assert_eq!(need(4, 2, 8, 10), Some(6));
        assert_eq!(need(10, 2, 8, 10), None);
    }

    #[test]
    fn the_lot_that_expires_first_goes_first() {
        let sources = [
            source("B-01", Some("L2"), Some("2027-06-30"), 50),
            source("B-02", Some("L1"), Some("2027-01-31"), 8),
            source("B-03", Some("L0"), None, 100),
            source("B-04", Some("L9"), Some("2026-12-31"), 0),
        ];
        let (s, n) = first_expiring(&sources, 16).expect("a source");
        assert_eq!(
            (s.location.as_str(), s.lot.as_deref(), n),
            ("B-02", Some("L1"), 8)
        );
        assert_eq!(
            first_expiring(&sources[2..], 16).map(|(s, n)| (s.location, n)),
            Some(("B-03".into(), 16))
        );
        assert_eq!(first_expiring(&sources[3..], 16), None);
    }

    #[test]
    fn levels_are_checked() {
        let set = |min, max| {
            LevelSet {
                warehouse_id: WarehouseId(1),
                location: "P-1".into(),
                item_id: ItemId(1),
                min,
                max,
            }
            .parse()
        };
        assert!(set(5, 20).is_ok());
        assert!(set(20, 20).is_err());
        assert!(set(-1, 20).is_err());
        assert!(set(0, MAX_LEVEL + 1).is_err());
    }

    proptest! {
        /// A refill never takes more than its source holds or was asked
        /// for, and takes from the soonest expiry there is.
        #[test]
        fn a_refill_takes_what_is_there_from_the_soonest_expiry(
            on_hand in proptest::collection::vec((0i64..40, prop::option::of(1u32..28)), 0..8),
            units in 1i64..100,
        ) {
            let sources: Vec<Source> = on_hand.iter().enumerate().map(|(i, (n, day))| Source {
                location: format!("B-{i}"),
                lot: Some(format!("L{i}")),
                expiry: day.and_then(|d| NaiveDate::from_ymd_opt(2027, 2, d)),
                on_hand: *n,
            }).collect();
            match first_expiring(&sources, units) {
                Some((s, n)) => {
                    prop_assert!(n > 0 && n <= units && n <= s.on_hand);
                    let sooner = sources.iter().filter(|o| o.on_hand > 0).any(|o| match (o.expiry, s.expiry) {
                        (Some(a), Some(b)) => a < b,
                        (Some(_), None) => true,
                        _ => false,
                    });
                    prop_assert!(!sooner);
                }
                None => prop_assert!(sources.iter().all(|s| s.on_hand <= 0)),
            }
        }
    }
}
