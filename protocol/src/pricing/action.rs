//! What a rule does to a price, in integer cents. Results are rounded half
//! away from zero (commercial rounding: 0.225 becomes 0.23, not the 0.22 a
//! banker would write), once, at the end of each computation.

use crate::Money;

/// Percentages are kept in ten-thousandths of a percent: "12.5" is 125_000.
const PERCENT_SCALE: i64 = 10_000;
/// A factor of 1 in the same unit (100 %).
const WHOLE: i128 = 100 * PERCENT_SCALE as i128;
/// Decimals a percentage may carry.
pub const PERCENT_DECIMALS: usize = 4;
/// A price may be raised by at most this many percent in one rule (×11).
pub const MAX_INCREASE_PERCENT: i64 = 1000;
/// The longest `origin_action_value` accepted.
pub const MAX_VALUE_CHARS: usize = 32;

/// The `origin_action_id` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionKind {
    /// The origin price plus a percentage of it.
    IncreasePercent,
    /// The origin price minus a percentage of it (at most 100).
    DecreasePercent,
    /// The origin price plus a signed amount ("-1.50" lowers it).
    AddFixed,
    /// A fixed amount, whatever the origin price.
    SetFixed,
    /// The origin price rounded to the nearest multiple of an amount
    /// ("0.05", "1.00").
    RoundTo,
}

impl ActionKind {
    pub const ALL: [ActionKind; 5] = [
        Self::IncreasePercent,
        Self::DecreasePercent,
        Self::AddFixed,
        Self::SetFixed,
        Self::RoundTo,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::IncreasePercent => "increase_percent",
            Self::DecreasePercent => "decrease_percent",
            Self::AddFixed => "add_fixed",
            Self::SetFixed => "set_fixed",
            Self::RoundTo => "round_to",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s.trim())
    }

    /// The list a client is told when it names another.
    pub fn names() -> String {
        Self::ALL.map(Self::as_str).join(", ")
    }
}

/// A checked action: its kind and its value, a percentage in
/// ten-thousandths of a percent or an amount in cents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Action {
    kind: ActionKind,
    value: i64,
}

/// A decimal with at most `decimals` digits after the point, scaled to an
/// integer ("12.5", 4 → 125_000). A leading minus sign is accepted.
pub fn parse_decimal(s: &str, decimals: usize) -> Option<i64> {
    let s = s.trim();
    let (neg, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty()
        || whole.len() > 12
        || !all_digits(whole)
        || !all_digits(frac)
        || frac.len() > decimals
        || (digits.contains('.') && frac.is_empty())
    {
        return None;
    }
    let scale = 10i64.pow(decimals as u32);
    let frac_scaled = format!("{frac:0<decimals$}").parse::<i64>().unwrap_or(0);
    let v = whole.parse::<i64>().ok()?.checked_mul(scale)? + frac_scaled;
    Some(if neg { -v } else { v })
}

/// Writes a percentage without trailing zeros: 125_000 → "12.5".
fn format_percent(units: i64) -> String {
    let whole = units / PERCENT_SCALE;
    let frac = format!("{:04}", (units % PERCENT_SCALE).abs());
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        whole.to_string()
    } else {
        format!("{whole}.{frac}")
    }
}

/// `n / d` rounded half away from zero; `d` is positive.
pub fn div_round(n: i128, d: i128) -> i128 {
    let (q, r) = (n / d, n % d);
    if 2 * r.abs() >= d { q + n.signum() } else { q }
}

impl Action {
    /// Checks `value` for `kind`; the error says what is wrong with the value.
    pub fn new(kind: ActionKind, value: &str) -> Result<Self, String> {
        if value.trim().is_empty() {
            return Err("is required".into());
        }
        if value.chars().count() > MAX_VALUE_CHARS {
            return Err(format!("must be at most {MAX_VALUE_CHARS} characters"));
        }
        let percent = || {
            parse_decimal(value, PERCENT_DECIMALS).filter(|v| *v >= 0).ok_or_else(|| {
                format!(
                    "must be a percentage like \"12.5\" (at most {PERCENT_DECIMALS} decimals, no sign)"
                )
            })
        };
        let amount = || {
            Money::parse(value)
                .map(Money::cents)
                .map_err(|_| "must be an amount like \"12.50\" (at most 2 decimals)".to_owned())
        };
        let value = match kind {
            ActionKind::IncreasePercent => {
                let p = percent()?;
                if p == 0 || p > MAX_INCREASE_PERCENT * PERCENT_SCALE {
                    return Err(format!(
                        "must be more than 0 and at most {MAX_INCREASE_PERCENT}"
                    ));
                }
                p
            }
            ActionKind::DecreasePercent => {
                let p = percent()?;
                if p == 0 || p > 100 * PERCENT_SCALE {
                    return Err("must be more than 0 and at most 100".into());
                }
                p
            }
            ActionKind::AddFixed => match amount()? {
                0 => return Err("must not be 0".into()),
                a => a,
            },
            ActionKind::SetFixed => match amount()? {
                a if a < 0 => return Err("must not be negative".into()),
                a => a,
            },
            ActionKind::RoundTo => match amount()? {
                a if a <= 0 => return Err("must be greater than 0".into()),
                a => a,
            },
        };
        Ok(Self { kind, value })
    }

    /// The extended form: `type` `percentage` (a signed percentage: below 0
    /// lowers the price) or `fixed` (a signed amount added), and `value`.
    pub fn from_type(
        kind: &str,
        value: &serde_json::Number,
    ) -> Result<Self, (&'static str, String)> {
        let text = value.to_string();
        let negative = text.starts_with('-');
        let unsigned = text.trim_start_matches('-');
        match kind.trim() {
            "percentage" => {
                let k = if negative {
                    ActionKind::DecreasePercent
                } else {
                    ActionKind::IncreasePercent
                };
                Self::new(k, unsigned).map_err(|e| ("value", e))
            }
            "fixed" => Self::new(ActionKind::AddFixed, &text).map_err(|e| ("value", e)),
            _ => Err(("type", "must be percentage or fixed".into())),
        }
    }

    pub fn kind(&self) -> ActionKind {
        self.kind
    }

    /// The value as `origin_action_value` writes it.
    pub fn value_string(&self) -> String {
        match self.kind {
            ActionKind::IncreasePercent | ActionKind::DecreasePercent => format_percent(self.value),
            _ => Money(self.value).to_string(),
        }
    }

    /// The extended `type` and `value` this action reads as, when it has one.
    pub fn as_type(&self) -> Option<(&'static str, f64)> {
        let percent = self.value as f64 / PERCENT_SCALE as f64;
        match self.kind {
            ActionKind::IncreasePercent => Some(("percentage", percent)),
            ActionKind::DecreasePercent => Some(("percentage", -percent)),
            ActionKind::AddFixed => Some(("fixed", self.value as f64 / 100.0)),
            ActionKind::SetFixed | ActionKind::RoundTo => None,
        }
    }

    /// The price this action makes of `origin`; `None` when it would be
    /// negative or beyond [`Money::MAX`] (the item is left alone). Computed
    /// in `i128`: no value of `origin` can overflow it.
    pub fn apply(&self, origin: Money) -> Option<Money> {
        if origin.cents() < 0 {
            return None;
        }
        let p = i128::from(origin.cents());
        let v = i128::from(self.value);
        let new = match self.kind {
            ActionKind::IncreasePercent => div_round(p * (WHOLE + v), WHOLE),
            ActionKind::DecreasePercent => div_round(p * (WHOLE - v), WHOLE),
            ActionKind::AddFixed => p + v,
            ActionKind::SetFixed => v,
            ActionKind::RoundTo => div_round(p, v) * v,
        };
        i64::try_from(new)
            .ok()
            .filter(|c| (0..=Money::MAX.cents()).contains(c))
            .map(Money)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn act(kind: ActionKind, value: &str) -> Action {
        Action::new(kind, value).unwrap_or_else(|e| panic!("{value}: {e}"))
    }

    fn apply(kind: ActionKind, value: &str, cents: i64) -> Option<i64> {
        act(kind, value).apply(Money(cents)).map(Money::cents)
    }

    #[test]
    fn percentages_round_half_away_from_zero() {
        use ActionKind::*;
        assert_eq!(apply(IncreasePercent, "12.5", 1000), Some(1125));
        assert_eq!(apply(IncreasePercent, "10", 5), Some(6)); // 5.5
        assert_eq!(apply(DecreasePercent, "10", 25), Some(23)); // 22.5: banker's would say 22
        assert_eq!(apply(DecreasePercent, "50", 15), Some(8)); // 7.5
        assert_eq!(apply(DecreasePercent, "10", 24), Some(22)); // 21.6
        assert_eq!(apply(IncreasePercent, "0.0001", 1_000_000), Some(1_000_001));
        assert_eq!(apply(DecreasePercent, "100", 999), Some(0));
        assert_eq!(apply(IncreasePercent, "1000", 100), Some(1100));
    }

    #[test]
    fn fixed_amounts_and_rounding_steps() {
        use ActionKind::*;
        assert_eq!(apply(AddFixed, "1.50", 1000), Some(1150));
        assert_eq!(apply(AddFixed, "-1.50", 1000), Some(850));
        assert_eq!(apply(AddFixed, "-1.50", 100), None);
        assert_eq!(apply(SetFixed, "9.99", 1000), Some(999));
        assert_eq!(apply(SetFixed, "0", 1000), Some(0));
        assert_eq!(apply(RoundTo, "0.05", 1232), Some(1230));
        assert_eq!(apply(RoundTo, "0.05", 1233), Some(1235));
        assert_eq!(apply(RoundTo, "0.10", 1235), Some(1240));
        assert_eq!(apply(RoundTo, "1.00", 1250), Some(1300));
        assert_eq!(apply(RoundTo, "1", 1249), Some(1200));
        assert_eq!(act(IncreasePercent, "1000").apply(Money(i64::MAX)), None);
        assert_eq!(act(IncreasePercent, "0.0001").apply(Money::MAX), None);
        assert_eq!(act(AddFixed, "0.01").apply(Money::MAX), None);
        assert_eq!(
            act(RoundTo, "999999999999999.99").apply(Money::MAX),
            Some(Money::MAX)
        );
        assert_eq!(
            act(DecreasePercent, "100").apply(Money(i64::MAX)),
            Some(Money(0))
        );
        assert_eq!(act(RoundTo, "0.01").apply(Money(i64::MAX)), None);
        assert_eq!(
            act(AddFixed, "-999999999999999.99").apply(Money(i64::MIN)),
            None
        );
        assert_eq!(act(SetFixed, "1").apply(Money(-1)), None);
    }

    #[test]
    fn values_are_checked_per_kind() {
        use ActionKind::*;
        for (kind, bad) in [
            (IncreasePercent, "0"),
            (IncreasePercent, "1000.0001"),
            (IncreasePercent, "-5"),
            (IncreasePercent, "1.23456"),
            (IncreasePercent, "abc"),
            (IncreasePercent, ""),
            (DecreasePercent, "100.5"),
            (AddFixed, "0.00"),
            (AddFixed, "1.234"),
            (SetFixed, "-1"),
            (RoundTo, "0"),
            (RoundTo, "12345678901234567890123456789012345"),
        ] {
            assert!(Action::new(kind, bad).is_err(), "{} {bad}", kind.as_str());
        }
    }

    #[test]
    fn values_are_written_canonically() {
        use ActionKind::*;
        assert_eq!(act(IncreasePercent, "12.50").value_string(), "12.5");
        assert_eq!(act(DecreasePercent, "010").value_string(), "10");
        assert_eq!(act(IncreasePercent, "0.0001").value_string(), "0.0001");
        assert_eq!(act(AddFixed, "-1.5").value_string(), "-1.50");
        assert_eq!(act(RoundTo, "1").value_string(), "1.00");
    }

    #[test]
    fn the_extended_type_maps_onto_actions() {
        let n = |v: serde_json::Value| match v {
            serde_json::Value::Number(n) => n,
            _ => panic!("not a number"),
        };
        let up = Action::from_type("percentage", &n(serde_json::json!(12.5)));
        assert_eq!(up, Ok(act(ActionKind::IncreasePercent, "12.5")));
        let down = Action::from_type("percentage", &n(serde_json::json!(-20)));
        assert_eq!(down, Ok(act(ActionKind::DecreasePercent, "20")));
        let fixed = Action::from_type("fixed", &n(serde_json::json!(-0.5)));
        assert_eq!(fixed, Ok(act(ActionKind::AddFixed, "-0.50")));
        assert_eq!(fixed.map(|a| a.as_type()), Ok(Some(("fixed", -0.5))));
        assert!(Action::from_type("fixed", &n(serde_json::json!(0.001))).is_err());
        assert_eq!(
            Action::from_type("other", &n(serde_json::json!(1))).map_err(|e| e.0),
            Err("type")
        );
        assert_eq!(act(ActionKind::SetFixed, "1").as_type(), None);
    }

    proptest! {
        /// The result is the exact product rounded to the nearest cent, a
        /// tie going up (prices are never negative).
        #[test]
        fn percentages_are_the_nearest_cent(cents in 0i64..10_000_000_000, units in 1i64..10_000_000, up in any::<bool>()) {
            let units = if up { units } else { units % 1_000_000 + 1 };
            let kind = if up { ActionKind::IncreasePercent } else { ActionKind::DecreasePercent };
            let a = Action { kind, value: units };
            let factor = if up { WHOLE + i128::from(units) } else { WHOLE - i128::from(units) };
            let exact = i128::from(cents) * factor;
            let got = a.apply(Money(cents)).map(|m| i128::from(m.cents()));
            prop_assert!(got.is_some());
            let diff = 2 * (got.unwrap_or(0) * WHOLE - exact);
            prop_assert!(diff > -WHOLE && diff <= WHOLE, "{cents} {units}: {got:?}");
        }

        #[test]
        fn rounding_lands_on_a_multiple_nearby(cents in 0i64..10_000_000_000, step in 1i64..100_000) {
            let got = Action { kind: ActionKind::RoundTo, value: step }.apply(Money(cents)).map(Money::cents).unwrap_or(-1);
            prop_assert_eq!(got % step, 0);
            prop_assert!(2 * (got - cents) <= step && 2 * (cents - got) < step);
        }

        #[test]
        fn percent_text_round_trips(units in 1i64..10_000_000) {
            prop_assert_eq!(parse_decimal(&format_percent(units), PERCENT_DECIMALS), Some(units));
        }
    }
}
