//! Exact decimal weights.
//!
//! Scales send decimal text ("100.00 g") or scaled integers (Modbus), and
//! packing compares what the scale says against what the order should weigh:
//! binary floating point would turn those comparisons into rounding bugs, so
//! a weight is an integer count of 10^-decimals units, exactly as the scale
//! reported it.

use std::{cmp::Ordering, fmt, str::FromStr};

use super::ScaleError;

/// Weights carry at most this many decimals, so that rescaling any two of
/// them to a common precision stays within `i128` (and parsing within `i64`).
pub const MAX_DECIMALS: u8 = 9;

/// A fixed-point decimal: `value × 10^-decimals`.
///
/// Equality and ordering compare the amounts, so `1.5 == 1.50`.
#[derive(Debug, Clone, Copy)]
pub struct Weight {
    value: i64,
    decimals: u8,
}

impl Weight {
    pub const ZERO: Self = Self {
        value: 0,
        decimals: 0,
    };

    /// `Weight::new(10000, 2)` is 100.00.
    pub fn new(value: i64, decimals: u8) -> Result<Self, ScaleError> {
        if decimals > MAX_DECIMALS {
            return Err(ScaleError::InvalidWeight(format!(
                "{decimals} decimals (at most {MAX_DECIMALS})"
            )));
        }
        Ok(Self { value, decimals })
    }

    /// The integer count of 10^-decimals units.
    pub const fn value(self) -> i64 {
        self.value
    }

    /// How many digits follow the decimal point.
    pub const fn decimals(self) -> u8 {
        self.decimals
    }

    pub const fn is_negative(self) -> bool {
        self.value < 0
    }

    /// The same amount with `decimals` digits after the point, if that is
    /// exact (no digit lost) and fits.
    pub fn rescale(self, decimals: u8) -> Option<Self> {
        if decimals > MAX_DECIMALS {
            return None;
        }
        let value = if decimals >= self.decimals {
            self.value
                .checked_mul(10_i64.checked_pow(u32::from(decimals - self.decimals))?)?
        } else {
            let divisor = 10_i64.pow(u32::from(self.decimals - decimals));
            if self.value % divisor != 0 {
                return None;
            }
            self.value / divisor
        };
        Some(Self { value, decimals })
    }

    pub fn checked_add(self, other: Self) -> Option<Self> {
        let decimals = self.decimals.max(other.decimals);
        let (a, b) = (self.rescale(decimals)?, other.rescale(decimals)?);
        Some(Self {
            value: a.value.checked_add(b.value)?,
            decimals,
        })
    }

    pub fn checked_sub(self, other: Self) -> Option<Self> {
        let decimals = self.decimals.max(other.decimals);
        let (a, b) = (self.rescale(decimals)?, other.rescale(decimals)?);
        Some(Self {
            value: a.value.checked_sub(b.value)?,
            decimals,
        })
    }

    /// The amount in units of 10^-MAX_DECIMALS: i64 × 10^9 always fits.
    fn scaled(self) -> i128 {
        i128::from(self.value) * 10_i128.pow(u32::from(MAX_DECIMALS - self.decimals))
    }
}

impl PartialEq for Weight {
    fn eq(&self, other: &Self) -> bool {
        self.scaled() == other.scaled()
    }
}

impl Eq for Weight {}

impl PartialOrd for Weight {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Weight {
    fn cmp(&self, other: &Self) -> Ordering {
        self.scaled().cmp(&other.scaled())
    }
}

impl fmt::Display for Weight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.value < 0 { "-" } else { "" };
        let digits = self.value.unsigned_abs();
        let text = if self.decimals == 0 {
            format!("{sign}{digits}")
        } else {
            let divisor = 10_u64.pow(u32::from(self.decimals));
            let width = usize::from(self.decimals);
            format!(
                "{sign}{}.{:0width$}",
                digits / divisor,
                digits % divisor,
                width = width
            )
        };
        // Through `pad` so that callers can align weights ("{:>10}"), as
        // MT-SICS and CAS frames do.
        f.pad(&text)
    }
}

impl FromStr for Weight {
    type Err = ScaleError;

    /// Parses `[+-]digits[.digits]` (surrounding whitespace allowed), the way
    /// scales print weights.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = || ScaleError::InvalidWeight(text.escape_debug().to_string());
        let trimmed = text.trim();
        let (negative, unsigned) = match trimmed.as_bytes().first() {
            Some(b'-') => (true, &trimmed[1..]),
            Some(b'+') => (false, &trimmed[1..]),
            _ => (false, trimmed),
        };
        let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if whole.len() + fraction.len() == 0 || !all_digits(whole) || !all_digits(fraction) {
            return Err(invalid());
        }
        let decimals = u8::try_from(fraction.len())
            .ok()
            .filter(|d| *d <= MAX_DECIMALS)
            .ok_or_else(invalid)?;
        let mut magnitude: u64 = 0;
        for digit in whole.bytes().chain(fraction.bytes()) {
            magnitude = magnitude
                .checked_mul(10)
                .and_then(|m| m.checked_add(u64::from(digit - b'0')))
                .ok_or_else(invalid)?;
        }
        // Through the magnitude, so that i64::MIN parses back.
        let value = if negative {
            0_i64.checked_sub_unsigned(magnitude)
        } else {
            i64::try_from(magnitude).ok()
        };
        Ok(Self {
            value: value.ok_or_else(invalid)?,
            decimals,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(text: &str) -> Weight {
        text.parse().expect("valid weight")
    }

    #[test]
    fn parses_what_scales_print() {
        assert_eq!(w("    100.00").value(), 10000);
        assert_eq!(w("100.00").decimals(), 2);
        assert_eq!(w("-0.450").value(), -450);
        assert_eq!(w("+12").decimals(), 0);
        assert_eq!(w("01.234"), w("1.234"));
        assert_eq!(w(".5"), w("0.5"));
        assert_eq!(w("5."), w("5"));
    }

    #[test]
    fn rejects_what_is_not_a_weight() {
        for bad in [
            "",
            "-",
            ".",
            "1.2.3",
            "1 2",
            "12a",
            "--1",
            "1.0000000000",
            "99999999999999999999",
        ] {
            assert!(bad.parse::<Weight>().is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn displays_exactly() {
        assert_eq!(w("100.00").to_string(), "100.00");
        assert_eq!(w("-0.05").to_string(), "-0.05");
        assert_eq!(w("7").to_string(), "7");
        assert_eq!(format!("{:>8}", w("1.5")), "     1.5");
        let min = Weight::new(i64::MIN, 9).expect("9 decimals");
        assert_eq!(min.to_string(), "-9223372036.854775808");
        assert_eq!(w("-9223372036.854775808").value(), i64::MIN);
    }

    #[test]
    fn arithmetic_is_exact() {
        assert_eq!(w("0.1").checked_add(w("0.2")), Some(w("0.3")));
        assert_eq!(w("1.5").checked_sub(w("0.25")), Some(w("1.25")));
        assert_eq!(w("1.50").rescale(1), Some(w("1.5")));
        assert_eq!(w("1.55").rescale(1), None);
        assert_eq!(w("1.5").rescale(MAX_DECIMALS + 1), None);
        assert!(w("1.5") < w("1.51"));
        assert!(Weight::new(1, MAX_DECIMALS + 1).is_err());
        let max = Weight::new(i64::MAX, 0).expect("0 decimals");
        assert_eq!(max.checked_add(w("1")), None);
    }
}
