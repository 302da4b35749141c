//! Sync bookkeeping: registered edges and cursors (cloud side), the
//! acknowledgement and down cursor (edge side).

use super::{maybe, parse_ts, ts};
use crate::error::Result;
use depot_protocol::{BusinessId, Timestamp};
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
    pub version: Option<String>,
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

const COLS: &str = "business_id, edge_id, node, name, registered_at, up_cursor, last_seen, version";

fn row(r: &rusqlite::Row) -> rusqlite::Result<EdgeRecord> {
    Ok(EdgeRecord {
        business_id: BusinessId(r.get(0)?),
        edge_id: r.get(1)?,
        node: r.get(2)?,
        name: r.get(3)?,
        registered_at: parse_ts(&r.get::<_, String>(4)?)?,
        up_cursor: r.get(5)?,
        last_seen: r
            .get::<_, Option<String>>(6)?
            .map(|s| parse_ts(&s))
            .transpose()?,
        version: r.get(7)?,
    })
}

pub fn edge(conn: &Connection, business: BusinessId, edge: &str) -> Result<Option<EdgeRecord>> {
    maybe(
        conn.prepare_cached(&format!(
            "SELECT {COLS} FROM edges WHERE business_id = ?1 AND edge_id = ?2"
        ))?
        .query_row(params![business.0, edge], row),
    )
}

pub fn edges(conn: &Connection, business: BusinessId) -> Result<Vec<EdgeRecord>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLS} FROM edges WHERE business_id = ?1 ORDER BY edge_id"
    ))?;
    let rows = stmt.query_map([business.0], row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub fn advance(
    conn: &Connection,
    business: BusinessId,
    edge: &str,
    cursor: i64,
    at: &Timestamp,
) -> Result<()> {
    conn.prepare_cached("UPDATE edges SET up_cursor = MAX(up_cursor, ?3), last_seen = ?4 WHERE business_id = ?1 AND edge_id = ?2")?
        .execute(params![business.0, edge, cursor, ts(at)])?;
    Ok(())
}

pub fn seen(
    conn: &Connection,
    business: BusinessId,
    edge: &str,
    version: Option<&str>,
    at: &Timestamp,
) -> Result<()> {
    conn.prepare_cached(
        "UPDATE edges SET last_seen = ?3, version = COALESCE(?4, version) WHERE business_id = ?1 AND edge_id = ?2",
    )?
    .execute(params![business.0, edge, ts(at), version])?;
    Ok(())
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

pub fn set_down_cursor(conn: &Connection, rev: i64) -> Result<()> {
    conn.prepare_cached(
        "UPDATE sync_state SET down_cursor = MAX(down_cursor, ?1) WHERE singleton = 1",
    )?
    .execute([rev])?;
    Ok(())
}

/// Edge side: the link went up or down.
pub fn set_connected(conn: &Connection, up: bool, at: &Timestamp) -> Result<()> {
    conn.prepare_cached(
        "UPDATE sync_state SET connected = ?1,
                connected_since = CASE WHEN ?1 = connected THEN connected_since ELSE ?2 END
         WHERE singleton = 1",
    )?
    .execute(params![up, ts(at)])?;
    Ok(())
}

/// Edge side: everything the status route and CLI show.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct SyncSnapshot {
    /// The daemon's link to the broker is up.
    pub connected: bool,
    /// Since when the link has been in its current state.
    pub connected_since: Option<String>,
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
}

pub fn snapshot(conn: &Connection) -> Result<SyncSnapshot> {
    let (acked, cloud_cursor, last_ack_at, connected, connected_since): (i64, i64, Option<String>, bool, Option<String>) = conn
        .prepare_cached("SELECT acked, down_cursor, last_ack_at, connected, connected_since FROM sync_state WHERE singleton = 1")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?;
    let head = super::events::outgoing_head(conn)?;
    let oldest_unacked_at = maybe(
        conn.prepare_cached("SELECT at FROM events WHERE out_seq = ?1")?
            .query_row([acked + 1], |r| r.get(0)),
    )?;
    let conflicts: i64 = conn
        .prepare_cached("SELECT COUNT(*) FROM sync_conflicts")?
        .query_row([], |r| r.get(0))?;
    Ok(SyncSnapshot {
        connected,
        connected_since,
        head,
        acked,
        depth: (head - acked).max(0),
        oldest_unacked_at,
        last_ack_at,
        cloud_cursor,
        conflicts,
    })
}
