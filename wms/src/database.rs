//! The database as a file, for what works on it without the engine open:
//! the edge's backups and restores, its doctor, a status snapshot from the
//! command line, a benchmark's look at a copy. Each call opens and closes
//! its own connection; none hands one out.

use crate::Result;
use crate::store;
use std::path::Path;

pub use crate::store::POSTGRES_MIGRATIONS;
pub use crate::store::backup::{
    Inspection, checkpoint, copy_live, inspect, log_position, looks_like_sqlite, mark_restored,
    settle,
};
#[cfg(feature = "postgres")]
pub use crate::store::copy::Copied;
pub use crate::store::ids::{MAX_NODE, NODE_SHIFT, RECOVERY_GAP, node_of};
pub use crate::store::sync::Recovery;

/// Copies the SQLite database at `path` (a stopped cloud's; brought to
/// this release's schema first) into the empty PostgreSQL database at
/// `url` (its tables made here), keeping every id, sequence number and
/// cursor: edges carry on against it without a resync. All or nothing;
/// `progress(table, copied, of)` as rows go. Runs on the caller's thread,
/// which must not drive an async runtime (PostgreSQL's client is
/// blocking).
#[cfg(feature = "postgres")]
pub fn copy_to_postgres(
    path: &Path,
    url: &str,
    progress: impl FnMut(&str, u64, u64),
) -> Result<Copied> {
    if !path.exists() {
        return Err(crate::WmsError::NotFound(format!(
            "{} does not exist",
            path.display()
        )));
    }
    let from = store::open_writer(path)?;
    let to = depot_sql::Db::connect_postgres(url)?;
    store::migrate(&to)?;
    let documents = path.parent().unwrap_or(Path::new(".")).join("documents");
    let blob = |sha: &str| -> Result<Vec<u8>> {
        let file = crate::documents::blob_path(&documents, sha);
        let bytes = std::fs::read(&file).map_err(|e| {
            crate::WmsError::Internal(format!("a document's bytes, {}: {e}", file.display()))
        })?;
        if crate::documents::sha256_hex(&bytes) != sha {
            return Err(crate::WmsError::Internal(format!(
                "{} does not match its SHA-256",
                file.display()
            )));
        }
        Ok(bytes)
    };
    let copied = store::copy::sqlite_to_postgres(&from, &to, blob, progress);
    from.close()?;
    copied
}

/// Opens the database for writing as node `node` (creating and migrating
/// it as [`crate::Wms::open_node`] would) and closes it: whether the
/// engine could start on it.
pub fn check_opens(path: &Path, node: u32, origin: &str) -> Result<()> {
    let conn = store::open_writer(path)?;
    store::ids::claim(&conn, node, origin)
}

/// The log's position (its head and what the cloud acknowledged, as
/// [`log_position`]) and a recovery of this node's own log under way
/// (after a restore), if any.
pub fn log_state(path: &Path) -> Result<((i64, i64), Option<Recovery>)> {
    let conn = store::open_reader(path)?;
    Ok((
        store::backup::log_position_in(&conn)?,
        store::sync::recovery(&conn)?,
    ))
}

/// The sync state a status page shows, read from the file.
pub fn sync_snapshot(path: &Path) -> Result<crate::sync::SyncSnapshot> {
    store::sync::snapshot(&store::open_reader(path)?)
}

/// The log's last sequence number and this node's own last one.
pub fn log_heads(path: &Path) -> Result<(i64, i64)> {
    let conn = store::open_reader(path)?;
    Ok((
        store::events::head(&conn)?,
        store::events::outgoing_head(&conn)?,
    ))
}
