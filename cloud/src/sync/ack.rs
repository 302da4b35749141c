//! Acknowledgements of batches, split when they would not fit a message.

use depot_protocol::sync::message::{MAX_MESSAGE_BYTES, encode};
use depot_protocol::sync::{DownMessage, Rejection};
use depot_wms::sync::Ack;

/// The acknowledgement of a batch as messages that each fit the limit: one,
/// unless the rejections are too many, in which case several, each through
/// its last rejected event and listing the rejections up to it, the last
/// one through `ack.through` with the gap flag.
pub(super) fn messages(session: &str, ack: Ack) -> Vec<DownMessage> {
    let whole = DownMessage::Ack {
        session: session.to_owned(),
        through_seq: ack.through,
        gap: ack.gap,
        rejected: ack.rejected,
        hello: false,
        hands_back: false,
    };
    if encode(&whole).len() <= MAX_MESSAGE_BYTES {
        return vec![whole];
    }
    let DownMessage::Ack { rejected, .. } = whole else {
        return vec![];
    };
    let envelope = encode(&DownMessage::Ack {
        session: session.to_owned(),
        through_seq: i64::MIN,
        gap: false,
        rejected: vec![],
        hello: false,
        hands_back: false,
    })
    .len();
    let budget = MAX_MESSAGE_BYTES.saturating_sub(envelope);
    let mut out = Vec::new();
    let mut chunk: Vec<Rejection> = Vec::new();
    let mut size = 0;
    let close = |chunk: Vec<Rejection>, through: i64, gap: bool| DownMessage::Ack {
        session: session.to_owned(),
        through_seq: through,
        gap,
        rejected: chunk,
        hello: false,
        hands_back: false,
    };
    let mut rejected = rejected;
    rejected.sort_by_key(|r| r.seq);
    for r in rejected {
        let n = encode(&r).len() + 1;
        if size + n > budget && !chunk.is_empty() {
            let through = chunk.last().map_or(ack.through, |r: &Rejection| r.seq);
            out.push(close(std::mem::take(&mut chunk), through, false));
            size = 0;
        }
        size += n;
        chunk.push(r);
    }
    out.push(close(chunk, ack.through, ack.gap));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use depot_protocol::EventId;

    fn rejection(seq: i64, reason_len: usize) -> Rejection {
        Rejection {
            seq,
            id: EventId::new(),
            reason: "r".repeat(reason_len),
        }
    }

    #[test]
    fn an_ack_that_fits_is_one_message() {
        let ack = Ack {
            through: 9,
            gap: true,
            rejected: vec![rejection(3, 10)],
        };
        let messages = messages("s", ack.clone());
        assert_eq!(
            messages,
            vec![DownMessage::Ack {
                session: "s".into(),
                through_seq: 9,
                gap: true,
                rejected: ack.rejected,
                hello: false,
                hands_back: false,
            }]
        );
    }

    #[test]
    fn too_many_rejections_split_into_acks_that_fit() {
        let rejected: Vec<Rejection> = (1..=400).map(|s| rejection(s, 2_000)).collect();
        let ack = Ack {
            through: 500,
            gap: true,
            rejected: rejected.clone(),
        };
        let messages = messages("s", ack);
        assert!(messages.len() > 1);
        let mut seen = Vec::new();
        let mut last_through = 0;
        for (i, m) in messages.iter().enumerate() {
            assert!(encode(m).len() <= MAX_MESSAGE_BYTES);
            let DownMessage::Ack {
                through_seq,
                gap,
                rejected,
                ..
            } = m
            else {
                panic!("an ack expected");
            };
            assert!(*through_seq > last_through);
            assert!(
                rejected
                    .iter()
                    .all(|r| r.seq <= *through_seq && r.seq > last_through)
            );
            assert_eq!(
                *gap,
                i == messages.len() - 1,
                "only the last one has the gap"
            );
            last_through = *through_seq;
            seen.extend(rejected.iter().map(|r| r.seq));
        }
        assert_eq!(last_through, 500);
        assert_eq!(seen, (1..=400).collect::<Vec<_>>());
    }
}
