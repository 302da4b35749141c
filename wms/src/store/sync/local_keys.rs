//! Edge side: the API keys provisioned in the box's configuration.

use crate::error::Result;
use crate::store::{maybe, ts};
use depot_protocol::{BusinessId, Timestamp};
use depot_sql::{Db, params};

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
    conn: &Db,
    business: BusinessId,
    keys: &[LocalKey],
    at: &Timestamp,
) -> Result<usize> {
    let node = crate::store::ids::node(conn)?;
    if node == 0 {
        return Err(crate::WmsError::Internal(
            "keys are provisioned locally only on an edge (node 1 or above)".into(),
        ));
    }
    let (lo, hi) = (
        i64::from(node) << crate::store::ids::NODE_SHIFT,
        (i64::from(node) + 1) << crate::store::ids::NODE_SHIFT,
    );
    let installed: Vec<(i64, Vec<u8>, i64)> = conn.query_map(
        "SELECT id, hash, business_id FROM api_keys WHERE id > ?1 AND id < ?2",
        params![lo, hi],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    for (id, hash, owner) in &installed {
        if *owner != business.0 || !keys.iter().any(|k| k.hash[..] == hash[..]) {
            conn.execute("DELETE FROM api_keys WHERE id = ?1", params![id])?;
        }
    }
    if !keys.is_empty() {
        // A box that has never been online has no business row yet, and a
        // key must belong to one: a stand-in, which the cloud's
        // `business.created` overwrites when it arrives.
        conn.execute(
            "INSERT INTO businesses (id, name, currency, timezone, created_at)
             VALUES (?1, ?2, 'XXX', 'UTC', ?3) ON CONFLICT DO NOTHING",
            params![
                business.0,
                format!("business {business} (not synced yet)"),
                ts(at)
            ],
        )?;
    }
    let mut live = 0;
    for k in keys {
        let known: Option<Option<String>> = maybe(conn.query_row(
            "SELECT revoked_at FROM api_keys WHERE hash = ?1",
            params![&k.hash[..]],
            |r| r.get(0),
        ))?;
        match known {
            // Installed before, or the cloud's own key: left as it is.
            Some(revoked) => live += usize::from(revoked.is_none()),
            None => {
                let next: i64 = conn.query_row(
                    "SELECT COALESCE(MAX(id), ?1) + 1 FROM api_keys WHERE id > ?1 AND id < ?2",
                    params![lo, hi],
                    |r| r.get(0),
                )?;
                conn.execute(
                    "INSERT INTO api_keys (id, business_id, hash, prefix, label, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![next, business.0, &k.hash[..], k.prefix, LOCAL_LABEL, ts(at)],
                )?;
                live += 1;
            }
        }
    }
    Ok(live)
}
