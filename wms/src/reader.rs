//! Read connections: a small pool, used from blocking tasks so queries never
//! stall the async runtime. Readers see the last commit (WAL) and never wait
//! for the writer.

use crate::error::{Result, WmsError};
use crate::store;
use rusqlite::Connection;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

#[derive(Clone)]
pub struct Reader {
    path: Arc<PathBuf>,
    idle: Arc<Mutex<Vec<Connection>>>,
    keep: usize,
}

impl Reader {
    pub fn new(path: PathBuf, keep: usize) -> Self {
        Self {
            path: Arc::new(path),
            idle: Arc::new(Mutex::new(Vec::new())),
            keep,
        }
    }

    /// Runs `f` on a read connection.
    pub async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let this = self.clone();
        tokio::task::spawn_blocking(move || {
            let conn = match this.idle.lock().ok().and_then(|mut idle| idle.pop()) {
                Some(conn) => conn,
                None => store::open_reader(&this.path)?,
            };
            let result = f(&conn);
            if let Ok(mut idle) = this.idle.lock() {
                if idle.len() < this.keep {
                    idle.push(conn);
                }
            }
            result
        })
        .await
        .map_err(|e| WmsError::Internal(format!("read task failed: {e}")))?
    }
}
