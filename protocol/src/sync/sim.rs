//! A simulated link between an edge's outbox and the cloud's inbox that
//! duplicates, drops, delays and reorders messages and reconnects at random,
//! while the cloud is now and then restored from an older backup (it loses
//! the tail of what it applied): whatever happens, once the link heals every
//! event is applied exactly once, in order, in the cloud as it now is, and
//! the edge's acknowledgement covers all of it.

use super::inbox;
use super::message::{DownMessage, SyncEvent, UpMessage};
use super::outbox::{AckIn, Action, Outbox};
use crate::EventId;
use proptest::prelude::*;
use std::time::{Duration, Instant};

const RESEND: Duration = Duration::from_secs(5);

#[derive(Debug, Clone)]
enum Op {
    Append(i64),
    Poll {
        chunk: usize,
    },
    DeliverUp(usize),
    DuplicateUp(usize),
    DropUp(usize),
    DeliverDown(usize),
    DropDown(usize),
    Reconnect,
    Hello,
    /// The cloud comes back from a backup holding this share (in 1/8ths) of
    /// what it had applied.
    Restore(i64),
    Tick(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (1i64..20).prop_map(Op::Append),
        4 => (1usize..8).prop_map(|chunk| Op::Poll { chunk }),
        6 => any::<usize>().prop_map(Op::DeliverUp),
        1 => any::<usize>().prop_map(Op::DuplicateUp),
        1 => any::<usize>().prop_map(Op::DropUp),
        5 => any::<usize>().prop_map(Op::DeliverDown),
        1 => any::<usize>().prop_map(Op::DropDown),
        1 => Just(Op::Reconnect),
        1 => Just(Op::Hello),
        1 => (0i64..8).prop_map(Op::Restore),
        1 => (0u64..8).prop_map(Op::Tick),
    ]
}

struct World {
    now: Instant,
    head: i64,
    outbox: Outbox,
    sessions: u32,
    up: Vec<UpMessage>,
    down: Vec<DownMessage>,
    cursor: i64,
    /// The highest cursor any copy of the cloud ever had: no ack can
    /// report more.
    high_water: i64,
    applied: Vec<i64>,
    pruned: i64,
}

impl World {
    fn new() -> Self {
        let now = Instant::now();
        let mut outbox = Outbox::new(0, 25, RESEND, now);
        outbox.connected("s0".into(), now);
        Self {
            now,
            head: 0,
            outbox,
            sessions: 0,
            up: vec![],
            down: vec![],
            cursor: 0,
            high_water: 0,
            applied: vec![],
            pruned: 0,
        }
    }

    fn event(seq: i64) -> SyncEvent {
        SyncEvent {
            seq,
            id: EventId::new(),
            kind: "k".into(),
            payload: serde_json::value::RawValue::NULL.to_owned(),
            at: crate::now(),
        }
    }

    fn act(&mut self, action: Option<Action>, chunk: usize) {
        match action {
            Some(Action::Send { from, to }) => {
                let events: Vec<SyncEvent> = (from..=to).map(Self::event).collect();
                for part in events.chunks(chunk.max(1)) {
                    self.up.push(UpMessage::Batch {
                        session: self.outbox.session().to_owned(),
                        events: part.to_vec(),
                    });
                }
            }
            Some(Action::Prune { through }) => {
                assert!(
                    through <= self.high_water,
                    "pruned {through} before the cloud applied it ({})",
                    self.high_water
                );
                self.pruned = self.pruned.max(through);
            }
            Some(Action::Rewind { to }) => {
                assert!(to < self.pruned, "a rewind to {to} from {}", self.pruned);
                self.pruned = to;
            }
            None => {}
        }
    }

    fn deliver_up(&mut self, i: usize) {
        if self.up.is_empty() {
            return;
        }
        match self.up.remove(i % self.up.len()) {
            UpMessage::Batch { session, events } => {
                let plan = inbox::plan(self.cursor, &events);
                for &i in &plan.apply {
                    self.applied.push(events[i].seq);
                }
                self.cursor = plan.through;
                self.high_water = self.high_water.max(self.cursor);
                self.down.push(DownMessage::Ack {
                    session,
                    through_seq: plan.through,
                    gap: plan.gap,
                    rejected: vec![],
                    hello: false,
                    hands_back: false,
                });
            }
            // The cloud answers a hello with its cursor as it stands.
            UpMessage::Hello { session, .. } => self.down.push(DownMessage::Ack {
                session,
                through_seq: self.cursor,
                gap: false,
                rejected: vec![],
                hello: true,
                hands_back: true,
            }),
        }
    }

    fn hello(&mut self) {
        self.up.push(UpMessage::Hello {
            session: self.outbox.session().to_owned(),
            version: "sim".into(),
            cursor: 0,
            head: Some(self.head),
            last: None,
            recover_after: None,
            node: None,
        });
    }

    fn deliver_down(&mut self, i: usize) {
        if self.down.is_empty() {
            return;
        }
        if let DownMessage::Ack {
            session,
            through_seq,
            gap,
            hello,
            ..
        } = self.down.remove(i % self.down.len())
        {
            self.outbox.served();
            let ack = AckIn {
                session: &session,
                through: through_seq,
                gap,
                hello,
            };
            let action = self.outbox.on_ack(ack, self.now);
            self.act(action, 1);
        }
    }

    fn run(&mut self, op: Op) {
        match op {
            Op::Append(n) => self.head += n,
            Op::Poll { chunk } => {
                let a = self.outbox.poll(self.head, self.now);
                self.act(a, chunk);
            }
            Op::DeliverUp(i) => self.deliver_up(i),
            Op::DuplicateUp(i) if !self.up.is_empty() => {
                let m = self.up[i % self.up.len()].clone();
                self.up.push(m);
            }
            Op::DropUp(i) if !self.up.is_empty() => {
                self.up.remove(i % self.up.len());
            }
            Op::DropDown(i) if !self.down.is_empty() => {
                self.down.remove(i % self.down.len());
            }
            Op::DeliverDown(i) => self.deliver_down(i),
            Op::Reconnect => {
                self.sessions += 1;
                self.outbox.disconnected();
                self.outbox
                    .connected(format!("s{}", self.sessions), self.now);
                self.hello();
            }
            Op::Hello => self.hello(),
            Op::Restore(eighths) => {
                // Consistent, as a backup is: the events and the cursor
                // from the same moment. What was in flight stays in flight.
                self.cursor = self.cursor * eighths / 8;
                self.applied
                    .truncate(usize::try_from(self.cursor).unwrap_or(0));
            }
            Op::Tick(s) => self.now += Duration::from_secs(s),
            _ => {}
        }
    }

    /// The link heals: messages flow in order, time passes, and the edge
    /// says hello now and then (as it does every few seconds).
    fn heal(&mut self) {
        for round in 0..10_000 {
            if round > 0
                && self.outbox.acked() == self.head
                && self.up.is_empty()
                && self.down.is_empty()
            {
                return;
            }
            if round % 5 == 0 {
                self.hello();
            }
            let a = self.outbox.poll(self.head, self.now);
            self.act(a, 7);
            while !self.up.is_empty() {
                self.deliver_up(0);
            }
            while !self.down.is_empty() {
                self.deliver_down(0);
            }
            self.now += Duration::from_secs(1);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn exactly_once_in_order_whatever_the_link_does(ops in proptest::collection::vec(op(), 0..300)) {
        let mut w = World::new();
        for op in ops {
            w.run(op);
            prop_assert!(w.applied.windows(2).all(|p| p[1] == p[0] + 1), "applied out of order: {:?}", w.applied);
        }
        w.heal();
        prop_assert_eq!(&w.applied, &(1..=w.head).collect::<Vec<_>>());
        prop_assert_eq!(w.cursor, w.head);
        prop_assert_eq!(w.outbox.acked(), w.head);
        prop_assert_eq!(w.pruned, w.head);
    }
}
