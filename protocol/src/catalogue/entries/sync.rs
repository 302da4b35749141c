//! The cloud's view of its edges and of what their sync refused.

use super::{BUSINESS, f};
use crate::catalogue::Audience::Business;
use crate::catalogue::Presence::{Nullable, Required};
use crate::catalogue::Replication;
use crate::catalogue::Source::{Any, Cloud};
use crate::catalogue::Ty::{Integer, String};
use crate::catalogue::{EventType, Payload};
use crate::event::EventKind;

pub const SYNC_CONFLICT: EventType = EventType {
    kind: EventKind::SyncConflict,
    replication: Replication::Recorded,
    version: 1,
    summary: "Applying another node's event clashed here: what, why, and what stands.",
    source: Any,
    audience: Business,
    refs: &[],
    payload: Payload::Fields(&[
        f("event_id", String, Required, "The other node's event."),
        f("origin", String, Required, "The node that wrote it."),
        f("kind", String, Required, "Its kind."),
        f("reason", String, Required, "Why it clashed."),
        f("resolution", String, Required, "What stands now."),
    ]),
};

pub const EDGE_ONLINE: EventType = EventType {
    kind: EventKind::EdgeOnline,
    replication: Replication::Local,
    version: 1,
    summary: "An edge connected to the cloud: a new run of it, or back after being away.",
    source: Cloud,
    audience: Business,
    refs: &[],
    payload: Payload::Fields(&[
        BUSINESS,
        f("edge_id", String, Required, "The edge, as registered."),
        f(
            "session",
            String,
            Nullable,
            "Its run: changes when the edge restarts.",
        ),
        f("version", String, Nullable, "The edge's software version."),
        f(
            "head",
            Integer,
            Nullable,
            "The newest event of its log, as it reported.",
        ),
    ]),
};

pub const EDGE_OFFLINE: EventType = EventType {
    kind: EventKind::EdgeOffline,
    replication: Replication::Local,
    version: 1,
    summary: "An edge's connection to the cloud ended: its goodbye, or its last will \
              when the connection dropped. The floor keeps working; its events follow \
              when it is back.",
    source: Cloud,
    audience: Business,
    refs: &[],
    payload: Payload::Fields(&[
        BUSINESS,
        f("edge_id", String, Required, "The edge."),
        f("session", String, Required, "The run that went."),
    ]),
};

pub const SYNC_BACKLOG: EventType = EventType {
    kind: EventKind::SyncBacklog,
    replication: Replication::Local,
    version: 1,
    summary: "An edge came back with events the cloud does not have yet (`backlog` \
              > 0), or has since sent them all (`backlog` 0). Once per backlog, \
              not per batch.",
    source: Cloud,
    audience: Business,
    refs: &[],
    payload: Payload::Fields(&[
        BUSINESS,
        f("edge_id", String, Required, "The edge."),
        f(
            "backlog",
            Integer,
            Required,
            "Its events not yet in the cloud.",
        ),
        f(
            "up_cursor",
            Integer,
            Required,
            "The last of its events the cloud applied.",
        ),
        f(
            "reported_head",
            Integer,
            Nullable,
            "The newest event of its log, as reported.",
        ),
    ]),
};
