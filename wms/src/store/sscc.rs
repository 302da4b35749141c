//! SSCC blocks granted to nodes, and what packages have used of them.

use super::{maybe, ts};
use crate::error::Result;
use depot_protocol::{BusinessId, Timestamp};
use depot_sql::{Db, params};

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
pub fn insert(conn: &Db, business: BusinessId, b: &Block, at: &Timestamp) -> Result<bool> {
    Ok(conn.execute(
        "INSERT INTO sscc_blocks (business_id, prefix, first, last, node, granted_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
        params![business.0, b.prefix, b.first, b.last, b.node, ts(at)],
    )? == 1)
}

/// The block of `prefix` that holds `serial`, whoever it was granted to.
pub fn holding(
    conn: &Db,
    business: BusinessId,
    prefix: &str,
    serial: i64,
) -> Result<Option<Block>> {
    maybe(conn.query_row(
        "SELECT first, last, node FROM sscc_blocks
             WHERE business_id = ?1 AND prefix = ?2 AND first <= ?3 ORDER BY first DESC LIMIT 1",
        params![business.0, prefix, serial],
        |r| {
            Ok(Block {
                prefix: prefix.to_owned(),
                first: r.get(0)?,
                last: r.get(1)?,
                node: r.get(2)?,
            })
        },
    ))
    .map(|b| b.filter(|b| serial <= b.last))
}

/// A node's blocks of `prefix`, newest first.
pub fn of_node(conn: &Db, business: BusinessId, node: u32, prefix: &str) -> Result<Vec<Block>> {
    let stmt = "SELECT first, last FROM sscc_blocks
         WHERE business_id = ?1 AND node = ?2 AND prefix = ?3 ORDER BY first DESC";
    let rows = conn.query_map(stmt, params![business.0, node, prefix], |r| {
        Ok(Block {
            prefix: prefix.to_owned(),
            first: r.get(0)?,
            last: r.get(1)?,
            node,
        })
    })?;
    Ok(rows)
}

/// The prefixes a node was ever granted blocks of.
pub fn prefixes_of_node(conn: &Db, business: BusinessId, node: u32) -> Result<Vec<String>> {
    let stmt = "SELECT DISTINCT prefix FROM sscc_blocks WHERE business_id = ?1 AND node = ?2";
    let rows = conn.query_map(stmt, params![business.0, node], |r| r.get(0))?;
    Ok(rows)
}

/// The first serial of the newest block of `prefix` in the business, any
/// node's.
pub fn newest_first(conn: &Db, business: BusinessId, prefix: &str) -> Result<Option<i64>> {
    Ok(conn.query_row(
        "SELECT MAX(first) FROM sscc_blocks WHERE business_id = ?1 AND prefix = ?2",
        params![business.0, prefix],
        |r| r.get(0),
    )?)
}

/// The largest SSCC used between two SSCC texts (one block's bounds).
pub fn largest_used(conn: &Db, lo: &str, hi: &str) -> Result<Option<String>> {
    Ok(conn.query_row(
        "SELECT MAX(sscc) FROM packages WHERE sscc BETWEEN ?1 AND ?2",
        params![lo, hi],
        |r| r.get(0),
    )?)
}

/// While this node's log is not known whole, the first serial its new
/// parcels may use under `key` (see `crate::sscc`); kept with the id
/// floors, and cleared with them.
/// `None` when the log is whole; else the floor, if one was set.
pub fn recovery_floor(conn: &Db, key: &str) -> Result<Option<Option<i64>>> {
    let (recovering, floor): (bool, Option<i64>) = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sync_state WHERE singleton = 1 AND recover_from IS NOT NULL),
                    (SELECT floor FROM id_floors WHERE tbl = ?1)",
        params![key],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(recovering.then_some(floor))
}

pub fn set_recovery_floor(conn: &Db, key: &str, floor: i64) -> Result<()> {
    conn.execute(
        "INSERT INTO id_floors (tbl, floor) VALUES (?1, ?2)
         ON CONFLICT (tbl) DO UPDATE SET floor = excluded.floor",
        params![key, floor],
    )?;
    Ok(())
}
