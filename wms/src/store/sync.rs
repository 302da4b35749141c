//! Sync bookkeeping: registered edges, their cursors and what they report
//! (cloud side), the acknowledgement, down cursor and keys provisioned in
//! the box's configuration (edge side).

use super::{maybe, parse_ts, ts};
use crate::error::Result;
use depot_protocol::sync::message::Landmark;
use depot_protocol::{BusinessId, EventId, Timestamp};
use rusqlite::{Connection, params};

/// An edge as the cloud knows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct EdgeRecord {
    pub business_id: BusinessId,
    pub edge_id: String,
    /// Its node number: the range its records are numbered in.
    pub node: u32,
    pub name: Option<String>,
    pub registered_at: chrono::DateTime<chrono::Utc>,
    /// The last event of its log applied here.
    pub up_cursor: i64,
    pub last_seen: Option<chrono::DateTime<chrono::Utc>>,
    /// The version it runs, from its hello or state.
    pub version: Option<String>,
    /// The newest event of its log, as it last reported (hello, state,
    /// batches); `None` until an edge that reports it has been heard from.
    pub reported_head: Option<i64>,
    /// Events it made that are not applied here yet: `reported_head -
    /// up_cursor` (never below 0; `None` when the head is unknown).
    pub backlog: Option<i64>,
    /// Its retained state says it is connected (`online`; `offline` once its
    /// last will is published), or it said hello since.
    pub online: bool,
    /// When its state last changed, as seen here.
    pub state_at: Option<chrono::DateTime<chrono::Utc>>,
    /// From its last hello: its own log is certain only through this seq
    /// (restored from a backup, or a new box), and it is taking back from
    /// here the events this cloud applied after it; nothing new of its own
    /// comes up meanwhile. `None` once its log is whole.
    pub taking_back_after: Option<i64>,
    /// The warehouses it serves: its events may write only into these.
    /// Empty: every warehouse of its business.
    pub warehouses: Vec<depot_protocol::WarehouseId>,
    /// How many of its events were refused here (a reference outside its
    /// business or its warehouses, a transition refused, an apply that
    /// failed): each is a conflict of its business.
    pub refused: i64,
    /// The last of them.
    pub last_refused: Option<Refused>,
}

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

pub fn register_edge(
    conn: &Connection,
    business: BusinessId,
    edge: &str,
    name: Option<&str>,
    at: &Timestamp,
) -> Result<u32> {
    let node: u32 = conn.query_row("SELECT COALESCE(MAX(node), 0) + 1 FROM edges", [], |r| {
        r.get(0)
    })?;
    conn.prepare_cached("INSERT INTO edges (business_id, edge_id, node, name, registered_at) VALUES (?1, ?2, ?3, ?4, ?5)")?
        .execute(params![business.0, edge, node, name, ts(at)])?;
    Ok(node)
}

const COLS: &str = "business_id, edge_id, node, name, registered_at, up_cursor, last_seen, version,
                    reported_head, online, state_at, taking_back_after, refused,
                    last_refused_kind, last_refused_reason, last_refused_at";

fn opt_ts(r: &rusqlite::Row, i: usize) -> rusqlite::Result<Option<chrono::DateTime<chrono::Utc>>> {
    r.get::<_, Option<String>>(i)?
        .map(|s| parse_ts(&s))
        .transpose()
}

fn row(r: &rusqlite::Row) -> rusqlite::Result<EdgeRecord> {
    let up_cursor: i64 = r.get(5)?;
    let reported_head: Option<i64> = r.get(8)?;
    Ok(EdgeRecord {
        business_id: BusinessId(r.get(0)?),
        edge_id: r.get(1)?,
        node: r.get(2)?,
        name: r.get(3)?,
        registered_at: parse_ts(&r.get::<_, String>(4)?)?,
        up_cursor,
        last_seen: opt_ts(r, 6)?,
        version: r.get(7)?,
        reported_head,
        // A head reported before the events reached here can be below the
        // cursor for a moment (a late hello): nothing is waiting then.
        backlog: reported_head.map(|h| (h - up_cursor).max(0)),
        online: r.get(9)?,
        state_at: opt_ts(r, 10)?,
        taking_back_after: r.get(11)?,
        warehouses: Vec::new(),
        refused: r.get(12)?,
        last_refused: match (r.get::<_, Option<String>>(13)?, opt_ts(r, 15)?) {
            (Some(kind), Some(at)) => Some(Refused {
                kind,
                reason: r.get::<_, Option<String>>(14)?.unwrap_or_default(),
                at,
                direction: None,
            }),
            _ => None,
        },
    })
}

/// The warehouses an edge serves (empty: all of its business's).
pub fn edge_warehouses(
    conn: &Connection,
    business: BusinessId,
    edge: &str,
) -> Result<Vec<depot_protocol::WarehouseId>> {
    let mut stmt = conn.prepare_cached(
        "SELECT warehouse_id FROM edge_warehouses WHERE business_id = ?1 AND edge_id = ?2
         ORDER BY warehouse_id",
    )?;
    let rows = stmt.query_map(params![business.0, edge], |r| {
        Ok(depot_protocol::WarehouseId(r.get(0)?))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Makes `warehouses` the ones an edge serves (empty: all).
pub fn set_edge_warehouses(
    conn: &Connection,
    business: BusinessId,
    edge: &str,
    warehouses: &[depot_protocol::WarehouseId],
) -> Result<()> {
    conn.prepare_cached("DELETE FROM edge_warehouses WHERE business_id = ?1 AND edge_id = ?2")?
        .execute(params![business.0, edge])?;
    let mut insert = conn.prepare_cached(
        "INSERT OR IGNORE INTO edge_warehouses (business_id, edge_id, warehouse_id) VALUES (?1, ?2, ?3)",
    )?;
    for w in warehouses {
        insert.execute(params![business.0, edge, w.0])?;
    }
    Ok(())
}

/// Cloud side: one of an edge's events was refused here.
pub fn note_refused(
    conn: &Connection,
    business: BusinessId,
    edge: &str,
    kind: &str,
    reason: &str,
    at: &Timestamp,
) -> Result<()> {
    conn.prepare_cached(
        "UPDATE edges SET refused = refused + 1, last_refused_kind = ?3, last_refused_reason = ?4,
                last_refused_at = ?5
         WHERE business_id = ?1 AND edge_id = ?2",
    )?
    .execute(params![business.0, edge, kind, reason, ts(at)])?;
    Ok(())
}

/// Edge side: sync refused an event, `from_cloud` (a change of the cloud's
/// refused here) or not (one of this box's the cloud refused).
pub fn note_refused_here(
    conn: &Connection,
    from_cloud: bool,
    kind: &str,
    reason: &str,
    at: &Timestamp,
) -> Result<()> {
    conn.prepare_cached(
        "UPDATE sync_state SET refused_down = refused_down + ?1, refused_up = refused_up + 1 - ?1,
                last_refused_kind = ?2, last_refused_reason = ?3, last_refused_at = ?4,
                last_refused_direction = CASE WHEN ?1 THEN 'from_cloud' ELSE 'by_cloud' END
         WHERE singleton = 1",
    )?
    .execute(params![from_cloud, kind, reason, ts(at)])?;
    Ok(())
}

pub fn edge(conn: &Connection, business: BusinessId, edge: &str) -> Result<Option<EdgeRecord>> {
    let Some(mut record) = maybe(
        conn.prepare_cached(&format!(
            "SELECT {COLS} FROM edges WHERE business_id = ?1 AND edge_id = ?2"
        ))?
        .query_row(params![business.0, edge], row),
    )?
    else {
        return Ok(None);
    };
    record.warehouses = edge_warehouses(conn, business, edge)?;
    Ok(Some(record))
}

pub fn edges(conn: &Connection, business: BusinessId) -> Result<Vec<EdgeRecord>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLS} FROM edges WHERE business_id = ?1 ORDER BY edge_id"
    ))?;
    let rows = stmt.query_map([business.0], row)?;
    let mut records: Vec<EdgeRecord> = rows.collect::<rusqlite::Result<_>>()?;
    for r in &mut records {
        r.warehouses = edge_warehouses(conn, business, &r.edge_id)?;
    }
    Ok(records)
}

pub fn advance(
    conn: &Connection,
    business: BusinessId,
    edge: &str,
    cursor: i64,
    at: &Timestamp,
) -> Result<()> {
    // The edge's head is at least what it sent: a batch keeps the backlog
    // from going stale between hellos without a write of its own. An edge
    // that never reported a head (an older version) keeps an unknown one,
    // rather than a backlog of 0 that nobody measured.
    conn.prepare_cached(
        "UPDATE edges SET up_cursor = MAX(up_cursor, ?3), last_seen = ?4,
                reported_head = MAX(reported_head, ?3)
         WHERE business_id = ?1 AND edge_id = ?2",
    )?
    .execute(params![business.0, edge, cursor, ts(at)])?;
    Ok(())
}

/// What an edge said about itself in a hello or its `online` state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sighting {
    /// The edge's run (its hello's and state's session).
    pub session: Option<String>,
    pub version: Option<String>,
    /// The newest event of its log.
    pub head: Option<i64>,
    /// Said by a hello, not by a state message: `Some(Some(seq))` while its
    /// own log is certain only through `seq`, `Some(None)` once it is whole.
    pub taking_back_after: Option<Option<i64>>,
    /// Said by the edge's retained `online` state (which comes with a last
    /// will), not by a hello.
    pub by_state: bool,
}

/// An edge said hello or `online`: it is there, now, in this session. The
/// head it reports replaces the stored one (a head only grows, short of a
/// new box; an old report arriving late is corrected by the next). True
/// when this is news: a registered edge that was offline, or a new run of
/// one (a restart whose last will has not arrived).
pub fn seen(
    conn: &Connection,
    business: BusinessId,
    edge: &str,
    s: &Sighting,
    at: &Timestamp,
) -> Result<bool> {
    let before: Option<(bool, Option<String>)> = super::maybe(
        conn.prepare_cached(
            "SELECT online, state_session FROM edges WHERE business_id = ?1 AND edge_id = ?2",
        )?
        .query_row(params![business.0, edge], |r| Ok((r.get(0)?, r.get(1)?))),
    )?;
    let news = before
        .is_some_and(|(online, session)| !online || (s.session.is_some() && session != s.session));
    conn.prepare_cached(
        "UPDATE edges SET last_seen = ?3, version = COALESCE(?4, version),
                reported_head = COALESCE(?5, reported_head),
                state_at = CASE WHEN online = 1 AND state_session IS ?6 THEN state_at ELSE ?3 END,
                online_by_state = CASE WHEN ?9 THEN 1
                                       WHEN online = 1 AND state_session IS ?6 THEN online_by_state
                                       ELSE 0 END,
                online = 1, state_session = COALESCE(?6, state_session),
                taking_back_after = CASE WHEN ?7 THEN ?8 ELSE taking_back_after END
         WHERE business_id = ?1 AND edge_id = ?2",
    )?
    .execute(params![
        business.0,
        edge,
        ts(at),
        s.version,
        s.head,
        s.session,
        s.taking_back_after.is_some(),
        s.taking_back_after.flatten(),
        s.by_state
    ])?;
    Ok(news)
}

/// Edges shown online by a hello alone (no retained state, so no last will
/// to say when they go) and not heard from since `before`: they go offline.
/// Answers each with the session that went.
pub fn expire_unstated(
    conn: &Connection,
    before: &Timestamp,
    at: &Timestamp,
) -> Result<Vec<(BusinessId, String, String)>> {
    let mut stmt = conn.prepare_cached(
        "UPDATE edges SET online = 0, state_at = ?2
         WHERE online = 1 AND online_by_state = 0 AND (last_seen IS NULL OR last_seen < ?1)
         RETURNING business_id, edge_id, COALESCE(state_session, '')",
    )?;
    let rows = stmt.query_map(params![ts(before), ts(at)], |r| {
        Ok((BusinessId(r.get(0)?), r.get(1)?, r.get(2)?))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// An edge's last will (or clean goodbye) said `offline` for `session`.
/// Only the run that is online can go offline: the will of an earlier run,
/// which the broker may publish after the next run's `online`, changes
/// nothing. True when it went offline.
pub fn gone(
    conn: &Connection,
    business: BusinessId,
    edge: &str,
    session: &str,
    at: &Timestamp,
) -> Result<bool> {
    let n = conn
        .prepare_cached(
            "UPDATE edges SET online = 0, state_at = ?4
         WHERE business_id = ?1 AND edge_id = ?2 AND online = 1
           AND (state_session IS NULL OR state_session = ?3)",
        )?
        .execute(params![business.0, edge, session, ts(at)])?;
    Ok(n == 1)
}

/// Edge side: (acknowledged out_seq, last cloud rev applied).
pub fn state(conn: &Connection) -> Result<(i64, i64)> {
    Ok(conn
        .prepare_cached("SELECT acked, down_cursor FROM sync_state WHERE singleton = 1")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?)
}

pub fn set_acked(conn: &Connection, through: i64, at: &Timestamp) -> Result<()> {
    conn.prepare_cached(
        "UPDATE sync_state SET acked = MAX(acked, ?1), last_ack_at = ?2 WHERE singleton = 1",
    )?
    .execute(params![through, ts(at)])?;
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
    /// Why the events do not come back, when they cannot (the cloud does
    /// not hand them back); `null` while they can.
    pub stalled: Option<String>,
}

/// The recovery under way, if the log is not known whole.
pub fn recovery(conn: &Connection) -> Result<Option<Recovery>> {
    maybe(
        conn.prepare_cached(
            "SELECT recover_from, recovered, shifted, recover_stalled FROM sync_state
             WHERE singleton = 1 AND recover_from IS NOT NULL",
        )?
        .query_row([], |r| {
            let from: i64 = r.get(0)?;
            Ok(Recovery {
                from,
                recovered: r.get::<_, Option<i64>>(1)?.unwrap_or(from),
                shifted: r.get(2)?,
                stalled: r.get(3)?,
            })
        }),
    )
}

/// Marks the log as certain only through `from`: a restored database.
pub fn start_recovery(conn: &Connection, from: i64) -> Result<()> {
    conn.execute(
        "UPDATE sync_state SET recover_from = ?1, recovered = ?1, shifted = 0, recover_stalled = NULL
         WHERE singleton = 1",
        [from],
    )?;
    // A copy taken during a recovery has that recovery's floors, which what
    // it made after the copy was taken also numbered from.
    super::ids::clear_floors(conn)
}

pub fn set_recovery(conn: &Connection, recovered: i64, shifted: bool) -> Result<()> {
    conn.execute(
        "UPDATE sync_state SET recovered = ?1, shifted = ?2 WHERE singleton = 1",
        params![recovered, shifted],
    )?;
    Ok(())
}

/// Why the recovery cannot go on, or `None` once it can.
pub fn set_recovery_stalled(conn: &Connection, why: Option<&str>) -> Result<()> {
    conn.execute(
        "UPDATE sync_state SET recover_stalled = ?1 WHERE singleton = 1",
        [why],
    )?;
    Ok(())
}

/// The log is whole again.
pub fn end_recovery(conn: &Connection) -> Result<()> {
    conn.execute(
        "UPDATE sync_state SET recover_from = NULL, recovered = NULL, shifted = 0, recover_stalled = NULL
         WHERE singleton = 1",
        [],
    )?;
    super::ids::clear_floors(conn)
}

/// Edge side: the cloud has less than it acknowledged (restored from an
/// older backup); the acknowledgement moves back to `to` so the outbox sends
/// the rest again, after a restart too. Never moves it forward.
pub fn rewind_acked(conn: &Connection, to: i64) -> Result<()> {
    conn.prepare_cached("UPDATE sync_state SET acked = ?1 WHERE singleton = 1 AND acked > ?1")?
        .execute([to.max(0)])?;
    Ok(())
}

/// Edge side: the cloud cannot serve from the down cursor: start over from
/// the beginning of its log (applying is idempotent by event id), and count
/// it.
pub fn reset_down_cursor(conn: &Connection, at: &Timestamp) -> Result<()> {
    conn.prepare_cached(
        "UPDATE sync_state SET down_cursor = 0, last_rev = NULL, last_id = NULL,
                resets = resets + 1, last_reset_at = ?1
         WHERE singleton = 1",
    )?
    .execute([ts(at)])?;
    Ok(())
}

/// The last change of the cloud's log applied here.
pub fn last_applied(conn: &Connection) -> Result<Option<Landmark>> {
    let (rev, id): (Option<i64>, Option<String>) = conn
        .prepare_cached("SELECT last_rev, last_id FROM sync_state WHERE singleton = 1")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let id = id.and_then(|id| uuid::Uuid::parse_str(&id).ok().map(EventId));
    Ok(match (rev, id) {
        (Some(rev), Some(id)) => Some(Landmark { rev, id }),
        _ => None,
    })
}

pub fn set_last_applied(conn: &Connection, last: Landmark) -> Result<()> {
    conn.prepare_cached(
        "UPDATE sync_state SET last_rev = ?1, last_id = ?2 WHERE singleton = 1 AND COALESCE(last_rev, 0) < ?1",
    )?
    .execute(params![last.rev, last.id.0.to_string()])?;
    Ok(())
}

/// Whether the event at `rev` of this log is the one `last` names.
pub fn holds(conn: &Connection, last: Landmark) -> Result<bool> {
    let id: Option<String> = super::maybe(
        conn.prepare_cached("SELECT id FROM events WHERE seq = ?1")?
            .query_row([last.rev], |r| r.get(0)),
    )?;
    Ok(id.is_some_and(|id| id == last.id.0.to_string()))
}

pub fn set_down_cursor(conn: &Connection, rev: i64) -> Result<()> {
    conn.prepare_cached(
        "UPDATE sync_state SET down_cursor = MAX(down_cursor, ?1) WHERE singleton = 1",
    )?
    .execute([rev])?;
    Ok(())
}

/// Edge side: the link went up or down.
/// The link is up (`why_down` none), or down and why, if that is known.
pub fn set_connected(
    conn: &Connection,
    up: bool,
    why_down: Option<&str>,
    at: &Timestamp,
) -> Result<()> {
    conn.prepare_cached(
        "UPDATE sync_state SET connected = ?1,
                connected_since = CASE WHEN ?1 = connected THEN connected_since ELSE ?2 END,
                link_error = CASE WHEN ?1 THEN NULL ELSE COALESCE(?3, link_error) END
         WHERE singleton = 1",
    )?
    .execute(params![up, ts(at), why_down])?;
    Ok(())
}

/// Edge side: a new run of the link starts down, from `at`.
pub fn link_starting(conn: &Connection, at: &Timestamp) -> Result<()> {
    conn.prepare_cached(
        "UPDATE sync_state SET connected = 0, connected_since = ?1, link_error = NULL
         WHERE singleton = 1",
    )?
    .execute([ts(at)])?;
    Ok(())
}

/// Connected, but what stands in the way of sync (`None`: nothing).
pub fn set_link_trouble(conn: &Connection, why: Option<&str>) -> Result<()> {
    conn.prepare_cached("UPDATE sync_state SET link_error = ?1 WHERE singleton = 1")?
        .execute([why])?;
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

pub fn snapshot(conn: &Connection) -> Result<SyncSnapshot> {
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
        .prepare_cached("SELECT acked, down_cursor, last_ack_at, connected, connected_since, resets, last_reset_at, link_error
                         FROM sync_state WHERE singleton = 1")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?)))?;
    let head = super::events::outgoing_head(conn)?;
    let oldest_unacked_at = maybe(
        conn.prepare_cached("SELECT at FROM events WHERE out_seq = ?1")?
            .query_row([acked + 1], |r| r.get(0)),
    )?;
    let conflicts: i64 = conn
        .prepare_cached("SELECT COUNT(*) FROM sync_conflicts")?
        .query_row([], |r| r.get(0))?;
    let refused = conn
        .prepare_cached(
            "SELECT refused_down, refused_up, last_refused_kind, last_refused_reason,
                    last_refused_at, last_refused_direction
             FROM sync_state WHERE singleton = 1",
        )?
        .query_row([], |r| {
            let last = match (r.get::<_, Option<String>>(2)?, opt_ts(r, 4)?) {
                (Some(kind), Some(at)) => Some(Refused {
                    kind,
                    reason: r.get::<_, Option<String>>(3)?.unwrap_or_default(),
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
        })?;
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

/// Edge side: a key provisioned in the box's configuration, by its SHA-256.
#[derive(Clone, PartialEq, Eq)]
pub struct LocalKey {
    pub hash: [u8; 32],
    /// What lists show to tell keys apart (never enough to use the key).
    pub prefix: String,
}

// By hand: even a hash is more than logs need.
impl std::fmt::Debug for LocalKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalKey")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

const LOCAL_LABEL: &str = "provisioned in the edge's configuration";

/// Edge side: makes the box's provisioned keys exactly `keys`, bound to
/// `business`, and answers how many are live. Run at every start, so it is
/// idempotent, and a key taken out of the configuration stops working.
///
/// They are numbered in this node's id range (`node << 40` up, as records
/// an edge makes), which no key from the cloud uses, so the two never
/// collide and the box can tell its own apart. No event is logged: they
/// never leave the box. A configured key the cloud also knows is the
/// cloud's (its record replaces the local one when it arrives, see
/// `replica::upsert_key`), so the cloud's revocation reaches the box, and it
/// is not installed again next to it.
pub fn install_local_keys(
    conn: &Connection,
    business: BusinessId,
    keys: &[LocalKey],
    at: &Timestamp,
) -> Result<usize> {
    let node = super::ids::node(conn)?;
    if node == 0 {
        return Err(crate::WmsError::Internal(
            "keys are provisioned locally only on an edge (node 1 or above)".into(),
        ));
    }
    let (lo, hi) = (
        i64::from(node) << super::ids::NODE_SHIFT,
        (i64::from(node) + 1) << super::ids::NODE_SHIFT,
    );
    let installed: Vec<(i64, Vec<u8>, i64)> = conn
        .prepare_cached("SELECT id, hash, business_id FROM api_keys WHERE id > ?1 AND id < ?2")?
        .query_map(params![lo, hi], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (id, hash, owner) in &installed {
        if *owner != business.0 || !keys.iter().any(|k| k.hash[..] == hash[..]) {
            conn.prepare_cached("DELETE FROM api_keys WHERE id = ?1")?
                .execute([id])?;
        }
    }
    if !keys.is_empty() {
        // A box that has never been online has no business row yet, and a
        // key must belong to one: a stand-in, which the cloud's
        // `business.created` overwrites when it arrives.
        conn.prepare_cached(
            "INSERT OR IGNORE INTO businesses (id, name, currency, timezone, created_at)
             VALUES (?1, ?2, 'XXX', 'UTC', ?3)",
        )?
        .execute(params![
            business.0,
            format!("business {business} (not synced yet)"),
            ts(at)
        ])?;
    }
    let mut live = 0;
    for k in keys {
        let known: Option<Option<String>> = maybe(
            conn.prepare_cached("SELECT revoked_at FROM api_keys WHERE hash = ?1")?
                .query_row([&k.hash[..]], |r| r.get(0)),
        )?;
        match known {
            // Installed before, or the cloud's own key: left as it is.
            Some(revoked) => live += usize::from(revoked.is_none()),
            None => {
                let next: i64 = conn
                    .prepare_cached(
                        "SELECT COALESCE(MAX(id), ?1) + 1 FROM api_keys WHERE id > ?1 AND id < ?2",
                    )?
                    .query_row(params![lo, hi], |r| r.get(0))?;
                conn.prepare_cached(
                    "INSERT INTO api_keys (id, business_id, hash, prefix, label, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )?
                .execute(params![
                    next,
                    business.0,
                    &k.hash[..],
                    k.prefix,
                    LOCAL_LABEL,
                    ts(at)
                ])?;
                live += 1;
            }
        }
    }
    Ok(live)
}
