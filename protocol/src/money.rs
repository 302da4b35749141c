//! Money as integer minor units (cents). On the wire it is a string with two
//! decimals ("12.50"); requests may send a number or such a string.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// An amount with at most two decimals: a string like "12.50" or a number,
/// from -999999999999999.99 to 999999999999999.99 (15 digits before the
/// point); answers always write the string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, utoipa::ToSchema)]
#[schema(value_type = String, example = "12.50", pattern = r"^-?[0-9]{1,15}(\.[0-9]{1,2})?$")]
pub struct Money(pub i64);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoneyError {
    #[error("must be an amount with at most two decimals, like 12.50")]
    Format,
    #[error("amount is too large")]
    Overflow,
}

impl Money {
    pub const ZERO: Money = Money(0);
    /// The largest amount a request may carry (and the most negative, with
    /// a minus sign): 999999999999999.99. Sums of a few such amounts stay
    /// far inside `i64`; longer sums use the checked operations.
    pub const MAX: Money = Money(99_999_999_999_999_999);

    /// The amount, if it is within `-MAX..=MAX`.
    fn within(self) -> Result<Self, MoneyError> {
        if self.0.checked_abs().is_some_and(|a| a <= Self::MAX.0) {
            Ok(self)
        } else {
            Err(MoneyError::Overflow)
        }
    }

    pub fn cents(self) -> i64 {
        self.0
    }

    /// Parses `"12"`, `"12.5"`, `"12.50"`, `"-3.00"`.
    pub fn parse(s: &str) -> Result<Self, MoneyError> {
        let s = s.trim();
        let (neg, digits) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let (whole, frac) = match digits.split_once('.') {
            Some((w, f)) => (w, f),
            None => (digits, ""),
        };
        if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
            return Err(MoneyError::Format);
        }
        if frac.len() > 2
            || !frac.bytes().all(|b| b.is_ascii_digit())
            || (digits.contains('.') && frac.is_empty())
        {
            return Err(MoneyError::Format);
        }
        if whole.len() > 15 {
            return Err(MoneyError::Overflow);
        }
        let whole: i64 = whole.parse().map_err(|_| MoneyError::Format)?;
        let frac_cents: i64 = match frac.len() {
            0 => 0,
            1 => i64::from(frac.as_bytes()[0] - b'0') * 10,
            _ => frac.parse().map_err(|_| MoneyError::Format)?,
        };
        let cents = whole
            .checked_mul(100)
            .and_then(|c| c.checked_add(frac_cents))
            .ok_or(MoneyError::Overflow)?;
        Money(if neg { -cents } else { cents }).within()
    }

    /// From a JSON number: must have at most two decimals.
    pub fn from_f64(v: f64) -> Result<Self, MoneyError> {
        if !v.is_finite() {
            return Err(MoneyError::Format);
        }
        if v.abs() >= 1e15 {
            return Err(MoneyError::Overflow);
        }
        let cents = (v * 100.0).round();
        if ((cents / 100.0) - v).abs() > 1e-9 {
            return Err(MoneyError::Format);
        }
        Money(cents as i64).within()
    }

    /// From a JSON integer (whole units).
    pub fn from_units(units: i64) -> Result<Self, MoneyError> {
        units
            .checked_mul(100)
            .map(Money)
            .ok_or(MoneyError::Overflow)?
            .within()
    }

    /// The sum, if it stays within `-MAX..=MAX`.
    pub fn checked_add(self, other: Money) -> Option<Money> {
        self.0.checked_add(other.0).map(Money)?.within().ok()
    }

    /// The product, if it stays within `-MAX..=MAX`.
    pub fn checked_mul(self, n: i64) -> Option<Money> {
        self.0.checked_mul(n).map(Money)?.within().ok()
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        write!(f, "{sign}{}.{:02}", abs / 100, abs % 100)
    }
}

impl Serialize for Money {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Money {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(i64),
            Float(f64),
            Str(String),
        }
        let parsed = match Raw::deserialize(d).map_err(|_| {
            serde::de::Error::custom("must be an amount: a number or a string like \"12.50\"")
        })? {
            Raw::Int(i) => Money::from_units(i),
            Raw::Float(f) => Money::from_f64(f),
            Raw::Str(s) => Money::parse(&s),
        };
        parsed.map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_the_usual_forms() {
        for (s, c) in [
            ("12", 1200),
            ("12.5", 1250),
            ("12.50", 1250),
            ("0.01", 1),
            ("-3.00", -300),
            ("0", 0),
        ] {
            assert_eq!(Money::parse(s), Ok(Money(c)), "{s}");
        }
    }

    #[test]
    fn refuses_garbage() {
        for s in [
            "",
            "abc",
            "1.234",
            "1.",
            ".5",
            "1,50",
            "--1",
            "1e3",
            "9999999999999999",
        ] {
            assert!(Money::parse(s).is_err(), "{s}");
        }
    }

    #[test]
    fn json_accepts_numbers_and_strings() {
        let m: Money = serde_json::from_str("12.5").unwrap_or_default();
        assert_eq!(m, Money(1250));
        let m: Money = serde_json::from_str("\"7.05\"").unwrap_or_default();
        assert_eq!(m, Money(705));
        let m: Money = serde_json::from_str("3").unwrap_or_default();
        assert_eq!(m, Money(300));
        assert!(serde_json::from_str::<Money>("1.234").is_err());
        assert!(serde_json::from_str::<Money>("true").is_err());
        assert_eq!(
            serde_json::to_string(&Money(-5)).unwrap_or_default(),
            "\"-0.05\""
        );
    }

    #[test]
    fn the_range_is_the_same_in_every_form() {
        let max = "999999999999999.99";
        assert_eq!(Money::parse(max), Ok(Money::MAX));
        assert_eq!(Money::parse(&format!("-{max}")), Ok(Money(-Money::MAX.0)));
        assert_eq!(Money::MAX.to_string(), max);
        for json in [
            "999999999999999",
            "\"999999999999999.99\"",
            "-999999999999999",
            "12.5",
        ] {
            assert!(serde_json::from_str::<Money>(json).is_ok(), "{json}");
        }
        for json in [
            "1000000000000000",
            "-1000000000000000",
            "9223372036854775807",
            "-9223372036854775808",
            "18446744073709551615",
            "1e300",
            "-1e300",
            "1e15",
            "\"1000000000000000\"",
            "\"-9223372036854775808\"",
        ] {
            assert!(serde_json::from_str::<Money>(json).is_err(), "{json}");
        }
        assert_eq!(serde_json::from_str::<Money>("-0").ok(), Some(Money(0)));
        assert_eq!(serde_json::from_str::<Money>("-0.0").ok(), Some(Money(0)));
        assert_eq!(Money::MAX.checked_add(Money(1)), None);
        assert_eq!(Money::MAX.checked_mul(2), None);
        assert_eq!(Money(i64::MIN).checked_add(Money(0)), None);
        assert_eq!(Money(5).checked_mul(3), Some(Money(15)));
    }

    proptest! {
        /// Whatever number a client sends, the result is an amount within
        /// the range or an error: never a panic, never a wrapped value.
        #[test]
        fn any_json_number_is_in_range_or_refused(i in any::<i64>(), f in any::<f64>(), u in any::<u64>()) {
            for json in [i.to_string(), format!("{f:e}"), u.to_string(), format!("\"{i}\"")] {
                if let Ok(m) = serde_json::from_str::<Money>(&json) {
                    prop_assert!(m.cents().abs() <= Money::MAX.cents(), "{json} -> {m:?}");
                }
            }
        }

        #[test]
        fn display_parse_round_trip(c in -1_000_000_000_000i64..1_000_000_000_000) {
            prop_assert_eq!(Money::parse(&Money(c).to_string()), Ok(Money(c)));
        }
    }
}
