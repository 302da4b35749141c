//! The cloud's answer to an edge's hello, as a decision: the shell reads
//! what the database knows of the edge ([`Facts`]) and carries out the
//! [`Answer`]. A hello is refused when it cannot be answered or the edge is
//! not served here, reset when the edge's cursor is not in this log, and
//! otherwise served: its own events handed back if its log lacks them, an
//! acknowledgement with the cursor here as it stands, then pages from its
//! cursor.

use super::message::{DownMessage, Hello};
use super::topic::EdgeId;
use crate::BusinessId;

impl Hello {
    /// What makes a hello impossible to answer: positions in a log are
    /// never negative, and the change an edge applied last is at or before
    /// its cursor. (A cursor past the cloud's head is possible: the
    /// cloud's database was restored from an older backup; that is answered
    /// with `reset`.)
    pub fn malformed(&self) -> Option<String> {
        let cursor = self.cursor;
        if cursor < 0 {
            return Some(format!("the hello's cursor {cursor} is below 0"));
        }
        if let Some(head) = self.head.filter(|h| *h < 0) {
            return Some(format!("the hello's head {head} is below 0"));
        }
        if let Some(after) = self.recover_after.filter(|a| *a < 0) {
            return Some(format!("the hello's recover_after {after} is below 0"));
        }
        if let Some(last) = self.last.filter(|l| l.rev < 0 || l.rev > cursor) {
            return Some(format!(
                "the hello's last change (rev {}) is not within its cursor 0..={cursor}",
                last.rev
            ));
        }
        None
    }
}

/// The edge as the cloud registered it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registration {
    pub node: u32,
    /// The last of the edge's own events applied here.
    pub up_cursor: i64,
}

/// What the cloud's database says, read for one hello.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    /// `None`: the edge is not registered in the business of its topic.
    pub registered: Option<Registration>,
    /// Whether the log holds the change the edge applied last, at its rev;
    /// `None` when the hello names none or it could not be read.
    pub holds_last: Option<bool>,
    /// The newest rev of the log, when it could be read.
    pub head: Option<i64>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Not served here: say why, and nothing else.
    Refuse(String),
    /// Served, but the edge's log is not this log: it must reload.
    Reset {
        reason: String,
        /// Its own events the edge may take back after this seq.
        taking_back_after: Option<i64>,
    },
    Serve {
        /// Hand the edge back its own events `(after, through]` first.
        hand_back: Option<(i64, i64)>,
        /// The acknowledgement with the cursor here as it stands: an edge
        /// that acknowledged further (this database restored from an older
        /// backup) sends again from it.
        ack: DownMessage,
        /// Page the log down from this rev.
        feed_from: i64,
    },
}

/// Decides the answer to a well-formed hello from `edge` of `business`.
pub fn answer(business: BusinessId, edge: &EdgeId, hello: &Hello, facts: Facts) -> Answer {
    let Some(record) = facts.registered else {
        return Answer::Refuse(format!(
            "edge {edge} is not registered in business {business}: register it in the cloud (depot-cloud edge register --business {business} --edge {edge}) or correct business_id and edge_id in this box's settings"
        ));
    };
    if let Some(node) = hello.node.filter(|n| *n != record.node) {
        return Answer::Refuse(format!(
            "this box runs as node {node}, but edge {edge} is registered in business {business} as node {}: its records' ids would collide with another box's. Set node = {} in its settings, on a new data directory (a database keeps the node it was made with)",
            record.node, record.node
        ));
    }
    // Taking back only if there is any to take.
    let taking_back_after = hello
        .recover_after
        .filter(|after| *after < record.up_cursor);
    let cursor = hello.cursor;
    let past = facts
        .head
        .filter(|head| cursor > *head)
        .map(|head| format!("the edge's cursor {cursor} is past the cloud's log (at {head})"));
    let stranger = match (hello.last, facts.holds_last) {
        (Some(last), Some(false)) => Some(format!(
            "the change the edge applied last ({} at rev {}) is not in the cloud's log there",
            last.id, last.rev
        )),
        _ => None,
    };
    if let Some(reason) = past.or(stranger) {
        return Answer::Reset {
            reason,
            taking_back_after,
        };
    }
    Answer::Serve {
        hand_back: taking_back_after.map(|after| (after.max(0), record.up_cursor)),
        ack: DownMessage::Ack {
            session: hello.session.clone(),
            through_seq: record.up_cursor,
            gap: false,
            rejected: vec![],
            hello: true,
            hands_back: true,
        },
        feed_from: cursor.max(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EventId;
    use crate::sync::message::Landmark;

    fn hello(cursor: i64) -> Hello {
        Hello {
            session: "s".into(),
            version: "1".into(),
            cursor,
            head: Some(3),
            last: None,
            recover_after: None,
            node: Some(2),
        }
    }

    fn facts(up_cursor: i64, head: i64) -> Facts {
        Facts {
            registered: Some(Registration { node: 2, up_cursor }),
            holds_last: None,
            head: Some(head),
        }
    }

    fn edge() -> EdgeId {
        EdgeId::parse("box-1").expect("edge id")
    }

    #[test]
    fn a_hello_from_a_registered_edge_is_served_from_its_cursor() {
        let a = answer(BusinessId(1), &edge(), &hello(5), facts(7, 9));
        let Answer::Serve {
            hand_back,
            ack,
            feed_from,
        } = a
        else {
            panic!("{a:?}")
        };
        assert_eq!((hand_back, feed_from), (None, 5));
        assert!(matches!(
            ack,
            DownMessage::Ack {
                through_seq: 7,
                hello: true,
                hands_back: true,
                ..
            }
        ));
    }

    #[test]
    fn strangers_and_other_nodes_are_refused_saying_what_to_do() {
        let none = Facts {
            registered: None,
            ..facts(0, 0)
        };
        let Answer::Refuse(why) = answer(BusinessId(4), &edge(), &hello(0), none) else {
            panic!()
        };
        assert!(
            why.contains("depot-cloud edge register --business 4 --edge box-1"),
            "{why}"
        );
        let other = Hello {
            node: Some(3),
            ..hello(0)
        };
        let Answer::Refuse(why) = answer(BusinessId(4), &edge(), &other, facts(0, 0)) else {
            panic!()
        };
        assert!(why.contains("Set node = 2"), "{why}");
        // An older edge says no node: served.
        let older = Hello {
            node: None,
            ..hello(0)
        };
        assert!(matches!(
            answer(BusinessId(4), &edge(), &older, facts(0, 0)),
            Answer::Serve { .. }
        ));
    }

    #[test]
    fn a_cursor_not_in_this_log_is_reset() {
        let a = answer(BusinessId(1), &edge(), &hello(10), facts(0, 9));
        assert!(
            matches!(a, Answer::Reset { ref reason, .. } if reason.contains("past the cloud's log")),
            "{a:?}"
        );
        let last = Landmark {
            rev: 4,
            id: EventId::new(),
        };
        let mut f = facts(0, 9);
        f.holds_last = Some(false);
        let h = Hello {
            last: Some(last),
            ..hello(4)
        };
        assert!(matches!(
            answer(BusinessId(1), &edge(), &h, f),
            Answer::Reset { .. }
        ));
        // Could not be read: not taken for a stranger.
        f.holds_last = None;
        assert!(matches!(
            answer(BusinessId(1), &edge(), &h, f),
            Answer::Serve { .. }
        ));
    }

    #[test]
    fn own_events_go_back_only_when_the_cloud_has_more() {
        let h = Hello {
            recover_after: Some(3),
            ..hello(0)
        };
        let served = |up| match answer(BusinessId(1), &edge(), &h, facts(up, 0)) {
            Answer::Serve { hand_back, .. } => hand_back,
            other => panic!("{other:?}"),
        };
        assert_eq!(served(8), Some((3, 8)));
        assert_eq!(served(3), None);
    }

    #[test]
    fn malformed_hellos_say_what_is_wrong() {
        assert!(
            hello(-1)
                .malformed()
                .is_some_and(|m| m.contains("cursor -1"))
        );
        let h = Hello {
            last: Some(Landmark {
                rev: 6,
                id: EventId::new(),
            }),
            ..hello(5)
        };
        assert!(h.malformed().is_some_and(|m| m.contains("rev 6")));
        assert_eq!(hello(5).malformed(), None);
    }
}
