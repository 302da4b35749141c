//! Ids of records that edges create and replicate (waves, pick lines,
//! shipments, dispatch runs, print jobs). Each node numbers them in its own
//! range, `node << 40` upwards, so rows made on two nodes never collide when
//! both reach the cloud; the cloud is node 0, whose range starts at 1 like
//! any rowid. The next id is one past the largest in the node's range (one
//! index lookup), never "max + 1" over the whole table, which would jump
//! into another node's range as soon as one of its rows arrived.

use crate::error::{Result, WmsError};
use rusqlite::{Connection, params};

/// Bits of an id below the node number: about a trillion records per node.
pub const NODE_SHIFT: u32 = 40;
/// Ids stay below 2^53, so they are exact in every JSON reader
/// (JavaScript numbers included) and fit 16 decimal digits.
pub const MAX_NODE: u32 = (1 << (53 - NODE_SHIFT)) - 1;

/// The tables whose ids are allocated per node.
const TABLES: [&str; 5] = [
    "waves",
    "pick_lines",
    "shipments",
    "dispatch_runs",
    "print_jobs",
];

/// Records this database as `node`'s, or checks that it already is: a
/// database never changes hands, since its ids carry the number.
pub fn claim(conn: &Connection, node: u32, origin: &str) -> Result<()> {
    if node > MAX_NODE {
        return Err(WmsError::Internal(format!(
            "node number {node} is above the maximum {MAX_NODE}"
        )));
    }
    let current: Option<(u32, String)> = super::maybe(conn.query_row(
        "SELECT number, origin FROM node WHERE singleton = 1",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    ))?;
    match current {
        None => {
            conn.execute(
                "INSERT INTO node (singleton, number, origin) VALUES (1, ?1, ?2)",
                params![node, origin],
            )?;
            Ok(())
        }
        Some((n, o)) if n == node && o == origin => Ok(()),
        Some((n, o)) => Err(WmsError::Internal(format!(
            "this database belongs to node {n} ({o}), not to node {node} ({origin})"
        ))),
    }
}

/// The node this database belongs to (0 until claimed).
pub fn node(conn: &Connection) -> Result<u32> {
    Ok(super::maybe(
        conn.prepare_cached("SELECT number FROM node WHERE singleton = 1")?
            .query_row([], |r| r.get(0)),
    )?
    .unwrap_or(0))
}

/// The next id of `table` for this database's node.
pub fn allocate(conn: &Connection, table: &str) -> Result<i64> {
    next(conn, table, node(conn)?)
}

/// The next id of `table` for `node`.
pub fn next(conn: &Connection, table: &str, node: u32) -> Result<i64> {
    debug_assert!(TABLES.contains(&table), "{table} is not node-allocated");
    let lo = i64::from(node) << NODE_SHIFT;
    let hi = (i64::from(node) + 1) << NODE_SHIFT;
    let max: Option<i64> = conn
        .prepare_cached(&format!(
            "SELECT MAX(id) FROM {table} WHERE id > ?1 AND id < ?2"
        ))?
        .query_row(params![lo, hi], |r| r.get(0))?;
    Ok(max.unwrap_or(lo) + 1)
}

/// The node that made a record with this id.
pub fn node_of(id: i64) -> u32 {
    u32::try_from(id >> NODE_SHIFT).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Result<Connection> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch("CREATE TABLE waves (id INTEGER PRIMARY KEY, note TEXT)")?;
        Ok(conn)
    }

    #[test]
    fn each_node_counts_in_its_own_range() -> Result<()> {
        let conn = db()?;
        assert_eq!(next(&conn, "waves", 0)?, 1);
        assert_eq!(next(&conn, "waves", 3)?, (3 << NODE_SHIFT) + 1);
        for (node, n) in [(0u32, 5), (3, 2), (7, 1)] {
            for _ in 0..n {
                let id = next(&conn, "waves", node)?;
                conn.execute("INSERT INTO waves (id) VALUES (?1)", [id])?;
            }
        }
        // Rows of higher nodes do not push node 0 (the cloud) out of its range.
        assert_eq!(next(&conn, "waves", 0)?, 6);
        assert_eq!(next(&conn, "waves", 3)?, (3 << NODE_SHIFT) + 3);
        assert_eq!(next(&conn, "waves", 7)?, (7 << NODE_SHIFT) + 2);
        assert_eq!(node_of(next(&conn, "waves", 7)?), 7);
        assert_eq!(node_of(5), 0);
        Ok(())
    }

    #[test]
    fn a_database_belongs_to_one_node() -> Result<()> {
        let mut conn = Connection::open_in_memory()?;
        super::super::migrations().to_latest(&mut conn)?;
        assert_eq!(node(&conn)?, 0);
        claim(&conn, 4, "edge:mad-1")?;
        claim(&conn, 4, "edge:mad-1")?;
        assert_eq!(node(&conn)?, 4);
        assert!(claim(&conn, 5, "edge:mad-1").is_err());
        assert!(claim(&conn, 4, "edge:bcn-1").is_err());
        assert_eq!(allocate(&conn, "waves")?, (4 << NODE_SHIFT) + 1);
        Ok(())
    }

    #[test]
    fn the_largest_node_still_fits() {
        let id = (i64::from(MAX_NODE) << NODE_SHIFT) + (1 << NODE_SHIFT) - 1;
        assert!(id < 1 << 53);
        assert!(id < 10_i64.pow(16));
        assert_eq!(node_of(id), MAX_NODE);
    }
}
