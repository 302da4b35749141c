//! Batches: a group's queued on the writer at once, answered to their
//! edges in the order they were queued once the writer has committed them.
//! While the writer applies one group the service reads, decodes and
//! queues the next, so the writer does not wait on the service.
//!
//! The group's hellos and states are recorded the same way: queued as they
//! come, each hello answered once its record is committed, before the
//! batches queued after it are. A hundred edges reconnecting at once cost
//! a commit or two, not two hundred one after another.

use super::message::Pending;
use super::{Downlink, EdgeKey, Service};
use depot_protocol::BusinessId;
use depot_protocol::sync::DownMessage;
use depot_protocol::sync::downstream::Feed;
use depot_protocol::sync::message::encode;
use depot_protocol::sync::topic::{EdgeId, EdgeTopic};
use depot_wms::Result;
use depot_wms::sync::Ack;
use depot_wms::writer::Queued;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;

/// Groups queued on the writer and not yet answered, at most: the service
/// reads no message while this many wait. With the broker's inflight
/// window it bounds what the cloud holds of edges' batches.
pub(super) const APPLYING: usize = 2;

/// A group's writes, queued on the writer: its hellos' and states' records,
/// then its batches.
pub(super) struct Applying {
    /// What each record waits to say, in queued order.
    recorded: Vec<Recorded>,
    /// Each batch's edge, session and number of events, in queued order.
    heads: Vec<(BusinessId, EdgeId, String, usize)>,
    /// Each record's outcome, then each batch's.
    done: Pin<Box<dyn Future<Output = Answers> + Send + Sync>>,
}

/// What the writer answered for a group: its records', then its batches'.
pub(super) type Answers = (Vec<Result<()>>, Vec<Result<Ack>>);

/// A hello's or a state's record, queued: what is said once it commits.
pub(super) struct Recorded {
    pub(super) topic: EdgeTopic,
    pub(super) then: Then,
}

/// What a record waits to say.
pub(super) enum Then {
    /// An edge's state: nothing, but a warning if it could not be recorded.
    State,
    /// A hello's answer, sent whether or not its sighting could be
    /// recorded (as the edge would be answered by a hello again).
    Hello(Box<HelloAnswer>),
}

/// A hello's answer, as decided when it came.
pub(super) enum HelloAnswer {
    /// Not this log: the edge must reload.
    Reset(String),
    Serve {
        session: String,
        /// The page of its own events it takes back first.
        hand_back: Option<Vec<u8>>,
        ack: Vec<u8>,
        feed_from: i64,
        /// Its session went offline before the answer went: no feed.
        gone: bool,
    },
}

impl Applying {
    /// The edges whose batches these are.
    pub(super) fn edges(&self) -> impl Iterator<Item = (BusinessId, &EdgeId)> {
        self.heads
            .iter()
            .map(|(business, edge, ..)| (*business, edge))
    }
}

/// The answers to the group queued first; pending while none is.
pub(super) async fn first_answered(applying: &mut VecDeque<Applying>) -> Answers {
    match applying.front_mut() {
        Some(first) => first.done.as_mut().await,
        None => std::future::pending().await,
    }
}

impl Service {
    /// Queues batches on the writer, a job per run of events, in order,
    /// and goes on: [`Service::answered`] acknowledges them once committed.
    /// The group's records queued before them go first.
    pub(super) async fn queue(&mut self, batches: Vec<Pending>) {
        if batches.is_empty() && self.recording.is_empty() {
            return;
        }
        let (recorded, written): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.recording).into_iter().unzip();
        let mut heads = Vec::with_capacity(batches.len());
        let mut inputs = Vec::with_capacity(batches.len());
        for Pending {
            topic,
            session,
            events,
        } in batches
        {
            heads.push((topic.business, topic.edge.clone(), session, events.len()));
            inputs.push((topic.business, topic.edge, events));
        }
        let events: usize = heads.iter().map(|(.., count)| count).sum();
        tracing::debug!(
            batches = heads.len(),
            events,
            records = recorded.len(),
            before = self.applying.len(),
            "queued batches"
        );
        let receipts = self.wms.queue_batches(inputs).await;
        self.applying.push_back(Applying {
            recorded,
            heads,
            done: Box::pin(async move {
                let mut outcomes = Vec::with_capacity(written.len());
                for w in written {
                    outcomes.push(match w {
                        Ok(queued) => queued.await,
                        Err(e) => Err(e),
                    });
                }
                (outcomes, receipts.acks().await)
            }),
        });
    }

    /// A record queued on the writer: what it says waits for the group's
    /// commit (see [`Service::queue`]).
    pub(super) fn record(&mut self, topic: EdgeTopic, then: Then, written: Result<Queued<()>>) {
        self.recording.push((Recorded { topic, then }, written));
    }

    /// An edge's session went offline: a hello of it still waiting to be
    /// answered starts no feed.
    pub(super) fn forget_downlink(&mut self, key: &EdgeKey, offline: &str) {
        let waiting = self.recording.iter_mut().map(|(r, _)| r);
        let queued = self.applying.iter_mut().flat_map(|a| a.recorded.iter_mut());
        for r in waiting.chain(queued) {
            if let Then::Hello(answer) = &mut r.then {
                if let HelloAnswer::Serve { session, gone, .. } = answer.as_mut() {
                    if r.topic.business == key.0 && r.topic.edge == key.1 && session == offline {
                        *gone = true;
                    }
                }
            }
        }
    }

    /// The group queued first was answered: each batch is acknowledged to
    /// its edge (or its refusal logged: the edge sends it again).
    pub(super) async fn answered(&mut self, (outcomes, acks): Answers) {
        let Some(Applying {
            recorded, heads, ..
        }) = self.applying.pop_front()
        else {
            return;
        };
        for (Recorded { topic, then }, outcome) in recorded.into_iter().zip(outcomes) {
            if let Err(e) = &outcome {
                tracing::warn!(%topic, reason = %e, "cannot record the edge's hello or state");
            }
            if let Then::Hello(answer) = then {
                self.say(topic, *answer).await;
            }
        }
        for ((business, edge, session, count), result) in heads.into_iter().zip(acks) {
            let ack = match result {
                Ok(ack) => ack,
                Err(e) => {
                    tracing::warn!(%business, %edge, events = count, reason = %e, "refused a batch");
                    continue;
                }
            };
            tracing::debug!(
                %business, %edge, %session, events = count, through = ack.through,
                gap = ack.gap, rejected = ack.rejected.len(), "applied a batch"
            );
            for message in super::super::ack::messages(&session, ack) {
                self.send(business, &edge, encode(&message)).await;
            }
        }
        // The log may have grown: other edges of the business may need it.
        self.dirty = true;
    }

    /// Queues batches and waits until they and every group queued before
    /// are answered: what comes next sees them applied.
    pub(super) async fn apply(&mut self, batches: Vec<Pending>) {
        self.queue(batches).await;
        self.settle().await;
    }

    /// Waits until every group queued (and every record waiting for its
    /// group) is answered, and answers them.
    pub(super) async fn settle(&mut self) {
        self.queue(Vec::new()).await;
        while let Some(first) = self.applying.front_mut() {
            let answers = first.done.as_mut().await;
            self.answered(answers).await;
        }
    }

    /// A hello's answer, its sighting committed: the page it takes back,
    /// the ack, and its feed from then on; or the reset.
    async fn say(&mut self, topic: EdgeTopic, answer: HelloAnswer) {
        let EdgeTopic { business, edge, .. } = topic;
        match answer {
            HelloAnswer::Reset(reason) => {
                self.send(business, &edge, encode(&DownMessage::Reset { reason }))
                    .await;
            }
            HelloAnswer::Serve {
                session,
                hand_back,
                ack,
                feed_from,
                gone,
            } => {
                if let Some(page) = hand_back {
                    self.send(business, &edge, page).await;
                }
                self.send(business, &edge, ack).await;
                if !gone {
                    self.edges.insert(
                        (business, edge),
                        Downlink {
                            session,
                            feed: Feed::from_hello(feed_from),
                            pending: true,
                            stalled: None,
                        },
                    );
                    self.dirty = true;
                }
            }
        }
    }
}
