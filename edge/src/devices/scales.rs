//! The scales: one driver per configured scale, and what the routes and
//! stations read of them. Packing compares grams; scales report in their
//! own unit, exactly, so the conversion is done here once, in integers.
//!
//! Each scale's settled weights are logged as `scale.weighed` events: a
//! new load, not every reading, at the pace of [`super::pacing`].

use super::config::ScaleDevice;
use super::pacing::{self, Pace};
use super::stopped;
use chrono::{DateTime, Utc};
use depot_hardware::scale::{self, Reading, ScaleHandle, ScaleState, Unit};
use depot_protocol::BusinessId;
use depot_protocol::event::EventKind;
use depot_wms::Wms;
use serde::Serialize;
use tokio::sync::watch;
use tokio::time::Instant;

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
    let w = reading.weight;
    grams_of(w.value(), w.decimals(), reading.unit)
}

/// `value` × 10^-`decimals` `unit`, in grams, rounded.
fn grams_of(value: i64, decimals: u8, unit: Unit) -> Option<i64> {
    // Grams per unit as a fraction: the pound and the ounce are defined
    // exactly in grams.
    let (num, den): (i128, i128) = match unit {
        Unit::Gram => (1, 1),
        Unit::Kilogram => (1000, 1),
        Unit::Pound => (45_359_237, 100_000),
        Unit::Ounce => (28_349_523_125, 1_000_000_000),
    };
    let num = i128::from(value) * num;
    let den = 10_i128.checked_pow(u32::from(decimals))? * den;
    let half = den / 2;
    let rounded = if num >= 0 {
        (num + half) / den
    } else {
        (num - half) / den
    };
    i64::try_from(rounded).ok()
}

/// What a settled weight may differ from zero or from the last one written
/// and still be the same load: two steps of the scale's display (a stable
/// scale may still move by one), at least 2 g since events count grams.
fn noise(reading: &Reading) -> Option<i64> {
    let step = grams_of(1, reading.weight.decimals(), reading.unit)?;
    Some(2 * step.max(1))
}

/// Which stable weights of one scale are written.
#[derive(Debug, Default)]
pub struct Weighings {
    /// The grams last written, until the scale is emptied: the same parcel
    /// weighed again is written again.
    written: Option<i64>,
    /// A new weight, written once the pace allows (or replaced first by a
    /// newer one).
    pending: Option<Reading>,
    pace: Pace,
}

impl Weighings {
    pub fn saw(&mut self, state: &ScaleState) {
        let Some(reading) = state.reading().filter(|r| r.stable) else {
            return;
        };
        let (Some(grams), Some(noise)) = (grams(reading), noise(reading)) else {
            return;
        };
        if grams.abs() <= noise {
            // Emptied: nothing to write, and the next load is news. A load
            // still pending is written in its turn.
            self.written = None;
            self.pace.relax();
        } else if self.written.is_some_and(|w| (grams - w).abs() <= noise) {
            self.pending = None;
        } else {
            self.pending = Some(reading.clone());
        }
    }

    /// When the pending weight may be written.
    pub fn due(&self) -> Option<Instant> {
        self.pending
            .as_ref()
            .map(|_| self.pace.next_at().unwrap_or_else(Instant::now))
    }

    /// The weight to write now, if any.
    pub fn take(&mut self, now: Instant) -> Option<Reading> {
        if !self.pace.allows(now) {
            return None;
        }
        let reading = self.pending.take()?;
        self.written = grams(&reading);
        self.pace.wrote(now);
        Some(reading)
    }
}

/// Logs one scale's new weights until `stop`.
pub async fn report(
    scale: Scale,
    station: Option<String>,
    wms: Wms,
    business: BusinessId,
    mut stop: watch::Receiver<bool>,
) {
    let mut latest = scale.handle.latest();
    let mut weighings = Weighings::default();
    loop {
        tokio::select! {
            () = stopped(&mut stop) => break,
            changed = latest.changed() => {
                if changed.is_err() {
                    break;
                }
                let state = latest.borrow_and_update().clone();
                weighings.saw(&state);
            }
            () = pacing::until(weighings.due()) => {}
        }
        let Some(reading) = weighings.take(Instant::now()) else {
            continue;
        };
        let Some(grams) = grams(&reading) else {
            continue;
        };
        let at = depot_protocol::format_ts(&DateTime::<Utc>::from(reading.at));
        let payload = serde_json::json!({
            "business_id": business,
            "device": scale.id,
            "station": station,
            "grams": grams,
            "value": reading.weight.to_string(),
            "unit": reading.unit.to_string(),
            "stable": true,
            "at": at,
        });
        if let Err(error) = wms
            .device_event(business, EventKind::ScaleWeighed, payload)
            .await
        {
            tracing::warn!(scale = %scale.id, %error, "cannot log a weight");
        }
    }
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
