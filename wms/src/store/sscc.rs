//! SSCC blocks granted to nodes, and what packages have used of them.

use super::{maybe, ts};
use crate::error::Result;
use depot_protocol::{BusinessId, Timestamp};
use rusqlite::{Connection, params};

/// One granted block: serials `first..=last` of `prefix`, for `node`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub prefix: String,
    pub first: i64,
    pub last: i64,
    pub node: u32,
}

/// Records a grant; false when this block was already recorded (for any
/// node: the caller compares).
pub fn insert(conn: &Connection, business: BusinessId, b: &Block, at: &Timestamp) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "INSERT INTO sscc_blocks (business_id, prefix, first, last, node, granted_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
        )?
        .execute(params![
            business.0,
            b.prefix,
            b.first,
            b.last,
            b.node,
            ts(at)
        ])?
        == 1)
}

/// The block of `prefix` that holds `serial`, whoever it was granted to.
pub fn holding(
    conn: &Connection,
    business: BusinessId,
    prefix: &str,
    serial: i64,
) -> Result<Option<Block>> {
    maybe(
        conn.prepare_cached(
            "SELECT first, last, node FROM sscc_blocks
             WHERE business_id = ?1 AND prefix = ?2 AND first <= ?3 ORDER BY first DESC LIMIT 1",
        )?
        .query_row(params![business.0, prefix, serial], |r| {
            Ok(Block {
                prefix: prefix.to_owned(),
                first: r.get(0)?,
                last: r.get(1)?,
                node: r.get(2)?,
            })
        }),
    )
    .map(|b| b.filter(|b| serial <= b.last))
}

/// A node's blocks of `prefix`, newest first.
pub fn of_node(
    conn: &Connection,
    business: BusinessId,
    node: u32,
    prefix: &str,
) -> Result<Vec<Block>> {
    let mut stmt = conn.prepare_cached(
        "SELECT first, last FROM sscc_blocks
         WHERE business_id = ?1 AND node = ?2 AND prefix = ?3 ORDER BY first DESC",
    )?;
    let rows = stmt.query_map(params![business.0, node, prefix], |r| {
        Ok(Block {
            prefix: prefix.to_owned(),
            first: r.get(0)?,
            last: r.get(1)?,
            node,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The prefixes a node was ever granted blocks of.
pub fn prefixes_of_node(conn: &Connection, business: BusinessId, node: u32) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT DISTINCT prefix FROM sscc_blocks WHERE business_id = ?1 AND node = ?2",
    )?;
    let rows = stmt.query_map(params![business.0, node], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The first serial of the newest block of `prefix` in the business, any
/// node's.
pub fn newest_first(conn: &Connection, business: BusinessId, prefix: &str) -> Result<Option<i64>> {
    Ok(conn
        .prepare_cached(
            "SELECT MAX(first) FROM sscc_blocks WHERE business_id = ?1 AND prefix = ?2",
        )?
        .query_row(params![business.0, prefix], |r| r.get(0))?)
}

/// The largest SSCC used between two SSCC texts (one block's bounds).
pub fn largest_used(conn: &Connection, lo: &str, hi: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT MAX(sscc) FROM packages WHERE sscc BETWEEN ?1 AND ?2")?
        .query_row(params![lo, hi], |r| r.get(0))?)
}

/// While this node's log is not known whole, the first serial its new
/// parcels may use under `key` (see `crate::sscc`); kept with the id
/// floors, and cleared with them.
/// `None` when the log is whole; else the floor, if one was set.
pub fn recovery_floor(conn: &Connection, key: &str) -> Result<Option<Option<i64>>> {
    let (recovering, floor): (bool, Option<i64>) = conn
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM sync_state WHERE singleton = 1 AND recover_from IS NOT NULL),
                    (SELECT floor FROM id_floors WHERE tbl = ?1)",
        )?
        .query_row([key], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(recovering.then_some(floor))
}

pub fn set_recovery_floor(conn: &Connection, key: &str, floor: i64) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO id_floors (tbl, floor) VALUES (?1, ?2)
         ON CONFLICT (tbl) DO UPDATE SET floor = excluded.floor",
    )?
    .execute(params![key, floor])?;
    Ok(())
}
