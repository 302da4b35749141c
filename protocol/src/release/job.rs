//! Translation sync jobs: a background run that fills the locales releases
//! are missing from a translation source, and reports as it goes.

use super::Product;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The most per-file errors a job keeps (the count goes on).
pub const MAX_JOB_ERRORS: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    Running,
    /// Every missing locale was looked at; some may have failed (see
    /// `errors`).
    Completed,
    /// The job could not go on: the source was unreadable, or the process
    /// running it stopped.
    Failed,
}

impl JobStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Running, Self::Completed, Self::Failed]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

/// A translation that was found but could not be used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct JobError {
    pub product: Product,
    pub version: String,
    pub locale: String,
    pub reason: String,
}

/// A job and how far it got. `done` of `total` missing translations have
/// been looked at: each was `filled`, `skipped` (the source has no file for
/// it, or it was filled meanwhile) or `failed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TranslationJob {
    pub job_id: i64,
    pub status: JobStatus,
    pub done: u64,
    pub total: u64,
    pub filled: u64,
    pub skipped: u64,
    pub failed: u64,
    /// The first [`MAX_JOB_ERRORS`] failures.
    pub errors: Vec<JobError>,
    /// Why a job failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_by: Option<String>,
    pub started_at: DateTime<Utc>,
    /// The job's last sign of life: it moves with every step.
    pub updated_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}
