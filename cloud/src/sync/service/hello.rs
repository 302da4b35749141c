//! Hellos: the shell around `depot_protocol::sync::hello`. It reads what
//! the database knows of the edge, queues the sighting, and leaves the
//! answer the protocol decides to be said once that commits (see
//! `batches.rs`).

use super::Service;
use super::batches::{HelloAnswer, Then};
use depot_protocol::BusinessId;
use depot_protocol::sync::DownMessage;
use depot_protocol::sync::hello::{Answer, Facts, Registration, answer};
use depot_protocol::sync::message::{Hello, encode};
use depot_protocol::sync::topic::{EdgeId, EdgeTopic};
use depot_wms::sync::{HelloFacts, Sighting};
use tokio::time::Instant;

impl Service {
    /// A hello: refused when it cannot be answered, not answered when it
    /// comes too soon after the last ones, else recorded and answered
    /// (an ack with the cursor here, a hand-back, then pages).
    pub(super) async fn hello(&mut self, topic: EdgeTopic, hello: Hello) {
        let (business, edge) = (topic.business, topic.edge.clone());
        if let Some(reason) = hello.malformed() {
            tracing::warn!(%business, %edge, %reason, "refused a hello");
            let refused = encode(&DownMessage::Refused { reason });
            self.send(business, &edge, refused).await;
            return;
        }
        let key = (business, edge.clone());
        if !self.hellos.admit(&key, Instant::now().into_std()) {
            tracing::debug!(%business, %edge, "a hello too soon after the last ones: not answered");
            return;
        }
        let HelloFacts {
            record,
            holds_last,
            head,
        } = match self
            .wms
            .hello_facts(business, edge.clone(), hello.last)
            .await
        {
            Ok(facts) => facts,
            Err(e) => {
                tracing::warn!(%business, %edge, reason = %e, "cannot read what the hello is answered from");
                return;
            }
        };
        let facts = Facts {
            registered: record.map(|r| Registration {
                node: r.node,
                up_cursor: r.up_cursor,
            }),
            holds_last,
            head: Some(head),
        };
        let (taking_back_after, answered) = match answer(business, &edge, &hello, facts) {
            Answer::Refuse(reason) => {
                tracing::warn!(%business, %edge, %reason, "refused a hello");
                self.send(business, &edge, encode(&DownMessage::Refused { reason }))
                    .await;
                return;
            }
            Answer::Reset {
                reason,
                taking_back_after,
            } => (taking_back_after, Err(reason)),
            Answer::Serve {
                hand_back,
                ack,
                feed_from,
            } => (
                hand_back.map(|(after, _)| after),
                Ok((hand_back, ack, feed_from)),
            ),
        };
        let Hello {
            session,
            version,
            cursor,
            head,
            ..
        } = hello;
        let sighting = Sighting {
            session: Some(session.clone()),
            version: Some(version.clone()),
            head,
            taking_back_after: Some(taking_back_after),
            by_state: false,
            // Answering takes the edge's downlink: another instance that
            // answered an earlier hello stops paging it at its next round.
            downlink_owner: Some(self.options.session.clone()),
        };
        let written = self
            .wms
            .queue_edge_seen(business, edge.clone(), sighting)
            .await;
        let up_cursor = facts.registered.map_or(0, |r| r.up_cursor);
        tracing::info!(%business, %edge, %session, %version, cursor, ?head, up_cursor, "edge said hello");
        let answer = match answered {
            Ok((hand_back, ack, feed_from)) => HelloAnswer::Serve {
                hand_back: self.hand_back(business, &edge, &session, hand_back).await,
                session,
                ack: encode(&ack),
                feed_from,
                gone: false,
            },
            // Not this log (a cloud database restored from an older
            // backup, say): the edge must reload.
            Err(reason) => {
                tracing::warn!(%business, %edge, %session, %reason, "sending a reset");
                self.edges.remove(&key);
                HelloAnswer::Reset(reason)
            }
        };
        // Said once the sighting is committed, with the group's others.
        self.record(topic, Then::Hello(Box::new(answer)), written);
    }

    /// An edge whose log may lack its tail takes back what this cloud
    /// applied from it, a page per hello, before it sends anything new.
    async fn hand_back(
        &self,
        business: BusinessId,
        edge: &EdgeId,
        session: &str,
        range: Option<(i64, i64)>,
    ) -> Option<Vec<u8>> {
        let (after, through) = range?;
        match self
            .wms
            .own_page(business, edge, session, after, through)
            .await
        {
            Ok(page) => {
                tracing::info!(%business, %edge, after, through, "handing an edge back its own events");
                Some(encode(&page))
            }
            Err(e) => {
                tracing::warn!(%business, %edge, reason = %e, "cannot read the edge's own events");
                None
            }
        }
    }
}
