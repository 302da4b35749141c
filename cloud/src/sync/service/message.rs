//! What arrives from the broker, decoded once: a batch to apply with the
//! others of its group, a hello, an edge's state, or something the cloud
//! does not read (said why).

use depot_protocol::sync::message::{Hello, decode};
use depot_protocol::sync::topic::{CLOUD_STATE, Channel, EdgeTopic};
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
