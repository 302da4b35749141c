//! What arrives from the broker, decoded once: a batch to apply with the
//! others of its group, a hello, an edge's state, or something the cloud
//! does not read (said why).

use depot_protocol::BusinessId;
use depot_protocol::sync::message::{Hello, decode};
use depot_protocol::sync::topic::{CLOUD_STATE, Channel, EdgeId, EdgeTopic};
use depot_protocol::sync::{StateMessage, SyncEvent, UpMessage};
use rumqttc::Publish;

/// A batch from an edge, decoded, waiting to be applied with the others of
/// its group.
pub(super) struct Pending {
    pub topic: EdgeTopic,
    pub session: String,
    pub events: Vec<SyncEvent>,
}

/// A message from the broker, decoded once: a batch waits to be applied
/// with the others of its group; anything else is handled in its turn.
pub(super) enum Decoded {
    Batch(Pending),
    Other(Message),
}

/// A message that is not a batch.
pub(super) enum Message {
    Hello(EdgeTopic, Hello),
    State(EdgeTopic, StateMessage),
    /// The cloud's own retained state, as an instance of it (this one or
    /// another sharing the edges) set it.
    CloudState(StateMessage),
    /// A retained state being cleared.
    Cleared,
    /// What the cloud does not read: logged, and acknowledged to the broker
    /// all the same (it would only come again).
    Ignored {
        topic: String,
        reason: String,
    },
}

impl Pending {
    /// The edge that sent it.
    pub(super) fn edge(&self) -> (BusinessId, &EdgeId) {
        (self.topic.business, &self.topic.edge)
    }
}

impl Message {
    /// Whether batches of `edges` (waiting, or queued and not yet
    /// answered) must be applied before this is handled: when one of them
    /// is its edge's, or it is not an edge's at all.
    pub(super) fn waits_for<'a>(
        &self,
        mut edges: impl Iterator<Item = (BusinessId, &'a EdgeId)>,
    ) -> bool {
        let topic = match self {
            Message::Hello(topic, _) | Message::State(topic, _) => topic,
            Message::CloudState(_) | Message::Cleared | Message::Ignored { .. } => return true,
        };
        edges.any(|(business, edge)| business == topic.business && *edge == topic.edge)
    }
}

impl Decoded {
    pub(super) fn decode(publish: &Publish) -> Self {
        let ignored = |reason: String| {
            Decoded::Other(Message::Ignored {
                topic: publish.topic.clone(),
                reason,
            })
        };
        if publish.topic == CLOUD_STATE {
            if publish.payload.is_empty() {
                return Decoded::Other(Message::Cleared);
            }
            return match decode::<StateMessage>(&publish.payload) {
                Ok(state) => Decoded::Other(Message::CloudState(state)),
                Err(e) => ignored(e.to_string()),
            };
        }
        let topic = match EdgeTopic::parse(&publish.topic) {
            Ok(topic) => topic,
            Err(e) => return ignored(e.to_string()),
        };
        match topic.channel {
            Channel::Up => match decode::<UpMessage>(&publish.payload) {
                Ok(UpMessage::Batch { session, events }) => Decoded::Batch(Pending {
                    topic,
                    session,
                    events,
                }),
                Ok(UpMessage::Hello(hello)) => Decoded::Other(Message::Hello(topic, hello)),
                Err(e) => ignored(e.to_string()),
            },
            Channel::State if publish.payload.is_empty() => Decoded::Other(Message::Cleared),
            Channel::State => match decode::<StateMessage>(&publish.payload) {
                Ok(state) => Decoded::Other(Message::State(topic, state)),
                Err(e) => ignored(e.to_string()),
            },
            Channel::Down => ignored("the cloud does not read down topics".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topic(business: i64, edge: &str, channel: Channel) -> EdgeTopic {
        EdgeTopic::new(
            BusinessId(business),
            EdgeId::parse(edge).expect("edge id"),
            channel,
        )
    }

    fn batch(business: i64, edge: &str) -> Pending {
        Pending {
            topic: topic(business, edge, Channel::Up),
            session: "s".into(),
            events: Vec::new(),
        }
    }

    fn offline(business: i64, edge: &str) -> Message {
        Message::State(
            topic(business, edge, Channel::State),
            StateMessage::Offline {
                session: "s".into(),
            },
        )
    }

    #[test]
    fn only_an_edges_own_batches_are_applied_before_its_messages() {
        let batches = [batch(1, "dock-a"), batch(2, "dock-b")];
        let waiting = || batches.iter().map(Pending::edge);
        assert!(offline(1, "dock-a").waits_for(waiting()));
        assert!(offline(2, "dock-b").waits_for(waiting()));
        // The same edge name in another business is another edge.
        assert!(!offline(2, "dock-a").waits_for(waiting()));
        assert!(!offline(1, "dock-c").waits_for(waiting()));
        assert!(!offline(1, "dock-a").waits_for(std::iter::empty()));
        // What is no edge's sees everything before it applied.
        assert!(Message::Cleared.waits_for(waiting()));
        assert!(
            Message::CloudState(StateMessage::Offline {
                session: "s".into()
            })
            .waits_for(waiting())
        );
    }
}
