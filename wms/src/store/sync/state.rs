//! Edge side: the box's sync state (its one `sync_state` row): what the
//! cloud acknowledged, how far the cloud's log is applied, the link, what
//! sync refused, a recovery under way; and the snapshot the status route
//! and the CLI show.

use super::{Refused, opt_ts};
use crate::error::Result;
use crate::store::{maybe, ts};
use depot_protocol::sync::message::Landmark;
use depot_protocol::{EventId, Timestamp};
use depot_sql::{Db, params};

/// Edge side: sync refused an event, `from_cloud` (a change of the cloud's
/// refused here) or not (one of this box's the cloud refused).
pub fn note_refused_here(
    conn: &Db,
    from_cloud: bool,
    kind: &str,
    reason: &str,
    at: &Timestamp,
) -> Result<()> {
    conn.execute(
        "UPDATE sync_state SET refused_down = refused_down + ?1, refused_up = refused_up + 1 - ?1,
                last_refused_kind = ?2, last_refused_reason = ?3, last_refused_at = ?4,
                last_refused_direction = CASE WHEN ?1 <> 0 THEN 'from_cloud' ELSE 'by_cloud' END
         WHERE singleton = 1",
        params![from_cloud, kind, reason, ts(at)],
    )?;
    Ok(())
}

/// Edge side: (acknowledged out_seq, last cloud rev applied).
pub fn state(conn: &Db) -> Result<(i64, i64)> {
    Ok(conn.query_row(
        "SELECT acked, down_cursor FROM sync_state WHERE singleton = 1",
        params![],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}

pub fn set_acked(conn: &Db, through: i64, at: &Timestamp) -> Result<()> {
    conn.execute("UPDATE sync_state SET acked = CASE WHEN acked > ?1 THEN acked ELSE ?1 END, last_ack_at = ?2
         WHERE singleton = 1", params![through, ts(at)])?;
    Ok(())
}

/// Edge side: where taking this node's own events back from the cloud
/// stands, while its log may lack some (a restore, a new box). Nothing of
/// the node's own goes up meanwhile.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct Recovery {
    /// The seq the log is certain through (a restore's, or 0).
    #[serde(rename = "certain_through")]
    pub from: i64,
    /// How far events came back.
    #[serde(rename = "taken_back_through")]
    pub recovered: i64,
    /// Events made meanwhile were renumbered past the cloud's.
    #[serde(rename = "renumbered")]
    pub shifted: bool,
    /// The cloud's cursor they were moved past (0 before): events made
    /// while the rest comes back are numbered past it too, never in the
    /// range still to fill.
    #[serde(skip)]
    pub shifted_past: i64,
    /// Why the events do not come back, when they cannot (the cloud does
    /// not hand them back); `null` while they can.
    pub stalled: Option<String>,
}

/// The recovery under way, if the log is not known whole.
pub fn recovery(conn: &Db) -> Result<Option<Recovery>> {
    maybe(conn.query_row(
        "SELECT recover_from, recovered, shifted, recover_stalled FROM sync_state
             WHERE singleton = 1 AND recover_from IS NOT NULL",
        params![],
        |r| {
            let from: i64 = r.get(0)?;
            let shifted_past: i64 = r.get(2)?;
            Ok(Recovery {
                from,
                recovered: r.get::<Option<i64>>(1)?.unwrap_or(from),
                shifted: shifted_past != 0,
                shifted_past,
                stalled: r.get(3)?,
            })
        },
    ))
}

/// Marks the log as certain only through `from`: a restored database.
pub fn start_recovery(conn: &Db, from: i64) -> Result<()> {
    conn.execute(
        "UPDATE sync_state SET recover_from = ?1, recovered = ?1, shifted = 0, recover_stalled = NULL
         WHERE singleton = 1",
        params![from],
    )?;
    // A copy taken during a recovery has that recovery's floors, which what
    // it made after the copy was taken also numbered from.
    crate::store::ids::clear_floors(conn)
}

/// How far events came back, and the cloud's cursor the node's own events
/// were moved past (0: not moved). `shifted` holds that cursor:
/// [`crate::store::events::append`] numbers new events past it while the
/// recovery lasts.
pub fn set_recovery(conn: &Db, recovered: i64, shifted_past: i64) -> Result<()> {
    conn.execute(
        "UPDATE sync_state SET recovered = ?1, shifted = ?2 WHERE singleton = 1",
        params![recovered, shifted_past],
    )?;
    Ok(())
}

/// Why the recovery cannot go on, or `None` once it can.
pub fn set_recovery_stalled(conn: &Db, why: Option<&str>) -> Result<()> {
    conn.execute(
        "UPDATE sync_state SET recover_stalled = ?1 WHERE singleton = 1",
        params![why],
    )?;
    Ok(())
}

/// The log is whole again.
pub fn end_recovery(conn: &Db) -> Result<()> {
    conn.execute(
        "UPDATE sync_state SET recover_from = NULL, recovered = NULL, shifted = 0, recover_stalled = NULL
         WHERE singleton = 1",
        params![],
    )?;
    crate::store::ids::clear_floors(conn)
}

/// Edge side: the cloud has less than it acknowledged (restored from an
/// older backup); the acknowledgement moves back to `to` so the outbox sends
/// the rest again, after a restart too. Never moves it forward.
pub fn rewind_acked(conn: &Db, to: i64) -> Result<()> {
    conn.execute(
        "UPDATE sync_state SET acked = ?1 WHERE singleton = 1 AND acked > ?1",
        params![to.max(0)],
    )?;
    Ok(())
}

/// Edge side: the cloud cannot serve from the down cursor: start over from
/// the beginning of its log (applying is idempotent by event id), and count
/// it.
pub fn reset_down_cursor(conn: &Db, at: &Timestamp) -> Result<()> {
    conn.execute(
        "UPDATE sync_state SET down_cursor = 0, last_rev = NULL, last_id = NULL,
                resets = resets + 1, last_reset_at = ?1
         WHERE singleton = 1",
        params![ts(at)],
    )?;
    Ok(())
}

/// The last change of the cloud's log applied here.
pub fn last_applied(conn: &Db) -> Result<Option<Landmark>> {
    let (rev, id): (Option<i64>, Option<String>) = conn.query_row(
        "SELECT last_rev, last_id FROM sync_state WHERE singleton = 1",
        params![],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let id = id.and_then(|id| uuid::Uuid::parse_str(&id).ok().map(EventId));
    Ok(match (rev, id) {
        (Some(rev), Some(id)) => Some(Landmark { rev, id }),
        _ => None,
    })
}

pub fn set_last_applied(conn: &Db, last: Landmark) -> Result<()> {
    conn.execute("UPDATE sync_state SET last_rev = ?1, last_id = ?2 WHERE singleton = 1 AND COALESCE(last_rev, 0) < ?1", params![last.rev, last.id.0.to_string()])?;
    Ok(())
}

pub fn set_down_cursor(conn: &Db, rev: i64) -> Result<()> {
    conn.execute("UPDATE sync_state SET down_cursor = CASE WHEN down_cursor > ?1 THEN down_cursor ELSE ?1 END
         WHERE singleton = 1", params![rev])?;
    Ok(())
}

/// Edge side: the link went up or down.
/// The link is up (`why_down` none), or down and why, if that is known.
pub fn set_connected(conn: &Db, up: bool, why_down: Option<&str>, at: &Timestamp) -> Result<()> {
    conn.execute(
        "UPDATE sync_state SET connected = ?1,
                connected_since = CASE WHEN ?1 = connected THEN connected_since ELSE ?2 END,
                link_error = CASE WHEN ?1 <> 0 THEN NULL ELSE COALESCE(?3, link_error) END
         WHERE singleton = 1",
        params![up, ts(at), why_down],
    )?;
    Ok(())
}

/// Edge side: a new run of the link starts down, from `at`.
pub fn link_starting(conn: &Db, at: &Timestamp) -> Result<()> {
    conn.execute(
        "UPDATE sync_state SET connected = 0, connected_since = ?1, link_error = NULL
         WHERE singleton = 1",
        params![ts(at)],
    )?;
    Ok(())
}

/// Connected, but what stands in the way of sync (`None`: nothing).
pub fn set_link_trouble(conn: &Db, why: Option<&str>) -> Result<()> {
    conn.execute(
        "UPDATE sync_state SET link_error = ?1 WHERE singleton = 1",
        params![why],
    )?;
    Ok(())
}

/// Edge side: everything the status route and CLI show.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct SyncSnapshot {
    /// The daemon's link to the broker is up.
    pub connected: bool,
    /// Since when the link has been in its current state.
    pub connected_since: Option<String>,
    /// What stands in the way of sync, and what to look at. While the
    /// link is down: the last failure to reach the broker or to stay
    /// connected (credentials, TLS files, address). While it is up: a
    /// subscription the broker refused, or a cloud that does not answer.
    pub link_error: Option<String>,
    /// Newest event this node made.
    pub head: i64,
    /// What the cloud acknowledged.
    pub acked: i64,
    /// Events waiting for the cloud: head - acked.
    pub depth: i64,
    /// When the oldest of them was made.
    pub oldest_unacked_at: Option<String>,
    pub last_ack_at: Option<String>,
    /// The last cloud rev applied here.
    pub cloud_cursor: i64,
    /// Events from elsewhere that clashed here.
    pub conflicts: i64,
    /// How often the cloud made this box reload its changes from the start
    /// (`reset`: a cloud restored from an older backup), and when last.
    pub resets: i64,
    pub last_reset_at: Option<String>,
    /// Set while the box takes back from the cloud the events of its own
    /// its log lost; until then nothing of its own goes up.
    pub recovery: Option<Recovery>,
    /// What sync refused, both ways: each refused event is a conflict too,
    /// and sync went on past it.
    pub refused: SyncRefusals,
}

/// Events sync refused, both ways, and the last one.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
pub struct SyncRefusals {
    /// Changes of the cloud's this box refused (a reference outside its
    /// business, a transition refused, an apply that failed).
    pub from_cloud: i64,
    /// Events of this box's the cloud refused.
    pub by_cloud: i64,
    pub last: Option<Refused>,
}

pub fn snapshot(conn: &Db) -> Result<SyncSnapshot> {
    type Row = (
        i64,
        i64,
        Option<String>,
        bool,
        Option<String>,
        i64,
        Option<String>,
        Option<String>,
    );
    let (acked, cloud_cursor, last_ack_at, connected, connected_since, resets, last_reset_at, link_error): Row = conn
        .query_row("SELECT acked, down_cursor, last_ack_at, connected, connected_since, resets, last_reset_at, link_error
                         FROM sync_state WHERE singleton = 1", params![], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?)))?;
    let head = crate::store::events::outgoing_head(conn)?;
    let oldest_unacked_at = maybe(conn.query_row(
        "SELECT at FROM events WHERE out_seq = ?1",
        params![acked + 1],
        |r| r.get(0),
    ))?;
    let conflicts: i64 = conn.query_row("SELECT COUNT(*) FROM sync_conflicts", params![], |r| {
        r.get(0)
    })?;
    let refused = conn.query_row(
        "SELECT refused_down, refused_up, last_refused_kind, last_refused_reason,
                    last_refused_at, last_refused_direction
             FROM sync_state WHERE singleton = 1",
        params![],
        |r| {
            let last = match (r.get::<Option<String>>(2)?, opt_ts(r, 4)?) {
                (Some(kind), Some(at)) => Some(Refused {
                    kind,
                    reason: r.get::<Option<String>>(3)?.unwrap_or_default(),
                    at,
                    direction: r.get(5)?,
                }),
                _ => None,
            };
            Ok(SyncRefusals {
                from_cloud: r.get(0)?,
                by_cloud: r.get(1)?,
                last,
            })
        },
    )?;
    Ok(SyncSnapshot {
        connected,
        connected_since,
        link_error,
        head,
        acked,
        depth: (head - acked).max(0),
        oldest_unacked_at,
        last_ack_at,
        cloud_cursor,
        conflicts,
        resets,
        last_reset_at,
        recovery: recovery(conn)?,
        refused,
    })
}
