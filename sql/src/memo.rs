//! Counts remembered for a while: what a list's `COUNT(*)` answered, so
//! that paging through a large result does not count every matching row
//! again on every page.
//!
//! One [`CountMemo`] is shared by the connections of one database (a
//! reader pool attaches it with [`crate::Db::share_counts`]). An answer is
//! reused for [`CountMemo::fresh_for`] at most, then counted again: a
//! bound on how stale a count can be, whichever node wrote since. Only
//! what is worth remembering is put in it (the store remembers counts past
//! a threshold and counts smaller ones exactly every time).

use crate::Value;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Statements remembered at most; past it the expired go, then all.
const CAPACITY: usize = 1024;

#[derive(Debug)]
pub struct CountMemo {
    fresh_for: Duration,
    entries: Mutex<HashMap<String, (i64, Instant)>>,
}

impl CountMemo {
    pub fn new(fresh_for: Duration) -> Self {
        Self {
            fresh_for,
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn key(sql: &str, args: &[Value]) -> String {
        format!("{sql}\u{0}{args:?}")
    }

    /// The count `sql` with `args` answered within the bound, if any.
    pub fn get(&self, sql: &str, args: &[Value]) -> Option<i64> {
        self.get_at(sql, args, Instant::now())
    }

    fn get_at(&self, sql: &str, args: &[Value], now: Instant) -> Option<i64> {
        let entries = self.entries.lock().ok()?;
        let (n, at) = entries.get(&Self::key(sql, args))?;
        (now.saturating_duration_since(*at) < self.fresh_for).then_some(*n)
    }

    /// Remembers what `sql` with `args` answered now.
    pub fn put(&self, sql: &str, args: &[Value], n: i64) {
        self.put_at(sql, args, n, Instant::now());
    }

    fn put_at(&self, sql: &str, args: &[Value], n: i64, now: Instant) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        if entries.len() >= CAPACITY {
            let fresh_for = self.fresh_for;
            entries.retain(|_, (_, at)| now.saturating_duration_since(*at) < fresh_for);
            if entries.len() >= CAPACITY {
                entries.clear();
            }
        }
        entries.insert(Self::key(sql, args), (n, now));
    }

    /// Statements remembered now, expired ones included.
    pub fn len(&self) -> usize {
        self.entries.lock().map(|e| e.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_reused_within_the_bound_and_not_after() {
        let memo = CountMemo::new(Duration::from_secs(2));
        let t0 = Instant::now();
        let args = [Value::Integer(1), Value::Text("confirmed".into())];
        memo.put_at("SELECT COUNT(*) x", &args, 20_000, t0);
        let later = |s| t0 + Duration::from_millis(s);
        assert_eq!(
            memo.get_at("SELECT COUNT(*) x", &args, later(1_999)),
            Some(20_000)
        );
        assert_eq!(memo.get_at("SELECT COUNT(*) x", &args, later(2_000)), None);
    }

    #[test]
    fn other_arguments_or_statements_are_other_counts() {
        let memo = CountMemo::new(Duration::from_secs(2));
        let t0 = Instant::now();
        memo.put_at("q", &[Value::Integer(1)], 5, t0);
        assert_eq!(memo.get_at("q", &[Value::Integer(2)], t0), None);
        assert_eq!(memo.get_at("q", &[Value::Text("1".into())], t0), None);
        assert_eq!(memo.get_at("r", &[Value::Integer(1)], t0), None);
        assert_eq!(memo.get_at("q", &[Value::Integer(1)], t0), Some(5));
    }

    #[test]
    fn it_stays_within_its_capacity() {
        let memo = CountMemo::new(Duration::from_secs(2));
        let t0 = Instant::now();
        for i in 0..CAPACITY as i64 * 3 {
            memo.put_at("q", &[Value::Integer(i)], i, t0);
            assert!(memo.len() <= CAPACITY);
        }
        // The newest is always kept.
        let last = CAPACITY as i64 * 3 - 1;
        assert_eq!(memo.get_at("q", &[Value::Integer(last)], t0), Some(last));
        // Expired entries go first when it is full.
        let memo = CountMemo::new(Duration::from_secs(2));
        for i in 0..CAPACITY as i64 - 1 {
            memo.put_at("old", &[Value::Integer(i)], i, t0);
        }
        memo.put_at("new", &[], 1, t0 + Duration::from_millis(1500));
        memo.put_at("newer", &[], 2, t0 + Duration::from_secs(3));
        assert_eq!(memo.len(), 2);
    }
}
