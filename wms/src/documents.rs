//! Documents attached to orders, shipments and purchases. The record is in
//! the database; the bytes, under their SHA-256, are in the database too on
//! PostgreSQL (in the record's own transaction, so every instance of a
//! cloud reads them), and on disk beside an SQLite database (written and
//! synced before the record exists, so a record never points at nothing).

use crate::store::{self, documents as sql};
use crate::{Result, Wms, WmsError};
use depot_protocol::document::{
    ALLOWED_TYPES, Document, EntityType, MAX_DOCUMENT_BYTES, categories,
};
use depot_protocol::event::EventKind;
use depot_protocol::tenant::Caller;
use depot_protocol::validate::Check;
use depot_protocol::{BusinessId, FieldError, now};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

/// An upload as received.
#[derive(Debug, Clone)]
pub struct Upload {
    pub category: String,
    pub filename: String,
    pub content_type: String,
    pub description: Option<String>,
    pub bytes: Vec<u8>,
}

/// A document's name by content: its SHA-256 in hex.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

pub(crate) fn blob_path(dir: &Path, sha: &str) -> PathBuf {
    dir.join(&sha[..2]).join(sha)
}

/// Writes the bytes under their hash: to a temporary file, synced, then
/// renamed, so a crash leaves either the whole file or none.
fn store_blob(dir: &Path, sha: &str, bytes: &[u8]) -> std::io::Result<()> {
    let path = blob_path(dir, sha);
    if path.exists() {
        return Ok(());
    }
    let parent = path.parent().unwrap_or(dir);
    std::fs::create_dir_all(parent)?;
    let tmp = parent.join(format!(".{sha}.{}", uuid::Uuid::now_v7()));
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, &path)?;
    std::fs::File::open(parent)?.sync_all()
}

/// Checks a file against what it claims to be: a PDF must start as one, an
/// image must carry its magic bytes.
fn matches_type(content_type: &str, bytes: &[u8]) -> bool {
    match content_type {
        "application/pdf" => bytes.starts_with(b"%PDF-"),
        "image/png" => bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" => bytes.starts_with(&[0xFF, 0xD8, 0xFF]),
        "application/xml" | "text/xml" => {
            std::str::from_utf8(bytes).is_ok_and(|s| s.trim_start().starts_with('<'))
        }
        _ => false,
    }
}

impl Wms {
    fn documents_dir(&self) -> PathBuf {
        self.data_dir().join("documents")
    }

    pub async fn attach(
        &self,
        caller: Caller,
        entity: EntityType,
        entity_id: i64,
        u: Upload,
    ) -> Result<Document> {
        let mut c = Check::new();
        let category = c.code("category", &u.category, 64);
        let filename = c.text("filename", &u.filename, 200);
        let description = c.opt_text("description", u.description.as_deref(), 500);
        c.finish(()).map_err(WmsError::invalid)?;
        let cat = categories()
            .into_iter()
            .find(|k| k.code == category)
            .ok_or_else(|| {
                WmsError::invalid(vec![FieldError::new(
                    "category",
                    format!("unknown category {category}: see the categories route"),
                )])
            })?;
        if !cat.entity_types.contains(&entity) {
            return Err(WmsError::invalid(vec![FieldError::new(
                "category",
                format!("a {category} cannot be attached to a {}", entity.as_str()),
            )]));
        }
        let content_type = u
            .content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if !ALLOWED_TYPES.contains(&content_type.as_str()) {
            return Err(WmsError::invalid(vec![FieldError::new(
                "file",
                format!(
                    "content type {content_type:?} is not accepted; use {}",
                    ALLOWED_TYPES.join(", ")
                ),
            )]));
        }
        if u.bytes.is_empty() || u.bytes.len() > MAX_DOCUMENT_BYTES {
            return Err(WmsError::invalid(vec![FieldError::new(
                "file",
                format!("a document is 1 byte to {MAX_DOCUMENT_BYTES} bytes"),
            )]));
        }
        if !matches_type(&content_type, &u.bytes) {
            return Err(WmsError::invalid(vec![FieldError::new(
                "file",
                format!("the file is not a valid {content_type}"),
            )]));
        }
        let business = caller.business_id;
        if !self
            .read(move |conn| sql::entity_exists(conn, business, entity, entity_id))
            .await?
        {
            return Err(WmsError::NotFound(format!(
                "{} {entity_id} does not exist",
                entity.as_str()
            )));
        }
        let sha = sha256_hex(&u.bytes);
        let size = u.bytes.len() as i64;
        let in_database = self.inner.blobs_in_database;
        let bytes = if in_database {
            Some(u.bytes)
        } else {
            let (dir, sha_w, bytes) = (self.documents_dir(), sha.clone(), u.bytes);
            tokio::task::spawn_blocking(move || store_blob(&dir, &sha_w, &bytes))
                .await
                .map_err(|e| WmsError::Internal(format!("storing a document: {e}")))?
                .map_err(|e| WmsError::Internal(format!("storing a document: {e}")))?;
            None
        };
        let origin = self.origin().to_owned();
        self.write(move |conn| {
            // The entity is checked again inside the transaction that records
            // the document, so it cannot vanish in between.
            if !sql::entity_exists(conn, business, entity, entity_id)? {
                return Err(WmsError::NotFound(format!(
                    "{} {entity_id} does not exist",
                    entity.as_str()
                )));
            }
            let mut d = Document {
                id: 0,
                business_id: business,
                entity_type: entity,
                entity_id,
                category,
                filename,
                content_type,
                size,
                sha256: sha,
                description,
                uploaded_by: caller.actor(),
                created_at: now(),
            };
            if let Some(bytes) = &bytes {
                sql::put_blob(conn, &d.sha256, bytes)?;
            }
            d.id = sql::insert(conn, &d)?;
            store::events::append(
                conn,
                &origin,
                Some(business),
                EventKind::DocumentAttached,
                &d,
            )?;
            Ok(d)
        })
        .await
    }

    pub async fn documents(
        &self,
        business: BusinessId,
        entity: EntityType,
        entity_id: i64,
    ) -> Result<Vec<Document>> {
        self.read(move |conn| {
            if !sql::entity_exists(conn, business, entity, entity_id)? {
                return Err(WmsError::NotFound(format!(
                    "{} {entity_id} does not exist",
                    entity.as_str()
                )));
            }
            sql::list(conn, business, entity, entity_id)
        })
        .await
    }

    /// A document's record and bytes, checked against the stored hash.
    pub async fn document(
        &self,
        business: BusinessId,
        entity: EntityType,
        entity_id: i64,
        id: i64,
    ) -> Result<(Document, Vec<u8>)> {
        let d = self
            .read(move |conn| sql::document(conn, business, id))
            .await?
            .filter(|d| d.entity_type == entity && d.entity_id == entity_id)
            .ok_or_else(|| {
                WmsError::NotFound(format!(
                    "document {id} does not exist on this {}",
                    entity.as_str()
                ))
            })?;
        let bytes = if self.inner.blobs_in_database {
            let sha = d.sha256.clone();
            self.read(move |conn| sql::blob(conn, &sha))
                .await?
                .ok_or_else(|| WmsError::Internal(format!("document {id} has no bytes stored")))?
        } else {
            let path = blob_path(&self.documents_dir(), &d.sha256);
            tokio::task::spawn_blocking(move || std::fs::read(path))
                .await
                .map_err(|e| WmsError::Internal(format!("reading a document: {e}")))?
                .map_err(|e| WmsError::Internal(format!("reading document {id}: {e}")))?
        };
        if sha256_hex(&bytes) != d.sha256 {
            return Err(WmsError::Internal(format!(
                "document {id} does not match its SHA-256 as stored"
            )));
        }
        Ok((d, bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_checked_by_content() {
        assert!(matches_type("application/pdf", b"%PDF-1.4 ..."));
        assert!(!matches_type("application/pdf", b"<html>"));
        assert!(matches_type("image/png", b"\x89PNG\r\n\x1a\n...."));
        assert!(!matches_type("image/jpeg", b"\x89PNG"));
        assert!(matches_type(
            "application/xml",
            b"  <?xml version=\"1.0\"?><Invoice/>"
        ));
        assert!(!matches_type("text/html", b"<html>"));
    }

    #[test]
    fn blobs_are_written_whole_and_once() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let sha = hex::encode(Sha256::digest(b"abc"));
        store_blob(dir.path(), &sha, b"abc")?;
        store_blob(dir.path(), &sha, b"abc")?;
        assert_eq!(std::fs::read(blob_path(dir.path(), &sha))?, b"abc");
        let leftovers =
            std::fs::read_dir(blob_path(dir.path(), &sha).parent().unwrap_or(dir.path()))?.count();
        assert_eq!(leftovers, 1, "no temporary files left behind");
        Ok(())
    }
}
