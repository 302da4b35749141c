//! Sales channels: where a business sells (a storefront, a marketplace, a
//! till, a B2B portal), which warehouses' stock each may sell, and how
//! much of it: the figure a channel is told it may sell is decided here,
//! from the pool its warehouses hold; nothing here reads a database.

use crate::validate::Check;
use crate::{BusinessId, ChannelId, FieldError, ItemId, WarehouseId};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Warehouses one channel may sell from.
pub const MAX_CHANNEL_WAREHOUSES: usize = 50;
/// Rows one page of the change feed holds at most.
pub const MAX_CHANGES: u32 = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChannelKind {
    Storefront,
    Marketplace,
    Pos,
    B2b,
}

impl ChannelKind {
    pub const ALL: [Self; 4] = [Self::Storefront, Self::Marketplace, Self::Pos, Self::B2b];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Storefront => "storefront",
            Self::Marketplace => "marketplace",
            Self::Pos => "pos",
            Self::B2b => "b2b",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// What happens to an order a channel sold beyond what it may sell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Backorders {
    /// It waits whole until stock covers it.
    Wait,
    /// What is in stock ships now, the rest later.
    Split,
}

impl Backorders {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Wait => "wait",
            Self::Split => "split",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Wait, Self::Split]
            .into_iter()
            .find(|b| b.as_str() == s)
    }
}

/// How much of the pool a channel may sell: what is held back for
/// everyone (the buffer), and the most this channel may take of it (the
/// cap), each in units or in percent of the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Allocation {
    pub buffer_units: i64,
    pub buffer_percent: Option<i64>,
    pub cap_units: Option<i64>,
    pub cap_percent: Option<i64>,
}

/// What a channel may sell of an item whose warehouses hold `pool` units
/// free to promise (on-hand less reservations, each warehouse at least 0):
/// the pool less the buffer (a percentage rounded up: never hold back less
/// than asked), within the cap (a percentage rounded down: never promise
/// more than allowed), and never below 0.
pub fn available(pool: i64, a: &Allocation) -> i64 {
    let pool = pool.max(0);
    let percent_up = |p: i64| (pool.saturating_mul(p).saturating_add(99)) / 100;
    let percent_down = |p: i64| pool.saturating_mul(p) / 100;
    let buffer = a.buffer_percent.map_or(a.buffer_units, percent_up).max(0);
    let mut n = pool.saturating_sub(buffer);
    if let Some(cap) = a.cap_units {
        n = n.min(cap);
    }
    if let Some(p) = a.cap_percent {
        n = n.min(percent_down(p));
    }
    n.max(0)
}

/// A sales channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Channel {
    pub id: ChannelId,
    pub business_id: BusinessId,
    /// What orders name it by (their `channel`).
    pub code: String,
    pub name: String,
    pub kind: ChannelKind,
    /// The warehouses whose stock it may sell.
    pub warehouse_ids: Vec<WarehouseId>,
    /// Units of each item held back from it.
    pub buffer_units: i64,
    /// Or a percentage of each item's pool held back from it.
    pub buffer_percent: Option<i64>,
    /// The most of each item it may sell, in units.
    pub cap_units: Option<i64>,
    /// Or in percent of the pool.
    pub cap_percent: Option<i64>,
    /// Whether it may sell beyond what it is told into backorders.
    pub oversell: bool,
    pub backorders: Backorders,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Channel {
    pub fn allocation(&self) -> Allocation {
        Allocation {
            buffer_units: self.buffer_units,
            buffer_percent: self.buffer_percent,
            cap_units: self.cap_units,
            cap_percent: self.cap_percent,
        }
    }
}

/// Body of `POST /v1/channels/{business_id}/create` and of its edit.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct ChannelFields {
    /// What its orders carry as `channel` (letters, digits, `-`, `_`; up
    /// to 64). An edit may only repeat it.
    #[schema(format = "code", max_length = 64)]
    pub code: String,
    #[schema(max_length = 100)]
    pub name: String,
    pub kind: ChannelKind,
    /// 1 to 50 warehouses of the business.
    #[schema(min_items = 1, max_items = 50)]
    pub warehouse_ids: Vec<WarehouseId>,
    /// 0 to 1000000000 units held back (default 0); not with
    /// `buffer_percent`.
    #[schema(minimum = 0, maximum = 1_000_000_000)]
    pub buffer_units: Option<i64>,
    /// 0 to 100; not with `buffer_units`.
    #[schema(minimum = 0, maximum = 100)]
    pub buffer_percent: Option<i64>,
    /// 0 to 1000000000; not with `cap_percent`.
    #[schema(minimum = 0, maximum = 1_000_000_000)]
    pub cap_units: Option<i64>,
    /// 0 to 100; not with `cap_units`.
    #[schema(minimum = 0, maximum = 100)]
    pub cap_percent: Option<i64>,
    /// Default false.
    pub oversell: Option<bool>,
    /// Default wait.
    pub backorders: Option<Backorders>,
}

/// A channel's fields, checked (the warehouses' existence is the
/// engine's to check).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedChannel {
    pub code: String,
    pub name: String,
    pub kind: ChannelKind,
    pub warehouse_ids: Vec<WarehouseId>,
    pub allocation: Allocation,
    pub oversell: bool,
    pub backorders: Backorders,
}

impl ChannelFields {
    pub fn parse(self) -> Result<CheckedChannel, Vec<FieldError>> {
        let mut c = Check::new();
        let code = c.code("code", &self.code, 64);
        let name = c.text("name", &self.name, 100);
        if self.warehouse_ids.is_empty() {
            c.fail("warehouse_ids", "must have at least 1 entry");
        }
        c.bounded("warehouse_ids", &self.warehouse_ids, MAX_CHANNEL_WAREHOUSES);
        let mut warehouse_ids = self.warehouse_ids.clone();
        warehouse_ids.sort();
        warehouse_ids.dedup();
        let max = crate::stock::MAX_QUANTITY;
        let buffer_units = c.opt_range("buffer_units", self.buffer_units, 0, max);
        let buffer_percent = c.opt_range("buffer_percent", self.buffer_percent, 0, 100);
        if buffer_units.is_some() && buffer_percent.is_some() {
            c.fail(
                "buffer_percent",
                "give buffer_units or buffer_percent, not both",
            );
        }
        let cap_units = c.opt_range("cap_units", self.cap_units, 0, max);
        let cap_percent = c.opt_range("cap_percent", self.cap_percent, 0, 100);
        if cap_units.is_some() && cap_percent.is_some() {
            c.fail("cap_percent", "give cap_units or cap_percent, not both");
        }
        c.finish(CheckedChannel {
            code,
            name,
            kind: self.kind,
            warehouse_ids,
            allocation: Allocation {
                buffer_units: buffer_units.unwrap_or(0),
                buffer_percent,
                cap_units,
                cap_percent,
            },
            oversell: self.oversell.unwrap_or(false),
            backorders: self.backorders.unwrap_or(Backorders::Wait),
        })
    }
}

/// What a channel may sell of one item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Availability {
    pub item_id: ItemId,
    pub sku: String,
    pub available: i64,
}

/// A page of the change feed: the items whose figure changed after the
/// cursor, each once with its figure now, oldest change first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AvailabilityChanges {
    pub data: Vec<Availability>,
    /// The cursor to pass as `after` next (the same one when nothing
    /// changed).
    pub next: String,
}

/// The `channel.availability_changed` event: an item's figure for a
/// channel, as it stood when the event was written (changes within the
/// debounce window come together as one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AvailabilityChanged {
    pub business_id: BusinessId,
    pub channel_id: ChannelId,
    pub channel: String,
    pub item_id: ItemId,
    pub sku: String,
    pub available: i64,
}

/// A change feed cursor: the position of the last change read. Absent or
/// blank is the beginning.
pub fn parse_cursor(s: Option<&str>) -> Result<i64, FieldError> {
    let Some(s) = s.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(0);
    };
    s.parse::<i64>()
        .ok()
        .filter(|n| *n >= 0)
        .ok_or_else(|| FieldError::new("after", format!("{s:?} is not a cursor this feed gave")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn alloc(buffer_units: i64) -> Allocation {
        Allocation {
            buffer_units,
            ..Allocation::default()
        }
    }

    #[test]
    fn two_channels_sharing_the_last_three_units_with_a_buffer_of_one_see_two() {
        assert_eq!(available(3, &alloc(1)), 2);
        // One sold on either: both see one.
        assert_eq!(available(2, &alloc(1)), 1);
        assert_eq!(available(1, &alloc(1)), 0);
        assert_eq!(available(-4, &alloc(0)), 0);
    }

    #[test]
    fn percentages_hold_back_rounding_up_and_cap_rounding_down() {
        let a = Allocation {
            buffer_percent: Some(10),
            ..Allocation::default()
        };
        // 10 % of 15 is 1.5: 2 held back.
        assert_eq!(available(15, &a), 13);
        let a = Allocation {
            cap_percent: Some(50),
            ..Allocation::default()
        };
        assert_eq!(available(15, &a), 7);
        let a = Allocation {
            buffer_units: 2,
            cap_units: Some(5),
            ..Allocation::default()
        };
        assert_eq!((available(100, &a), available(4, &a)), (5, 2));
    }

    #[test]
    fn cursors_are_what_the_feed_gave() {
        assert_eq!(parse_cursor(None), Ok(0));
        assert_eq!(parse_cursor(Some(" ")), Ok(0));
        assert_eq!(parse_cursor(Some("42")), Ok(42));
        assert!(parse_cursor(Some("-1")).is_err());
        assert!(parse_cursor(Some("abc")).is_err());
    }

    #[test]
    fn fields_name_what_is_wrong() {
        let f: ChannelFields = serde_json::from_value(serde_json::json!({
            "code": "web shop", "name": " ", "kind": "storefront", "warehouse_ids": [],
            "buffer_units": 1, "buffer_percent": 5, "cap_percent": 101
        }))
        .expect("body");
        let names: Vec<String> = f
            .parse()
            .expect_err("bad")
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(
            names,
            [
                "code",
                "name",
                "warehouse_ids",
                "buffer_percent",
                "cap_percent"
            ]
        );
    }

    proptest! {
        /// A channel is never told more than the pool, nor more than its
        /// cap, nor less than 0; and more in the pool never tells it less.
        #[test]
        fn the_figure_is_within_the_pool_and_grows_with_it(
            pool in -100i64..10_000,
            more in 0i64..100,
            buffer in 0i64..200,
            pct in proptest::option::of(0i64..=100),
            cap in proptest::option::of(0i64..500),
            cap_pct in proptest::option::of(0i64..=100),
        ) {
            let a = Allocation { buffer_units: buffer, buffer_percent: pct, cap_units: cap, cap_percent: cap_pct };
            let n = available(pool, &a);
            prop_assert!(n >= 0);
            prop_assert!(n <= pool.max(0));
            if let Some(cap) = cap { prop_assert!(n <= cap); }
            prop_assert!(available(pool + more, &a) >= n);
        }
    }
}
