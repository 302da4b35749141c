//! Releases of the software.

use super::{parse_ts, ts};
use crate::error::Result;
use depot_protocol::Timestamp;
use depot_protocol::release::{NewRelease, Release};
use rusqlite::{Connection, Row, params};

pub fn insert(conn: &Connection, r: &NewRelease, at: &Timestamp) -> Result<i64> {
    conn.prepare_cached(
        "INSERT INTO releases (version, title, notes, published_at) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![r.version, r.title, r.notes, ts(at)])?;
    Ok(conn.last_insert_rowid())
}

/// A release published in the cloud, with the cloud's id; a second
/// delivery changes nothing.
pub fn insert_replica(conn: &Connection, r: &Release) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO releases (id, version, title, notes, published_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (id) DO NOTHING",
    )?
    .execute(params![
        r.id,
        r.version,
        r.title,
        r.notes,
        ts(&r.published_at)
    ])?;
    Ok(())
}

const COLS: &str = "id, version, title, notes, published_at";

fn row(r: &Row) -> rusqlite::Result<Release> {
    Ok(Release {
        id: r.get(0)?,
        version: r.get(1)?,
        title: r.get(2)?,
        notes: r.get(3)?,
        published_at: parse_ts(&r.get::<_, String>(4)?)?,
    })
}

pub fn by_version(conn: &Connection, version: &str) -> Result<Option<Release>> {
    super::maybe(
        conn.prepare_cached(&format!("SELECT {COLS} FROM releases WHERE version = ?1"))?
            .query_row([version], row),
    )
}

/// Newest first.
pub fn list(conn: &Connection, limit: u32) -> Result<Vec<Release>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLS} FROM releases ORDER BY published_at DESC, id DESC LIMIT ?1"
    ))?;
    let rows = stmt.query_map([limit], row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
