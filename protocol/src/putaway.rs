//! Putaway: goods received at a dock (or a staging location) are moved to
//! where they are kept, by tasks a scanner works through. Where each task
//! should go is decided here, from what the locations hold; nothing here
//! reads a database.

use crate::location::LocationKind;
use crate::validate::Check;
use crate::{BusinessId, FieldError, ItemId, PutawayTaskId, WarehouseId};
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

/// Units one putaway scan may move.
pub const MAX_PUTAWAY_SCAN: i64 = 1_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PutawayStatus {
    /// Units are still at the dock.
    Open,
    /// Every unit is put away.
    Done,
}

impl PutawayStatus {
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

/// One thing to put away: an item (and lot) received at `from`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PutawayTask {
    pub id: PutawayTaskId,
    pub business_id: BusinessId,
    pub warehouse_id: WarehouseId,
    pub item_id: ItemId,
    pub sku: String,
    pub lot: Option<String>,
    pub expiry: Option<NaiveDate>,
    /// Where the goods wait: the dock or staging location they were
    /// received at.
    pub from_location: String,
    /// Where they should go, by the rules (the item's own location while it
    /// has room, then a bulk location holding the same item and lot, then
    /// the first empty one with room); `null` when no location has room.
    pub suggested: Option<String>,
    pub quantity: i64,
    /// Units put away so far.
    pub put: i64,
    pub remaining: i64,
    pub status: PutawayStatus,
    /// What made it (`inbound:<reference>`).
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Body of `POST /v1/putaway/{business_id}/scan`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct PutawayScan {
    pub task_id: PutawayTaskId,
    /// The goods, as scanned: a barcode, GTIN, SKU or GS1 element string.
    #[schema(format = "scan", max_length = 200)]
    pub code: String,
    /// The location the goods were put at, as scanned from its label.
    #[schema(format = "code", max_length = 32)]
    pub location: String,
    /// Units put with this scan, 1 to 1000000; defaults to a GS1 count, else
    /// what is left of the task.
    #[schema(minimum = 1, maximum = 1_000_000)]
    pub quantity: Option<i64>,
}

impl PutawayScan {
    pub fn parse(self) -> Result<Self, Vec<FieldError>> {
        let mut c = Check::new();
        let code = c.scan("code", &self.code, 200);
        let location = crate::location::check_code(&mut c, "location", &self.location);
        if let Some(q) = self.quantity {
            c.positive("quantity", q, MAX_PUTAWAY_SCAN);
        }
        c.finish(Self {
            code,
            location,
            ..self
        })
    }
}

/// What a putaway scan did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PutawayResult {
    pub task: PutawayTask,
    /// Units moved with this scan.
    pub moved: i64,
    /// Where they were put.
    pub location: String,
    /// Whether that was the suggested location.
    pub as_suggested: bool,
    /// What to tell the operator.
    pub message: String,
}

/// The goods a putaway places, as the rules need them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Goods {
    pub item_id: ItemId,
    /// The lot, for lot-tracked items: never mixed with another lot of the
    /// same item in one location.
    pub lot: Option<String>,
    pub units: i64,
    /// Per unit, when the item's dimensions and weight are known.
    pub volume_cm3: Option<i64>,
    pub weight_g: Option<i64>,
}

/// A location as the rules see it: what it is, where it is in the walk,
/// what it may hold and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub code: String,
    pub kind: LocationKind,
    pub sequence: Option<i64>,
    pub max_units: Option<i64>,
    pub max_volume_cm3: Option<i64>,
    pub max_weight_g: Option<i64>,
    /// Lots of one item may share it.
    pub mixed_lots: bool,
    /// Units held, of all items.
    pub units: i64,
    /// Volume and weight held, of the items whose dimensions are known.
    pub volume_cm3: i64,
    pub weight_g: i64,
    /// Units of this item held, per lot (`None`: without one).
    pub lots: Vec<(Option<String>, i64)>,
}

/// Why goods cannot go to a place; `None` from [`refusal`] when they can.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Goods are not put away to a location of this type.
    WrongType(LocationKind),
    /// It has not the room (units, volume or weight) for them.
    Full(String),
    /// It holds another lot of the same item.
    OtherLot(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::WrongType(k) => write!(f, "a {k} location does not take putaway"),
            Self::Full(why) => write!(f, "it has no room: {why}"),
            Self::OtherLot(lot) => write!(f, "it holds lot {lot} of this item"),
        }
    }
}

/// The types goods are put away to.
pub fn takes_putaway(kind: LocationKind) -> bool {
    matches!(
        kind,
        LocationKind::Bulk | LocationKind::Pick | LocationKind::Staging
    )
}

/// Whether `goods` may go to `place`, and if not, why.
pub fn refusal(goods: &Goods, place: &Place) -> Option<Refusal> {
    if !takes_putaway(place.kind) {
        return Some(Refusal::WrongType(place.kind));
    }
    let over = |held: i64, more: Option<i64>, max: Option<i64>, what: &str| {
        let (Some(more), Some(max)) = (more, max) else {
            return None;
        };
        let after = held.saturating_add(more);
        (after > max).then(|| format!("{after} {what} would be over its {max}"))
    };
    let volume = goods.volume_cm3.map(|v| v.saturating_mul(goods.units));
    let weight = goods.weight_g.map(|w| w.saturating_mul(goods.units));
    if let Some(why) = over(place.units, Some(goods.units), place.max_units, "units")
        .or_else(|| over(place.volume_cm3, volume, place.max_volume_cm3, "cm³"))
        .or_else(|| over(place.weight_g, weight, place.max_weight_g, "g"))
    {
        return Some(Refusal::Full(why));
    }
    if goods.lot.is_some() && !place.mixed_lots {
        if let Some((other, _)) = place
            .lots
            .iter()
            .find(|(lot, n)| *n > 0 && *lot != goods.lot)
        {
            return Some(Refusal::OtherLot(
                other.clone().unwrap_or_else(|| "(none)".into()),
            ));
        }
    }
    None
}

/// Where goods should go: the item's own location while it has room; else
/// a bulk location already holding the same item (and lot), the fullest of
/// them first, to consolidate; else the first empty bulk location in the
/// walk with room. `None` when none has room.
pub fn suggest(goods: &Goods, own: Option<&Place>, places: &[Place]) -> Option<String> {
    let fits = |p: &Place| refusal(goods, p).is_none();
    if let Some(p) = own.filter(|p| fits(p)) {
        return Some(p.code.clone());
    }
    let same = |p: &Place| -> i64 {
        p.lots
            .iter()
            .filter(|(lot, _)| *lot == goods.lot)
            .map(|(_, n)| *n)
            .sum()
    };
    let mut holding: Vec<&Place> = places
        .iter()
        .filter(|p| p.kind == LocationKind::Bulk && same(p) > 0 && fits(p))
        .collect();
    holding.sort_by_key(|p| (std::cmp::Reverse(same(p)), walk(p), p.code.clone()));
    if let Some(p) = holding.first() {
        return Some(p.code.clone());
    }
    let mut empty: Vec<&Place> = places
        .iter()
        .filter(|p| p.kind == LocationKind::Bulk && p.units == 0 && fits(p))
        .collect();
    empty.sort_by_key(|p| (walk(p), p.code.clone()));
    empty.first().map(|p| p.code.clone())
}

fn walk(p: &Place) -> (bool, i64) {
    (p.sequence.is_none(), p.sequence.unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn goods(units: i64, lot: Option<&str>) -> Goods {
        Goods {
            item_id: ItemId(1),
            lot: lot.map(str::to_owned),
            units,
            volume_cm3: Some(1_000),
            weight_g: Some(500),
        }
    }

    fn place(code: &str, kind: LocationKind, sequence: i64) -> Place {
        Place {
            code: code.into(),
            kind,
            sequence: Some(sequence),
            max_units: Some(100),
            max_volume_cm3: None,
            max_weight_g: None,
            mixed_lots: false,
            units: 0,
            volume_cm3: 0,
            weight_g: 0,
            lots: Vec::new(),
        }
    }

    fn holding(mut p: Place, lot: Option<&str>, n: i64) -> Place {
        p.units += n;
        p.lots.push((lot.map(str::to_owned), n));
        p
    }

    #[test]
    fn the_items_own_location_first_while_it_has_room() {
        let own = place("P-1", LocationKind::Pick, 1);
        let bulk = [place("B-1", LocationKind::Bulk, 5)];
        assert_eq!(
            suggest(&goods(10, None), Some(&own), &bulk).as_deref(),
            Some("P-1")
        );
        let full = holding(own, None, 95);
        assert_eq!(
            suggest(&goods(10, None), Some(&full), &bulk).as_deref(),
            Some("B-1")
        );
    }

    #[test]
    fn a_lot_consolidates_first_then_goes_to_the_first_empty_bulk_location() {
        let places = [
            place("B-9", LocationKind::Bulk, 90),
            holding(place("B-5", LocationKind::Bulk, 50), Some("L1"), 20),
            holding(place("B-2", LocationKind::Bulk, 20), Some("L2"), 30),
            place("B-3", LocationKind::Bulk, 30),
            place("D-1", LocationKind::Dock, 0),
            place("Q-1", LocationKind::Quarantine, 1),
        ];
        assert_eq!(
            suggest(&goods(10, Some("L1")), None, &places).as_deref(),
            Some("B-5")
        );
        // A new lot is never mixed in: the first empty bulk location.
        assert_eq!(
            suggest(&goods(10, Some("L7")), None, &places).as_deref(),
            Some("B-3")
        );
        // No room anywhere: no suggestion.
        assert_eq!(suggest(&goods(101, Some("L7")), None, &places), None);
    }

    #[test]
    fn wrong_types_full_places_and_other_lots_are_refused() {
        let g = goods(10, Some("L1"));
        assert_eq!(
            refusal(&g, &place("D", LocationKind::Dock, 0)),
            Some(Refusal::WrongType(LocationKind::Dock))
        );
        let mut small = place("S", LocationKind::Bulk, 0);
        small.max_volume_cm3 = Some(9_999);
        assert!(matches!(refusal(&g, &small), Some(Refusal::Full(_))));
        let mixed = holding(place("M", LocationKind::Bulk, 0), Some("L2"), 1);
        assert_eq!(refusal(&g, &mixed), Some(Refusal::OtherLot("L2".into())));
        let same = holding(place("M", LocationKind::Bulk, 0), Some("L1"), 1);
        assert_eq!(refusal(&g, &same), None);
        let allowed = Place {
            mixed_lots: true,
            ..mixed
        };
        assert_eq!(refusal(&g, &allowed), None);
    }

    fn any_place() -> impl Strategy<Value = Place> {
        (
            0..6usize,
            prop::option::of(0i64..5),
            prop::option::of(1i64..50),
            0i64..60,
            prop::option::of(prop::option::of(0u8..3)),
        )
            .prop_map(|(kind, sequence, max_units, units, lot)| Place {
                code: format!("C{kind}{units}{sequence:?}"),
                kind: LocationKind::ALL[kind],
                sequence,
                max_units,
                max_volume_cm3: None,
                max_weight_g: None,
                mixed_lots: false,
                units,
                volume_cm3: 0,
                weight_g: 0,
                lots: lot
                    .map(|l| vec![(l.map(|l| format!("L{l}")), units)])
                    .unwrap_or_default(),
            })
    }

    proptest! {
        /// Whatever the locations, a suggestion is always a place the goods
        /// may go to, and there is one whenever an empty bulk location fits.
        #[test]
        fn a_suggestion_is_always_a_place_that_takes_the_goods(
            places in proptest::collection::vec(any_place(), 0..12),
            units in 1i64..40,
            lot in prop::option::of(0u8..3),
        ) {
            // Codes are unique within a warehouse, as they are in the table.
            let places: Vec<Place> = places
                .into_iter()
                .enumerate()
                .map(|(i, p)| Place { code: format!("C{i}-{}", p.code), ..p })
                .collect();
            let g = goods(units, None);
            let g = Goods { lot: lot.map(|l| format!("L{l}")), volume_cm3: None, weight_g: None, ..g };
            match suggest(&g, None, &places) {
                Some(code) => {
                    let p = places.iter().find(|p| p.code == code).expect("a listed place");
                    prop_assert_eq!(refusal(&g, p), None);
                    prop_assert_eq!(p.kind, LocationKind::Bulk);
                }
                None => prop_assert!(!places.iter().any(|p| p.kind == LocationKind::Bulk && p.units == 0 && refusal(&g, p).is_none())),
            }
        }
    }
}
