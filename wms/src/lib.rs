//! The warehouse engine both sides run: catalog, stock ledger, orders and
//! tenants on SQLite, every write through one group-committing writer and
//! logged as an event in the same transaction. `http` serves it under `/v1`.

pub mod carriers;
pub mod catalog;
pub mod documents;
pub mod error;
pub mod http;
pub mod inbound;
pub mod keycache;
pub mod ledger;
pub mod orders;
pub mod packing;
pub mod picking;
pub mod printing;
pub mod reader;
pub mod releases;
pub mod render;
pub mod replica;
pub mod scan;
pub mod shipping;
pub mod store;
pub mod sync;
pub mod tenants;
pub mod writer;

pub use error::{Result, WmsError};

use reader::Reader;
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use writer::Writer;

/// Read connections: enough to keep every core busy while some reads wait
/// on I/O, few enough that each keeps its prepared statements warm.
const READERS: usize = 8;

/// A handle on the engine; cheap to clone, shared by every request.
#[derive(Clone)]
pub struct Wms {
    inner: Arc<Inner>,
}

struct Inner {
    writer: Writer,
    keys: keycache::KeyCache,
    reader: Reader,
    origin: String,
    path: PathBuf,
}

impl Wms {
    /// Opens (creating and migrating if needed) the cloud's database at
    /// `path`: node 0. `origin` names it in movements and events.
    pub fn open(path: &Path, origin: &str) -> Result<Self> {
        Self::open_node(path, origin, 0)
    }

    /// Opens the database of node `node` (an edge's number; 0 is the
    /// cloud). A database keeps the node it was first opened as.
    pub fn open_node(path: &Path, origin: &str, node: u32) -> Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| WmsError::Internal(format!("cannot create {}: {e}", dir.display())))?;
        }
        let conn = store::open_writer(path)?;
        store::ids::claim(&conn, node, origin)?;
        let writer = Writer::start(conn)
            .map_err(|e| WmsError::Internal(format!("cannot start the writer: {e}")))?;
        Ok(Self {
            inner: Arc::new(Inner {
                keys: keycache::KeyCache::new(writer.key_epoch()),
                writer,
                reader: Reader::new(path.to_owned(), READERS),
                origin: origin.to_owned(),
                path: path.to_owned(),
            }),
        })
    }

    pub fn origin(&self) -> &str {
        &self.inner.origin
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    pub fn writer_stats(&self) -> &writer::WriterStats {
        self.inner.writer.stats()
    }

    /// Runs `f` in the writer's transaction; answers after the commit.
    pub async fn write<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        self.inner.writer.write(f).await
    }

    /// Runs `f` on a read connection.
    pub async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        self.inner.reader.read(f).await
    }

    /// Events of the local log after `after_seq`.
    pub async fn events_since(
        &self,
        after_seq: i64,
        limit: u32,
    ) -> Result<Vec<depot_protocol::event::Event>> {
        self.read(move |c| store::events::since(c, after_seq, limit))
            .await
    }

    /// Stock levels that disagree with their ledger or with open orders'
    /// reservations. Empty when the books are right.
    pub async fn check_ledger(&self) -> Result<Vec<store::ledger::Inconsistency>> {
        self.read(store::ledger::inconsistencies).await
    }
}
