//! The scales: one driver per configured scale, and what the routes and
//! stations read of them. Packing compares grams; scales report in their
//! own unit, exactly, so the conversion is done here once, in integers.

use super::config::ScaleDevice;
use chrono::{DateTime, Utc};
use depot_hardware::scale::{self, Reading, ScaleHandle, ScaleState, Unit};
use serde::Serialize;

/// A running scale, by its configured id.
#[derive(Debug, Clone)]
pub struct Scale {
    pub id: String,
    pub handle: ScaleHandle,
}

/// Starts the drivers; the configuration was checked when it was read.
pub fn start(config: &[ScaleDevice]) -> Result<Vec<Scale>, String> {
    config
        .iter()
        .map(|s| {
            let hardware = s.hardware().map_err(|e| format!("scale {:?}: {e}", s.id))?;
            let handle = scale::spawn(hardware).map_err(|e| format!("scale {:?}: {e}", s.id))?;
            Ok(Scale {
                id: s.id.clone(),
                handle,
            })
        })
        .collect()
}

/// A weight in grams, rounded to the nearest gram; `None` if it does not
/// fit (no scale weighs that much).
pub fn grams(reading: &Reading) -> Option<i64> {
    // Grams per unit as a fraction: the pound and the ounce are defined
    // exactly in grams.
    let (num, den): (i128, i128) = match reading.unit {
        Unit::Gram => (1, 1),
        Unit::Kilogram => (1000, 1),
        Unit::Pound => (45_359_237, 100_000),
        Unit::Ounce => (28_349_523_125, 1_000_000_000),
    };
    let w = reading.weight;
    let num = i128::from(w.value()) * num;
    let den = 10_i128.pow(u32::from(w.decimals())) * den;
    let half = den / 2;
    let rounded = if num >= 0 {
        (num + half) / den
    } else {
        (num - half) / den
    };
    i64::try_from(rounded).ok()
}

/// A scale as the routes show it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct ScaleView {
    pub id: String,
    /// connecting, weight, motion or fault.
    pub state: &'static str,
    /// The weight as the scale reported it, in `unit`.
    pub weight: Option<String>,
    pub unit: Option<String>,
    /// The weight in grams, rounded.
    pub grams: Option<i64>,
    pub stable: Option<bool>,
    /// What is wrong, in fault.
    pub fault: Option<String>,
    /// When the driver received it.
    pub at: Option<DateTime<Utc>>,
}

impl ScaleView {
    pub fn of(id: &str, state: &ScaleState) -> Self {
        let empty = Self {
            id: id.to_owned(),
            state: "connecting",
            weight: None,
            unit: None,
            grams: None,
            stable: None,
            fault: None,
            at: None,
        };
        match state {
            ScaleState::Connecting => empty,
            ScaleState::Weight(r) => Self::reading(id, r),
            ScaleState::Motion { at } => Self {
                state: "motion",
                stable: Some(false),
                at: Some(DateTime::<Utc>::from(*at)),
                ..empty
            },
            ScaleState::Fault { error, at } => Self {
                state: "fault",
                fault: Some(error.to_string()),
                at: Some(DateTime::<Utc>::from(*at)),
                ..empty
            },
        }
    }

    pub fn reading(id: &str, r: &Reading) -> Self {
        Self {
            id: id.to_owned(),
            state: "weight",
            weight: Some(r.weight.to_string()),
            unit: Some(r.unit.to_string()),
            grams: grams(r),
            stable: Some(r.stable),
            fault: None,
            at: Some(DateTime::<Utc>::from(r.at)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use depot_hardware::scale::{ScaleError, Weight};
    use std::time::SystemTime;

    fn reading(weight: &str, unit: Unit) -> Reading {
        Reading {
            weight: weight.parse::<Weight>().expect("weight"),
            unit,
            stable: true,
            at: SystemTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn grams_from_every_unit_round_to_the_nearest() {
        let g = |w: &str, u: Unit| grams(&reading(w, u));
        assert_eq!(g("1250", Unit::Gram), Some(1250));
        assert_eq!(g("1250.5", Unit::Gram), Some(1251));
        assert_eq!(g("1250.49", Unit::Gram), Some(1250));
        assert_eq!(g("1.2505", Unit::Kilogram), Some(1251));
        assert_eq!(g("0.950", Unit::Kilogram), Some(950));
        assert_eq!(g("-0.0005", Unit::Kilogram), Some(-1));
        assert_eq!(g("1", Unit::Pound), Some(454));
        assert_eq!(g("2.5", Unit::Pound), Some(1134));
        assert_eq!(g("16", Unit::Ounce), Some(454));
        assert_eq!(g("1", Unit::Ounce), Some(28));
        assert_eq!(g("9223372036854775807", Unit::Kilogram), None);
    }

    #[test]
    fn views_show_weight_motion_and_faults() {
        let v = ScaleView::of("s", &ScaleState::Weight(reading("1.250", Unit::Kilogram)));
        assert_eq!(
            (v.state, v.weight.as_deref(), v.unit.as_deref(), v.grams),
            ("weight", Some("1.250"), Some("kg"), Some(1250))
        );
        let v = ScaleView::of(
            "s",
            &ScaleState::Fault {
                error: ScaleError::Overload,
                at: SystemTime::UNIX_EPOCH,
            },
        );
        assert_eq!(v.state, "fault");
        assert!(v.fault.is_some_and(|f| f.contains("overloaded")));
        assert_eq!(
            ScaleView::of("s", &ScaleState::Connecting).state,
            "connecting"
        );
    }
}
