//! The sync protocol between edges and the cloud, as pure state: topic
//! names, wire messages, and the bookkeeping of each side. Nothing here
//! touches a socket or a database; the I/O layers feed these machines what
//! arrived and the time, and carry out what they answer (the rumqtt way:
//! "methods just modify the state").
//!
//! Up (edge → cloud): the edge's own events in `seq` order, in batches. The
//! cloud applies an event only when it is the next one (`seq == cursor + 1`),
//! skips what it already has, and acknowledges at application level; the
//! edge prunes only what was acknowledged and, after any reconnect or a
//! reported gap, sends again from the last acknowledgement. A cloud that
//! answers a hello with less than it once acknowledged (restored from an
//! older backup) moves the acknowledgement back, and the rest goes again.
//!
//! Down (cloud → edge): pages of changes `(from_rev, to_rev]` of the cloud's
//! log; the edge applies a page that starts at or before its cursor and
//! asks again (hello) when a page would leave a hole. A cursor past the
//! cloud's log is answered with `reset`: the edge starts over from 0, and
//! what it already has is skipped by event id.
//!
//! Around them: [`link::LinkState`], the edge's hellos, recovery, silence
//! and refusals, and [`hello::answer`], the cloud's answer to a hello. The
//! simulator (`sim.rs`) drives both over a link that loses, repeats and
//! reorders messages, with restores on either side.

pub mod downstream;
pub mod hello;
pub mod inbox;
pub mod link;
pub mod message;
pub mod outbox;
#[cfg(test)]
mod sim;
pub mod topic;

pub use message::{DownMessage, Hello, Rejection, StateMessage, SyncEvent, UpMessage};
pub use topic::{Channel, EdgeId, EdgeTopic};
