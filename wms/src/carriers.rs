//! Carriers behind one trait. One ships built in: the business's own fleet,
//! which issues its own tracking numbers.

use chrono::{Datelike, NaiveDate, Weekday};
use depot_protocol::barcode::gs1_check_digit;
use depot_protocol::shipping::Milestone;

/// The largest piece a carrier service takes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct PieceLimits {
    /// Grams, 1 to 1000000.
    pub max_weight_g: i64,
    /// The longest, middle and shortest side, in millimetres (1 to 10000
    /// each): a piece's sides are compared longest to longest, so it does
    /// not matter how the packer measured it.
    pub max_sides_mm: [i64; 3],
}

/// The `[own_fleet]` settings of both daemons: the largest piece each
/// service of the business's own fleet takes. Packing refuses a package
/// beyond them with 422, before anything is written.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(default, deny_unknown_fields)]
pub struct OwnFleetSettings {
    /// The standard service (default 31.5 kg, 120 x 60 x 60 cm: what
    /// European parcel networks take).
    pub standard: PieceLimits,
    /// The express service (default 30 kg, 100 x 60 x 60 cm).
    pub express: PieceLimits,
}

impl Default for OwnFleetSettings {
    fn default() -> Self {
        Self {
            standard: OwnFleet.piece_limits("standard"),
            express: OwnFleet.piece_limits("express"),
        }
    }
}

impl OwnFleetSettings {
    /// Why the settings cannot be used, if they cannot.
    pub fn check(&self) -> Result<(), String> {
        for (service, l) in [("standard", &self.standard), ("express", &self.express)] {
            if !(1..=1_000_000).contains(&l.max_weight_g) {
                return Err(format!(
                    "own_fleet.{service}.max_weight_g must be 1 to 1000000"
                ));
            }
            if l.max_sides_mm.iter().any(|s| !(1..=10_000).contains(s)) {
                return Err(format!(
                    "own_fleet.{service}.max_sides_mm must be three lengths of 1 to 10000"
                ));
            }
        }
        Ok(())
    }

    /// The limits of `service` of `carrier`: these settings for the own
    /// fleet, the carrier's own otherwise.
    pub fn limits(&self, carrier: &dyn Carrier, service: &str) -> PieceLimits {
        if carrier.code() != OwnFleet.code() {
            return carrier.piece_limits(service);
        }
        let mut l = if service == "express" {
            self.express
        } else {
            self.standard
        };
        // Compared longest to longest.
        l.max_sides_mm.sort_unstable_by(|a, b| b.cmp(a));
        l
    }
}

impl PieceLimits {
    /// What is wrong with a piece of this weight and these dimensions, if
    /// anything. Sides are compared longest to longest, so a box measured
    /// in any order is judged the same.
    pub fn problems(&self, weight_g: i64, dims_mm: Option<[i64; 3]>) -> Vec<String> {
        let mut out = Vec::new();
        if weight_g > self.max_weight_g {
            out.push(format!(
                "weighs {weight_g} g: this service takes pieces up to {} g",
                self.max_weight_g
            ));
        }
        if let Some(mut sides) = dims_mm {
            sides.sort_unstable_by(|a, b| b.cmp(a));
            if sides.iter().zip(self.max_sides_mm).any(|(s, max)| *s > max) {
                let [a, b, c] = self.max_sides_mm;
                out.push(format!(
                    "measures {} x {} x {} mm: this service takes pieces up to {a} x {b} x {c} mm",
                    sides[0], sides[1], sides[2]
                ));
            }
        }
        out
    }
}

/// The secret part of a tracking number: six digits, a million numbers to
/// try per shipment for someone walking the ids.
pub const TRACKING_SECRET: u32 = 1_000_000;

pub trait Carrier: Send + Sync {
    /// The code orders and webhooks name the carrier by.
    fn code(&self) -> &'static str;
    fn name(&self) -> &'static str;
    fn services(&self) -> &'static [&'static str];
    /// The tracking number of the shipment with this id: unique because the
    /// id is, and not to be guessed from its neighbours' because of `secret`
    /// (random digits the caller draws: below [`TRACKING_SECRET`]), so the
    /// keyless tracking route cannot be walked.
    fn tracking_number(&self, shipment_id: i64, secret: u32) -> String;
    /// Whether a string can be one of this carrier's tracking numbers.
    fn is_tracking_number(&self, s: &str) -> bool;
    /// The number printed as the tracking barcode of package `index` (1
    /// based) of `count`: the tracking number itself for a lone package;
    /// for several, the tracking number and the piece ("…-02"), so a hub
    /// scanner tells the pieces apart and notices one missing.
    fn piece_number(&self, tracking: &str, index: u32, count: u32) -> String {
        if count <= 1 {
            tracking.to_owned()
        } else {
            format!("{tracking}-{index:02}")
        }
    }
    /// The largest piece `service` takes.
    fn piece_limits(&self, service: &str) -> PieceLimits;
    /// Expected delivery for a shipment handed over on `from`.
    fn estimate(&self, service: &str, from: NaiveDate) -> NaiveDate;

    /// The estimate after a milestone on `on`, when it sets or moves the
    /// current one: the carrier's own date if it sent one; else counted
    /// again from the hand-over; the day itself once out for delivery; a
    /// delay after an exception, or for a parcel still travelling past its
    /// date. `None`: the estimate stands.
    fn revise(
        &self,
        service: &str,
        current: Option<NaiveDate>,
        milestone: Milestone,
        on: NaiveDate,
        given: Option<NaiveDate>,
    ) -> Option<NaiveDate> {
        let recount = self.estimate(service, on);
        let revised = match (milestone, given) {
            (Milestone::Delivered, _) => None,
            (_, Some(date)) => Some(date),
            (Milestone::Dispatched, None) => Some(recount),
            (Milestone::OutForDelivery, None) => Some(on),
            (Milestone::Exception, None) => Some(current.map_or(recount, |c| c.max(recount))),
            (Milestone::InTransit | Milestone::LabelCreated, None) => match current {
                Some(c) if c >= on => None,
                _ => Some(recount),
            },
        };
        revised.filter(|r| Some(*r) != current)
    }
}

/// The own fleet: `DPT`, the shipment id in sixteen digits (ids of every
/// node fit, see `store::ids`) and a GS1 mod-10 check digit, so a mistyped
/// number is caught before any lookup.
pub struct OwnFleet;

const OWN_PREFIX: &str = "DPT";

fn digits(s: &str) -> Vec<u8> {
    s.bytes().map(|b| b - b'0').collect()
}

/// Adds `days` working days (Monday to Friday).
fn add_working_days(mut d: NaiveDate, days: u32) -> NaiveDate {
    let mut left = days;
    while left > 0 {
        d = d.succ_opt().unwrap_or(d);
        if !matches!(d.weekday(), Weekday::Sat | Weekday::Sun) {
            left -= 1;
        }
    }
    d
}

impl Carrier for OwnFleet {
    fn code(&self) -> &'static str {
        "own"
    }

    fn name(&self) -> &'static str {
        "Own fleet"
    }

    fn services(&self) -> &'static [&'static str] {
        &["standard", "express"]
    }

    fn tracking_number(&self, shipment_id: i64, secret: u32) -> String {
        let body = format!(
            "{:016}{:06}",
            shipment_id.rem_euclid(10_000_000_000_000_000),
            secret % TRACKING_SECRET
        );
        format!("{OWN_PREFIX}{body}{}", gs1_check_digit(&digits(&body)))
    }

    /// Numbers given before they had a secret part (16 digits) are still
    /// read.
    fn is_tracking_number(&self, s: &str) -> bool {
        let Some(rest) = s.strip_prefix(OWN_PREFIX) else {
            return false;
        };
        if !matches!(rest.len(), 17 | 23) || !rest.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        let d = digits(rest);
        let (body, check) = d.split_at(d.len() - 1);
        gs1_check_digit(body) == check[0]
    }

    fn estimate(&self, service: &str, from: NaiveDate) -> NaiveDate {
        add_working_days(from, if service == "express" { 1 } else { 2 })
    }

    /// A van and one person carrying: what European parcel networks take
    /// (31.5 kg, 120 x 60 x 60 cm); express pieces travel in cages, smaller.
    fn piece_limits(&self, service: &str) -> PieceLimits {
        if service == "express" {
            PieceLimits {
                max_weight_g: 30_000,
                max_sides_mm: [1000, 600, 600],
            }
        } else {
            PieceLimits {
                max_weight_g: 31_500,
                max_sides_mm: [1200, 600, 600],
            }
        }
    }
}

static OWN: OwnFleet = OwnFleet;

/// The carrier with this code, if the product knows it.
pub fn get(code: &str) -> Option<&'static dyn Carrier> {
    match code {
        "own" => Some(&OWN),
        _ => None,
    }
}

/// The tracking number a piece number belongs to: `s` without a piece
/// suffix ("-02") where what is left is a known carrier's tracking number.
pub fn shipment_number(s: &str) -> &str {
    if let Some((number, piece)) = s.rsplit_once('-')
        && (2..=4).contains(&piece.len())
        && piece.bytes().all(|b| b.is_ascii_digit())
        && all().iter().any(|c| c.is_tracking_number(number))
    {
        return number;
    }
    s
}

/// The number of package `index` of a shipment: the piece number its
/// carrier gives it, or the tracking number for a carrier not configured
/// here.
pub fn piece_of(s: &depot_protocol::shipping::Shipment, index: u32) -> String {
    let count = s.packages.len() as u32;
    get(&s.carrier).map_or_else(
        || s.tracking_number.clone(),
        |c| c.piece_number(&s.tracking_number, index, count),
    )
}

/// Every known carrier.
pub fn all() -> [&'static dyn Carrier; 1] {
    [&OWN]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_override_the_own_fleet_and_are_checked() {
        let mut s = OwnFleetSettings::default();
        assert_eq!(s.limits(&OwnFleet, "standard").max_weight_g, 31_500);
        s.standard.max_weight_g = 5_000;
        s.express.max_sides_mm = [400, 900, 300];
        assert!(s.check().is_ok());
        assert_eq!(s.limits(&OwnFleet, "standard").max_weight_g, 5_000);
        assert_eq!(s.limits(&OwnFleet, "express").max_sides_mm, [900, 400, 300]);
        s.standard.max_weight_g = 0;
        assert!(s.check().is_err());
    }

    #[test]
    fn pieces_beyond_the_service_are_named() {
        let l = OwnFleet.piece_limits("standard");
        assert!(l.problems(31_500, Some([600, 1200, 600])).is_empty());
        let heavy = l.problems(999_000, None);
        assert_eq!(heavy.len(), 1);
        assert!(heavy[0].contains("999000 g"), "{heavy:?}");
        assert_eq!(l.problems(1000, Some([700, 700, 100])).len(), 1);
    }

    #[test]
    fn pieces_have_their_own_numbers_that_lead_back() {
        let c = OwnFleet;
        let tn = c.tracking_number(42, 7);
        assert_eq!(c.piece_number(&tn, 1, 1), tn);
        let second = c.piece_number(&tn, 2, 3);
        assert_eq!(second, format!("{tn}-02"));
        assert_ne!(c.piece_number(&tn, 1, 3), second);
        assert_eq!(shipment_number(&second), tn);
        assert_eq!(shipment_number(&tn), tn);
        assert_eq!(shipment_number("SO-12"), "SO-12");
    }

    #[test]
    fn own_tracking_numbers_carry_a_check_digit() {
        let c = OwnFleet;
        for id in [1, 42, 9_999_999_999, 123_456, (4 << 40) + 17, (1 << 53) - 1] {
            let tn = c.tracking_number(id, 987_654);
            assert_eq!(tn.len(), 26, "{tn}");
            assert!(c.is_tracking_number(&tn), "{tn}");
            let mut bad = tn.clone().into_bytes();
            let last = bad.len() - 1;
            bad[last] = if bad[last] == b'9' {
                b'0'
            } else {
                bad[last] + 1
            };
            assert!(!c.is_tracking_number(&String::from_utf8_lossy(&bad)));
        }
        assert_ne!(c.tracking_number(1, 5), c.tracking_number(2, 5));
        assert_ne!(
            c.tracking_number(17, 5),
            c.tracking_number((4 << 40) + 17, 5),
            "nodes do not collide"
        );
        // The neighbour's number is not the next one: its secret differs.
        assert_ne!(c.tracking_number(43, 1), c.tracking_number(43, 2));
        // Numbers given before the secret part are still numbers.
        assert!(c.is_tracking_number("DPT00000000000000420"));
        assert!(!c.is_tracking_number("DPT12"));
        assert!(!c.is_tracking_number("XYZ00000000011"));
    }

    #[test]
    fn estimates_skip_weekends() {
        let friday = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap_or_default();
        assert_eq!(
            OwnFleet.estimate("standard", friday),
            NaiveDate::from_ymd_opt(2026, 11, 24).unwrap_or_default()
        );
        assert_eq!(
            OwnFleet.estimate("express", friday),
            NaiveDate::from_ymd_opt(2026, 11, 23).unwrap_or_default()
        );
        let monday = NaiveDate::from_ymd_opt(2026, 11, 23).unwrap_or_default();
        assert_eq!(
            OwnFleet.estimate("standard", monday),
            NaiveDate::from_ymd_opt(2026, 11, 25).unwrap_or_default()
        );
    }

    #[test]
    fn milestones_revise_the_estimate() {
        let d = |day| NaiveDate::from_ymd_opt(2026, 11, day).unwrap_or_default();
        let c = OwnFleet;
        let revise = |current, m, on, given| c.revise("standard", current, m, on, given);
        // Handed over on Tuesday 24th: Thursday.
        assert_eq!(
            revise(Some(d(25)), Milestone::Dispatched, d(24), None),
            Some(d(26))
        );
        assert_eq!(
            revise(Some(d(26)), Milestone::Dispatched, d(24), None),
            None,
            "unchanged"
        );
        assert_eq!(revise(Some(d(26)), Milestone::InTransit, d(25), None), None);
        assert_eq!(
            revise(None, Milestone::InTransit, d(25), None),
            Some(d(27)),
            "first set"
        );
        assert_eq!(
            revise(Some(d(26)), Milestone::InTransit, d(27), None),
            Some(d(1).with_month(12).unwrap_or_default()),
            "late"
        );
        assert_eq!(
            revise(Some(d(26)), Milestone::OutForDelivery, d(25), None),
            Some(d(25))
        );
        assert_eq!(
            revise(Some(d(26)), Milestone::Exception, d(25), None),
            Some(d(27))
        );
        assert_eq!(
            revise(Some(d(30)), Milestone::Exception, d(25), None),
            None,
            "no earlier"
        );
        assert_eq!(
            revise(Some(d(26)), Milestone::InTransit, d(25), Some(d(28))),
            Some(d(28))
        );
        assert_eq!(
            revise(Some(d(26)), Milestone::Delivered, d(25), Some(d(28))),
            None
        );
    }

    #[test]
    fn lookup() {
        assert_eq!(get("own").map(|c| c.code()), Some("own"));
        assert!(get("nope").is_none());
        assert!(all().iter().all(|c| !c.services().is_empty()));
    }
}
