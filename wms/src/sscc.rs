//! SSCCs for parcels: numbered by each node from blocks the cloud grants it
//! (`depot_protocol::gs1::sscc` says how the serials are laid out).
//!
//! The cloud is the only granter. It keeps every node of a business, itself
//! included, one block ahead: a node always holds a block it has not
//! started, so a box that goes offline can still pack a block's worth of
//! parcels (10,000 for most prefixes). Grants are events of the cloud's
//! log and reach the edges like any other change; an edge numbers only
//! within blocks granted to its own node, and the cloud refuses a parcel
//! from an edge whose SSCC is not in one of that edge's blocks.
//!
//! A node fills its blocks in the order granted, each from its start, so
//! the next serial is one past the largest used in the newest block it has
//! started (one index lookup per block looked at). Packages that come back
//! to a box restored from a backup may have used its blocks further than
//! the box can see: until its log is whole again, it numbers only in
//! blocks it had not started when the restore was noticed.

use crate::store::{self, ids, sscc as sql, tenants};
use crate::{Result, WmsError};
use depot_protocol::event::EventKind;
use depot_protocol::gs1::sscc::{CompanyPrefix, Sscc};
use depot_protocol::{BusinessId, now};
use depot_sql::Db;
use sql::Block;

/// The business's prefix, if it has one (a stored one that no longer
/// parses is treated as none: it was checked when set).
fn prefix(conn: &Db, business: BusinessId) -> Result<Option<CompanyPrefix>> {
    Ok(tenants::business(conn, business)?
        .and_then(|b| b.gs1_company_prefix)
        .and_then(|p| CompanyPrefix::parse(&p).ok()))
}

/// The next serial of a block, or `None` when it is full: one past the
/// largest used, or its first when none is.
fn next_in(conn: &Db, p: &CompanyPrefix, b: &Block) -> Result<Option<i64>> {
    let (lo, hi) = p.text_bounds(b.first, b.last);
    let used = sql::largest_used(conn, &lo, &hi)?
        .and_then(|s| Sscc::parse(&s).ok())
        .and_then(|s| p.serial_of(&s));
    let next = used.map_or(b.first, |u| u + 1);
    Ok((next <= b.last).then_some(next))
}

/// The next SSCC this node gives a parcel of `business`; `None` when the
/// business has no GS1 company prefix. The cloud grants itself a block
/// when it has none left; an edge that has used every serial granted to it
/// is refused until the cloud's next grant reaches it.
pub fn allocate(conn: &Db, origin: &str, business: BusinessId) -> Result<Option<Sscc>> {
    let Some(p) = prefix(conn, business)? else {
        return Ok(None);
    };
    let node = ids::node(conn)?;
    let floor_key = format!("sscc:{business}:{p}");
    let recovering = if node == 0 {
        None
    } else {
        sql::recovery_floor(conn, &floor_key)?
    };
    let blocks = sql::of_node(conn, business, node, p.as_str())?;
    // Newest first: past the blocks not started yet to the newest started.
    let mut unstarted: Option<&Block> = None;
    for b in &blocks {
        if let Some(Some(floor)) = recovering {
            if b.first < floor {
                break;
            }
        }
        match next_in(conn, &p, b)? {
            Some(next) if next == b.first => unstarted = Some(b),
            Some(next) if recovering != Some(None) => return Ok(p.sscc(next)),
            // Full, or started before a restore: the next block on.
            _ => break,
        }
    }
    if let Some(b) = unstarted {
        if recovering == Some(None) {
            sql::set_recovery_floor(conn, &floor_key, b.first)?;
        }
        return Ok(p.sscc(b.first));
    }
    if node == 0 {
        let b = grant(conn, origin, business, &p, 0)?;
        return Ok(p.sscc(b.first));
    }
    Err(WmsError::conflict(format!(
        "this box has used every SSCC the cloud granted it for GS1 company prefix {p}: \
         the next block arrives when the cloud is reachable"
    )))
}

/// Grants the business's next block of `p` to `node`, as an event of this
/// (the cloud's) log.
fn grant(
    conn: &Db,
    origin: &str,
    business: BusinessId,
    p: &CompanyPrefix,
    node: u32,
) -> Result<Block> {
    let k = sql::newest_first(conn, business, p.as_str())?.map_or(0, |f| f / p.block_size() + 1);
    let (first, last) = p.block(k).ok_or_else(|| {
        WmsError::conflict(format!(
            "GS1 company prefix {p} has no SSCC serials left ({} used): \
             set another prefix of the business's",
            p.capacity()
        ))
    })?;
    let b = Block {
        prefix: p.as_str().to_owned(),
        first,
        last,
        node,
    };
    let at = now();
    sql::insert(conn, business, &b, &at)?;
    let sscc = |s| p.sscc(s).map(|s| s.to_string()).unwrap_or_default();
    store::events::append(
        conn,
        origin,
        Some(business),
        EventKind::SsccBlockGranted,
        &serde_json::json!({
            "business_id": business, "node": node, "prefix": p.as_str(),
            "first": first, "last": last,
            "first_sscc": sscc(first), "last_sscc": sscc(last), "at": at,
        }),
    )?;
    Ok(b)
}

/// Cloud: makes sure `node` holds a block of the business's prefix it has
/// not started, granting one when it does not.
pub fn keep_ahead(conn: &Db, origin: &str, business: BusinessId, node: u32) -> Result<()> {
    let Some(p) = prefix(conn, business)? else {
        return Ok(());
    };
    // Blocks are started in the order granted: the newest tells.
    let newest = sql::of_node(conn, business, node, p.as_str())?
        .into_iter()
        .next();
    if let Some(b) = newest {
        if next_in(conn, &p, &b)? == Some(b.first) {
            return Ok(());
        }
    }
    grant(conn, origin, business, &p, node)?;
    Ok(())
}

/// A block another node (the cloud) granted, as it arrives here.
pub fn apply_grant(conn: &Db, business: BusinessId, b: &Block) -> Result<()> {
    let p = CompanyPrefix::parse(&b.prefix).map_err(WmsError::conflict)?;
    let aligned = b.first % p.block_size() == 0 && b.last == b.first + p.block_size() - 1;
    if !aligned || p.block(b.first / p.block_size()).is_none() {
        return Err(WmsError::conflict(format!(
            "serials {}..={} are not a block of prefix {p}",
            b.first, b.last
        )));
    }
    if !sql::insert(conn, business, b, &now())? {
        let here = sql::holding(conn, business, &b.prefix, b.first)?;
        if here.as_ref().is_some_and(|h| h.node != b.node) {
            return Err(WmsError::conflict(format!(
                "block {}..={} of prefix {p} is already another node's here",
                b.first, b.last
            )));
        }
    }
    Ok(())
}

/// Why the SSCCs of a shipment an edge (`node`) packed must not be taken:
/// one that is not an SSCC, or not in a block granted to that node.
pub fn foreign(
    conn: &Db,
    business: BusinessId,
    node: u32,
    ssccs: &[(u32, &str)],
) -> Result<Option<String>> {
    if ssccs.is_empty() {
        return Ok(None);
    }
    let prefixes: Vec<CompanyPrefix> = sql::prefixes_of_node(conn, business, node)?
        .iter()
        .filter_map(|p| CompanyPrefix::parse(p).ok())
        .collect();
    for (index, text) in ssccs {
        let Ok(s) = Sscc::parse(text) else {
            return Ok(Some(format!(
                "package {index}'s SSCC {text:?} is not an SSCC"
            )));
        };
        let mut granted = false;
        for p in &prefixes {
            if let Some(serial) = p.serial_of(&s) {
                granted |= sql::holding(conn, business, p.as_str(), serial)?
                    .is_some_and(|b| b.node == node);
            }
        }
        if !granted {
            return Ok(Some(format!(
                "package {index}'s SSCC {s} is not in a block granted to node {node}"
            )));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use depot_sql::params;

    const PREFIX: &str = "401234567890"; // 12 digits: blocks of 100

    /// A database of node `node` with one business numbering from PREFIX.
    fn db(node: u32) -> Result<(Db, BusinessId)> {
        let conn = crate::store::memory(u32::MAX)?;
        // Packages of no shipment: what matters here is their SSCCs.
        conn.execute_batch("PRAGMA foreign_keys = OFF;")?;
        if node > 0 {
            ids::claim(&conn, node, "edge:t")?;
        }
        // A new box's log is not known whole until the cloud has said so;
        // these are past that.
        conn.execute("UPDATE sync_state SET recover_from = NULL", params![])?;
        let at = now();
        let b = tenants::insert_business(&conn, "B", "EUR", "UTC", &at)?;
        tenants::set_gs1_prefix(&conn, b, Some(PREFIX))?;
        Ok((conn, b))
    }

    fn take(conn: &Db, b: BusinessId, shipment: i64) -> Result<Sscc> {
        let s = allocate(conn, "test", b)?.ok_or_else(|| WmsError::Internal("none".into()))?;
        conn.execute(
            "INSERT INTO packages (shipment_id, idx, weight_g, sscc) VALUES (?1, 1, 100, ?2)",
            depot_sql::params![shipment, s.as_str()],
        )?;
        Ok(s)
    }

    fn block(first: i64, node: u32) -> Block {
        Block {
            prefix: PREFIX.into(),
            first,
            last: first + 99,
            node,
        }
    }

    fn serial(s: &Sscc) -> i64 {
        CompanyPrefix::parse(PREFIX)
            .ok()
            .and_then(|p| p.serial_of(s))
            .unwrap_or(-1)
    }

    #[test]
    fn the_cloud_numbers_on_and_grants_itself_blocks_as_it_goes() -> Result<()> {
        let (conn, b) = db(0)?;
        let mut seen = std::collections::BTreeSet::new();
        for n in 0..250 {
            let s = take(&conn, b, n)?;
            assert_eq!(serial(&s), n, "in order, from the first block");
            assert!(seen.insert(s));
        }
        assert_eq!(sql::of_node(&conn, b, 0, PREFIX)?.len(), 3);
        let grants: i64 = conn.query_row(
            "SELECT COUNT(*) FROM events WHERE kind = 'sscc.block_granted'",
            params![],
            |r| r.get(0),
        )?;
        assert_eq!(grants, 3);
        Ok(())
    }

    #[test]
    fn the_cloud_keeps_each_node_one_block_ahead() -> Result<()> {
        let (conn, b) = db(0)?;
        keep_ahead(&conn, "cloud", b, 5)?;
        keep_ahead(&conn, "cloud", b, 5)?;
        assert_eq!(sql::of_node(&conn, b, 5, PREFIX)?, [block(0, 5)]);
        // The edge's first parcel arrives: it started its block.
        let p = CompanyPrefix::parse(PREFIX).map_err(WmsError::Internal)?;
        conn.execute(
            "INSERT INTO packages (shipment_id, idx, weight_g, sscc) VALUES (1, 1, 100, ?1)",
            params![p.sscc(0).map(|s| s.to_string())],
        )?;
        keep_ahead(&conn, "cloud", b, 5)?;
        assert_eq!(
            sql::of_node(&conn, b, 5, PREFIX)?,
            [block(100, 5), block(0, 5)]
        );
        // The cloud's own come after, never inside another node's.
        assert_eq!(serial(&take(&conn, b, 9)?), 200);
        Ok(())
    }

    #[test]
    fn an_edge_numbers_only_in_its_own_blocks_and_says_when_they_are_used_up() -> Result<()> {
        let (conn, b) = db(3)?;
        apply_grant(&conn, b, &block(0, 2))?;
        apply_grant(&conn, b, &block(100, 3))?;
        // The same grant again changes nothing; another node's claim to it
        // is refused.
        apply_grant(&conn, b, &block(100, 3))?;
        assert!(apply_grant(&conn, b, &block(100, 4)).is_err());
        assert!(
            apply_grant(
                &conn,
                b,
                &Block {
                    last: 150,
                    ..block(100, 3)
                }
            )
            .is_err()
        );
        for n in 0..100 {
            assert_eq!(serial(&take(&conn, b, n)?), 100 + n);
        }
        let e = take(&conn, b, 100).expect_err("used up");
        assert!(e.to_string().contains("used every SSCC"), "{e}");
        apply_grant(&conn, b, &block(300, 3))?;
        assert_eq!(serial(&take(&conn, b, 101)?), 300);
        // What the cloud checks of a parcel the edge sent.
        let p = CompanyPrefix::parse(PREFIX).map_err(WmsError::Internal)?;
        let ours = p.sscc(150).map(|s| s.to_string()).unwrap_or_default();
        let theirs = p.sscc(5).map(|s| s.to_string()).unwrap_or_default();
        assert_eq!(foreign(&conn, b, 3, &[(1, ours.as_str())])?, None);
        let why = foreign(&conn, b, 3, &[(1, ours.as_str()), (2, theirs.as_str())])?;
        assert!(why.is_some_and(|w| w.contains("package 2")));
        assert!(foreign(&conn, b, 3, &[(1, "123")])?.is_some());
        Ok(())
    }

    #[test]
    fn a_restored_box_numbers_in_a_block_it_had_not_started() -> Result<()> {
        let (conn, b) = db(3)?;
        apply_grant(&conn, b, &block(0, 3))?;
        apply_grant(&conn, b, &block(100, 3))?;
        assert_eq!(serial(&take(&conn, b, 1)?), 0);
        // Restored: parcels 1.. of the first block may be coming back.
        conn.execute("UPDATE sync_state SET recover_from = 1", params![])?;
        assert_eq!(serial(&take(&conn, b, 2)?), 100);
        assert_eq!(serial(&take(&conn, b, 3)?), 101);
        // With no block left it has not started, it waits for the cloud.
        for n in 4..102 {
            take(&conn, b, n)?;
        }
        assert!(take(&conn, b, 102).is_err());
        apply_grant(&conn, b, &block(300, 3))?;
        assert_eq!(serial(&take(&conn, b, 103)?), 300);
        // Whole again: numbering goes on from the newest block (what is
        // left of the first stays unused: serials are many, clashes costly).
        conn.execute("UPDATE sync_state SET recover_from = NULL", params![])?;
        store::ids::clear_floors(&conn)?;
        assert_eq!(serial(&take(&conn, b, 104)?), 301);
        Ok(())
    }

    #[test]
    fn a_business_without_a_prefix_gives_no_sscc() -> Result<()> {
        let (conn, b) = db(0)?;
        tenants::set_gs1_prefix(&conn, b, None)?;
        assert_eq!(allocate(&conn, "cloud", b)?, None);
        keep_ahead(&conn, "cloud", b, 1)?;
        assert!(sql::of_node(&conn, b, 1, PREFIX)?.is_empty());
        Ok(())
    }
}
