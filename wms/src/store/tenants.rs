//! Businesses, warehouses and API keys.

use super::{maybe, parse_json, parse_ts, ts};
use crate::error::Result;
use depot_protocol::order::Address;
use depot_protocol::tenant::{ApiKey, Business, Caller, Warehouse};
use depot_protocol::{BusinessId, KeyId, Timestamp, WarehouseId};
use depot_sql::{Db, Row, params};

pub fn insert_business(
    conn: &Db,
    name: &str,
    currency: &str,
    timezone: &str,
    at: &Timestamp,
) -> Result<BusinessId> {
    let inserted: i64 = conn.query_value(
        "INSERT INTO businesses (name, currency, timezone, created_at) VALUES (?1, ?2, ?3, ?4) RETURNING id",
        params![name, currency, timezone, ts(at)],
    )?;
    Ok(BusinessId(inserted))
}

const BUSINESS_COLS: &str = "id, name, currency, timezone, created_at, gs1_company_prefix";

fn business_row(r: &Row) -> depot_sql::Result<Business> {
    Ok(Business {
        id: BusinessId(r.get(0)?),
        name: r.get(1)?,
        currency: r.get(2)?,
        timezone: r.get(3)?,
        created_at: parse_ts(&r.get::<String>(4)?)?,
        gs1_company_prefix: r.get(5)?,
    })
}

/// Sets (or clears) a business's GS1 company prefix.
pub fn set_gs1_prefix(conn: &Db, id: BusinessId, prefix: Option<&str>) -> Result<()> {
    conn.execute(
        "UPDATE businesses SET gs1_company_prefix = ?2 WHERE id = ?1",
        params![id.0, prefix],
    )?;
    Ok(())
}

/// Another business that numbers its parcels from `prefix`, if one does.
pub fn gs1_prefix_holder(
    conn: &Db,
    prefix: &str,
    except: BusinessId,
) -> Result<Option<BusinessId>> {
    maybe(conn.query_row(
        "SELECT id FROM businesses WHERE gs1_company_prefix = ?1 AND id <> ?2 LIMIT 1",
        params![prefix, except.0],
        |r| Ok(BusinessId(r.get(0)?)),
    ))
}

/// Changes a warehouse's name and address (its code never changes: labels
/// and stations carry it).
pub fn update_warehouse(
    conn: &Db,
    business: BusinessId,
    id: WarehouseId,
    name: &str,
    address: &Address,
) -> Result<()> {
    conn.execute(
        "UPDATE warehouses SET name = ?3, address = ?4 WHERE business_id = ?1 AND id = ?2",
        params![business.0, id.0, name, serde_json::to_string(address)?],
    )?;
    Ok(())
}

pub fn business(conn: &Db, id: BusinessId) -> Result<Option<Business>> {
    maybe(conn.query_row(
        &format!("SELECT {BUSINESS_COLS} FROM businesses WHERE id = ?1"),
        params![id.0],
        business_row,
    ))
}

/// What a new order needs of its business, in one statement (on
/// PostgreSQL each is a round trip): the currency, and the warehouse it is
/// fulfilled from: `warehouse` if the business has it, else none; without
/// one, the first of [`warehouses`]. `None` when there is no such business.
pub fn order_defaults(
    conn: &Db,
    business: BusinessId,
    warehouse: Option<WarehouseId>,
) -> Result<depot_sql::Later<(String, Option<WarehouseId>)>> {
    Ok(conn.query_later(
        "SELECT b.currency, (SELECT w.id FROM warehouses w
             WHERE w.business_id = b.id AND (w.id = ?2 OR ?2 IS NULL)
             ORDER BY w.id LIMIT 1)
         FROM businesses b WHERE b.id = ?1",
        params![business.0, warehouse.map(|w| w.0)],
        |r| Ok((r.get(0)?, r.get::<Option<i64>>(1)?.map(WarehouseId))),
    )?)
}

pub fn businesses(conn: &Db) -> Result<Vec<Business>> {
    let stmt = &format!("SELECT {BUSINESS_COLS} FROM businesses ORDER BY id");
    let rows = conn.query_map(stmt, params![], business_row)?;
    Ok(rows)
}

pub fn insert_warehouse(
    conn: &Db,
    business: BusinessId,
    code: &str,
    name: &str,
    address: &Address,
    visible: bool,
    at: &Timestamp,
) -> Result<WarehouseId> {
    let inserted: i64 = conn.query_value(
        "INSERT INTO warehouses (business_id, code, name, address, is_visible_sales, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
        params![
            business.0,
            code,
            name,
            serde_json::to_string(address)?,
            visible,
            ts(at)
        ],
    )?;
    Ok(WarehouseId(inserted))
}

pub fn warehouse_code_taken(conn: &Db, business: BusinessId, code: &str) -> Result<bool> {
    Ok(maybe(conn.query_row(
        "SELECT 1 FROM warehouses WHERE business_id = ?1 AND code = ?2",
        params![business.0, code],
        |_| Ok(()),
    ))?
    .is_some())
}

const WAREHOUSE_COLS: &str = "id, business_id, code, name, address, is_visible_sales, created_at";

fn warehouse_row(r: &Row) -> depot_sql::Result<Warehouse> {
    Ok(Warehouse {
        id: WarehouseId(r.get(0)?),
        business_id: BusinessId(r.get(1)?),
        code: r.get(2)?,
        name: r.get(3)?,
        address: parse_json(&r.get::<String>(4)?)?,
        is_visible_sales: r.get(5)?,
        created_at: parse_ts(&r.get::<String>(6)?)?,
    })
}

/// Warehouses of a business, optionally only those with the given
/// pick-up flag.
pub fn warehouses(
    conn: &Db,
    business: BusinessId,
    visible: Option<bool>,
) -> Result<Vec<Warehouse>> {
    let stmt = &format!(
        "SELECT {WAREHOUSE_COLS} FROM warehouses
         WHERE business_id = ?1 AND (is_visible_sales = ?2 OR ?2 IS NULL) ORDER BY id"
    );
    let rows = conn.query_map(stmt, params![business.0, visible], warehouse_row)?;
    Ok(rows)
}

pub fn warehouse(conn: &Db, business: BusinessId, id: WarehouseId) -> Result<Option<Warehouse>> {
    Ok(warehouse_later(conn, business, id)?.first(conn)?)
}

/// [`warehouse`], sent to be taken later.
pub fn warehouse_later(
    conn: &Db,
    business: BusinessId,
    id: WarehouseId,
) -> Result<depot_sql::Later<Warehouse>> {
    Ok(conn.query_later(
        &format!("SELECT {WAREHOUSE_COLS} FROM warehouses WHERE business_id = ?1 AND id = ?2"),
        params![business.0, id.0],
        warehouse_row,
    )?)
}

pub fn insert_key(
    conn: &Db,
    business: BusinessId,
    hash: &[u8],
    prefix: &str,
    label: Option<&str>,
    at: &Timestamp,
) -> Result<KeyId> {
    let inserted: i64 = conn.query_value("INSERT INTO api_keys (business_id, hash, prefix, label, created_at) VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id", params![business.0, hash, prefix, label, ts(at)])?;
    Ok(KeyId(inserted))
}

fn key_row(r: &Row) -> depot_sql::Result<ApiKey> {
    Ok(ApiKey {
        id: KeyId(r.get(0)?),
        business_id: BusinessId(r.get(1)?),
        prefix: r.get(2)?,
        label: r.get(3)?,
        created_at: parse_ts(&r.get::<String>(4)?)?,
        revoked_at: r
            .get::<Option<String>>(5)?
            .map(|s| parse_ts(&s))
            .transpose()?,
    })
}

pub fn key(conn: &Db, id: KeyId) -> Result<Option<ApiKey>> {
    maybe(conn.query_row(
        "SELECT id, business_id, prefix, label, created_at, revoked_at FROM api_keys WHERE id = ?1",
        params![id.0],
        key_row,
    ))
}

pub fn keys(conn: &Db, business: BusinessId) -> Result<Vec<ApiKey>> {
    let stmt = "SELECT id, business_id, prefix, label, created_at, revoked_at FROM api_keys WHERE business_id = ?1 ORDER BY id";
    let rows = conn.query_map(stmt, params![business.0], key_row)?;
    Ok(rows)
}

/// Marks a key revoked; answers whether it was live until now.
pub fn revoke_key(conn: &Db, id: KeyId, at: &Timestamp) -> Result<bool> {
    let n = conn.execute(
        "UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
        params![id.0, ts(at)],
    )?;
    Ok(n == 1)
}

/// The live key with this hash, as a caller.
pub fn caller_by_hash(conn: &Db, hash: &[u8]) -> Result<Option<Caller>> {
    maybe(conn.query_row(
        "SELECT id, business_id FROM api_keys WHERE hash = ?1 AND revoked_at IS NULL",
        params![hash],
        |r| {
            Ok(Caller {
                key_id: KeyId(r.get(0)?),
                business_id: BusinessId(r.get(1)?),
            })
        },
    ))
}
