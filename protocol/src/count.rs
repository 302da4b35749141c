//! Cycle counts: work a counter is sent to do, location by location. What
//! a count covers, how a line settles (within tolerance, or a recount by
//! someone else), what a blind count hides, and what an approval books are
//! decided here; nothing here reads a database.
//!
//! A line's `expected` is the on-hand the counting node held for it when
//! the line was scanned (or its location closed), so the variance it books
//! is what the counter found against the books at that moment. Movements
//! booked after that moment, here or on another node, are moves of their
//! own and add to the approved figure instead of being overwritten by it:
//! no location is frozen while it is counted.

use crate::validate::Check;
use crate::{BusinessId, CountId, FieldError, ItemId, WarehouseId};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Locations one count may cover.
pub const MAX_COUNT_LOCATIONS: i64 = 500;
/// Lines (item and lot at a location) one count may hold, those found
/// while counting included.
pub const MAX_COUNT_LINES: usize = 2_000;
/// Items a count by items may name.
pub const MAX_COUNT_ITEMS: usize = 200;
/// The most one line may be counted at.
pub const MAX_COUNTED: i64 = 1_000_000_000;
/// The longest "not counted in N days".
pub const MAX_COUNT_DAYS: i64 = 3_650;

macro_rules! str_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $v:ident = $s:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($(#[$vdoc])* $v),+ }

        impl $name {
            pub const ALL: &'static [Self] = &[$(Self::$v),+];

            pub fn as_str(self) -> &'static str {
                match self { $(Self::$v => $s),+ }
            }

            pub fn parse(s: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|x| x.as_str() == s)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

str_enum!(
    /// Where a count stands.
    CountStatus {
        /// Being counted, or counted and waiting for approval.
        Open = "open",
        /// Its variances are booked.
        Approved = "approved",
        /// Called off: nothing was booked.
        Cancelled = "cancelled",
    }
);

str_enum!(
    /// Where one line (an item and lot at a location) stands.
    CountLineStatus {
        /// Not counted yet in this round.
        Pending = "pending",
        /// Scanned; settled when its location is closed.
        Counted = "counted",
        /// Its variance was over the tolerance: waiting for a recount by
        /// another person.
        Recount = "recount",
        /// Settled: what approval books.
        Final = "final",
    }
);

str_enum!(
    /// Where one location of a count stands.
    CountPlaceStatus {
        /// Being counted.
        Open = "open",
        /// Closed with lines over the tolerance: waiting for their recount.
        Recount = "recount",
        /// Every line settled.
        Done = "done",
    }
);

/// One item (and lot) at one location of a count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CountLine {
    pub location: String,
    pub item_id: ItemId,
    pub sku: String,
    pub lot: Option<String>,
    pub status: CountLineStatus,
    /// 1, or 2 for a recount.
    pub round: i64,
    /// The on-hand on the books when the line was counted in this round;
    /// `null` before, and in a blind count until the line is final.
    pub expected: Option<i64>,
    /// What the counter found in this round.
    pub counted: Option<i64>,
    /// `counted - expected`; `null` where `expected` is.
    pub variance: Option<i64>,
    /// Who counted it in this round (`key:<id>`), and when.
    pub counted_by: Option<String>,
    pub counted_at: Option<DateTime<Utc>>,
    /// The first round's figures, once a recount was asked for.
    pub first_expected: Option<i64>,
    pub first_counted: Option<i64>,
    pub first_by: Option<String>,
}

impl CountLine {
    /// The line as a counter may see it in a blind count: what the books
    /// say stays hidden until the line is final.
    pub fn blinded(mut self) -> Self {
        if self.status != CountLineStatus::Final {
            self.expected = None;
            self.variance = None;
            self.first_expected = None;
        }
        self
    }

    /// The key a line is known by within its count.
    pub fn key(&self) -> (&str, ItemId, Option<&str>) {
        (&self.location, self.item_id, self.lot.as_deref())
    }
}

/// One location of a count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CountPlace {
    pub location: String,
    pub status: CountPlaceStatus,
    /// Who closed its first round: a recount must be someone else.
    pub closed_by: Option<String>,
}

/// A count as listed: what it covers and how far it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CountSummary {
    pub id: CountId,
    pub business_id: BusinessId,
    pub warehouse_id: WarehouseId,
    pub status: CountStatus,
    /// The counter is not told what the books expect (the default).
    pub blind: bool,
    /// A variance within this many units, or within `tolerance_percent`
    /// of the expected quantity, is accepted without a recount.
    pub tolerance_units: i64,
    pub tolerance_percent: Option<i64>,
    /// What it was made from, in words ("zone A", "locations A-01, A-02").
    pub scope: String,
    /// A count by items counts only these (empty: every item found).
    pub item_ids: Vec<ItemId>,
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    pub locations_total: i64,
    pub locations_done: i64,
    pub lines_total: i64,
    pub lines_recount: i64,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub approved_by: Option<String>,
    pub approved_at: Option<DateTime<Utc>>,
}

/// A count with its locations and lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Count {
    #[serde(flatten)]
    pub summary: CountSummary,
    pub locations: Vec<CountPlace>,
    pub lines: Vec<CountLine>,
}

impl Count {
    /// The count as answered: blind counts hide what the books expect on
    /// lines that are not final.
    pub fn answered(mut self) -> Self {
        if self.summary.blind {
            self.lines = self.lines.into_iter().map(CountLine::blinded).collect();
        }
        self
    }

    /// Recomputes the progress figures from the locations and lines.
    pub fn tally(&mut self) {
        let s = &mut self.summary;
        s.locations_total = self.locations.len() as i64;
        s.locations_done = self
            .locations
            .iter()
            .filter(|p| p.status == CountPlaceStatus::Done)
            .count() as i64;
        s.lines_total = self.lines.len() as i64;
        s.lines_recount = self
            .lines
            .iter()
            .filter(|l| l.status == CountLineStatus::Recount)
            .count() as i64;
    }
}

/// Body of `POST /v1/counts/{business_id}/create`: one of `locations`,
/// `zone`, `item_ids` or `not_counted_days` says what to count.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct CountCreate {
    pub warehouse_id: WarehouseId,
    /// These locations, by code (1 to 500).
    #[schema(max_items = 500)]
    pub locations: Option<Vec<String>>,
    /// Every location of this zone.
    #[schema(max_length = 40)]
    pub zone: Option<String>,
    /// These items, wherever they are held (1 to 200).
    #[schema(max_items = 200)]
    pub item_ids: Option<Vec<ItemId>>,
    /// Every location not counted in this many days (1 to 3650), those
    /// counted longest ago first, at most `limit` of them.
    #[schema(minimum = 1, maximum = 3650)]
    pub not_counted_days: Option<i64>,
    /// The most locations a count by `zone` or `not_counted_days` takes,
    /// 1 to 500 (default 500).
    #[schema(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
    /// Hide what the books expect from the counter (default true).
    pub blind: Option<bool>,
    /// A variance within this many units is accepted without a recount,
    /// 0 to 1000000 (default 0: every variance is recounted unless
    /// `tolerance_percent` accepts it).
    #[schema(minimum = 0, maximum = 1_000_000)]
    pub tolerance_units: Option<i64>,
    /// A variance within this percentage of the expected quantity is
    /// accepted without a recount, 0 to 100.
    #[schema(minimum = 0, maximum = 100)]
    pub tolerance_percent: Option<i64>,
    /// Your reference for it.
    #[serde(rename = "ref")]
    #[schema(max_length = 100)]
    pub reference: Option<String>,
}

/// What a count covers, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CountScope {
    Locations(Vec<String>),
    Zone(String),
    Items(Vec<ItemId>),
    NotCountedDays(i64),
}

impl CountScope {
    /// In words, as the count shows it.
    pub fn describe(&self) -> String {
        match self {
            Self::Locations(codes) => format!("locations {}", codes.join(", ")),
            Self::Zone(z) => format!("zone {z}"),
            Self::Items(ids) => format!(
                "items {}",
                ids.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Self::NotCountedDays(1) => "locations not counted in 1 day".to_owned(),
            Self::NotCountedDays(n) => format!("locations not counted in {n} days"),
        }
    }
}

/// A create request, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedCount {
    pub warehouse_id: WarehouseId,
    pub scope: CountScope,
    pub limit: i64,
    pub blind: bool,
    pub tolerance_units: i64,
    pub tolerance_percent: Option<i64>,
    pub reference: Option<String>,
}

impl CountCreate {
    pub fn parse(self) -> Result<CheckedCount, Vec<FieldError>> {
        let mut c = Check::new();
        let mut scopes = Vec::new();
        if let Some(codes) = &self.locations {
            if codes.is_empty() {
                c.fail("locations", "must name at least one location");
            }
            c.bounded("locations", codes, MAX_COUNT_LOCATIONS as usize);
            let mut checked: Vec<String> = Vec::new();
            for (i, code) in codes.iter().enumerate() {
                let code = crate::location::check_code(&mut c, &format!("locations[{i}]"), code);
                if checked.contains(&code) {
                    c.fail(format!("locations[{i}]"), format!("{code} is named twice"));
                }
                checked.push(code);
            }
            scopes.push(CountScope::Locations(checked));
        }
        if let Some(z) = &self.zone {
            if z.chars().count() > crate::location::MAX_ZONE {
                c.fail(
                    "zone",
                    format!("must be at most {} characters", crate::location::MAX_ZONE),
                );
            }
            scopes.push(CountScope::Zone(c.text(
                "zone",
                z,
                crate::location::MAX_ZONE,
            )));
        }
        if let Some(ids) = &self.item_ids {
            if ids.is_empty() {
                c.fail("item_ids", "must name at least one item");
            }
            c.bounded("item_ids", ids, MAX_COUNT_ITEMS);
            let mut ids = ids.clone();
            ids.sort();
            ids.dedup();
            scopes.push(CountScope::Items(ids));
        }
        if let Some(days) = self.not_counted_days {
            scopes.push(CountScope::NotCountedDays(c.range(
                "not_counted_days",
                days,
                1,
                MAX_COUNT_DAYS,
            )));
        }
        let scope = match scopes.len() {
            1 => scopes.pop(),
            n => {
                let why = if n == 0 {
                    "say what to count: one of locations, zone, item_ids or not_counted_days"
                } else {
                    "give only one of locations, zone, item_ids or not_counted_days"
                };
                c.fail("locations", why);
                None
            }
        };
        let limit = c
            .opt_range("limit", self.limit, 1, MAX_COUNT_LOCATIONS)
            .unwrap_or(MAX_COUNT_LOCATIONS);
        let tolerance_units = c
            .opt_range("tolerance_units", self.tolerance_units, 0, 1_000_000)
            .unwrap_or(0);
        let tolerance_percent = c.opt_range("tolerance_percent", self.tolerance_percent, 0, 100);
        // Bounded as sent, whitespace included: what the description says.
        if self
            .reference
            .as_ref()
            .is_some_and(|r| r.chars().count() > 100)
        {
            c.fail("ref", "must be at most 100 characters");
        }
        let reference = c.opt_text("ref", self.reference.as_deref(), 100);
        let Some(scope) = scope else {
            return Err(c.finish(()).err().unwrap_or_default());
        };
        c.finish(CheckedCount {
            warehouse_id: self.warehouse_id,
            scope,
            limit,
            blind: self.blind.unwrap_or(true),
            tolerance_units,
            tolerance_percent,
            reference,
        })
    }
}

/// Body of `POST /v1/counts/{business_id}/{count_id}/scan`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct CountScan {
    /// The location counted, as scanned from its label.
    #[schema(format = "code", max_length = 32)]
    pub location: String,
    /// The goods, as scanned (a barcode, GTIN, SKU or GS1 element string).
    /// Without it the scan closes the location: its lines not counted in
    /// this round are counted as 0, and each line settles.
    #[schema(format = "scan", max_length = 200)]
    pub code: Option<String>,
    /// How many of them are at the location, 0 to 1000000000: the whole
    /// figure (a later scan of the same goods replaces it) unless `add` is
    /// set. Defaults to a GS1 count, else 1.
    #[schema(minimum = 0, maximum = 1_000_000_000)]
    pub quantity: Option<i64>,
    /// Add the quantity (or the GS1 count, or 1) to what this round counted
    /// of the goods here, instead of replacing it: a scanner counting unit
    /// by unit (default false).
    #[serde(default)]
    pub add: bool,
}

impl CountScan {
    pub fn parse(self) -> Result<Self, Vec<FieldError>> {
        let mut c = Check::new();
        let location = crate::location::check_code(&mut c, "location", &self.location);
        if self.code.as_ref().is_some_and(|s| s.chars().count() > 200) {
            c.fail("code", "must be at most 200 characters");
        }
        let code = self
            .code
            .as_deref()
            .filter(|s| !s.trim().is_empty())
            .map(|s| c.scan("code", s, 200));
        if let Some(q) = self.quantity {
            c.range("quantity", q, 0, MAX_COUNTED);
        }
        c.finish(Self {
            location,
            code,
            ..self
        })
    }
}

/// What a count scan did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CountScanResult {
    pub count: CountSummary,
    pub location: String,
    pub location_status: CountPlaceStatus,
    /// The line scanned (none when the scan closed the location), as the
    /// counter may see it.
    pub line: Option<CountLine>,
    /// After a close: the SKUs whose variance asks for a recount here.
    pub recount: Vec<String>,
    /// What to tell the operator.
    pub message: String,
}

/// The `count.scanned` event: the location and the lines a scan changed,
/// as they now stand (what the books expect included: nodes need it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CountScanned {
    /// The count.
    pub id: CountId,
    pub business_id: BusinessId,
    pub warehouse_id: WarehouseId,
    pub location: CountPlace,
    pub lines: Vec<CountLine>,
    pub updated_at: DateTime<Utc>,
}

/// Whether a variance is accepted without a recount: within
/// `units`, or within `percent` of what was expected.
pub fn within_tolerance(expected: i64, counted: i64, units: i64, percent: Option<i64>) -> bool {
    let variance = i128::from(counted) - i128::from(expected);
    let off = variance.abs();
    if off <= i128::from(units) {
        return true;
    }
    percent.is_some_and(|p| off * 100 <= i128::from(p) * i128::from(expected).abs())
}

/// How a counted line settles when its location closes: final when its
/// variance is within the tolerance or this was its recount, else waiting
/// for a recount.
pub fn settle(
    round: i64,
    expected: i64,
    counted: i64,
    units: i64,
    percent: Option<i64>,
) -> CountLineStatus {
    if round >= 2 || within_tolerance(expected, counted, units, percent) {
        CountLineStatus::Final
    } else {
        CountLineStatus::Recount
    }
}

/// The variance one final line books, if any.
pub fn booked(line: &CountLine) -> Option<i64> {
    if line.status != CountLineStatus::Final {
        return None;
    }
    let v = line.counted?.checked_sub(line.expected?)?;
    (v != 0).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn a_variance_within_units_or_percent_is_accepted() {
        assert!(within_tolerance(10, 10, 0, None));
        assert!(!within_tolerance(10, 9, 0, None));
        assert!(within_tolerance(10, 8, 2, None));
        assert!(!within_tolerance(10, 7, 2, None));
        assert!(within_tolerance(100, 95, 0, Some(5)));
        assert!(!within_tolerance(100, 94, 0, Some(5)));
        // Nothing expected: no percentage of it accepts a find.
        assert!(!within_tolerance(0, 1, 0, Some(100)));
        // Extremes are weighed without overflow.
        assert!(!within_tolerance(i64::MIN, i64::MAX, 0, Some(100)));
        assert!(within_tolerance(i64::MAX, 0, 0, Some(100)));
    }

    #[test]
    fn a_recount_is_final_whatever_it_finds() {
        assert_eq!(settle(1, 10, 4, 0, None), CountLineStatus::Recount);
        assert_eq!(settle(2, 10, 4, 0, None), CountLineStatus::Final);
        assert_eq!(settle(1, 10, 10, 0, None), CountLineStatus::Final);
    }

    fn create(v: serde_json::Value) -> Result<CheckedCount, Vec<FieldError>> {
        serde_json::from_value::<CountCreate>(v)
            .map_err(|e| vec![FieldError::new("body", e.to_string())])?
            .parse()
    }

    #[test]
    fn a_count_names_exactly_one_scope() {
        let none = create(json!({"warehouse_id": 1})).expect_err("refused");
        assert!(none[0].status.contains("say what to count"), "{none:?}");
        let two = create(json!({"warehouse_id": 1, "zone": "A", "not_counted_days": 3}))
            .expect_err("refused");
        assert!(two[0].status.contains("only one"), "{two:?}");
        let twice =
            create(json!({"warehouse_id": 1, "locations": ["A-1", "A-1"]})).expect_err("refused");
        assert_eq!(twice[0].name, "locations[1]");
        let ok = create(json!({"warehouse_id": 1, "zone": " Κ-ζώνη "})).expect("a zone");
        assert_eq!(ok.scope, CountScope::Zone("Κ-ζώνη".into()));
        assert!(ok.blind);
        assert_eq!(ok.limit, MAX_COUNT_LOCATIONS);
        let days = create(json!({"warehouse_id": 1, "not_counted_days": 0})).expect_err("refused");
        assert_eq!(days[0].name, "not_counted_days");
    }

    #[test]
    fn a_blind_line_hides_the_books_until_it_is_final() {
        let line = CountLine {
            location: "A".into(),
            item_id: ItemId(1),
            sku: "S".into(),
            lot: None,
            status: CountLineStatus::Recount,
            round: 2,
            expected: Some(5),
            counted: None,
            variance: None,
            counted_by: None,
            counted_at: None,
            first_expected: Some(5),
            first_counted: Some(3),
            first_by: Some("key:1".into()),
        };
        let b = line.clone().blinded();
        assert_eq!(
            (b.expected, b.first_expected, b.first_counted),
            (None, None, Some(3))
        );
        let done = CountLine {
            status: CountLineStatus::Final,
            counted: Some(4),
            variance: Some(-1),
            ..line
        };
        assert_eq!(done.clone().blinded(), done);
        assert_eq!(booked(&done), Some(-1));
    }

    proptest! {
        /// A line settles final exactly when its variance is within the
        /// tolerance or it is a recount; an exact count is always final.
        #[test]
        fn settling_follows_the_tolerance(
            expected in -1_000i64..1_000_000,
            counted in 0i64..1_000_000,
            units in 0i64..100,
            percent in prop::option::of(0i64..=100),
            round in 1i64..=2,
        ) {
            let s = settle(round, expected, counted, units, percent);
            let within = within_tolerance(expected, counted, units, percent);
            prop_assert_eq!(s == CountLineStatus::Final, round == 2 || within);
            prop_assert!(within_tolerance(counted, counted, units, percent));
            if (counted - expected).abs() <= units {
                prop_assert!(within);
            }
        }
    }
}
