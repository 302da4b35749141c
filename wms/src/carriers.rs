//! Carriers behind one trait. One ships built in: the business's own fleet,
//! which issues its own tracking numbers.

use chrono::{Datelike, NaiveDate, Weekday};
use depot_protocol::barcode::gs1_check_digit;

pub trait Carrier: Send + Sync {
    /// The code orders and webhooks name the carrier by.
    fn code(&self) -> &'static str;
    fn name(&self) -> &'static str;
    fn services(&self) -> &'static [&'static str];
    /// The tracking number of the shipment with this id: unique because the
    /// id is.
    fn tracking_number(&self, shipment_id: i64) -> String;
    /// Whether a string can be one of this carrier's tracking numbers.
    fn is_tracking_number(&self, s: &str) -> bool;
    /// Expected delivery for a shipment handed over on `from`.
    fn estimate(&self, service: &str, from: NaiveDate) -> NaiveDate;
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

    fn tracking_number(&self, shipment_id: i64) -> String {
        let body = format!("{:016}", shipment_id.rem_euclid(10_000_000_000_000_000));
        format!("{OWN_PREFIX}{body}{}", gs1_check_digit(&digits(&body)))
    }

    fn is_tracking_number(&self, s: &str) -> bool {
        let Some(rest) = s.strip_prefix(OWN_PREFIX) else {
            return false;
        };
        if rest.len() != 17 || !rest.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        let d = digits(rest);
        let (body, check) = d.split_at(16);
        gs1_check_digit(body) == check[0]
    }

    fn estimate(&self, service: &str, from: NaiveDate) -> NaiveDate {
        add_working_days(from, if service == "express" { 1 } else { 2 })
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

/// Every known carrier.
pub fn all() -> [&'static dyn Carrier; 1] {
    [&OWN]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_tracking_numbers_carry_a_check_digit() {
        let c = OwnFleet;
        for id in [1, 42, 9_999_999_999, 123_456, (4 << 40) + 17, (1 << 53) - 1] {
            let tn = c.tracking_number(id);
            assert_eq!(tn.len(), 20, "{tn}");
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
        assert_ne!(c.tracking_number(1), c.tracking_number(2));
        assert_ne!(
            c.tracking_number(17),
            c.tracking_number((4 << 40) + 17),
            "nodes do not collide"
        );
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
    fn lookup() {
        assert_eq!(get("own").map(|c| c.code()), Some("own"));
        assert!(get("nope").is_none());
        assert!(all().iter().all(|c| !c.services().is_empty()));
    }
}
