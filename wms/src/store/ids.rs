//! Ids of records that edges create and replicate (waves, pick lines,
//! shipments, dispatch runs, print jobs, locations, putaway tasks, counts, replenishment tasks, returns). Each node numbers them in its own
//! range, `node << 40` upwards, so rows made on two nodes never collide when
//! both reach the cloud; the cloud is node 0, whose range starts at 1 like
//! any rowid. The next id is one past the largest in the node's range (one
//! index lookup), never "max + 1" over the whole table, which would jump
//! into another node's range as soon as one of its rows arrived.

use crate::error::{Result, WmsError};
use depot_sql::{Db, Dialect, params};

/// Bits of an id below the node number: about a trillion records per node.
pub const NODE_SHIFT: u32 = 40;
/// Ids stay below 2^53, so they are exact in every JSON reader
/// (JavaScript numbers included) and fit 16 decimal digits.
pub const MAX_NODE: u32 = (1 << (53 - NODE_SHIFT)) - 1;

/// The tables whose ids are allocated per node.
const TABLES: [&str; 10] = [
    "waves",
    "pick_lines",
    "shipments",
    "dispatch_runs",
    "print_jobs",
    "locations",
    "putaway_tasks",
    "counts",
    "replenish_tasks",
    "returns",
];

/// Records this database as `node`'s, or checks that it already is: a
/// database never changes hands, since its ids carry the number.
pub fn claim(conn: &Db, node: u32, origin: &str) -> Result<()> {
    if node > MAX_NODE {
        return Err(WmsError::Internal(format!(
            "node number {node} is above the maximum {MAX_NODE}"
        )));
    }
    // Two instances of a cloud may start at once on an empty database:
    // the second's insert changes nothing, and both then read the one row.
    conn.execute(
        "INSERT INTO node (singleton, number, origin) VALUES (1, ?1, ?2)
         ON CONFLICT (singleton) DO NOTHING",
        params![node, origin],
    )?;
    let (n, o): (u32, String) = conn.query_row(
        "SELECT number, origin FROM node WHERE singleton = 1",
        params![],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if n == node && o == origin {
        return Ok(());
    }
    Err(WmsError::Internal(format!(
        "this database belongs to node {n} ({o}), not to node {node} ({origin})"
    )))
}

/// The node this database belongs to (0 until claimed).
pub fn node(conn: &Db) -> Result<u32> {
    Ok(super::maybe(conn.query_row(
        "SELECT number FROM node WHERE singleton = 1",
        params![],
        |r| r.get(0),
    ))?
    .unwrap_or(0))
}

/// The next id of `table` for this database's node.
pub fn allocate(conn: &Db, table: &str) -> Result<i64> {
    next(conn, table, node(conn)?)
}

/// The next id of `table` for `node`.
pub fn next(conn: &Db, table: &str, node: u32) -> Result<i64> {
    debug_assert!(TABLES.contains(&table), "{table} is not node-allocated");
    if conn.dialect() == Dialect::Postgres {
        return from_sequence(conn, table, node);
    }
    let lo = i64::from(node) << NODE_SHIFT;
    let hi = (i64::from(node) + 1) << NODE_SHIFT;
    let max: Option<i64> = conn.query_row(
        &format!("SELECT MAX(id) FROM {table} WHERE id > ?1 AND id < ?2"),
        params![lo, hi],
        |r| r.get(0),
    )?;
    let top = max.unwrap_or(lo);
    // The cloud (node 0) never takes its log back from anyone.
    let floor = if node == 0 {
        None
    } else {
        recovery_floor(conn, table, top)?
    };
    let id = top.max(floor.unwrap_or(lo)) + 1;
    if id >= hi {
        return Err(WmsError::Internal(format!(
            "node {node} has used up its range of {table} ids"
        )));
    }
    Ok(id)
}

/// On PostgreSQL, which holds only clouds, writers of different
/// businesses run side by side: node 0's ids come from a sequence per
/// table (migration 035) rather than one past the largest, which two of
/// them could read at once. A sequence's numbers are not taken back by a
/// rollback; a gap in ids means nothing.
fn from_sequence(conn: &Db, table: &str, node: u32) -> Result<i64> {
    if node != 0 {
        return Err(WmsError::Internal(format!(
            "a database on PostgreSQL is a cloud's (node 0), not node {node}'s"
        )));
    }
    Ok(conn.query_value(&format!("SELECT nextval('{table}_node_ids')"), params![])?)
}

/// Sets node 0's sequences past the largest id of their tables' range:
/// after rows were copied in with their ids.
#[cfg(feature = "postgres")]
pub fn reset_sequences(conn: &Db) -> Result<()> {
    for table in TABLES {
        conn.query_value::<i64>(
            &format!(
                "SELECT setval('{table}_node_ids',
                               COALESCE((SELECT MAX(id) FROM {table} WHERE id < ?1), 0) + 1, false)"
            ),
            params![1i64 << NODE_SHIFT],
        )?;
    }
    Ok(())
}

/// How far apart what a node made before its log was cut short and what it
/// makes after are kept: more records of one table than a box makes between
/// a backup and its restore, and still room for a thousand restores in a
/// node's range.
pub const RECOVERY_GAP: i64 = 1 << 30;

/// While this node's log is not known whole, records of it may still come
/// back from the cloud with ids just past the largest here: `table` then
/// numbers from a floor [`RECOVERY_GAP`] above where it stood when the first
/// record was made meanwhile, kept until the log is whole.
fn recovery_floor(conn: &Db, table: &str, top: i64) -> Result<Option<i64>> {
    let (recovering, floor): (bool, Option<i64>) = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sync_state WHERE singleton = 1 AND recover_from IS NOT NULL),
                    (SELECT floor FROM id_floors WHERE tbl = ?1)",
        params![table],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if !recovering {
        return Ok(None);
    }
    if floor.is_some() {
        return Ok(floor);
    }
    let floor = top + RECOVERY_GAP;
    conn.execute(
        "INSERT INTO id_floors (tbl, floor) VALUES (?1, ?2)",
        params![table, floor],
    )?;
    Ok(Some(floor))
}

/// The log is whole: tables number on from their largest id again (past any
/// floor, once something was made above it).
pub fn clear_floors(conn: &Db) -> Result<()> {
    conn.execute("DELETE FROM id_floors", params![])?;
    Ok(())
}

/// The node that made a record with this id.
pub fn node_of(id: i64) -> u32 {
    u32::try_from(id >> NODE_SHIFT).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Result<Db> {
        let conn = crate::store::memory(0)?;
        conn.execute_batch(
            "CREATE TABLE waves (id INTEGER PRIMARY KEY, note TEXT);
             CREATE TABLE sync_state (singleton INTEGER PRIMARY KEY, recover_from INTEGER,
                                      recovered INTEGER, shifted INTEGER NOT NULL DEFAULT 0,
                                      recover_stalled TEXT);
             INSERT INTO sync_state (singleton) VALUES (1);
             CREATE TABLE id_floors (tbl TEXT PRIMARY KEY, floor INTEGER NOT NULL);",
        )?;
        Ok(conn)
    }

    fn make(conn: &Db, node: u32) -> Result<i64> {
        let id = next(conn, "waves", node)?;
        conn.execute("INSERT INTO waves (id) VALUES (?1)", params![id])?;
        Ok(id)
    }

    #[test]
    fn while_the_log_is_not_whole_ids_start_well_above_what_may_come_back() -> Result<()> {
        let conn = db()?;
        let lo = 3 << NODE_SHIFT;
        for _ in 0..4 {
            make(&conn, 3)?;
        }
        conn.execute("UPDATE sync_state SET recover_from = 2", params![])?;
        // Made meanwhile: above the floor, and on from there.
        assert_eq!(make(&conn, 3)?, lo + 4 + RECOVERY_GAP + 1);
        assert_eq!(make(&conn, 3)?, lo + 4 + RECOVERY_GAP + 2);
        // The lost stretch comes back with its own ids.
        for id in 5..=9 {
            conn.execute("INSERT INTO waves (id) VALUES (?1)", params![lo + id])?;
        }
        assert_eq!(make(&conn, 3)?, lo + 4 + RECOVERY_GAP + 3);
        // The cloud is never held to a floor, even with the flag set.
        assert_eq!(make(&conn, 0)?, 1);
        // Whole again: numbering goes on from the largest.
        conn.execute("UPDATE sync_state SET recover_from = NULL", params![])?;
        clear_floors(&conn)?;
        assert_eq!(make(&conn, 3)?, lo + 4 + RECOVERY_GAP + 4);
        Ok(())
    }

    #[test]
    fn a_copy_taken_during_a_recovery_and_restored_numbers_above_what_it_lacks() -> Result<()> {
        let conn = db()?;
        let lo = 3 << NODE_SHIFT;
        make(&conn, 3)?;
        conn.execute("UPDATE sync_state SET recover_from = 0", params![])?;
        assert_eq!(make(&conn, 3)?, lo + 1 + RECOVERY_GAP + 1);
        // The copy is taken here; the box makes one more, then dies.
        let lost = make(&conn, 3)?;
        conn.execute("DELETE FROM waves WHERE id = ?1", params![lost])?;
        super::super::sync::start_recovery(&conn, 0)?;
        let made = make(&conn, 3)?;
        assert!(
            made > lost,
            "{made} would clash with {lost}, still to come back"
        );
        Ok(())
    }

    #[test]
    fn a_recovery_with_nothing_made_meanwhile_leaves_the_numbering_alone() -> Result<()> {
        let conn = db()?;
        make(&conn, 3)?;
        conn.execute("UPDATE sync_state SET recover_from = 1", params![])?;
        conn.execute("UPDATE sync_state SET recover_from = NULL", params![])?;
        clear_floors(&conn)?;
        assert_eq!(make(&conn, 3)?, (3 << NODE_SHIFT) + 2);
        Ok(())
    }

    #[test]
    fn each_node_counts_in_its_own_range() -> Result<()> {
        let conn = db()?;
        assert_eq!(next(&conn, "waves", 0)?, 1);
        assert_eq!(next(&conn, "waves", 3)?, (3 << NODE_SHIFT) + 1);
        for (node, n) in [(0u32, 5), (3, 2), (7, 1)] {
            for _ in 0..n {
                let id = next(&conn, "waves", node)?;
                conn.execute("INSERT INTO waves (id) VALUES (?1)", params![id])?;
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
        let conn = crate::store::memory(u32::MAX)?;
        assert_eq!(node(&conn)?, 0);
        claim(&conn, 4, "edge:mad-1")?;
        claim(&conn, 4, "edge:mad-1")?;
        assert_eq!(node(&conn)?, 4);
        assert!(claim(&conn, 5, "edge:mad-1").is_err());
        assert!(claim(&conn, 4, "edge:bcn-1").is_err());
        // A new database may be a new box for an old edge until the cloud
        // says otherwise.
        assert_eq!(
            allocate(&conn, "waves")?,
            (4 << NODE_SHIFT) + RECOVERY_GAP + 1
        );
        super::super::sync::end_recovery(&conn)?;
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
