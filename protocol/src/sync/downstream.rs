//! Cloud → edge. The cloud keeps, per connected edge, how far it has sent;
//! the edge keeps its cursor (the last rev applied) and accepts a page
//! `(from_rev, to_rev]` only if it leaves no hole. A page that would leave
//! one (a lost or reordered message) makes the edge say hello again with its
//! cursor, and the cloud starts over from there.

use super::message::Change;

/// The cloud's view of one edge's feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Feed {
    sent: i64,
}

impl Feed {
    /// The edge said hello with its cursor: serve from there.
    pub fn from_hello(cursor: i64) -> Self {
        Self { sent: cursor }
    }

    pub fn sent(&self) -> i64 {
        self.sent
    }

    /// The range of revs to read next, given the newest rev of the log:
    /// `(after, up_to]`.
    pub fn next(&self, head: i64) -> Option<(i64, i64)> {
        (head > self.sent).then_some((self.sent, head))
    }

    /// A page covering `(from, to]` was published.
    pub fn published(&mut self, to: i64) {
        self.sent = self.sent.max(to);
    }
}

/// What the edge does with a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageVerdict {
    /// Apply these changes (indices, in rev order) and move the cursor to
    /// `cursor` in the same transaction.
    Apply { apply: Vec<usize>, cursor: i64 },
    /// Already have all of it.
    Stale,
    /// The page starts after the cursor: ask again from the cursor.
    Gap,
}

pub fn plan_page(cursor: i64, from_rev: i64, to_rev: i64, changes: &[Change]) -> PageVerdict {
    if from_rev > cursor {
        return PageVerdict::Gap;
    }
    if to_rev <= cursor {
        return PageVerdict::Stale;
    }
    let mut apply: Vec<usize> = (0..changes.len())
        .filter(|&i| changes[i].rev > cursor && changes[i].rev <= to_rev)
        .collect();
    apply.sort_by_key(|&i| changes[i].rev);
    apply.dedup_by_key(|i| changes[*i].rev);
    PageVerdict::Apply {
        apply,
        cursor: to_rev,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EventId;

    fn changes(revs: &[i64]) -> Vec<Change> {
        revs.iter()
            .map(|&rev| Change {
                rev,
                id: EventId::new(),
                origin: "cloud".into(),
                business_id: None,
                kind: "k".into(),
                payload: serde_json::Value::Null,
                at: crate::now(),
            })
            .collect()
    }

    #[test]
    fn pages_apply_past_the_cursor_only() {
        let c = changes(&[3, 7, 9]);
        assert_eq!(
            plan_page(5, 2, 9, &c),
            PageVerdict::Apply {
                apply: vec![1, 2],
                cursor: 9
            }
        );
        assert_eq!(plan_page(9, 2, 9, &c), PageVerdict::Stale);
        assert_eq!(plan_page(1, 2, 9, &c), PageVerdict::Gap);
        // An empty page still moves the cursor (the edge saw nothing for it).
        assert_eq!(
            plan_page(9, 9, 20, &[]),
            PageVerdict::Apply {
                apply: vec![],
                cursor: 20
            }
        );
    }

    #[test]
    fn the_feed_serves_from_the_hello() {
        let mut f = Feed::from_hello(10);
        assert_eq!(f.next(10), None);
        assert_eq!(f.next(50), Some((10, 50)));
        f.published(30);
        assert_eq!(f.next(50), Some((30, 50)));
        f.published(20);
        assert_eq!(f.sent(), 30, "never moves back");
    }
}
