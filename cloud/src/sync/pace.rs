//! How often the cloud answers one edge's hellos. A hello can start a
//! replay of the edge's whole share of the log, so a box that says hello in
//! a loop (a bug, or a hostile box) must not make the cloud page its log
//! again and again. A token bucket per edge: a short burst is answered (a
//! connect, the cloud coming online and a page lost, all at once), then one
//! hello per `every`. An edge whose hello went unanswered says hello again
//! within seconds on its own, so dropping one loses nothing. Pure: the
//! caller passes the time.

use std::collections::HashMap;
use std::hash::Hash;
use std::time::{Duration, Instant};

/// Hellos answered at once before pacing sets in.
pub(super) const BURST: u32 = 8;
/// One more hello answered per this much time.
pub(super) const EVERY: Duration = Duration::from_secs(1);

#[derive(Debug)]
pub(super) struct Pace<K> {
    buckets: HashMap<K, Bucket>,
    burst: u32,
    every: Duration,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: u32,
    since: Instant,
}

impl<K: Hash + Eq + Clone> Pace<K> {
    pub(super) fn new(burst: u32, every: Duration) -> Self {
        Self {
            buckets: HashMap::new(),
            burst: burst.max(1),
            every: every.max(Duration::from_millis(1)),
        }
    }

    /// Whether a hello of `key` arriving at `now` is answered.
    pub(super) fn admit(&mut self, key: &K, now: Instant) -> bool {
        let (burst, every) = (self.burst, self.every);
        let b = self.buckets.entry(key.clone()).or_insert(Bucket {
            tokens: burst,
            since: now,
        });
        let earned = now.saturating_duration_since(b.since).as_millis() / every.as_millis();
        if earned > 0 {
            let earned = u32::try_from(earned).unwrap_or(u32::MAX);
            b.tokens = b.tokens.saturating_add(earned).min(burst);
            b.since = if b.tokens == burst {
                now
            } else {
                b.since + every * earned
            };
        }
        if b.tokens == 0 {
            return false;
        }
        b.tokens -= 1;
        true
    }

    /// Forgets buckets full again (idle edges), so the map does not grow
    /// with every edge ever heard.
    pub(super) fn forget_idle(&mut self, now: Instant) {
        let full = self.every * self.burst;
        self.buckets
            .retain(|_, b| now.saturating_duration_since(b.since) < full);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_one_per_period() {
        let mut p = Pace::new(3, Duration::from_secs(2));
        let t0 = Instant::now();
        let answered: Vec<bool> = (0..5).map(|_| p.admit(&"e", t0)).collect();
        assert_eq!(answered, [true, true, true, false, false]);
        // Another edge has its own bucket.
        assert!(p.admit(&"f", t0));
        assert!(!p.admit(&"e", t0 + Duration::from_millis(1999)));
        assert!(p.admit(&"e", t0 + Duration::from_secs(2)));
        assert!(!p.admit(&"e", t0 + Duration::from_secs(3)));
        assert!(p.admit(&"e", t0 + Duration::from_secs(4)));
        // A loop of hellos every 100 ms for a minute: about one in 20.
        let mut n = 0;
        for i in 0..600 {
            if p.admit(
                &"e",
                t0 + Duration::from_secs(4) + Duration::from_millis(100 * i),
            ) {
                n += 1;
            }
        }
        assert!((29..=31).contains(&n), "{n}");
    }

    #[test]
    fn an_idle_edge_gets_its_burst_back_and_is_forgotten() {
        let mut p = Pace::new(2, Duration::from_secs(1));
        let t0 = Instant::now();
        assert!(p.admit(&1, t0) && p.admit(&1, t0) && !p.admit(&1, t0));
        let later = t0 + Duration::from_secs(60);
        p.forget_idle(later);
        assert!(p.buckets.is_empty());
        assert!(p.admit(&1, later) && p.admit(&1, later) && !p.admit(&1, later));
    }
}
