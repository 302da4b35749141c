//! Writes that replay what another node did, keeping that node's ids.

use super::{maybe, ts};
use crate::error::Result;
use depot_protocol::catalog::Item;
use depot_protocol::event::{Event, EventKind, RemoteEvent};
use depot_protocol::tenant::{ApiKey, Business, Warehouse};
use depot_protocol::{BusinessId, EventId, Timestamp};
use depot_sql::{Db, params};

#[cfg(test)]
mod tests;

pub fn upsert_business(conn: &Db, b: &Business) -> Result<()> {
    conn.execute("INSERT INTO businesses (id, name, currency, timezone, created_at, gs1_company_prefix) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (id) DO UPDATE SET name = excluded.name, currency = excluded.currency, timezone = excluded.timezone,
                                        created_at = excluded.created_at, gs1_company_prefix = excluded.gs1_company_prefix", params![b.id.0, b.name, b.currency, b.timezone, ts(&b.created_at), b.gs1_company_prefix])?;
    Ok(())
}

pub fn upsert_warehouse(conn: &Db, w: &Warehouse) -> Result<()> {
    conn.execute("INSERT INTO warehouses (id, business_id, code, name, address, is_visible_sales, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (id) DO UPDATE SET code = excluded.code, name = excluded.name, address = excluded.address,
                                        is_visible_sales = excluded.is_visible_sales", params![
        w.id.0,
        w.business_id.0,
        w.code,
        w.name,
        serde_json::to_string(&w.address)?,
        w.is_visible_sales,
        ts(&w.created_at)
    ])?;
    Ok(())
}

pub fn upsert_key(conn: &Db, k: &ApiKey, hash: &[u8]) -> Result<()> {
    // The same key provisioned in an edge's configuration (a row of the
    // edge's own, under another id): the cloud's record takes its place, so
    // the cloud's revocation reaches it.
    conn.execute(
        "DELETE FROM api_keys WHERE hash = ?1 AND id <> ?2",
        params![hash, k.id.0],
    )?;
    conn.execute("INSERT INTO api_keys (id, business_id, hash, prefix, label, created_at, revoked_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (id) DO UPDATE SET revoked_at = COALESCE(api_keys.revoked_at, excluded.revoked_at)", params![k.id.0, k.business_id.0, hash, k.prefix, k.label, ts(&k.created_at), k.revoked_at.as_ref().map(ts)])?;
    Ok(())
}

pub fn revoke_key(conn: &Db, k: &ApiKey) -> Result<()> {
    conn.execute(
        "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?2) WHERE id = ?1",
        params![k.id.0, k.revoked_at.as_ref().map(ts)],
    )?;
    Ok(())
}

/// When the stored copy of an item was last changed, if there is one.
pub fn item_updated_at(conn: &Db, item: &Item) -> Result<Option<String>> {
    maybe(conn.query_row(
        "SELECT updated_at FROM items WHERE id = ?1",
        params![item.id.0],
        |r| r.get(0),
    ))
}

/// Creates the bare row of a replicated item so its fields can be written.
pub fn insert_item_row(conn: &Db, item: &Item) -> Result<()> {
    conn.execute("INSERT INTO items (id, business_id, sku, name, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)
         ON CONFLICT DO NOTHING", params![item.id.0, item.business_id.0, item.sku, item.name, ts(&item.created_at)])?;
    Ok(())
}

/// The event a conflict is about: another node's, or this node's own that
/// another refused.
pub struct Subject<'a> {
    pub id: EventId,
    pub origin: &'a str,
    pub kind: &'a str,
    pub business_id: Option<BusinessId>,
}

impl<'a> From<&'a Event> for Subject<'a> {
    fn from(e: &'a Event) -> Self {
        Self {
            id: e.id,
            origin: &e.origin,
            kind: &e.kind,
            business_id: e.business_id,
        }
    }
}

impl<'a> From<&'a RemoteEvent> for Subject<'a> {
    fn from(e: &'a RemoteEvent) -> Self {
        Self {
            id: e.id,
            origin: &e.origin,
            kind: &e.kind,
            business_id: e.business_id,
        }
    }
}

/// Records that an event from elsewhere clashed here, and how it ended.
/// Answers false when it was already recorded.
pub fn record_conflict<'a>(
    conn: &Db,
    e: impl Into<Subject<'a>>,
    reason: &str,
    resolution: &str,
    at: &Timestamp,
) -> Result<bool> {
    let e = e.into();
    let n = conn.execute(
        "INSERT INTO sync_conflicts (business_id, event_id, origin, kind, reason, resolution, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING",
        params![
            e.business_id.map(|b| b.0),
            e.id.0.to_string(),
            e.origin,
            e.kind,
            reason,
            resolution,
            ts(at)
        ],
    )?;
    if n == 0 {
        return Ok(false);
    }
    // Into this node's own log too, so whoever follows the log (a station
    // screen, the cloud for an edge) sees it happen.
    let origin: String = conn.query_row(
        "SELECT origin FROM node WHERE singleton = 1",
        params![],
        |r| r.get(0),
    )?;
    let noted = ConflictNoted {
        event_id: e.id.0.to_string(),
        origin: e.origin.to_owned(),
        kind: e.kind.to_owned(),
        reason: reason.to_owned(),
        resolution: resolution.to_owned(),
    };
    super::events::append(
        conn,
        &origin,
        e.business_id,
        EventKind::SyncConflict,
        &noted,
    )?;
    Ok(true)
}

/// The payload of a `sync.conflict` event.
#[derive(serde::Serialize)]
struct ConflictNoted {
    event_id: String,
    origin: String,
    kind: String,
    reason: String,
    resolution: String,
}

/// A recorded conflict.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct Conflict {
    pub event_id: String,
    pub origin: String,
    pub kind: String,
    pub reason: String,
    /// What was kept: "rejected" (the event was not applied) or what won.
    pub resolution: String,
    pub at: String,
}

/// Narrows a conflict listing.
#[derive(Debug, Clone, Default)]
pub struct ConflictFilter {
    pub kind: Option<String>,
    /// Only events that were not applied (true) or only merges (false).
    pub rejected: Option<bool>,
}

/// A page of a business's conflicts, newest first, with the business's
/// total (kept by triggers, migration 046), the filtered count and the
/// cursor to the next page.
pub fn conflict_page(
    conn: &Db,
    business: BusinessId,
    f: &ConflictFilter,
    page: depot_protocol::Page,
) -> Result<depot_protocol::Listed<Conflict>> {
    let mut q = super::ListQuery::new("FROM sync_conflicts WHERE business_id = ?", business);
    if let Some(kind) = &f.kind {
        q.and("kind = ?", [kind.clone().into()]);
    }
    match f.rejected {
        Some(true) => q.and("resolution = 'rejected'", []),
        Some(false) => q.and("resolution <> 'rejected'", []),
        None => {}
    }
    q.run(
        conn,
        "sync_conflicts",
        "event_id, origin, kind, reason, resolution, at",
        super::Order::desc(&[super::Key::Int("id")]),
        page,
        conflict_row,
    )
}

fn conflict_row(r: &depot_sql::Row<'_>) -> depot_sql::Result<Conflict> {
    Ok(Conflict {
        event_id: r.get(0)?,
        origin: r.get(1)?,
        kind: r.get(2)?,
        reason: r.get(3)?,
        resolution: r.get(4)?,
        at: r.get(5)?,
    })
}

pub fn conflicts(conn: &Db, business: Option<BusinessId>, limit: u32) -> Result<Vec<Conflict>> {
    let stmt = "SELECT event_id, origin, kind, reason, resolution, at FROM sync_conflicts
         WHERE business_id = ?1 OR ?1 IS NULL ORDER BY id DESC LIMIT ?2";
    let rows = conn.query_map(stmt, params![business.map(|b| b.0), limit], conflict_row)?;
    Ok(rows)
}
