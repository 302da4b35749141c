//! The messages on the sync topics (JSON).

use crate::EventId;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The largest message either side publishes. The embedded broker and the
/// clients are configured above it; a larger incoming message is refused.
pub const MAX_MESSAGE_BYTES: usize = 256 * 1024;

/// An event of the edge's log, as it travels up.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SyncEvent {
    /// Position in the edge's log: contiguous from 1.
    pub seq: i64,
    pub id: EventId,
    pub kind: String,
    /// The JSON object as the edge logged it: sent as read from the log and
    /// stored as received, parsed only into the shape applying it needs. A
    /// tree of it, built and written out again on both sides, cost a
    /// backlog's drain more than the broker did.
    pub payload: Box<RawValue>,
    pub at: DateTime<Utc>,
}

// By the payload's text: that is what travels and what is logged.
impl PartialEq for SyncEvent {
    fn eq(&self, other: &Self) -> bool {
        self.seq == other.seq
            && self.id == other.id
            && self.kind == other.kind
            && self.payload.get() == other.payload.get()
            && self.at == other.at
    }
}

/// A change of the cloud's log, as it travels down.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// Position in the cloud's log: increasing, with holes (an edge sees
    /// only what concerns it).
    pub rev: i64,
    pub id: EventId,
    /// Where the change was made.
    pub origin: String,
    /// The business it belongs to; none for what concerns every business
    /// (a release).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub business_id: Option<crate::BusinessId>,
    pub kind: String,
    pub payload: serde_json::Value,
    pub at: DateTime<Utc>,
}

/// A change of the cloud's log, as an edge applied it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Landmark {
    pub rev: i64,
    pub id: EventId,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", try_from = "UpWire")]
pub enum UpMessage {
    /// First message of every connection, and said again every few
    /// seconds.
    Hello(Hello),
    Batch {
        session: String,
        events: Vec<SyncEvent>,
    },
}

/// What an edge says in a hello: where it stands, so the cloud can serve
/// it from there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// Changes a fresh connection has: stale acks from an earlier
    /// session are told apart by it.
    pub session: String,
    pub version: String,
    /// The last cloud rev the edge applied.
    pub cursor: i64,
    /// The newest event of the edge's own log (its `seq`): with the
    /// cloud's cursor, how much is still to come up. Optional so that
    /// peers of either age parse each other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<i64>,
    /// The last change the edge applied, by rev and id: a cloud whose
    /// log holds another change at that rev (restored from an older
    /// backup and grown again past the cursor) answers with `reset`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<Landmark>,
    /// The edge's own log is certain only through this seq: it was
    /// restored from a backup, or started empty, and the cloud may have
    /// applied later events of it. The cloud answers with those events
    /// ([`DownMessage::Recovered`]), one page per hello, and the edge
    /// sends nothing of its own until it has them. Absent once the log
    /// is known whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recover_after: Option<i64>,
    /// The node number the edge runs as, which its records' ids carry:
    /// a cloud that registered the edge as another node answers with
    /// [`DownMessage::Refused`], and the edge sends nothing of its own
    /// until a hello is served, so ids of two boxes never collide in
    /// the cloud. Absent from older edges' hellos.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<u32>,
}

/// An [`UpMessage`] as read: every variant's fields in one struct. Serde
/// reads an internally tagged enum by first copying the whole message into
/// a tree of its own, which cost a batch as much as parsing it, and which
/// cannot hand a payload over as raw JSON.
#[derive(Deserialize)]
struct UpWire {
    #[serde(rename = "type")]
    tag: UpTag,
    session: String,
    version: Option<String>,
    cursor: Option<i64>,
    head: Option<i64>,
    last: Option<Landmark>,
    recover_after: Option<i64>,
    node: Option<u32>,
    events: Option<Vec<SyncEvent>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum UpTag {
    Hello,
    Batch,
}

impl TryFrom<UpWire> for UpMessage {
    type Error = String;

    fn try_from(w: UpWire) -> Result<Self, String> {
        let missing = |field: &str| format!("missing field `{field}`");
        Ok(match w.tag {
            UpTag::Hello => UpMessage::Hello(Hello {
                session: w.session,
                version: w.version.ok_or_else(|| missing("version"))?,
                cursor: w.cursor.ok_or_else(|| missing("cursor"))?,
                head: w.head,
                last: w.last,
                recover_after: w.recover_after,
                node: w.node,
            }),
            UpTag::Batch => UpMessage::Batch {
                session: w.session,
                events: w.events.ok_or_else(|| missing("events"))?,
            },
        })
    }
}

/// Why the cloud refused an event; the edge keeps it as a conflict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rejection {
    pub seq: i64,
    pub id: EventId,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DownMessage {
    /// Everything through `through_seq` is applied (or rejected, listed)
    /// and durable in the cloud. `gap` says the cloud is missing the event
    /// after it: send again from there.
    Ack {
        session: String,
        through_seq: i64,
        gap: bool,
        rejected: Vec<Rejection>,
        /// This acknowledgement answers a hello: `through_seq` is the
        /// cloud's cursor as it stands, not news about a batch. An edge that
        /// holds a higher acknowledgement (a cloud restored from an older
        /// backup) sends again from here. Absent from older clouds' acks.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        hello: bool,
        /// Set on a hello's acknowledgement by a cloud that answers
        /// `recover_after` (hands an edge back its own events, before this
        /// acknowledgement). An edge taking its events back from a cloud
        /// that does not set it would wait for ever: it says why instead.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        hands_back: bool,
    },
    /// Changes `(from_rev, to_rev]`; `more` when a replay continues.
    Changes {
        from_rev: i64,
        to_rev: i64,
        changes: Vec<Change>,
        more: bool,
    },
    /// The cloud cannot serve from the edge's cursor: reload.
    Reset { reason: String },
    /// The cloud does not serve this edge at all: it is not registered in
    /// the business of its topic, or it is registered as another node than
    /// the edge runs as. The answer to each of its hellos, so the box can
    /// say why nothing syncs instead of waiting in silence; once
    /// registered, the next hello is acknowledged as usual. Older edges log
    /// it as a message they cannot read and go on waiting.
    Refused { reason: String },
    /// The edge's own events `(after, …]` that the cloud applied, for an
    /// edge whose log lost them (`recover_after` in its hello). `through`
    /// is the cloud's cursor for the edge: where the edge's numbering
    /// continues. `more` when another page follows; the last page may hold
    /// fewer events than `through - after` when the cloud applied some
    /// before it kept their seqs.
    Recovered {
        after: i64,
        through: i64,
        events: Vec<RecoveredEvent>,
        more: bool,
        /// The session of the hello it answers: an edge takes back only
        /// pages meant for its own run, not one an earlier run of the box
        /// (before a restore) asked for. Absent from older clouds' pages.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
    },
}

/// One of the edge's own events as the cloud hands it back. The payload is
/// a tree, not raw text as going up: serde reads an internally tagged enum
/// through a buffer that cannot hand raw JSON over, and recovery is rare
/// enough not to need the fast path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecoveredEvent {
    pub seq: i64,
    pub id: EventId,
    pub kind: String,
    pub payload: serde_json::Value,
    pub at: DateTime<Utc>,
}

impl From<SyncEvent> for RecoveredEvent {
    fn from(e: SyncEvent) -> Self {
        Self {
            seq: e.seq,
            id: e.id,
            kind: e.kind,
            // The text came in as checked JSON and was stored as such.
            payload: serde_json::from_str(e.payload.get()).unwrap_or_default(),
            at: e.at,
        }
    }
}

/// The page of [`DownMessage::Recovered`] answering the hello of
/// `session` that fits in a message: the
/// events of `events` from the first on, as many as fit. `more` is set when
/// some were left out or `more_after` says the log holds more.
pub fn recovered_page(
    session: &str,
    after: i64,
    through: i64,
    events: Vec<SyncEvent>,
    more_after: bool,
) -> DownMessage {
    let session = Some(session.to_owned());
    let envelope = encode(&DownMessage::Recovered {
        after,
        through,
        events: vec![],
        more: true,
        session: session.clone(),
    })
    .len();
    let budget = MAX_MESSAGE_BYTES - envelope;
    let total = events.len();
    let mut size = 0;
    let mut page = Vec::new();
    for e in events {
        let e = RecoveredEvent::from(e);
        let n = encode(&e).len() + 1;
        // Each event came up in a batch of this same limit, so one always
        // fits; the check only stops a page from growing past it.
        if size + n > budget && !page.is_empty() {
            break;
        }
        size += n;
        page.push(e);
    }
    let more = more_after || page.len() < total;
    DownMessage::Recovered {
        after,
        through,
        events: page,
        more,
        session,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StateMessage {
    Online {
        version: String,
        session: String,
        /// The newest event of the edge's log when it came online (edges
        /// only; optional so that peers of either age parse each other).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        head: Option<i64>,
    },
    Offline {
        session: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("message of {0} bytes is over the limit of {MAX_MESSAGE_BYTES}")]
    TooLarge(usize),
    #[error("malformed message: {0}")]
    Malformed(String),
}

/// Decodes a message, refusing oversized payloads before parsing them.
pub fn decode<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, DecodeError> {
    if bytes.len() > MAX_MESSAGE_BYTES {
        return Err(DecodeError::TooLarge(bytes.len()));
    }
    serde_json::from_slice(bytes).map_err(|e| DecodeError::Malformed(e.to_string()))
}

pub fn encode<T: Serialize>(message: &T) -> Vec<u8> {
    // Serializing these types cannot fail: no maps with non-string keys, no
    // custom serializers that error.
    serde_json::to_vec(message).unwrap_or_default()
}

/// The kind of the stand-in sent for an event too large to travel: the
/// receiver records it as rejected and the queue moves on.
pub const OVERSIZED_KIND: &str = "sync.oversized";

/// Splits events into batches whose encoded size stays under the limit.
/// An event too large to travel is replaced by a small stand-in with its
/// seq and id (so the receiver sees no hole and rejects it), and returned
/// so the caller can record it as a conflict locally.
pub fn batches(session: &str, events: Vec<SyncEvent>) -> (Vec<UpMessage>, Vec<SyncEvent>) {
    let envelope = encode(&UpMessage::Batch {
        session: session.to_owned(),
        events: vec![],
    })
    .len();
    let budget = MAX_MESSAGE_BYTES - envelope;
    let mut out = Vec::new();
    let mut oversized = Vec::new();
    let mut current: Vec<SyncEvent> = Vec::new();
    let mut size = 0;
    for e in events {
        let n = encode(&e).len() + 1;
        let (e, n) = if n > budget {
            let payload = serde_json::json!({"kind": e.kind, "bytes": n});
            let stand_in = SyncEvent {
                seq: e.seq,
                id: e.id,
                kind: OVERSIZED_KIND.into(),
                // A map of a string and a number always serializes; null
                // would still be rejected by its kind.
                payload: serde_json::value::to_raw_value(&payload)
                    .unwrap_or_else(|_| RawValue::NULL.to_owned()),
                at: e.at,
            };
            oversized.push(e);
            let n = encode(&stand_in).len() + 1;
            (stand_in, n)
        } else {
            (e, n)
        };
        if size + n > budget && !current.is_empty() {
            out.push(UpMessage::Batch {
                session: session.to_owned(),
                events: std::mem::take(&mut current),
            });
            size = 0;
        }
        size += n;
        current.push(e);
    }
    if !current.is_empty() {
        out.push(UpMessage::Batch {
            session: session.to_owned(),
            events: current,
        });
    }
    (out, oversized)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(seq: i64, payload_len: usize) -> SyncEvent {
        let payload = serde_json::json!({"note": "x".repeat(payload_len)});
        SyncEvent {
            seq,
            id: EventId::new(),
            kind: "stock.moved".into(),
            payload: serde_json::value::to_raw_value(&payload).unwrap_or_else(|e| panic!("{e}")),
            at: crate::now(),
        }
    }

    #[test]
    fn messages_are_tagged_json() {
        let m = DownMessage::Ack {
            session: "s".into(),
            through_seq: 4,
            gap: false,
            rejected: vec![],
            hello: false,
            hands_back: false,
        };
        let json = String::from_utf8(encode(&m)).unwrap_or_default();
        assert!(json.starts_with(r#"{"type":"ack""#), "{json}");
        assert_eq!(decode::<DownMessage>(json.as_bytes()), Ok(m));
        assert!(matches!(
            decode::<UpMessage>(b"{\"type\":\"nope\"}"),
            Err(DecodeError::Malformed(_))
        ));
        assert!(matches!(
            decode::<UpMessage>(&vec![b' '; MAX_MESSAGE_BYTES + 1]),
            Err(DecodeError::TooLarge(_))
        ));
    }

    #[test]
    fn new_fields_are_optional_both_ways() {
        // What an older edge or cloud sends still parses…
        let hello: UpMessage =
            decode(br#"{"type":"hello","session":"s","version":"0.1.0","cursor":3}"#)
                .unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(
            hello,
            UpMessage::Hello(Hello {
                head: None,
                node: None,
                ..
            })
        ));
        let ack: DownMessage =
            decode(br#"{"type":"ack","session":"s","through_seq":2,"gap":false,"rejected":[]}"#)
                .unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(
            ack,
            DownMessage::Ack {
                hello: false,
                hands_back: false,
                ..
            }
        ));
        let online: StateMessage = decode(br#"{"type":"online","version":"0.1.0","session":"s"}"#)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(online, StateMessage::Online { head: None, .. }));
        // …and what a newer one sends carries the fields, which an older
        // reader (no `deny_unknown_fields`) skips.
        let hello = UpMessage::Hello(Hello {
            session: "s".into(),
            version: "v".into(),
            cursor: 3,
            head: Some(9),
            last: None,
            recover_after: Some(4),
            node: Some(2),
        });
        let json = String::from_utf8(encode(&hello)).unwrap_or_default();
        assert!(json.contains(r#""head":9"#), "{json}");
        assert!(json.contains(r#""node":2"#), "{json}");
        assert!(json.contains(r#""recover_after":4"#), "{json}");
        assert_eq!(decode::<UpMessage>(json.as_bytes()), Ok(hello));
        let ack = DownMessage::Ack {
            session: "s".into(),
            through_seq: 2,
            gap: false,
            rejected: vec![],
            hello: true,
            hands_back: true,
        };
        let json = String::from_utf8(encode(&ack)).unwrap_or_default();
        assert!(json.contains(r#""hands_back":true"#), "{json}");
        assert_eq!(decode::<DownMessage>(json.as_bytes()), Ok(ack));
    }

    #[test]
    fn a_batch_reads_in_any_field_order_with_its_payloads_verbatim() {
        let id = EventId::new();
        let payload = r#"{"z":1,"a":[2.50,{"b":null}],"s":"\u00e9"}"#;
        let json = format!(
            r#"{{"events":[{{"at":"2024-05-01T10:00:00Z","payload":{payload},"kind":"stock.moved","id":"{id}","seq":7}}],"session":"s","type":"batch","later":true}}"#
        );
        let Ok(UpMessage::Batch { session, events }) = decode::<UpMessage>(json.as_bytes()) else {
            panic!("a batch expected from {json}")
        };
        assert_eq!(session, "s");
        let [e] = events.as_slice() else {
            panic!("one event expected")
        };
        assert_eq!((e.seq, e.id, e.kind.as_str()), (7, id, "stock.moved"));
        // Not reordered, not reformatted: the text the edge logged.
        assert_eq!(e.payload.get(), payload);
        let again = encode(&UpMessage::Batch {
            session,
            events: events.clone(),
        });
        assert_eq!(
            decode::<UpMessage>(&again),
            Ok(UpMessage::Batch {
                session: "s".into(),
                events
            })
        );
        assert!(String::from_utf8_lossy(&again).contains(payload));
        for bad in [
            r#"{"type":"hello","session":"s","cursor":1}"#,
            r#"{"type":"batch","session":"s"}"#,
            r#"{"type":"batch","events":[]}"#,
        ] {
            assert!(
                matches!(
                    decode::<UpMessage>(bad.as_bytes()),
                    Err(DecodeError::Malformed(_))
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn batches_fit_and_keep_order() {
        let events: Vec<SyncEvent> = (1..=300).map(|s| event(s, 2_000)).collect();
        let (batches, oversized) = batches("s", events);
        assert!(oversized.is_empty());
        assert!(batches.len() > 1);
        let mut seqs = Vec::new();
        for b in &batches {
            assert!(encode(b).len() <= MAX_MESSAGE_BYTES);
            if let UpMessage::Batch { events, .. } = b {
                seqs.extend(events.iter().map(|e| e.seq));
            }
        }
        assert_eq!(seqs, (1..=300).collect::<Vec<_>>());
    }

    #[test]
    fn an_event_too_large_to_travel_is_replaced_by_a_stand_in() {
        let (batches, oversized) = batches(
            "s",
            vec![event(1, 10), event(2, MAX_MESSAGE_BYTES), event(3, 10)],
        );
        assert_eq!(oversized.iter().map(|e| e.seq).collect::<Vec<_>>(), [2]);
        let [UpMessage::Batch { events, .. }] = batches.as_slice() else {
            panic!("one batch expected")
        };
        let kinds: Vec<(i64, &str)> = events.iter().map(|e| (e.seq, e.kind.as_str())).collect();
        assert_eq!(
            kinds,
            [(1, "stock.moved"), (2, OVERSIZED_KIND), (3, "stock.moved")]
        );
    }

    #[test]
    fn a_recovered_page_fits_and_says_whether_more_follows() {
        let events: Vec<SyncEvent> = (11..=300).map(|s| event(s, 2_000)).collect();
        let page = recovered_page("s", 10, 300, events.clone(), false);
        assert!(encode(&page).len() <= MAX_MESSAGE_BYTES);
        let DownMessage::Recovered {
            after,
            through,
            events: taken,
            more,
            session,
        } = &page
        else {
            panic!("a recovered page expected")
        };
        assert_eq!((*after, *through, *more), (10, 300, true));
        assert_eq!(
            session.as_deref(),
            Some("s"),
            "it names the hello it answers"
        );
        assert!(!taken.is_empty() && taken.len() < events.len());
        assert_eq!(taken.first().map(|e| e.seq), Some(11));
        assert!(
            decode::<DownMessage>(&encode(&page)).as_ref() == Ok(&page),
            "a recovered page reads back as written"
        );

        let few: Vec<SyncEvent> = (11..=13).map(|s| event(s, 10)).collect();
        for (more_after, more) in [(false, false), (true, true)] {
            let page = recovered_page("s", 10, 20, few.clone(), more_after);
            assert!(
                matches!(&page, DownMessage::Recovered { events, more: m, .. } if events.len() == 3 && *m == more),
                "{page:?}"
            );
        }
        let empty = recovered_page("s", 10, 20, vec![], false);
        assert!(
            matches!(empty, DownMessage::Recovered { events, more: false, .. } if events.is_empty())
        );
    }
}
