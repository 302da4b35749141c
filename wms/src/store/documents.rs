//! Document records, and their bytes where the database keeps them
//! (PostgreSQL; on SQLite they are files named by their SHA-256).

use super::{maybe, parse_ts, ts};
use crate::error::Result;
use depot_protocol::BusinessId;
use depot_protocol::document::{Document, EntityType};
use depot_sql::{Db, Row, params};

pub fn insert(conn: &Db, d: &Document) -> Result<i64> {
    let inserted: i64 = conn.query_value("INSERT INTO documents (business_id, entity_type, entity_id, category, filename, content_type, size, sha256,
                                description, actor, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) RETURNING id", params![
        d.business_id.0,
        d.entity_type.as_str(),
        d.entity_id,
        d.category,
        d.filename,
        d.content_type,
        d.size,
        d.sha256,
        d.description,
        d.uploaded_by,
        ts(&d.created_at)
    ])?;
    Ok(inserted)
}

const COLS: &str = "id, business_id, entity_type, entity_id, category, filename, content_type, size, sha256, description, actor, created_at";

fn row(r: &Row) -> depot_sql::Result<Document> {
    let et: String = r.get(2)?;
    Ok(Document {
        id: r.get(0)?,
        business_id: BusinessId(r.get(1)?),
        entity_type: EntityType::parse(&et).ok_or_else(|| {
            depot_sql::Error::conversion(2, format!("not a value this release knows: {et}"))
        })?,
        entity_id: r.get(3)?,
        category: r.get(4)?,
        filename: r.get(5)?,
        content_type: r.get(6)?,
        size: r.get(7)?,
        sha256: r.get(8)?,
        description: r.get(9)?,
        uploaded_by: r.get(10)?,
        created_at: parse_ts(&r.get::<String>(11)?)?,
    })
}

pub fn list(conn: &Db, business: BusinessId, entity: EntityType, id: i64) -> Result<Vec<Document>> {
    let stmt = &format!(
        "SELECT {COLS} FROM documents WHERE business_id = ?1 AND entity_type = ?2 AND entity_id = ?3 ORDER BY id"
    );
    let rows = conn.query_map(stmt, params![business.0, entity.as_str(), id], row)?;
    Ok(rows)
}

pub fn document(conn: &Db, business: BusinessId, id: i64) -> Result<Option<Document>> {
    maybe(conn.query_row(
        &format!("SELECT {COLS} FROM documents WHERE business_id = ?1 AND id = ?2"),
        params![business.0, id],
        row,
    ))
}

/// Whether the entity a document would attach to exists in the business.
pub fn entity_exists(conn: &Db, business: BusinessId, entity: EntityType, id: i64) -> Result<bool> {
    let table = match entity {
        EntityType::Order => "orders",
        EntityType::Shipment => "shipments",
        EntityType::Purchase => "inbound_orders",
    };
    Ok(maybe(conn.query_row(
        &format!("SELECT 1 FROM {table} WHERE business_id = ?1 AND id = ?2"),
        params![business.0, id],
        |_| Ok(()),
    ))?
    .is_some())
}

/// Keeps a document's bytes under their SHA-256 (once: the same bytes
/// attached twice are stored once).
pub fn put_blob(conn: &Db, sha256: &str, bytes: &[u8]) -> Result<()> {
    conn.execute(
        "INSERT INTO document_blobs (sha256, bytes) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
        params![sha256, bytes],
    )?;
    Ok(())
}

/// The bytes kept under `sha256`, if any.
pub fn blob(conn: &Db, sha256: &str) -> Result<Option<Vec<u8>>> {
    maybe(conn.query_value(
        "SELECT bytes FROM document_blobs WHERE sha256 = ?1",
        params![sha256],
    ))
}

/// The hashes of every document recorded, once each (for a copy into
/// PostgreSQL).
#[cfg(feature = "postgres")]
pub fn hashes(conn: &Db) -> Result<Vec<String>> {
    Ok(conn.query_map(
        "SELECT DISTINCT sha256 FROM documents ORDER BY sha256",
        params![],
        |r| r.get(0),
    )?)
}
