//! What the writer counts, for `/metrics` and the benchmarks: commits,
//! jobs, group sizes, commit times and refusals for a full disk.

use depot_protocol::Timestamp;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Upper bounds of the commit duration histogram, in seconds.
const COMMIT_BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// Counters a metrics endpoint or a benchmark can read.
#[derive(Debug)]
pub struct WriterStats {
    pub commits: AtomicU64,
    pub jobs: AtomicU64,
    /// Times the writer's connection waited for the server (PostgreSQL's
    /// round trips, `BEGIN` to `COMMIT`; none on SQLite).
    pub round_trips: AtomicU64,
    /// Jobs per group commit: 1 when idle, up to [`MAX_GROUP`] under load
    /// (fewer on PostgreSQL).
    pub batch_sizes: Histogram,
    /// Seconds from `BEGIN` to the end of `COMMIT` (the fsync included).
    pub commit_seconds: Histogram,
    /// Writes refused because the disk was full.
    pub refused_full: AtomicU64,
    /// Since when writes are refused for a full disk: set by the first
    /// refusal, cleared by the first group that writes without one.
    full_since: Mutex<Option<Timestamp>>,
}

impl WriterStats {
    /// Since when writes are refused for a full disk, if they are.
    pub fn full_since(&self) -> Option<Timestamp> {
        self.full_since.lock().map(|f| *f).unwrap_or(None)
    }

    pub(super) fn group_done(&self, refused_full: u64, wrote: bool) {
        if refused_full > 0 {
            self.refused_full.fetch_add(refused_full, Ordering::Relaxed);
        }
        if refused_full == 0 && !wrote {
            return;
        }
        if let Ok(mut since) = self.full_since.lock() {
            match (refused_full, *since) {
                (0, Some(_)) => {
                    *since = None;
                    tracing::info!("the disk has room again: writes are accepted");
                }
                (n, None) if n > 0 => {
                    *since = Some(depot_protocol::now());
                    tracing::error!("the disk is full: writes are refused until space is freed");
                }
                _ => {}
            }
        }
    }
}

impl Default for WriterStats {
    fn default() -> Self {
        Self {
            commits: AtomicU64::default(),
            jobs: AtomicU64::default(),
            round_trips: AtomicU64::default(),
            // 1, 2, 4 ... 256: one bucket per doubling, up to MAX_GROUP.
            batch_sizes: Histogram::new(exponential_buckets(1.0, 2.0, 9)),
            // 100 µs (a commit the page cache absorbs) to seconds (a
            // stalled disk).
            commit_seconds: Histogram::new(COMMIT_BUCKETS),
            refused_full: AtomicU64::default(),
            full_since: Mutex::new(None),
        }
    }
}
