//! How often a device may write an event (`printer.state_changed`,
//! `scale.weighed`). A device that flaps (a printer whose paper sensor
//! chatters, a scale whose "stable" flag comes and goes) must not fill the
//! log, the sync link and every webhook with its noise, while one real
//! change (paper out, a parcel weighed) must be written at once.
//!
//! So writes of one device are at least [`FIRST_GAP`] apart, and each write
//! that comes within [`QUIET`] of the one before doubles the gap, up to
//! [`LONGEST_GAP`]: a device that keeps changing writes at 0, 1, 3, 7, 15 s…
//! and then once every 5 minutes, about ten events in its first 5 minutes.
//! Changes between two writes are not queued: the next write says the state
//! the device is in then, so the last event always tells the truth. The
//! gap is back to [`FIRST_GAP`] once a device has written nothing for
//! [`QUIET`] (longer than the longest gap, so a device that keeps flapping
//! never gets there), or when its caller says so (a scale emptied).

use std::time::Duration;
use tokio::time::Instant;

pub const FIRST_GAP: Duration = Duration::from_secs(1);
pub const LONGEST_GAP: Duration = Duration::from_secs(300);
pub const QUIET: Duration = Duration::from_secs(600);

/// One device's writes.
#[derive(Debug, Clone)]
pub struct Pace {
    last: Option<Instant>,
    gap: Duration,
}

impl Default for Pace {
    fn default() -> Self {
        Self {
            last: None,
            gap: FIRST_GAP,
        }
    }
}

impl Pace {
    /// When the next write may be made; `None`: now.
    pub fn next_at(&self) -> Option<Instant> {
        self.last.map(|last| last + self.gap)
    }

    pub fn allows(&self, now: Instant) -> bool {
        self.next_at().is_none_or(|at| now >= at)
    }

    /// A write was made at `now`.
    pub fn wrote(&mut self, now: Instant) {
        self.gap = match self.last {
            Some(last) if now.saturating_duration_since(last) < QUIET => {
                self.gap.saturating_mul(2).min(LONGEST_GAP)
            }
            _ => FIRST_GAP,
        };
        self.last = Some(now);
    }

    /// Back to the first gap: what comes next is news, not noise.
    pub fn relax(&mut self) {
        self.gap = FIRST_GAP;
    }
}

/// The most writes one device can make within `span` (the bound the tests
/// hold a flapping device to).
pub fn most_writes(span: Duration) -> usize {
    let (mut writes, mut at, mut gap) = (1, Duration::ZERO, FIRST_GAP);
    while at + gap <= span {
        at += gap;
        gap = gap.saturating_mul(2).min(LONGEST_GAP);
        writes += 1;
    }
    writes
}

/// Resolves at `at`, or never when there is nothing to wait for: a
/// `select!` branch for a write held back by the pace.
pub async fn until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// When each write of a device that always has a change waiting is made.
    fn schedule(pace: &mut Pace, start: Instant, writes: usize) -> Vec<Duration> {
        let mut at = start;
        let mut times = Vec::new();
        for _ in 0..writes {
            at = pace.next_at().unwrap_or(at).max(at);
            assert!(pace.allows(at));
            pace.wrote(at);
            times.push(at - start);
        }
        times
    }

    #[test]
    fn a_flapping_device_writes_ever_less_often() {
        let mut pace = Pace::default();
        let times = schedule(&mut pace, Instant::now(), 12);
        let secs: Vec<u64> = times.iter().map(Duration::as_secs).collect();
        assert_eq!(secs, [0, 1, 3, 7, 15, 31, 63, 127, 255, 511, 811, 1111]);
        for (i, t) in times.iter().enumerate() {
            assert!(i < most_writes(*t + Duration::from_millis(1)));
        }
        assert_eq!(most_writes(Duration::ZERO), 1);
        assert_eq!(most_writes(Duration::from_secs(6)), 3);
        assert_eq!(most_writes(Duration::from_secs(7)), 4);
    }

    #[test]
    fn a_quiet_device_or_a_relaxed_one_writes_at_once_again() {
        let start = Instant::now();
        let mut pace = Pace::default();
        pace.wrote(start);
        pace.wrote(start + Duration::from_secs(1));
        pace.wrote(start + Duration::from_secs(3));
        assert_eq!(pace.next_at(), Some(start + Duration::from_secs(7)));
        pace.relax();
        assert!(pace.allows(start + Duration::from_secs(4)));
        assert!(!pace.allows(start + Duration::from_millis(3500)));

        let later = start + Duration::from_secs(3) + QUIET;
        pace.wrote(later);
        assert_eq!(pace.next_at(), Some(later + FIRST_GAP));
    }
}
