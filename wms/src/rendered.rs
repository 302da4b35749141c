//! Orders as the API writes them, kept by version: the order list answers
//! a page of orders that did not change with the JSON written when they
//! last did, instead of reading every column and line and writing it all
//! again on every read ("JSON written once").
//!
//! An order's row carries a version that a trigger moves on every change
//! to the row or its lines (migration 044), so a kept rendering is reused
//! only while the order is exactly as rendered, whichever path, node or
//! instance changed it. Each engine keeps its own; none is shared between
//! databases. The list's page asks only for ids and versions, which its
//! two main indexes hold (migration 048), and reads in full only the
//! orders not kept at their version.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Orders kept at most: a few pages of every busy business, a few
/// megabytes. Past it the kept are dropped and written again as read.
pub const CAPACITY: usize = 20_000;

#[derive(Debug, Default)]
pub struct Rendered {
    kept: Mutex<HashMap<i64, (i64, Arc<str>)>>,
}

impl Rendered {
    /// Order `id`'s JSON if it was written at `version`.
    pub fn get(&self, id: i64, version: i64) -> Option<Arc<str>> {
        let kept = self.kept.lock().ok()?;
        match kept.get(&id) {
            Some((v, json)) if *v == version => Some(json.clone()),
            _ => None,
        }
    }

    /// Keeps order `id`'s JSON as written at `version`.
    pub fn put(&self, id: i64, version: i64, json: Arc<str>) {
        let Ok(mut kept) = self.kept.lock() else {
            return;
        };
        if kept.len() >= CAPACITY && !kept.contains_key(&id) {
            kept.clear();
        }
        kept.insert(id, (version, json));
    }

    pub fn len(&self) -> usize {
        self.kept.lock().map(|k| k.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_version_written_is_given_back() {
        let r = Rendered::default();
        r.put(7, 3, "{\"id\":7}".into());
        assert_eq!(r.get(7, 3).as_deref(), Some("{\"id\":7}"));
        assert_eq!(r.get(7, 4), None);
        assert_eq!(r.get(8, 3), None);
        r.put(7, 4, "{\"id\":7,\"v\":4}".into());
        assert_eq!(r.get(7, 3), None);
        assert_eq!(r.get(7, 4).as_deref(), Some("{\"id\":7,\"v\":4}"));
    }

    #[test]
    fn it_stays_within_its_capacity() {
        let r = Rendered::default();
        for id in 0..CAPACITY as i64 * 2 + 5 {
            r.put(id, 0, "{}".into());
            assert!(r.len() <= CAPACITY);
        }
        assert!(r.get(CAPACITY as i64 * 2 + 4, 0).is_some());
    }
}
