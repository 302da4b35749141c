//! The cloud's receiving side for one edge: which events of a batch to
//! apply, given the cursor (the last seq applied), and what to answer.
//! Batches may arrive twice, late, or out of order; an event is applied
//! only as the next one, so each is applied exactly once and in order.

use super::message::SyncEvent;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Indices into the batch of the events to apply, in seq order.
    pub apply: Vec<usize>,
    /// The cursor after applying them.
    pub through: i64,
    /// An event beyond `through + 1` was seen: the edge must send again
    /// from `through + 1`.
    pub gap: bool,
}

/// Plans a batch against the cursor.
pub fn plan(cursor: i64, events: &[SyncEvent]) -> Plan {
    let mut order: Vec<usize> = (0..events.len()).collect();
    order.sort_by_key(|&i| events[i].seq);
    let mut through = cursor;
    let mut apply = Vec::new();
    let mut gap = false;
    for i in order {
        let seq = events[i].seq;
        if seq <= through {
            continue;
        }
        if seq == through + 1 {
            apply.push(i);
            through = seq;
        } else {
            gap = true;
            break;
        }
    }
    Plan {
        apply,
        through,
        gap,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EventId;

    fn events(seqs: &[i64]) -> Vec<SyncEvent> {
        seqs.iter()
            .map(|&seq| SyncEvent {
                seq,
                id: EventId::new(),
                kind: "k".into(),
                payload: serde_json::value::RawValue::NULL.to_owned(),
                at: crate::now(),
            })
            .collect()
    }

    fn seqs_of(batch: &[SyncEvent], plan: &Plan) -> Vec<i64> {
        plan.apply.iter().map(|&i| batch[i].seq).collect()
    }

    #[test]
    fn the_next_events_are_applied() {
        let b = events(&[4, 5, 6]);
        let p = plan(3, &b);
        assert_eq!(
            (seqs_of(&b, &p), p.through, p.gap),
            (vec![4, 5, 6], 6, false)
        );
    }

    #[test]
    fn duplicates_are_skipped() {
        let b = events(&[2, 3, 4, 5]);
        let p = plan(3, &b);
        assert_eq!((seqs_of(&b, &p), p.through, p.gap), (vec![4, 5], 5, false));
        let p = plan(9, &b);
        assert_eq!((seqs_of(&b, &p), p.through, p.gap), (vec![], 9, false));
    }

    #[test]
    fn a_hole_stops_the_batch_and_asks_again() {
        let b = events(&[4, 5, 7, 8]);
        let p = plan(3, &b);
        assert_eq!((seqs_of(&b, &p), p.through, p.gap), (vec![4, 5], 5, true));
        let p = plan(1, &b);
        assert_eq!((seqs_of(&b, &p), p.through, p.gap), (vec![], 1, true));
    }

    #[test]
    fn order_within_a_batch_does_not_matter() {
        let b = events(&[6, 4, 5]);
        let p = plan(3, &b);
        assert_eq!((seqs_of(&b, &p), p.through), (vec![4, 5, 6], 6));
    }
}
