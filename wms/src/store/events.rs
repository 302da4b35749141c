//! The event log.

use crate::error::Result;
use depot_protocol::event::{Event, EventKind};
use depot_protocol::{BusinessId, EventId};
use rusqlite::{Connection, params};

/// Appends an event; call it inside the transaction that made the change.
pub fn append(
    conn: &Connection,
    origin: &str,
    business_id: Option<BusinessId>,
    kind: EventKind,
    payload: &impl serde::Serialize,
) -> Result<i64> {
    let payload = serde_json::to_string(payload)?;
    conn.prepare_cached(
        "INSERT INTO events (id, origin, business_id, kind, payload, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        EventId::new().0.to_string(),
        origin,
        business_id.map(|b| b.0),
        kind.as_str(),
        payload,
        super::ts(&depot_protocol::now()),
    ])?;
    Ok(conn.last_insert_rowid())
}

/// Events after `after_seq`, oldest first.
pub fn since(conn: &Connection, after_seq: i64, limit: u32) -> Result<Vec<Event>> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, id, origin, business_id, kind, payload, at FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![after_seq, limit], |r| {
        let id: String = r.get(1)?;
        let payload: String = r.get(5)?;
        let at: String = r.get(6)?;
        Ok(Event {
            seq: r.get(0)?,
            id: EventId(uuid::Uuid::parse_str(&id).map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(
                    1,
                    rusqlite::types::Type::Text,
                    Box::new(e),
                )
            })?),
            origin: r.get(2)?,
            business_id: r.get::<_, Option<i64>>(3)?.map(BusinessId),
            kind: r.get(4)?,
            payload: super::parse_json(&payload)?,
            at: super::parse_ts(&at)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
