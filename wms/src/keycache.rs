//! Authenticated keys, remembered. Every request names its key; looking the
//! hash up in SQLite meant a hop to a blocking read thread per request, which
//! cost more than many handlers. Entries are dropped as soon as the writer
//! commits any change to `api_keys` (an epoch it bumps after the commit), and
//! live at most [`TTL`] in any case, so a key revoked by another process on
//! the same database (the admin CLI) stops working within that time.

use depot_protocol::tenant::Caller;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::sync::watch;

pub const TTL: Duration = Duration::from_secs(2);
/// Only valid keys are kept, so the map grows with real keys, not with
/// guesses; past this it starts again empty.
const CAPACITY: usize = 10_000;

pub struct KeyCache {
    epoch: watch::Receiver<u64>,
    map: Mutex<HashMap<[u8; 32], (Caller, u64, Instant)>>,
}

impl KeyCache {
    /// `epoch` is bumped by the writer after each commit that touched keys.
    pub fn new(epoch: watch::Receiver<u64>) -> Self {
        Self {
            epoch,
            map: Mutex::new(HashMap::new()),
        }
    }

    /// The epoch to pass to [`KeyCache::put`]: read before the lookup, so a
    /// commit landing during the lookup makes its answer stale at once.
    pub fn epoch(&self) -> u64 {
        *self.epoch.borrow()
    }

    pub fn get(&self, hash: &[u8; 32]) -> Option<Caller> {
        let now = self.epoch();
        let map = self.map.lock().ok()?;
        let (caller, epoch, at) = map.get(hash)?;
        (*epoch == now && at.elapsed() < TTL).then_some(*caller)
    }

    pub fn put(&self, hash: [u8; 32], caller: Caller, epoch: u64) {
        if let Ok(mut map) = self.map.lock() {
            if map.len() >= CAPACITY {
                map.clear();
            }
            map.insert(hash, (caller, epoch, Instant::now()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use depot_protocol::{BusinessId, KeyId};

    fn caller() -> Caller {
        Caller {
            key_id: KeyId(7),
            business_id: BusinessId(3),
        }
    }

    #[test]
    fn a_commit_to_the_keys_forgets_every_entry() {
        let epoch = watch::Sender::new(0);
        let cache = KeyCache::new(epoch.subscribe());
        let e = cache.epoch();
        cache.put([1; 32], caller(), e);
        assert_eq!(cache.get(&[1; 32]).map(|c| c.key_id), Some(KeyId(7)));
        assert!(cache.get(&[2; 32]).is_none());
        epoch.send_modify(|n| *n += 1);
        assert!(cache.get(&[1; 32]).is_none());
    }

    #[test]
    fn an_answer_read_across_a_commit_is_never_served() {
        let epoch = watch::Sender::new(0);
        let cache = KeyCache::new(epoch.subscribe());
        let before = cache.epoch();
        // The key is revoked and committed while the lookup runs.
        epoch.send_modify(|n| *n += 1);
        cache.put([1; 32], caller(), before);
        assert!(cache.get(&[1; 32]).is_none());
    }
}
