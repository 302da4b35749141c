//! What goes in and out of the driver.

use std::fmt;
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};

use crate::printer::status::Problem;

/// A print job's id, chosen by the caller (the edge's row id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JobId(pub u64);

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A job: the bytes to send, one or more complete ZPL formats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub id: JobId,
    pub data: Vec<u8>,
}

/// What happened to a job, for the caller to persist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum JobOutcome {
    /// The printer took the whole job: every byte was written and the
    /// printer acknowledged the end of the connection. It prints from its
    /// own buffer, also once a fault found afterwards is cleared.
    Printed { id: JobId },
    /// The transfer was cut off; the job stays first in line and is sent
    /// again, whole. If the printer had in fact taken it, it prints twice:
    /// delivery is at least once in that window.
    Retrying {
        id: JobId,
        attempt: u32,
        reason: String,
    },
    /// Given up after too many cut-off transfers; the job left the queue.
    Failed { id: JobId, reason: String },
}

impl JobOutcome {
    pub fn id(&self) -> JobId {
        match self {
            JobOutcome::Printed { id }
            | JobOutcome::Retrying { id, .. }
            | JobOutcome::Failed { id, .. } => *id,
        }
    }
}

/// The printer as the edge's status route shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum PrinterState {
    /// Not heard from yet.
    Unknown,
    /// Answers, no problem, nothing to do.
    Ready,
    /// Answers, no problem, and jobs are queued or printing.
    Busy,
    /// Answers, but cannot print: queued jobs wait.
    Faulted { problems: Vec<Problem> },
    /// No connection, or no answer to `~HS`: a Zebra may stay silent when
    /// out of media or with its head open, so this is not taken as success.
    Unreachable {
        #[serde(rename = "since_unix_ms", with = "unix_millis")]
        since: SystemTime,
    },
}

mod unix_millis {
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(time: &SystemTime, serializer: S) -> Result<S::Ok, S::Error> {
        // A clock before 1970 (a board without RTC before NTP) shows as 0.
        let millis = time.duration_since(UNIX_EPOCH).map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        });
        serializer.serialize_u64(millis)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<SystemTime, D::Error> {
        let millis = u64::deserialize(deserializer)?;
        Ok(UNIX_EPOCH + Duration::from_millis(millis))
    }
}

/// What the driver asks its I/O task to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Open a connection, then report `connected` or `connection_lost`.
    Connect,
    /// Write these bytes after any earlier ones, then report
    /// `write_finished` (or `connection_lost`).
    Write(Vec<u8>),
    /// End the connection and wait for the printer to acknowledge it (TCP:
    /// shut down sending, read until the printer closes), then report
    /// `closed`, or `connection_lost` if it ended any other way.
    Close,
    /// Drop the connection now; nothing more is expected from it.
    Abort,
    /// Call `timer_fired` at this instant; replaces any earlier timer.
    ArmTimer(Instant),
    StateChanged(PrinterState),
    Job(JobOutcome),
}

/// Timeouts and retry policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverConfig {
    pub connect_timeout: Duration,
    /// How long a `~HS` answer may take.
    pub status_timeout: Duration,
    /// How long writing one job may take (a paused printer with a full
    /// buffer stops reading).
    pub transfer_timeout: Duration,
    /// How long the printer may take to close after the end of a job.
    pub close_timeout: Duration,
    /// First wait after a fault or a lost printer; doubles up to
    /// `backoff_max` while the problem lasts.
    pub backoff_initial: Duration,
    pub backoff_max: Duration,
    /// How often an idle printer is asked for its status, so the status
    /// route notices a printer that went away; `None` polls only for jobs.
    pub idle_poll: Option<Duration>,
    /// Cut-off transfers after which a job is given up.
    pub max_transfer_attempts: u32,
}

impl Default for DriverConfig {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(5),
            status_timeout: Duration::from_secs(3),
            transfer_timeout: Duration::from_secs(60),
            close_timeout: Duration::from_secs(10),
            backoff_initial: Duration::from_secs(1),
            backoff_max: Duration::from_secs(30),
            idle_poll: Some(Duration::from_secs(30)),
            max_transfer_attempts: 5,
        }
    }
}

/// A point in time as the driver sees it: the monotonic instant runs the
/// timers; the wall-clock time only dates states for people, read with each
/// event so a clock set by NTP after boot is picked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moment {
    pub instant: Instant,
    pub wall: SystemTime,
}

impl Moment {
    pub fn now() -> Self {
        Self {
            instant: Instant::now(),
            wall: SystemTime::now(),
        }
    }

    pub fn after(self, elapsed: Duration) -> Self {
        Self {
            instant: self.instant + elapsed,
            wall: self.wall + elapsed,
        }
    }
}
