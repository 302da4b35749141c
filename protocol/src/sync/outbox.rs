//! The edge's sending side. The events themselves stay in the edge's
//! database (the outbox is the source of truth); this machine only decides
//! which range to publish next, when to start again from the last
//! acknowledgement, and what may be pruned.
//!
//! - After every connect it starts again from the last acknowledgement: the
//!   broker may have lost what was in flight, and PUBACK is not delivery.
//! - At most `window` events are in flight beyond the acknowledgement, so a
//!   long backlog drains at the pace the cloud applies it.
//! - An ack that reports a gap, or silence past `resend_after` while events
//!   are in flight, rewinds to the acknowledgement.
//! - Any ack is a durable fact and may advance the acknowledgement, but only
//!   an ack of the current session can rewind it (an old session's gap report
//!   is stale); an ack above what was sent (events acknowledged in an earlier
//!   connection) moves both marks forward.
//! - The acknowledgement itself moves back only when the cloud says, in the
//!   current session, that it has less than it once acknowledged: its answer
//!   to a hello (its cursor as it stands) or a gap report below the
//!   acknowledgement. That is a cloud restored from an older backup: what it
//!   lost goes again, and the lower acknowledgement is persisted so a restart
//!   does not forget it. A stale answer taken for such news costs a resend,
//!   which the cloud recognizes as duplicates; the opposite mistake would
//!   lose events, so the rule leans this way.
//! - Nothing goes until a cloud has served a hello in this run (answered
//!   it with anything but a refusal): a cloud that has the edge registered
//!   as another node would otherwise apply records whose ids collide with
//!   another edge's. Once served, a refusal changes nothing here: it can
//!   only come from another cloud on the same broker, one that does not
//!   know this edge.

use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct Outbox {
    session: String,
    acked: i64,
    sent: i64,
    connected: bool,
    /// A cloud served a hello since the machine was made.
    served: bool,
    window: i64,
    resend_after: Duration,
    last_progress: Instant,
}

/// What the I/O layer must do after feeding the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Publish the events with `from <= seq <= to` (in batches).
    Send { from: i64, to: i64 },
    /// The cloud has everything through `through`: it may be deleted from
    /// the outbox.
    Prune { through: i64 },
    /// The cloud no longer has what it acknowledged after `to`: record `to`
    /// as the acknowledgement (lower than before); what follows is sent
    /// again.
    Rewind { to: i64 },
}

/// An application-level acknowledgement, as the cloud sent it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckIn<'a> {
    /// The session of the hello or batch it answers.
    pub session: &'a str,
    pub through: i64,
    /// The cloud is missing the event after `through`.
    pub gap: bool,
    /// It answers a hello: `through` is the cloud's cursor as it stands.
    pub hello: bool,
}

impl Outbox {
    /// `acked` is what the cloud acknowledged before (kept on disk).
    pub fn new(acked: i64, window: i64, resend_after: Duration, now: Instant) -> Self {
        Self {
            session: String::new(),
            acked,
            sent: acked,
            connected: false,
            served: false,
            window: window.max(1),
            resend_after,
            last_progress: now,
        }
    }

    pub fn acked(&self) -> i64 {
        self.acked
    }

    pub fn sent(&self) -> i64 {
        self.sent
    }

    pub fn session(&self) -> &str {
        &self.session
    }

    pub fn is_connected(&self) -> bool {
        self.connected
    }

    /// A new connection with a new session id: everything unacknowledged
    /// goes again.
    pub fn connected(&mut self, session: String, now: Instant) {
        self.session = session;
        self.connected = true;
        self.sent = self.acked;
        self.last_progress = now;
    }

    pub fn disconnected(&mut self) {
        self.connected = false;
    }

    /// A cloud answered a hello as one it serves.
    pub fn served(&mut self) {
        self.served = true;
    }

    pub fn is_served(&self) -> bool {
        self.served
    }

    /// What to publish now, given the newest event in the log.
    pub fn poll(&mut self, head: i64, now: Instant) -> Option<Action> {
        if !self.connected || !self.served {
            return None;
        }
        if self.sent > self.acked && now.duration_since(self.last_progress) >= self.resend_after {
            // Nothing acknowledged for too long: assume the batches were lost.
            self.sent = self.acked;
            self.last_progress = now;
        }
        let limit = head.min(self.acked + self.window);
        if limit <= self.sent {
            return None;
        }
        let from = self.sent + 1;
        self.sent = limit;
        if from == self.acked + 1 {
            self.last_progress = now;
        }
        Some(Action::Send { from, to: limit })
    }

    /// An application-level acknowledgement arrived.
    pub fn on_ack(&mut self, ack: AckIn<'_>, now: Instant) -> Option<Action> {
        let current = ack.session == self.session;
        // A seq is never below 0: a negative cursor is nonsense from the wire.
        let through = ack.through.max(0);
        if through < self.acked && current && (ack.hello || ack.gap) {
            self.acked = through;
            self.sent = through;
            self.last_progress = now;
            return Some(Action::Rewind { to: through });
        }
        let mut action = None;
        if through > self.acked {
            self.acked = through;
            self.last_progress = now;
            action = Some(Action::Prune { through });
        }
        if self.sent < self.acked {
            self.sent = self.acked;
        }
        if ack.gap && through == self.acked && current {
            self.sent = self.acked;
            self.last_progress = now;
        }
        action
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(10);

    /// The acknowledgement of a batch.
    fn batch(session: &str, through: i64, gap: bool) -> AckIn<'_> {
        AckIn {
            session,
            through,
            gap,
            hello: false,
        }
    }

    /// The answer to a hello.
    fn hello(session: &str, through: i64) -> AckIn<'_> {
        AckIn {
            session,
            through,
            gap: false,
            hello: true,
        }
    }

    fn outbox(acked: i64) -> (Outbox, Instant) {
        let now = Instant::now();
        let mut o = Outbox::new(acked, 100, T, now);
        o.connected("s1".into(), now);
        o.served();
        (o, now)
    }

    #[test]
    fn nothing_goes_until_a_hello_is_served() {
        let now = Instant::now();
        let mut o = Outbox::new(0, 100, T, now);
        o.connected("s1".into(), now);
        assert_eq!(o.poll(10, now), None, "before the cloud answered");
        assert_eq!(o.poll(10, now + 2 * T), None, "nor after a while");
        assert!(!o.is_served());
        o.served();
        assert_eq!(o.poll(10, now), Some(Action::Send { from: 1, to: 10 }));
        assert_eq!(
            o.on_ack(batch("s1", 4, false), now),
            Some(Action::Prune { through: 4 })
        );
        // Served once, a reconnect need not wait for the next answer.
        o.disconnected();
        o.connected("s2".into(), now + T);
        assert_eq!(o.poll(12, now + T), Some(Action::Send { from: 5, to: 12 }));
    }

    #[test]
    fn sends_in_windows_and_prunes_on_ack() {
        let (mut o, now) = outbox(0);
        assert_eq!(o.poll(250, now), Some(Action::Send { from: 1, to: 100 }));
        assert_eq!(o.poll(250, now), None, "window full");
        assert_eq!(
            o.on_ack(batch("s1", 60, false), now),
            Some(Action::Prune { through: 60 })
        );
        assert_eq!(o.poll(250, now), Some(Action::Send { from: 101, to: 160 }));
        assert_eq!(
            o.on_ack(batch("s1", 160, false), now),
            Some(Action::Prune { through: 160 })
        );
        assert_eq!(o.poll(250, now), Some(Action::Send { from: 161, to: 250 }));
        assert_eq!(o.poll(250, now), None, "caught up");
        assert_eq!(o.poll(251, now), Some(Action::Send { from: 251, to: 251 }));
    }

    #[test]
    fn nothing_goes_out_while_disconnected() {
        let now = Instant::now();
        let mut o = Outbox::new(5, 100, T, now);
        o.served();
        assert_eq!(o.poll(10, now), None);
        o.connected("s".into(), now);
        assert_eq!(o.poll(10, now), Some(Action::Send { from: 6, to: 10 }));
        o.disconnected();
        assert_eq!(o.poll(20, now), None);
    }

    #[test]
    fn reconnect_resends_from_the_acknowledgement() {
        let (mut o, now) = outbox(0);
        o.poll(50, now);
        o.on_ack(batch("s1", 20, false), now);
        o.disconnected();
        o.connected("s2".into(), now);
        assert_eq!(o.poll(50, now), Some(Action::Send { from: 21, to: 50 }));
        assert_eq!(
            o.on_ack(batch("s1", 10, true), now),
            None,
            "an old session's gap report does not rewind"
        );
        assert_eq!(o.poll(50, now), None);
        assert_eq!(
            o.on_ack(batch("s1", 35, false), now),
            Some(Action::Prune { through: 35 }),
            "but its acks are facts"
        );
    }

    #[test]
    fn a_gap_rewinds() {
        let (mut o, now) = outbox(0);
        o.poll(50, now);
        assert_eq!(
            o.on_ack(batch("s1", 10, true), now),
            Some(Action::Prune { through: 10 })
        );
        assert_eq!(o.poll(50, now), Some(Action::Send { from: 11, to: 50 }));
        // A repeated gap report at the same point rewinds again.
        assert_eq!(o.on_ack(batch("s1", 10, true), now), None);
        assert_eq!(o.poll(50, now), Some(Action::Send { from: 11, to: 50 }));
    }

    #[test]
    fn silence_rewinds_after_the_timeout() {
        let (mut o, now) = outbox(0);
        o.poll(30, now);
        assert_eq!(o.poll(30, now + T / 2), None);
        assert_eq!(o.poll(30, now + T), Some(Action::Send { from: 1, to: 30 }));
    }

    #[test]
    fn stale_and_future_acks() {
        let (mut o, now) = outbox(40);
        assert_eq!(o.on_ack(batch("s1", 30, false), now), None);
        assert_eq!(o.acked(), 40);
        // Acknowledged in an earlier connection beyond what this one sent.
        assert_eq!(
            o.on_ack(batch("s1", 70, false), now),
            Some(Action::Prune { through: 70 })
        );
        assert_eq!(o.poll(80, now), Some(Action::Send { from: 71, to: 80 }));
    }

    #[test]
    fn a_cloud_that_lost_acknowledged_events_gets_them_again() {
        let (mut o, now) = outbox(0);
        assert_eq!(o.poll(80, now), Some(Action::Send { from: 1, to: 80 }));
        assert_eq!(
            o.on_ack(batch("s1", 80, false), now),
            Some(Action::Prune { through: 80 })
        );
        assert_eq!(o.poll(80, now), None, "all acknowledged");
        // A cloud restored from a backup answers the hello with less.
        assert_eq!(
            o.on_ack(hello("s1", 30), now),
            Some(Action::Rewind { to: 30 })
        );
        assert_eq!(o.acked(), 30);
        assert_eq!(o.poll(80, now), Some(Action::Send { from: 31, to: 80 }));
        assert_eq!(
            o.on_ack(batch("s1", 80, false), now),
            Some(Action::Prune { through: 80 })
        );
        assert_eq!(o.poll(80, now), None);
    }

    #[test]
    fn a_gap_below_the_acknowledgement_rewinds_it() {
        // A stale ack of the old cloud moved the acknowledgement past what
        // the restored one has; its gap report puts it back.
        let (mut o, now) = outbox(50);
        assert_eq!(o.poll(60, now), Some(Action::Send { from: 51, to: 60 }));
        assert_eq!(
            o.on_ack(batch("s1", 20, true), now),
            Some(Action::Rewind { to: 20 })
        );
        assert_eq!(o.poll(60, now), Some(Action::Send { from: 21, to: 60 }));
    }

    #[test]
    fn only_the_current_session_moves_the_acknowledgement_back() {
        let (mut o, now) = outbox(40);
        assert_eq!(o.on_ack(hello("s0", 10), now), None);
        assert_eq!(o.on_ack(batch("s0", 10, true), now), None);
        // A plain ack below the acknowledgement is old news.
        assert_eq!(o.on_ack(batch("s1", 10, false), now), None);
        assert_eq!(o.acked(), 40);
        // An answer to a hello at or above it is an ordinary ack.
        assert_eq!(o.on_ack(hello("s1", 40), now), None);
        assert_eq!(
            o.on_ack(hello("s1", 45), now),
            Some(Action::Prune { through: 45 })
        );
        // Nonsense from the wire does not move it below 0.
        assert_eq!(
            o.on_ack(hello("s1", -7), now),
            Some(Action::Rewind { to: 0 })
        );
        assert_eq!(o.poll(3, now), Some(Action::Send { from: 1, to: 3 }));
    }
}
