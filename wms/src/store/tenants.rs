//! Businesses, warehouses and API keys.

use super::{maybe, parse_json, parse_ts, ts};
use crate::error::Result;
use depot_protocol::order::Address;
use depot_protocol::tenant::{ApiKey, Business, Caller, Warehouse};
use depot_protocol::{BusinessId, KeyId, Timestamp, WarehouseId};
use rusqlite::{Connection, Row, params};

pub fn insert_business(
    conn: &Connection,
    name: &str,
    currency: &str,
    timezone: &str,
    at: &Timestamp,
) -> Result<BusinessId> {
    conn.prepare_cached(
        "INSERT INTO businesses (name, currency, timezone, created_at) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![name, currency, timezone, ts(at)])?;
    Ok(BusinessId(conn.last_insert_rowid()))
}

const BUSINESS_COLS: &str = "id, name, currency, timezone, created_at, gs1_company_prefix";

fn business_row(r: &Row) -> rusqlite::Result<Business> {
    Ok(Business {
        id: BusinessId(r.get(0)?),
        name: r.get(1)?,
        currency: r.get(2)?,
        timezone: r.get(3)?,
        created_at: parse_ts(&r.get::<_, String>(4)?)?,
        gs1_company_prefix: r.get(5)?,
    })
}

/// Sets (or clears) a business's GS1 company prefix.
pub fn set_gs1_prefix(conn: &Connection, id: BusinessId, prefix: Option<&str>) -> Result<()> {
    conn.prepare_cached("UPDATE businesses SET gs1_company_prefix = ?2 WHERE id = ?1")?
        .execute(params![id.0, prefix])?;
    Ok(())
}

/// Another business that numbers its parcels from `prefix`, if one does.
pub fn gs1_prefix_holder(
    conn: &Connection,
    prefix: &str,
    except: BusinessId,
) -> Result<Option<BusinessId>> {
    maybe(
        conn.prepare_cached(
            "SELECT id FROM businesses WHERE gs1_company_prefix = ?1 AND id <> ?2 LIMIT 1",
        )?
        .query_row(params![prefix, except.0], |r| Ok(BusinessId(r.get(0)?))),
    )
}

/// Changes a warehouse's name and address (its code never changes: labels
/// and stations carry it).
pub fn update_warehouse(
    conn: &Connection,
    business: BusinessId,
    id: WarehouseId,
    name: &str,
    address: &Address,
) -> Result<()> {
    conn.prepare_cached(
        "UPDATE warehouses SET name = ?3, address = ?4 WHERE business_id = ?1 AND id = ?2",
    )?
    .execute(params![
        business.0,
        id.0,
        name,
        serde_json::to_string(address)?
    ])?;
    Ok(())
}

pub fn business(conn: &Connection, id: BusinessId) -> Result<Option<Business>> {
    maybe(
        conn.prepare_cached(&format!(
            "SELECT {BUSINESS_COLS} FROM businesses WHERE id = ?1"
        ))?
        .query_row([id.0], business_row),
    )
}

pub fn businesses(conn: &Connection) -> Result<Vec<Business>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {BUSINESS_COLS} FROM businesses ORDER BY id"
    ))?;
    let rows = stmt.query_map([], business_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub fn insert_warehouse(
    conn: &Connection,
    business: BusinessId,
    code: &str,
    name: &str,
    address: &Address,
    visible: bool,
    at: &Timestamp,
) -> Result<WarehouseId> {
    conn.prepare_cached(
        "INSERT INTO warehouses (business_id, code, name, address, is_visible_sales, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        business.0,
        code,
        name,
        serde_json::to_string(address)?,
        visible,
        ts(at)
    ])?;
    Ok(WarehouseId(conn.last_insert_rowid()))
}

pub fn warehouse_code_taken(conn: &Connection, business: BusinessId, code: &str) -> Result<bool> {
    Ok(maybe(
        conn.prepare_cached("SELECT 1 FROM warehouses WHERE business_id = ?1 AND code = ?2")?
            .query_row(params![business.0, code], |_| Ok(())),
    )?
    .is_some())
}

const WAREHOUSE_COLS: &str = "id, business_id, code, name, address, is_visible_sales, created_at";

fn warehouse_row(r: &Row) -> rusqlite::Result<Warehouse> {
    Ok(Warehouse {
        id: WarehouseId(r.get(0)?),
        business_id: BusinessId(r.get(1)?),
        code: r.get(2)?,
        name: r.get(3)?,
        address: parse_json(&r.get::<_, String>(4)?)?,
        is_visible_sales: r.get(5)?,
        created_at: parse_ts(&r.get::<_, String>(6)?)?,
    })
}

/// Warehouses of a business, optionally only those with the given
/// pick-up flag.
pub fn warehouses(
    conn: &Connection,
    business: BusinessId,
    visible: Option<bool>,
) -> Result<Vec<Warehouse>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {WAREHOUSE_COLS} FROM warehouses
         WHERE business_id = ?1 AND (is_visible_sales = ?2 OR ?2 IS NULL) ORDER BY id"
    ))?;
    let rows = stmt.query_map(params![business.0, visible], warehouse_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub fn warehouse(
    conn: &Connection,
    business: BusinessId,
    id: WarehouseId,
) -> Result<Option<Warehouse>> {
    maybe(
        conn.prepare_cached(&format!(
            "SELECT {WAREHOUSE_COLS} FROM warehouses WHERE business_id = ?1 AND id = ?2"
        ))?
        .query_row(params![business.0, id.0], warehouse_row),
    )
}

pub fn insert_key(
    conn: &Connection,
    business: BusinessId,
    hash: &[u8],
    prefix: &str,
    label: Option<&str>,
    at: &Timestamp,
) -> Result<KeyId> {
    conn.prepare_cached(
        "INSERT INTO api_keys (business_id, hash, prefix, label, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![business.0, hash, prefix, label, ts(at)])?;
    Ok(KeyId(conn.last_insert_rowid()))
}

fn key_row(r: &Row) -> rusqlite::Result<ApiKey> {
    Ok(ApiKey {
        id: KeyId(r.get(0)?),
        business_id: BusinessId(r.get(1)?),
        prefix: r.get(2)?,
        label: r.get(3)?,
        created_at: parse_ts(&r.get::<_, String>(4)?)?,
        revoked_at: r
            .get::<_, Option<String>>(5)?
            .map(|s| parse_ts(&s))
            .transpose()?,
    })
}

pub fn key(conn: &Connection, id: KeyId) -> Result<Option<ApiKey>> {
    maybe(
        conn.prepare_cached("SELECT id, business_id, prefix, label, created_at, revoked_at FROM api_keys WHERE id = ?1")?
            .query_row([id.0], key_row),
    )
}

pub fn keys(conn: &Connection, business: BusinessId) -> Result<Vec<ApiKey>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, business_id, prefix, label, created_at, revoked_at FROM api_keys WHERE business_id = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map([business.0], key_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Marks a key revoked; answers whether it was live until now.
pub fn revoke_key(conn: &Connection, id: KeyId, at: &Timestamp) -> Result<bool> {
    let n = conn
        .prepare_cached("UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL")?
        .execute(params![id.0, ts(at)])?;
    Ok(n == 1)
}

/// The live key with this hash, as a caller.
pub fn caller_by_hash(conn: &Connection, hash: &[u8]) -> Result<Option<Caller>> {
    maybe(
        conn.prepare_cached(
            "SELECT id, business_id FROM api_keys WHERE hash = ?1 AND revoked_at IS NULL",
        )?
        .query_row([hash], |r| {
            Ok(Caller {
                key_id: KeyId(r.get(0)?),
                business_id: BusinessId(r.get(1)?),
            })
        }),
    )
}
