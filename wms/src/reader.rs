//! Read connections: a fixed pool, used from blocking tasks so queries never
//! stall the async runtime. Readers see the last commit (WAL) and never wait
//! for the writer. At most `size` reads run at once; the rest queue for a
//! connection instead of opening new ones, so prepared statements stay
//! cached and the CPU is not oversubscribed.

use crate::error::{Result, WmsError};
use crate::store;
use rusqlite::Connection;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::Semaphore;

#[derive(Clone)]
pub struct Reader {
    path: Arc<PathBuf>,
    idle: Arc<Mutex<Vec<Connection>>>,
    permits: Arc<Semaphore>,
}

impl Reader {
    pub fn new(path: PathBuf, size: usize) -> Self {
        Self {
            path: Arc::new(path),
            idle: Arc::new(Mutex::new(Vec::with_capacity(size))),
            permits: Arc::new(Semaphore::new(size.max(1))),
        }
    }

    /// Runs `f` on a read connection.
    pub async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| WmsError::Internal("the read pool is closed".into()))?;
        let this = self.clone();
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let conn = match this.idle.lock().ok().and_then(|mut idle| idle.pop()) {
                Some(conn) => conn,
                None => store::open_reader(&this.path)?,
            };
            let result = f(&conn);
            if let Ok(mut idle) = this.idle.lock() {
                idle.push(conn);
            }
            result
        })
        .await
        .map_err(|e| WmsError::Internal(format!("read task failed: {e}")))?
    }
}
