//! Sync bookkeeping. Cloud side (`edges`): registered edges, their
//! cursors and what they report. Edge side (`state`): the acknowledgement,
//! the down cursor, the link, a recovery under way; and (`local_keys`) the
//! keys provisioned in the box's configuration.

mod edges;
mod local_keys;
mod state;

pub use edges::*;
pub use local_keys::*;
pub use state::*;

use super::parse_ts;

/// The last event sync refused, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct Refused {
    pub kind: String,
    pub reason: String,
    pub at: chrono::DateTime<chrono::Utc>,
    /// Edge side: `from_cloud` (a change of the cloud's this box refused)
    /// or `by_cloud` (an event of this box's the cloud refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<String>,
}

pub(super) fn opt_ts(
    r: &depot_sql::Row<'_>,
    i: usize,
) -> depot_sql::Result<Option<chrono::DateTime<chrono::Utc>>> {
    r.get::<Option<String>>(i)?
        .map(|s| parse_ts(&s))
        .transpose()
}
