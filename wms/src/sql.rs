//! What crates built on the engine (the cloud's office, `depot-office`)
//! share with its store, for their own tables in the same database and
//! their own writes in the engine's transactions: the event log, written
//! inside a write as every engine write does, and the conventions of the
//! columns (timestamps as RFC 3339 text, JSON as text, paged lists).

pub use crate::store::catalog::item;
pub use crate::store::events::{
    append as append_event, append_numbered as append_event_numbered, head as events_head,
    since as events_since,
};
pub use crate::store::{
    COUNTS_FRESH_FOR, EXACT_COUNT, Key, ListQuery, Order, maybe, parse_json, parse_ts, ts,
};
