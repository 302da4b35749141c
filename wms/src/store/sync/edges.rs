//! Cloud side: the edges registered in each business, where their logs are
//! applied, what they said about themselves, what was refused of theirs.

use super::{Refused, opt_ts};
use crate::error::Result;
use crate::store::{maybe, parse_ts, ts};
use depot_protocol::sync::message::Landmark;
use depot_protocol::{BusinessId, Timestamp};
use depot_sql::{Db, params};

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

pub fn register_edge(
    conn: &Db,
    business: BusinessId,
    edge: &str,
    name: Option<&str>,
    at: &Timestamp,
) -> Result<u32> {
    let node: u32 = conn.query_row(
        "SELECT COALESCE(MAX(node), 0) + 1 FROM edges",
        params![],
        |r| r.get(0),
    )?;
    conn.execute("INSERT INTO edges (business_id, edge_id, node, name, registered_at) VALUES (?1, ?2, ?3, ?4, ?5)", params![business.0, edge, node, name, ts(at)])?;
    Ok(node)
}

const COLS: &str = "business_id, edge_id, node, name, registered_at, up_cursor, last_seen, version,
                    reported_head, online, state_at, taking_back_after, refused,
                    last_refused_kind, last_refused_reason, last_refused_at";

fn row(r: &depot_sql::Row<'_>) -> depot_sql::Result<EdgeRecord> {
    let up_cursor: i64 = r.get(5)?;
    let reported_head: Option<i64> = r.get(8)?;
    Ok(EdgeRecord {
        business_id: BusinessId(r.get(0)?),
        edge_id: r.get(1)?,
        node: r.get(2)?,
        name: r.get(3)?,
        registered_at: parse_ts(&r.get::<String>(4)?)?,
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
        last_refused: match (r.get::<Option<String>>(13)?, opt_ts(r, 15)?) {
            (Some(kind), Some(at)) => Some(Refused {
                kind,
                reason: r.get::<Option<String>>(14)?.unwrap_or_default(),
                at,
                direction: None,
            }),
            _ => None,
        },
    })
}

/// The warehouses an edge serves (empty: all of its business's).
pub fn edge_warehouses(
    conn: &Db,
    business: BusinessId,
    edge: &str,
) -> Result<Vec<depot_protocol::WarehouseId>> {
    let stmt = "SELECT warehouse_id FROM edge_warehouses WHERE business_id = ?1 AND edge_id = ?2
         ORDER BY warehouse_id";
    let rows = conn.query_map(stmt, params![business.0, edge], |r| {
        Ok(depot_protocol::WarehouseId(r.get(0)?))
    })?;
    Ok(rows)
}

/// Makes `warehouses` the ones an edge serves (empty: all).
pub fn set_edge_warehouses(
    conn: &Db,
    business: BusinessId,
    edge: &str,
    warehouses: &[depot_protocol::WarehouseId],
) -> Result<()> {
    conn.execute(
        "DELETE FROM edge_warehouses WHERE business_id = ?1 AND edge_id = ?2",
        params![business.0, edge],
    )?;
    let insert =
        "INSERT INTO edge_warehouses (business_id, edge_id, warehouse_id) VALUES (?1, ?2, ?3)
         ON CONFLICT DO NOTHING";
    for w in warehouses {
        conn.execute(insert, params![business.0, edge, w.0])?;
    }
    Ok(())
}

/// Cloud side: one of an edge's events was refused here.
pub fn note_refused(
    conn: &Db,
    business: BusinessId,
    edge: &str,
    kind: &str,
    reason: &str,
    at: &Timestamp,
) -> Result<()> {
    conn.execute(
        "UPDATE edges SET refused = refused + 1, last_refused_kind = ?3, last_refused_reason = ?4,
                last_refused_at = ?5
         WHERE business_id = ?1 AND edge_id = ?2",
        params![business.0, edge, kind, reason, ts(at)],
    )?;
    Ok(())
}

pub fn edge(conn: &Db, business: BusinessId, edge: &str) -> Result<Option<EdgeRecord>> {
    let Some(mut record) = maybe(conn.query_row(
        &format!("SELECT {COLS} FROM edges WHERE business_id = ?1 AND edge_id = ?2"),
        params![business.0, edge],
        row,
    ))?
    else {
        return Ok(None);
    };
    record.warehouses = edge_warehouses(conn, business, edge)?;
    Ok(Some(record))
}

pub fn edges(conn: &Db, business: BusinessId) -> Result<Vec<EdgeRecord>> {
    let stmt = &format!("SELECT {COLS} FROM edges WHERE business_id = ?1 ORDER BY edge_id");
    let rows = conn.query_map(stmt, params![business.0], row)?;
    let mut records: Vec<EdgeRecord> = rows;
    for r in &mut records {
        r.warehouses = edge_warehouses(conn, business, &r.edge_id)?;
    }
    Ok(records)
}

pub fn advance(
    conn: &Db,
    business: BusinessId,
    edge: &str,
    cursor: i64,
    at: &Timestamp,
) -> Result<()> {
    // The edge's head is at least what it sent: a batch keeps the backlog
    // from going stale between hellos without a write of its own. An edge
    // that never reported a head (an older version) keeps an unknown one,
    // rather than a backlog of 0 that nobody measured.
    conn.execute(
        "UPDATE edges SET up_cursor = CASE WHEN ?3 > up_cursor THEN ?3 ELSE up_cursor END,
                last_seen = ?4,
                reported_head = CASE WHEN ?3 > reported_head THEN ?3 ELSE reported_head END
         WHERE business_id = ?1 AND edge_id = ?2",
        params![business.0, edge, cursor, ts(at)],
    )?;
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
    /// The cloud instance (its sync session) that answered this hello and
    /// now pages the log down to the edge; `None` leaves the owner as is.
    pub downlink_owner: Option<String>,
}

/// An edge said hello or `online`: it is there, now, in this session. The
/// head it reports replaces the stored one (a head only grows, short of a
/// new box; an old report arriving late is corrected by the next). True
/// when this is news: a registered edge that was offline, or a new run of
/// one (a restart whose last will has not arrived).
pub fn seen(
    conn: &Db,
    business: BusinessId,
    edge: &str,
    s: &Sighting,
    at: &Timestamp,
) -> Result<bool> {
    let before: Option<(bool, Option<String>)> = maybe(conn.query_row(
        "SELECT online, state_session FROM edges WHERE business_id = ?1 AND edge_id = ?2",
        params![business.0, edge],
        |r| Ok((r.get(0)?, r.get(1)?)),
    ))?;
    let news = before
        .is_some_and(|(online, session)| !online || (s.session.is_some() && session != s.session));
    conn.execute("UPDATE edges SET last_seen = ?3, version = COALESCE(?4, version),
                reported_head = COALESCE(?5, reported_head),
                state_at = CASE WHEN online = 1 AND state_session IS NOT DISTINCT FROM ?6 THEN state_at ELSE ?3 END,
                online_by_state = CASE WHEN ?9 <> 0 THEN 1
                                       WHEN online = 1 AND state_session IS NOT DISTINCT FROM ?6 THEN online_by_state
                                       ELSE 0 END,
                online = 1, state_session = COALESCE(?6, state_session),
                taking_back_after = CASE WHEN ?7 <> 0 THEN ?8 ELSE taking_back_after END,
                downlink_owner = COALESCE(?10, downlink_owner)
         WHERE business_id = ?1 AND edge_id = ?2", params![
        business.0,
        edge,
        ts(at),
        s.version,
        s.head,
        s.session,
        s.taking_back_after.is_some(),
        s.taking_back_after.flatten(),
        s.by_state,
        s.downlink_owner
    ])?;
    Ok(news)
}

/// The edges whose downlink `owner` (a cloud instance's sync session)
/// holds: those whose last hello it answered.
pub fn downlinks_of(conn: &Db, owner: &str) -> Result<Vec<(BusinessId, String)>> {
    Ok(conn.query_map(
        "SELECT business_id, edge_id FROM edges WHERE downlink_owner = ?1",
        params![owner],
        |r| Ok((BusinessId(r.get(0)?), r.get(1)?)),
    )?)
}

/// Edges shown online by a hello alone (no retained state, so no last will
/// to say when they go) and not heard from since `before`: they go offline.
/// Answers each with the session that went.
pub fn expire_unstated(
    conn: &Db,
    before: &Timestamp,
    at: &Timestamp,
) -> Result<Vec<(BusinessId, String, String)>> {
    let stmt = "UPDATE edges SET online = 0, state_at = ?2
         WHERE online = 1 AND online_by_state = 0 AND (last_seen IS NULL OR last_seen < ?1)
         RETURNING business_id, edge_id, COALESCE(state_session, '')";
    let rows = conn.query_map(stmt, params![ts(before), ts(at)], |r| {
        Ok((BusinessId(r.get(0)?), r.get(1)?, r.get(2)?))
    })?;
    Ok(rows)
}

/// An edge's last will (or clean goodbye) said `offline` for `session`.
/// Only the run that is online can go offline: the will of an earlier run,
/// which the broker may publish after the next run's `online`, changes
/// nothing. True when it went offline.
pub fn gone(
    conn: &Db,
    business: BusinessId,
    edge: &str,
    session: &str,
    at: &Timestamp,
) -> Result<bool> {
    let n = conn.execute(
        "UPDATE edges SET online = 0, state_at = ?4
         WHERE business_id = ?1 AND edge_id = ?2 AND online = 1
           AND (state_session IS NULL OR state_session = ?3)",
        params![business.0, edge, session, ts(at)],
    )?;
    Ok(n == 1)
}

/// Whether the event at `rev` of this log is the one `last` names.
pub fn holds(conn: &Db, last: Landmark) -> Result<bool> {
    let id: Option<String> = maybe(conn.query_row(
        "SELECT id FROM events WHERE seq = ?1",
        params![last.rev],
        |r| r.get(0),
    ))?;
    Ok(id.is_some_and(|id| id == last.id.0.to_string()))
}

/// The edges that answer (or not), taken together: one pass over the
/// edges table, which has a row per edge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetGroup {
    pub online: bool,
    pub count: i64,
    /// Events the group's edges hold that the cloud has not taken yet.
    pub backlog: i64,
    /// The largest of one edge's.
    pub max: i64,
    /// The oldest `last_seen` of the group.
    pub seen: Option<String>,
    pub taking_back: i64,
    pub refused: i64,
}

/// The fleet by `online`: at most two groups.
pub fn fleet(conn: &Db) -> Result<Vec<FleetGroup>> {
    let stmt = "SELECT online, COUNT(*),
                COALESCE(SUM(CASE WHEN reported_head > up_cursor THEN reported_head - up_cursor ELSE 0 END), 0),
                COALESCE(MAX(CASE WHEN reported_head > up_cursor THEN reported_head - up_cursor ELSE 0 END), 0),
                MIN(last_seen), SUM(CASE WHEN taking_back_after IS NOT NULL THEN 1 ELSE 0 END), SUM(refused)
         FROM edges GROUP BY online";
    let rows = conn.query_map(stmt, params![], |r| {
        Ok(FleetGroup {
            online: r.get(0)?,
            count: r.get(1)?,
            backlog: r.get(2)?,
            max: r.get(3)?,
            seen: r.get(4)?,
            taking_back: r.get(5)?,
            refused: r.get(6)?,
        })
    })?;
    Ok(rows)
}
