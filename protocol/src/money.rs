//! Money as integer minor units (cents). On the wire it is a string with two
//! decimals ("12.50"); requests may send a number or such a string.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, utoipa::ToSchema)]
#[schema(value_type = String, example = "12.50")]
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
        Ok(Money(if neg { -cents } else { cents }))
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
        Ok(Money(cents as i64))
    }

    pub fn checked_add(self, other: Money) -> Option<Money> {
        self.0.checked_add(other.0).map(Money)
    }

    pub fn checked_mul(self, n: i64) -> Option<Money> {
        self.0.checked_mul(n).map(Money)
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
            Raw::Int(i) => i.checked_mul(100).map(Money).ok_or(MoneyError::Overflow),
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

    proptest! {
        #[test]
        fn display_parse_round_trip(c in -1_000_000_000_000i64..1_000_000_000_000) {
            prop_assert_eq!(Money::parse(&Money(c).to_string()), Ok(Money(c)));
        }
    }
}
