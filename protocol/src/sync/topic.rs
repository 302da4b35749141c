//! MQTT topic names.
//!
//! | topic | direction |
//! |---|---|
//! | `depot/v1/{b}/edge/{e}/up` | edge → cloud |
//! | `depot/v1/{b}/edge/{e}/down` | cloud → edge |
//! | `depot/v1/{b}/edge/{e}/state` | edge, retained, with a last will |
//! | `depot/v1/cloud/state` | cloud, retained |

use crate::BusinessId;
use serde::{Deserialize, Serialize};
use std::fmt;

pub const ROOT: &str = "depot/v1";
pub const CLOUD_STATE: &str = "depot/v1/cloud/state";

/// An edge's id: safe inside a topic level (no `/`, `+`, `#`, no spaces).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct EdgeId(String);

impl EdgeId {
    pub const MAX_LEN: usize = 64;

    pub fn parse(s: &str) -> Result<Self, TopicError> {
        let ok = !s.is_empty()
            && s.len() <= Self::MAX_LEN
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if ok {
            Ok(Self(s.to_owned()))
        } else {
            Err(TopicError::EdgeId(s.to_owned()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for EdgeId {
    type Error = TopicError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::parse(&s)
    }
}

impl From<EdgeId> for String {
    fn from(e: EdgeId) -> Self {
        e.0
    }
}

impl fmt::Display for EdgeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Channel {
    Up,
    Down,
    State,
}

impl Channel {
    fn as_str(self) -> &'static str {
        match self {
            Self::Up => "up",
            Self::Down => "down",
            Self::State => "state",
        }
    }
}

/// A parsed edge topic.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EdgeTopic {
    pub business: BusinessId,
    pub edge: EdgeId,
    pub channel: Channel,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopicError {
    #[error("edge id {0:?} must be 1 to 64 letters, digits, '-' or '_'")]
    EdgeId(String),
    #[error("topic {0:?} is not a depot edge topic")]
    Shape(String),
    #[error("topic {0:?} names no valid business id")]
    Business(String),
}

impl EdgeTopic {
    pub fn new(business: BusinessId, edge: EdgeId, channel: Channel) -> Self {
        Self {
            business,
            edge,
            channel,
        }
    }

    pub fn parse(topic: &str) -> Result<Self, TopicError> {
        let shape = || TopicError::Shape(topic.to_owned());
        let rest = topic
            .strip_prefix(ROOT)
            .and_then(|r| r.strip_prefix('/'))
            .ok_or_else(shape)?;
        let parts: Vec<&str> = rest.split('/').collect();
        let [b, "edge", e, channel] = parts.as_slice() else {
            return Err(shape());
        };
        // Canonical decimal only: one business has one topic.
        let business = Some(*b)
            .filter(|b| {
                !b.is_empty() && !b.starts_with('0') && b.bytes().all(|c| c.is_ascii_digit())
            })
            .and_then(|b| b.parse::<i32>().ok())
            .ok_or_else(|| TopicError::Business(topic.to_owned()))?;
        let channel = match *channel {
            "up" => Channel::Up,
            "down" => Channel::Down,
            "state" => Channel::State,
            _ => return Err(shape()),
        };
        Ok(Self {
            business: BusinessId(i64::from(business)),
            edge: EdgeId::parse(e)?,
            channel,
        })
    }
}

impl fmt::Display for EdgeTopic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{ROOT}/{}/edge/{}/{}",
            self.business,
            self.edge,
            self.channel.as_str()
        )
    }
}

/// What every cloud instance subscribes to: the up topics of all edges,
/// shared across instances (MQTT 5 shared subscription) when a group is set.
pub fn up_filter(share_group: Option<&str>) -> String {
    let filter = format!("{ROOT}/+/edge/+/up");
    match share_group {
        Some(g) => format!("$share/{g}/{filter}"),
        None => filter,
    }
}

/// Edge state topics, for the cloud's view of who is online.
pub fn state_filter() -> String {
    format!("{ROOT}/+/edge/+/state")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(s: &str) -> EdgeId {
        EdgeId::parse(s).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn topics_round_trip() {
        for channel in [Channel::Up, Channel::Down, Channel::State] {
            let t = EdgeTopic::new(BusinessId(7), edge("mad-1"), channel);
            assert_eq!(EdgeTopic::parse(&t.to_string()), Ok(t));
        }
        assert_eq!(
            EdgeTopic::new(BusinessId(7), edge("mad-1"), Channel::Up).to_string(),
            "depot/v1/7/edge/mad-1/up"
        );
    }

    #[test]
    fn bad_topics_are_named() {
        for bad in [
            "depot/v1/7/edge/mad-1",
            "depot/v1/7/edge/mad-1/up/x",
            "depot/v2/7/edge/mad-1/up",
            "depot/v1/7/edges/mad-1/up",
            "depot/v1/7/edge/mad-1/sideways",
            "",
        ] {
            assert!(
                matches!(EdgeTopic::parse(bad), Err(TopicError::Shape(_))),
                "{bad}"
            );
        }
        for bad in [
            "depot/v1/x/edge/e/up",
            "depot/v1/0/edge/e/up",
            "depot/v1/-3/edge/e/up",
            "depot/v1/07/edge/e/up",
            "depot/v1/99999999999/edge/e/up",
        ] {
            assert!(
                matches!(EdgeTopic::parse(bad), Err(TopicError::Business(_))),
                "{bad}"
            );
        }
        for bad in [
            "depot/v1/7/edge/+/up",
            "depot/v1/7/edge/a b/up",
            "depot/v1/7/edge//up",
        ] {
            assert!(
                matches!(EdgeTopic::parse(bad), Err(TopicError::EdgeId(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn edge_ids() {
        assert!(EdgeId::parse(&"a".repeat(64)).is_ok());
        assert!(EdgeId::parse(&"a".repeat(65)).is_err());
        assert!(EdgeId::parse("#").is_err());
        assert!(serde_json::from_str::<EdgeId>("\"ok_1\"").is_ok());
        assert!(serde_json::from_str::<EdgeId>("\"not/ok\"").is_err());
    }

    #[test]
    fn filters() {
        assert_eq!(up_filter(None), "depot/v1/+/edge/+/up");
        assert_eq!(
            up_filter(Some("cloud")),
            "$share/cloud/depot/v1/+/edge/+/up"
        );
        assert_eq!(state_filter(), "depot/v1/+/edge/+/state");
    }
}
