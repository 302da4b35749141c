//! The edge's side of a link to the cloud, as state: when to say hello,
//! whether the box's log must first take its own events back, when the
//! cloud's silence or a refusal is trouble worth showing, and what an
//! acknowledgement moves. The shell feeds it what happened (a connect, a
//! message, a tick, the answer to a question it asked the database) with
//! the time, and carries out the [`Do`]s it answers, in order (the rumqtt
//! way: "methods just modify the state"). The [`Outbox`] inside decides
//! which events go; this machine decides everything around it.
//!
//! Each message is decoded here, once.

mod answer;
#[cfg(test)]
mod tests;

pub use answer::{Do, Notice, Status};

use super::message::{self, DownMessage, Hello, Landmark, Rejection, StateMessage, UpMessage};
use super::outbox::{AckIn, Action, Outbox};
use super::topic::CLOUD_STATE;
use std::time::{Duration, Instant};

/// How long a hello may go unanswered before it is said again.
pub const HELLO_RETRY: Duration = Duration::from_secs(2);

/// A hello at least this often while connected. The cloud drops the feed of
/// an edge it sees go offline; the broker may deliver an old connection's
/// last will after the new connection's hello, so a feed can end while the
/// edge is online. A periodic hello (cheap: a replay from the cursor that
/// is usually empty) heals that and anything else that loses a feed.
pub const HELLO_EVERY: Duration = Duration::from_secs(10);

/// The three topics of one edge, as the broker names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topics {
    pub up: String,
    pub down: String,
    pub state: String,
}

/// What the box is, said in its hello and its state.
#[derive(Debug, Clone)]
pub struct Identity {
    pub topics: Topics,
    /// One session per run of the daemon, in hello, `online` and the last
    /// will alike: the cloud ends a feed when the `offline` it sees names
    /// the session the feed was opened for.
    pub session: String,
    pub version: String,
    /// The node number this box runs as.
    pub node: u32,
}

/// What the database says when a hello is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HelloFacts {
    /// The last change of the cloud's log applied here.
    pub cursor: i64,
    /// The newest event of this node's log, when it could be read.
    pub head: Option<i64>,
    pub last: Option<Landmark>,
    /// The log lacks what the cloud may have after this seq (a restore, a
    /// new box): set until the cloud says it holds nothing more.
    pub recover_after: Option<i64>,
}

/// An acknowledgement waiting on the database's answer to whether the log
/// is whole ([`Do::CheckRecovery`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PendingAck {
    pub session: String,
    pub through: i64,
    pub gap: bool,
    pub hello: bool,
    pub hands_back: bool,
    pub rejected: Vec<Rejection>,
}

/// A page of this node's own events, handed back, as the database took it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TakenBack {
    /// The log turned out whole: nothing was to be taken back.
    NotNeeded,
    /// The page was already taken (a repeat): nothing to do.
    Stale,
    /// The page does not follow what was taken: a page was lost.
    Lost,
    /// Taken; more pages follow.
    More,
    /// Taken, and the log is whole again through `through`.
    Done { through: i64 },
}

#[derive(Debug, Clone)]
pub struct LinkState {
    me: Identity,
    outbox: Outbox,
    /// The cloud's own session, from its retained state: a new one means a
    /// restarted cloud that has forgotten this edge's feed.
    cloud_session: Option<String>,
    /// When the last hello went out, until the cloud answers anything: a
    /// hello can be lost (the cloud not yet subscribed, a dropped link).
    awaiting_answer: Option<Instant>,
    last_hello: Instant,
    /// Since when hellos on this connection have gone unanswered.
    unanswered_since: Option<Instant>,
    /// How long the cloud may stay silent before the box says so.
    silence_limit: Duration,
    /// The log may lack events the cloud has (a restore, a new box): none
    /// of this node's own go up until the cloud has answered, and those it
    /// has come back first. Until the first hello says otherwise.
    recovering: bool,
    /// Said once per run rather than at every hello.
    stall_said: bool,
    foreign_refusal_said: bool,
    /// Why the last attempt to reach the broker failed.
    last_failure: Option<String>,
    /// The trouble the status shows.
    trouble: Option<String>,
}

impl LinkState {
    /// `acked`: what the cloud acknowledged before (kept on disk). The
    /// cloud's silence is trouble after two resend periods.
    pub fn new(
        me: Identity,
        acked: i64,
        window: i64,
        resend_after: Duration,
        now: Instant,
    ) -> Self {
        Self {
            me,
            outbox: Outbox::new(acked, window, resend_after, now),
            cloud_session: None,
            awaiting_answer: None,
            last_hello: now,
            unanswered_since: None,
            silence_limit: resend_after * 2,
            recovering: true,
            stall_said: false,
            foreign_refusal_said: false,
            last_failure: None,
            trouble: None,
        }
    }

    pub fn topics(&self) -> &Topics {
        &self.me.topics
    }

    pub fn is_connected(&self) -> bool {
        self.outbox.is_connected()
    }

    pub fn is_recovering(&self) -> bool {
        self.recovering
    }

    pub fn outbox(&self) -> &Outbox {
        &self.outbox
    }

    /// The box's retained state once connected, given the head of its log.
    pub fn online(&self, head: Option<i64>) -> StateMessage {
        StateMessage::Online {
            version: self.me.version.clone(),
            session: self.me.session.clone(),
            head,
        }
    }

    /// The box's state when it goes: also its last will.
    pub fn offline(&self) -> StateMessage {
        StateMessage::Offline {
            session: self.me.session.clone(),
        }
    }

    /// The broker accepted the connection: everything unacknowledged goes
    /// again, after a hello.
    pub fn connected(&mut self, now: Instant) -> Vec<Do> {
        self.outbox.connected(self.me.session.clone(), now);
        self.unanswered_since = None;
        self.last_failure = None;
        self.trouble = None;
        vec![
            Do::Subscribe,
            Do::SayOnline,
            Do::Hello,
            Do::Record(Status::Connected),
            Do::Say(Notice::Connected {
                acked: self.outbox.acked(),
            }),
        ]
    }

    /// The connection is gone, or could not be made: recorded once per
    /// reason, not at every retry of a broker that stays away.
    pub fn disconnected(&mut self, reason: String) -> Vec<Do> {
        let notice = if self.outbox.is_connected() {
            self.outbox.disconnected();
            Notice::LostBroker(reason.clone())
        } else if self.last_failure.as_deref() != Some(reason.as_str()) {
            Notice::Unreachable(reason.clone())
        } else {
            return vec![];
        };
        self.last_failure = Some(reason.clone());
        vec![Do::Say(notice), Do::Record(Status::Down(reason))]
    }

    /// The broker refused to let this box subscribe: nothing from the cloud
    /// can arrive.
    pub fn subscription_refused(&mut self) -> Vec<Do> {
        let t = &self.me.topics;
        let why = format!(
            "the broker refused this box's subscription to {} or {CLOUD_STATE}: its access rules must let this box's broker user subscribe to both, and publish to {} and {}",
            t.down, t.up, t.state
        );
        self.trouble(why)
    }

    /// The database's facts for a hello: the hello to publish.
    pub fn hello(&mut self, facts: HelloFacts, now: Instant) -> Vec<Do> {
        self.recovering = facts.recover_after.is_some();
        self.awaiting_answer = Some(now);
        self.unanswered_since.get_or_insert(now);
        self.last_hello = now;
        vec![Do::Up(UpMessage::Hello(Hello {
            session: self.outbox.session().to_owned(),
            version: self.me.version.clone(),
            cursor: facts.cursor,
            head: facts.head,
            last: facts.last,
            recover_after: facts.recover_after,
            node: Some(self.me.node),
        }))]
    }

    /// Time passed: hellos due, the cloud's silence, events to send.
    pub fn tick(&mut self, now: Instant) -> Vec<Do> {
        if !self.outbox.is_connected() {
            return vec![];
        }
        let mut out = self.check_silence(now);
        if self
            .awaiting_answer
            .is_some_and(|at| now.duration_since(at) >= HELLO_RETRY)
        {
            out.extend([Do::Say(Notice::NoAnswer), Do::Hello]);
        } else if now.duration_since(self.last_hello) >= HELLO_EVERY {
            out.push(Do::Hello);
        }
        out.push(Do::Pump);
        out
    }

    /// The head of the outbox: the ranges to send now. Nothing of this
    /// node's own goes while its log may lack what the cloud has.
    pub fn pump(&mut self, head: i64, now: Instant) -> Vec<Do> {
        if self.recovering {
            return vec![];
        }
        let mut out = Vec::new();
        while let Some(Action::Send { from, to }) = self.outbox.poll(head, now) {
            out.push(Do::Send { from, to });
        }
        out
    }

    /// A message from the broker, on any topic, as it was published.
    pub fn message(&mut self, topic: &str, payload: &[u8], now: Instant) -> Vec<Do> {
        self.delivered(topic, payload, false, now)
    }

    /// [`LinkState::message`], saying whether the broker sent it as a
    /// retained message, on subscribing (MQTT sets the flag then, and only
    /// then).
    pub fn delivered(
        &mut self,
        topic: &str,
        payload: &[u8],
        retained: bool,
        now: Instant,
    ) -> Vec<Do> {
        if topic == CLOUD_STATE {
            return self.cloud_state(payload, retained);
        }
        if topic != self.me.topics.down {
            return vec![];
        }
        match message::decode::<DownMessage>(payload) {
            Ok(msg) => self.down(msg, now),
            Err(e) => vec![Do::Say(Notice::Malformed(e.to_string()))],
        }
    }

    /// The cloud's retained state changed. An `online` published while
    /// this edge awaits an answer may mean the cloud only now subscribed
    /// and missed the hello; a new session means a restarted cloud that
    /// forgot this edge. Either way, hello again (a repeated hello only
    /// replays from the cursor).
    ///
    /// One the broker sends as retained, on this connection's subscribing,
    /// was there before: the cloud was online, and subscribed, before this
    /// connection's hello, which reaches it. A second hello would only be
    /// answered again: when a hundred edges reconnect at once, a hundred
    /// more hellos. (Should that `online` be stale, its cloud gone without
    /// its last will yet, the hello unanswered is said again.)
    fn cloud_state(&mut self, payload: &[u8], retained: bool) -> Vec<Do> {
        let Ok(StateMessage::Online { session, .. }) = message::decode::<StateMessage>(payload)
        else {
            return vec![];
        };
        let known = self.cloud_session.replace(session.clone());
        if retained {
            return vec![];
        }
        let news = known.as_deref() != Some(session.as_str()) || self.awaiting_answer.is_some();
        if news && self.outbox.is_connected() {
            vec![Do::Say(Notice::CloudOnline(session)), Do::Hello]
        } else {
            vec![]
        }
    }

    fn down(&mut self, msg: DownMessage, now: Instant) -> Vec<Do> {
        self.awaiting_answer = None;
        self.unanswered_since = None;
        let mut out = Vec::new();
        // A refusal is an answer too, but not one that ends the trouble.
        if !matches!(msg, DownMessage::Refused { .. }) {
            self.outbox.served();
            if self.trouble.take().is_some() {
                out.extend([
                    Do::Say(Notice::AnswersAgain),
                    Do::Record(Status::Trouble(None)),
                ]);
            }
        }
        match msg {
            DownMessage::Ack {
                session,
                through_seq,
                gap,
                rejected,
                hello,
                hands_back,
            } => {
                let ack = PendingAck {
                    session,
                    through: through_seq,
                    gap,
                    hello,
                    hands_back,
                    rejected,
                };
                if !self.recovering {
                    out.extend(self.acknowledge(ack, now));
                } else if hello && ack.session == self.me.session {
                    out.push(Do::CheckRecovery(ack));
                }
                // Else it is no news while recovering: nothing of this
                // node's went up in this run, and an earlier run's answer
                // says where the cloud stood before this log was restored.
            }
            DownMessage::Changes {
                from_rev,
                to_rev,
                changes,
                more,
            } => out.push(Do::Apply {
                from_rev,
                to_rev,
                changes,
                more,
            }),
            // Taken only while recovering, and only when asked for in this
            // run: an earlier run's page (before a restore) names a cloud
            // cursor from before this log was restored.
            DownMessage::Recovered {
                after,
                through,
                events,
                more,
                session,
            } if self.recovering && session.as_deref().is_none_or(|s| s == self.me.session) => {
                out.push(Do::TakeBack {
                    after,
                    through,
                    events,
                    more,
                });
            }
            DownMessage::Recovered { after, session, .. } => {
                out.push(Do::Say(Notice::PageIgnored { after, session }));
            }
            // Heard, but not served: the hello every HELLO_EVERY asks
            // again, and the first acknowledgement clears this.
            DownMessage::Refused { reason } => out.extend(self.refused(reason)),
            // The cloud's log is never trimmed and applying a change is
            // idempotent by event id, so a reload is a replay from the
            // start: what is here already is skipped, what the cloud
            // (restored from an older backup, say) has is filled in.
            DownMessage::Reset { reason } => {
                out.extend([Do::Say(Notice::Reset(reason)), Do::ResetCursor]);
            }
        }
        out
    }

    /// The log's answer to [`Do::CheckRecovery`]: `Some(true)` when the
    /// cloud's cursor covers everything the log lacked, `None` when it
    /// could not be read (the next hello asks again).
    pub fn recovery_checked(
        &mut self,
        ack: PendingAck,
        whole: Option<bool>,
        now: Instant,
    ) -> Vec<Do> {
        match whole {
            Some(true) => {
                self.recovering = false;
                let mut out = vec![Do::Say(Notice::Whole {
                    cloud_cursor: ack.through,
                })];
                out.extend(self.acknowledge(ack, now));
                out
            }
            // The cloud's events come back in pages first.
            Some(false) if ack.hands_back => vec![],
            Some(false) if !std::mem::replace(&mut self.stall_said, true) => {
                vec![Do::Say(Notice::Stalled {
                    cloud_cursor: ack.through,
                })]
            }
            Some(false) | None => vec![],
        }
    }

    /// A page of the cloud's changes would leave a hole: ask again.
    pub fn page_gap(&mut self) -> Vec<Do> {
        vec![Do::Hello]
    }

    /// The cloud's log could be started over: ask from there.
    pub fn cursor_reset(&mut self) -> Vec<Do> {
        vec![Do::Hello]
    }

    /// What taking back a page of own events came to.
    pub fn took_back(&mut self, taken: TakenBack, now: Instant) -> Vec<Do> {
        match taken {
            TakenBack::NotNeeded => {
                self.recovering = false;
                vec![]
            }
            TakenBack::Stale => vec![],
            TakenBack::Lost | TakenBack::More => vec![Do::Hello],
            TakenBack::Done { through } => {
                self.recovering = false;
                // As the cloud's answer to a hello: its cursor as it stands.
                let ack = PendingAck {
                    session: self.me.session.clone(),
                    through,
                    gap: false,
                    hello: true,
                    hands_back: true,
                    rejected: vec![],
                };
                self.acknowledge(ack, now)
            }
        }
    }

    /// Feeds an acknowledgement to the outbox: rejections to keep, and what
    /// it moved.
    fn acknowledge(&mut self, ack: PendingAck, now: Instant) -> Vec<Do> {
        let mut out: Vec<Do> = ack
            .rejected
            .iter()
            .map(|r| Do::Say(Notice::Rejected(r.clone())))
            .collect();
        let input = AckIn {
            session: &ack.session,
            through: ack.through,
            gap: ack.gap,
            hello: ack.hello,
        };
        let before = self.outbox.acked();
        let moved = self.outbox.on_ack(input, now);
        if !ack.rejected.is_empty() {
            out.push(Do::RecordRejections(ack.rejected));
        }
        match moved {
            // What the acknowledgement opened of the window goes at once,
            // not at the next tick, which would otherwise pace a backlog.
            Some(Action::Prune { through }) => out.extend([Do::Prune { through }, Do::Pump]),
            Some(Action::Rewind { to }) => out.extend([
                Do::Say(Notice::Rewound {
                    acknowledged: before,
                    cloud_has: to,
                }),
                Do::Rewind { to },
            ]),
            Some(Action::Send { .. }) | None => {}
        }
        out
    }

    /// The cloud hears this box but does not serve it (not registered, or
    /// registered as another node). Once a cloud has served this box, a
    /// refusal comes from another cloud on the same broker, with a
    /// database of its own: worth a line in the log, not the box's status.
    fn refused(&mut self, reason: String) -> Vec<Do> {
        if !self.outbox.is_served() {
            return self.trouble(format!("the cloud refuses this box: {reason}"));
        }
        if std::mem::replace(&mut self.foreign_refusal_said, true) {
            return vec![];
        }
        vec![Do::Say(Notice::ForeignRefusal(reason))]
    }

    /// Hellos unanswered for longer than the limit: the cloud is down or not
    /// on this broker, or the broker's rules drop what this box publishes
    /// (MQTT 3.1.1 has no way to say a publish was refused).
    fn check_silence(&mut self, now: Instant) -> Vec<Do> {
        let Some(since) = self.unanswered_since else {
            return vec![];
        };
        if now.duration_since(since) < self.silence_limit {
            return vec![];
        }
        let t = &self.me.topics;
        let why = format!(
            "connected to the broker, but the cloud has not answered this box's hello for {} s: is depot-cloud running and connected to this broker, and do the broker's access rules let this box publish to {} and subscribe to {}?",
            self.silence_limit.as_secs(),
            t.up,
            t.down
        );
        self.trouble(why)
    }

    /// Connected, but sync cannot go on: said once per reason.
    fn trouble(&mut self, why: String) -> Vec<Do> {
        if self.trouble.as_deref() == Some(why.as_str()) {
            return vec![];
        }
        self.trouble = Some(why.clone());
        vec![
            Do::Say(Notice::Trouble(why.clone())),
            Do::Record(Status::Trouble(Some(why))),
        ]
    }
}
