//! What the link's state answers: the steps the shell carries out, in
//! order ([`Do`]), what the box's status says ([`Status`]) and what goes in
//! the log ([`Notice`]).

use super::PendingAck;
use crate::sync::message::{Change, RecoveredEvent, Rejection, UpMessage};

/// What the box's status says of the link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Connected,
    /// The broker cannot be reached, and why.
    Down(String),
    /// Connected, but something stands in the way of sync (`None`: not any
    /// more).
    Trouble(Option<String>),
}

/// Something for the log, said when the machine decides it, not at every
/// repetition.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    Connected {
        acked: i64,
    },
    /// The broker went away while connected.
    LostBroker(String),
    /// The broker cannot be reached (said when the reason changes).
    Unreachable(String),
    CloudOnline(String),
    NoAnswer,
    AnswersAgain,
    Trouble(String),
    /// A refusal from a cloud after another one served this box.
    ForeignRefusal(String),
    Malformed(String),
    /// Taking events back cannot end: the cloud does not hand them back.
    Stalled {
        cloud_cursor: i64,
    },
    /// The cloud holds nothing the log lacks.
    Whole {
        cloud_cursor: i64,
    },
    Rejected(Rejection),
    Rewound {
        acknowledged: i64,
        cloud_has: i64,
    },
    Reset(String),
    /// A page of own events not taken: not recovering, or asked for by an
    /// earlier run of this box (`session`).
    PageIgnored {
        after: i64,
        session: Option<String>,
    },
}

/// What the shell must do, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Do {
    /// Subscribe to the down topic and the cloud's state: before the
    /// hello, so its answer cannot be missed.
    Subscribe,
    /// Publish the box's retained `online` ([`LinkState::online`](super::LinkState::online)).
    SayOnline,
    /// Read the [`HelloFacts`](super::HelloFacts) and hand them to [`LinkState::hello`](super::LinkState::hello).
    Hello,
    /// Publish on the up topic.
    Up(UpMessage),
    /// Record the link's state on the box's status.
    Record(Status),
    Say(Notice),
    /// Ask the log whether the cloud's cursor covers what it lacks
    /// (recording that it does), and hand the answer to
    /// [`LinkState::recovery_checked`](super::LinkState::recovery_checked).
    CheckRecovery(PendingAck),
    /// Keep the cloud's rejections as conflicts, where the station that
    /// made them sees them.
    RecordRejections(Vec<Rejection>),
    /// The cloud has everything through `through`.
    Prune {
        through: i64,
    },
    /// The cloud has less than it acknowledged: persist `to`, so a restart
    /// before the resend is acknowledged still starts from there.
    Rewind {
        to: i64,
    },
    /// Apply a page of the cloud's changes; a page that would leave a hole
    /// goes to [`LinkState::page_gap`](super::LinkState::page_gap).
    Apply {
        from_rev: i64,
        to_rev: i64,
        changes: Vec<Change>,
        more: bool,
    },
    /// Take back a page of this node's own events; the outcome goes to
    /// [`LinkState::took_back`](super::LinkState::took_back).
    TakeBack {
        after: i64,
        through: i64,
        events: Vec<RecoveredEvent>,
        more: bool,
    },
    /// Start the cloud's changes over from 0, then
    /// [`LinkState::cursor_reset`](super::LinkState::cursor_reset).
    ResetCursor,
    /// Read the head of the outbox and hand it to [`LinkState::pump`](super::LinkState::pump).
    Pump,
    /// Publish the events `from..=to` of the outbox, in batches.
    Send {
        from: i64,
        to: i64,
    },
}
