//! The event catalogue: every event type a client can receive, by name,
//! with its version and the shape of its payload. It is the contract of
//! the live streams (`/v1/events/{b}/stream`), of outbound webhooks, and
//! of `docs/events.md` and the AsyncAPI document, which are generated
//! from it.
//!
//! Names are the event log's kinds: what a screen or a webhook receives is
//! the log entry itself, so the catalogue cannot promise an event the
//! engine does not write. A test drives a warehouse day and checks every
//! logged payload against its entry here.
//!
//! **Versions.** Adding a field keeps the version; a client ignores fields
//! it does not know. Removing or renaming a field, or changing what one
//! means, raises the version, and the frames say which version they carry.

pub mod asyncapi;
mod entries;
pub mod markdown;
pub mod refs;
pub mod schema;

pub use entries::CATALOGUE;

use crate::event::EventKind;
use std::borrow::Cow;
use utoipa::ToSchema;
use utoipa::openapi::{RefOr, Schema};

/// One event type.
#[derive(Debug, Clone, Copy)]
pub struct EventType {
    /// The log's kind: `family.name`.
    pub kind: EventKind,
    /// What sync does with it.
    pub replication: Replication,
    pub version: u32,
    /// One line: when it happens.
    pub summary: &'static str,
    /// Where it is written.
    pub source: Source,
    /// Who may receive it.
    pub audience: Audience,
    /// The records its payload names by id: what a node receiving it from
    /// another checks belong to the sender's business before applying it.
    pub refs: &'static [refs::Reference],
    pub payload: Payload,
}

/// Where an event is written (and, synced, read everywhere else).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Only an edge writes it (devices and stations live there).
    Edge,
    /// Only the cloud writes it.
    Cloud,
    /// Whichever node did the work.
    Any,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Edge => "edge",
            Self::Cloud => "cloud",
            Self::Any => "edge or cloud",
        }
    }
}

/// What sync does with an event of a kind, written on one node, on the
/// others. An edge sends every event it logs; the cloud refuses what an
/// edge may not write ([`edges_may_send`]) and handles the rest as this
/// says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replication {
    /// Sent to every node of its business (the cloud's and other edges'
    /// to an edge too) and applied where it arrives.
    Everywhere,
    /// Sent by edges to the cloud and applied there; no edge needs it (a
    /// printer's state sets its record in the cloud).
    ToCloud,
    /// Sent by edges to the cloud and logged there for the record, not
    /// applied: a document's bytes stay where they were uploaded, a
    /// conflict was another node's to resolve, scans and weights are the
    /// floor's history, and completed lines and waves came with the
    /// `pick.scanned` that completed them.
    Recorded,
    /// Stays on the node that wrote it (the cloud's CRM, pricing and edge
    /// presence): refused from another node.
    Local,
}

impl Replication {
    /// What it means, for the generated documents.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Everywhere => "sent to every node of the business and applied there",
            Self::ToCloud => "sent by edges to the cloud and applied there",
            Self::Recorded => "sent by edges to the cloud and kept there as a record",
            Self::Local => "stays where it is written",
        }
    }
}

/// Who may receive an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// The business's streams and webhooks.
    Business,
    /// Nodes only: it carries secrets or concerns no single business
    /// (API key hashes, release notes), so no stream or webhook sends it.
    Internal,
}

/// The payload: an API record as its routes answer it, or its own fields.
#[derive(Debug, Clone, Copy)]
pub enum Payload {
    /// The record, with the schema of the OpenAPI description, plus `extra`
    /// fields next to the record's own.
    Record {
        name: fn() -> Cow<'static, str>,
        schema: fn() -> RefOr<Schema>,
        /// The schemas the record's refers to.
        schemas: fn(&mut Vec<(String, RefOr<Schema>)>),
        extra: &'static [Field],
    },
    Fields(&'static [Field]),
}

/// A payload that is `T` as the API answers it, plus `extra` fields.
const fn record<T: ToSchema>(extra: &'static [Field]) -> Payload {
    Payload::Record {
        name: T::name,
        schema: T::schema,
        schemas: T::schemas,
        extra,
    }
}

/// A top-level payload field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub ty: Ty,
    pub presence: Presence,
    pub doc: &'static str,
}

/// A field's JSON type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    String,
    Integer,
    Boolean,
    Object,
    Array,
    /// RFC 3339, whole seconds, `Z`.
    Timestamp,
    /// `YYYY-MM-DD`.
    Date,
}

/// Whether a field is always there and whether it may be null.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    Required,
    /// Always there, sometimes null.
    Nullable,
    /// Absent from some events (older ones, or when it does not apply).
    Optional,
}

impl EventKind {
    /// Its entry.
    pub fn entry(self) -> &'static EventType {
        // In range and in order: checked as the crate compiles.
        &CATALOGUE[self as usize]
    }
}

impl EventType {
    /// The log's kind as stored and sent.
    pub const fn name(&self) -> &'static str {
        self.kind.as_str()
    }
}

/// The entry of a kind by its name; `None` for a kind this node does not
/// know.
pub fn lookup(name: &str) -> Option<&'static EventType> {
    EventKind::parse(name).map(EventKind::entry)
}

/// The kinds the cloud sends to an edge.
pub fn sent_to_edges() -> impl Iterator<Item = &'static str> {
    CATALOGUE
        .iter()
        .filter(|t| t.replication == Replication::Everywhere)
        .map(EventType::name)
}

/// The version of a kind's payload; kinds outside the catalogue (written
/// by a newer node) are version 1 of whatever they are.
pub fn version(name: &str) -> u32 {
    lookup(name).map_or(1, |t| t.version)
}

/// Whether an edge may send events of a kind: what the floor does.
/// Catalog, tenants, keys, orders, inbound orders and printers are the
/// cloud's to make, and the cloud refuses them from edges.
pub fn edges_may_send(name: &str) -> bool {
    lookup(name).is_some_and(|t| t.source != Source::Cloud)
}

/// The event types a business may receive.
pub fn public() -> impl Iterator<Item = &'static EventType> {
    CATALOGUE
        .iter()
        .filter(|t| t.audience == Audience::Business)
}

/// Whether a subscription pattern (`order.status_changed`, `order.*`)
/// names at least one event a business may receive.
pub fn pattern_is_known(pattern: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(family) => public().any(|t| t.name().starts_with(family)),
        None => public().any(|t| t.name() == pattern),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_an_edge_writes_the_cloud_takes() {
        for t in CATALOGUE {
            if t.source != Source::Cloud {
                assert_ne!(t.replication, Replication::Local, "{}", t.name());
            }
            // What an edge needs from elsewhere, the cloud sends.
            if t.replication == Replication::Everywhere {
                assert!(sent_to_edges().any(|n| n == t.name()));
            }
        }
        assert_eq!(
            lookup("pick.scanned").map(|t| t.kind),
            Some(EventKind::PickScanned)
        );
    }

    #[test]
    fn entries_are_documented() {
        for t in CATALOGUE {
            assert!(t.version >= 1, "{}", t.name());
            assert!(!t.summary.is_empty(), "{}", t.name());
            let fields = match t.payload {
                Payload::Record { extra, .. } => extra,
                Payload::Fields(f) => f,
            };
            for f in fields {
                assert!(!f.doc.is_empty(), "{}.{}", t.name(), f.name);
            }
            let mut names: Vec<_> = fields.iter().map(|f| f.name).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(
                names.len(),
                fields.len(),
                "{} names a field twice",
                t.name()
            );
        }
    }

    #[test]
    fn patterns() {
        assert!(pattern_is_known("order.status_changed"));
        assert!(pattern_is_known("order.*"));
        assert!(pattern_is_known("pick.*"));
        assert!(!pattern_is_known("order.shipped"));
        assert!(!pattern_is_known("nothing.*"));
        // Internal kinds are not subscribable.
        assert!(!pattern_is_known("key.created"));
        assert!(!pattern_is_known("key.*"));
        assert!(!pattern_is_known("release.published"));
    }

    #[test]
    fn versions() {
        assert_eq!(version("order.status_changed"), 1);
        assert_eq!(version("from.a_newer_node"), 1);
        assert!(lookup("wave.completed").is_some());
    }
}
