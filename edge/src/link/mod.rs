//! The edge's link to the cloud: the thin shell between the sans-IO
//! [`LinkState`] (when to say hello, recovery, silence, refusals, and the
//! outbox inside it), the database and the broker. The task (`task.rs`)
//! owns the connection and hands each happening to the state; this module
//! carries out what the state answers, in order, feeding back what the
//! database says; `say.rs` puts the state's notices in the log.

mod say;
mod task;

pub use task::run;
#[cfg(feature = "faults")]
pub use task::run_with_faults;

#[cfg(feature = "faults")]
use crate::faults::Injector;
use depot_protocol::BusinessId;
use depot_protocol::sync::link::{Do, HelloFacts, LinkState, Status, TakenBack};
use depot_protocol::sync::message;
use depot_protocol::sync::topic::CLOUD_STATE;
use depot_wms::Wms;
use depot_wms::recovery::{Recovered, RecoveredPage};
use depot_wms::sync::{Page, PageOutcome};
use rumqttc::{AsyncClient, QoS};
use std::collections::VecDeque;
use std::time::Instant;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("broker settings: {0}")]
    Broker(String),
    #[error("edge id: {0}")]
    EdgeId(String),
}

struct Link {
    wms: Wms,
    client: AsyncClient,
    business: BusinessId,
    state: LinkState,
    /// Faults injected on the sync topics (tests only).
    #[cfg(feature = "faults")]
    faults: Option<Injector>,
}

impl Link {
    /// Hands a message to the state (saying whether the broker sent it as
    /// retained) and carries out its answer.
    async fn message(&mut self, topic: &str, payload: &[u8], retained: bool) {
        let out = self
            .state
            .delivered(topic, payload, retained, Instant::now());
        self.perform(out).await;
    }

    /// Carries out what the state answered, and what it answers to the
    /// database's replies, depth first: in the order a call would.
    async fn perform(&mut self, out: Vec<Do>) {
        let mut queue = VecDeque::from(out);
        while let Some(step) = queue.pop_front() {
            let more = self.step(step).await;
            for s in more.into_iter().rev() {
                queue.push_front(s);
            }
        }
    }

    async fn step(&mut self, step: Do) -> Vec<Do> {
        let now = Instant::now();
        match step {
            Do::Subscribe => {
                let down = self.state.topics().down.clone();
                for topic in [down.as_str(), CLOUD_STATE] {
                    if let Err(e) = self.client.subscribe(topic, QoS::AtLeastOnce).await {
                        tracing::warn!(error = %e, topic, "could not subscribe");
                    }
                }
            }
            Do::SayOnline => {
                let online = self.state.online(self.head().await);
                let topic = self.state.topics().state.clone();
                self.publish(&topic, true, message::encode(&online)).await;
            }
            Do::Hello => {
                return match self.hello_facts().await {
                    Some(facts) => self.state.hello(facts, now),
                    None => vec![],
                };
            }
            Do::Up(m) => self.publish_up(message::encode(&m)).await,
            Do::Record(status) => self.record(status).await,
            Do::Say(notice) => say::say(&notice),
            Do::CheckRecovery(ack) => {
                let seen = self
                    .wms
                    .cloud_cursor_seen(ack.through, ack.hands_back)
                    .await;
                let whole = seen
                    .inspect_err(
                        |e| tracing::error!(error = %e, "could not record the recovery state"),
                    )
                    .ok();
                return self.state.recovery_checked(ack, whole, now);
            }
            Do::RecordRejections(rejected) => {
                if let Err(e) = self.wms.record_rejections(rejected).await {
                    tracing::error!(error = %e, "could not record the cloud's rejections");
                }
            }
            Do::Prune { through } => {
                if let Err(e) = self.wms.record_ack(through).await {
                    tracing::error!(error = %e, "could not record the acknowledgement");
                }
            }
            Do::Rewind { to } => {
                if let Err(e) = self.wms.rewind_ack(to).await {
                    tracing::error!(error = %e, "could not record the acknowledgement");
                }
            }
            Do::Apply {
                from_rev,
                to_rev,
                changes,
                more,
            } => {
                let page = Page {
                    from: from_rev,
                    to: to_rev,
                    changes,
                    more,
                };
                match self.wms.apply_page(self.business, page).await {
                    Ok(PageOutcome::Gap { cursor }) => {
                        tracing::info!(cursor, from_rev, "a page would leave a hole: asking again");
                        return self.state.page_gap();
                    }
                    Ok(_) => {}
                    Err(e) => tracing::error!(error = %e, "could not apply a page from the cloud"),
                }
            }
            Do::TakeBack {
                after,
                through,
                events,
                more,
            } => {
                let page = RecoveredPage {
                    after,
                    through,
                    events,
                    more,
                };
                if let Some(taken) = self.take_back(page).await {
                    return self.state.took_back(taken, now);
                }
            }
            Do::ResetCursor => match self.wms.reset_down_cursor().await {
                Ok(()) => return self.state.cursor_reset(),
                Err(e) => {
                    tracing::error!(error = %e, "could not reset the cloud cursor; the next hello asks again");
                }
            },
            Do::Pump => match self.wms.outgoing_head().await {
                Ok(head) => return self.state.pump(head, now),
                Err(e) => tracing::error!(error = %e, "cannot read the outbox"),
            },
            Do::Send { from, to } => self.send(from, to).await,
        }
        vec![]
    }

    /// What a hello says, from the database; `None` (logged) when what it
    /// cannot go without is unreadable: the next tick asks again.
    async fn hello_facts(&self) -> Option<HelloFacts> {
        let cursor = self
            .wms
            .sync_state()
            .await
            .inspect_err(|e| tracing::error!(error = %e, "cannot read the sync state"))
            .ok()?
            .1;
        let recover_after = self
            .wms
            .recover_after()
            .await
            .inspect_err(|e| tracing::error!(error = %e, "cannot read the recovery state"))
            .ok()?;
        let last = self
            .wms
            .last_applied()
            .await
            .inspect_err(|e| tracing::warn!(error = %e, "cannot read the last change applied"))
            .ok()
            .flatten();
        Some(HelloFacts {
            cursor,
            head: self.head().await,
            last,
            recover_after,
        })
    }

    /// The newest event of this node's log, for the cloud's edge list
    /// (backlog); `None` (logged) when it cannot be read, which only leaves
    /// the list less precise.
    async fn head(&self) -> Option<i64> {
        self.wms
            .outgoing_head()
            .await
            .inspect_err(|e| tracing::warn!(error = %e, "cannot read the outbox"))
            .ok()
    }

    /// Publishes the events `from..=to` of the outbox, in batches.
    async fn send(&mut self, from: i64, to: i64) {
        let limit = u32::try_from(to - from + 1).unwrap_or(u32::MAX);
        let events = match self.wms.outgoing_sync(from - 1, to, limit).await {
            Ok(events) => events,
            Err(e) => return tracing::error!(error = %e, "cannot read the outbox"),
        };
        let (batches, oversized) = message::batches(self.state.outbox().session(), events);
        for e in oversized {
            tracing::error!(seq = e.seq, id = %e.id, kind = %e.kind, "an event is too large to send; the cloud will record it as rejected");
        }
        for b in batches {
            self.publish_up(message::encode(&b)).await;
        }
    }

    /// Takes a page of own events back: what it came to, for the state.
    async fn take_back(&self, page: RecoveredPage) -> Option<TakenBack> {
        let through = page.through;
        let taken = match self.wms.take_back(self.business, page).await {
            Ok(taken) => taken,
            Err(e) => {
                tracing::error!(error = %e, "could not take own events back from the cloud");
                return None;
            }
        };
        Some(match taken {
            Recovered::NotNeeded => TakenBack::NotNeeded,
            Recovered::Gap {
                recovered,
                stale: true,
            } => {
                tracing::info!(
                    recovered,
                    "an old page of own events, already taken: ignored"
                );
                TakenBack::Stale
            }
            Recovered::Gap { recovered, .. } => {
                tracing::info!(recovered, "a page of own events was lost: asking again");
                TakenBack::Lost
            }
            Recovered::Applied {
                recovered,
                done: false,
                rejected,
                ..
            } => {
                tracing::info!(
                    recovered,
                    through,
                    rejected,
                    "took own events back from the cloud"
                );
                TakenBack::More
            }
            Recovered::Applied {
                recovered,
                done: true,
                renumbered,
                missing,
                rejected,
            } => {
                if missing > 0 {
                    tracing::error!(
                        missing,
                        through,
                        "the cloud could not hand back some of this node's events (applied before it kept their seqs): their effects are in the cloud, not here"
                    );
                }
                tracing::warn!(
                    through = recovered,
                    renumbered,
                    rejected,
                    "this node's log is whole again: events made since the restore go up after the cloud's"
                );
                TakenBack::Done { through: recovered }
            }
        })
    }

    /// Records the link's state for the box's status.
    async fn record(&self, status: Status) {
        let recorded = match status {
            Status::Connected => self.wms.set_connected(true).await,
            Status::Down(reason) => self.wms.set_link_down(reason).await,
            Status::Trouble(why) => self.wms.set_link_trouble(why).await,
        };
        if let Err(e) = recorded {
            tracing::warn!(error = %e, "could not record the link state");
        }
    }

    /// Publishes on the up topic, through the fault injector if there is one.
    async fn publish_up(&mut self, payload: Vec<u8>) {
        let topic = self.state.topics().up.clone();
        for (topic, payload) in self.through_faults(topic, payload) {
            self.publish(&topic, false, payload).await;
        }
    }

    async fn publish(&self, topic: &str, retain: bool, payload: Vec<u8>) {
        if let Err(e) = self
            .client
            .publish(topic, QoS::AtLeastOnce, retain, payload)
            .await
        {
            tracing::warn!(error = %e, topic, "could not queue a publish");
        }
    }

    /// What goes on for one message: with the `faults` feature, what the
    /// injector lets through (nothing, it, or it twice); otherwise the
    /// message itself.
    fn through_faults(&mut self, topic: String, payload: Vec<u8>) -> Vec<(String, Vec<u8>)> {
        #[cfg(feature = "faults")]
        if let Some(f) = self.faults.as_mut() {
            return f.pass(topic, payload);
        }
        vec![(topic, payload)]
    }

    /// Delivers what the fault injector held back, both ways.
    #[cfg(feature = "faults")]
    async fn release_held(&mut self) {
        let Some(held) = self.faults.as_mut().map(Injector::release) else {
            return;
        };
        for (topic, payload) in held {
            if topic == self.state.topics().up {
                self.publish(&topic, false, payload).await;
            } else {
                self.message(&topic, &payload, false).await;
            }
        }
    }
}
