//! Hellos: the shell around `depot_protocol::sync::hello`. It reads what
//! the database knows of the edge, records the sighting, and carries out
//! the answer the protocol decides.

use super::{Downlink, Service};
use depot_protocol::sync::DownMessage;
use depot_protocol::sync::downstream::Feed;
use depot_protocol::sync::hello::{Answer, Facts, Registration, answer};
use depot_protocol::sync::message::{Hello, encode};
use depot_protocol::sync::topic::EdgeTopic;
use depot_wms::sync::Sighting;
use tokio::time::Instant;

impl Service {
    /// A hello: refused when it cannot be answered, not answered when it
    /// comes too soon after the last ones, else recorded and answered
    /// (an ack with the cursor here, a hand-back, then pages).
    pub(super) async fn hello(&mut self, topic: EdgeTopic, hello: Hello) {
        let EdgeTopic { business, edge, .. } = topic;
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
        let record = match self.wms.edge(business, edge.clone()).await {
            Ok(record) => record,
            Err(e) => {
                tracing::warn!(%business, %edge, reason = %e, "cannot look up the edge");
                return;
            }
        };
        let holds_last = match (hello.last, &record) {
            (Some(last), Some(_)) => self
                .wms
                .holds(last)
                .await
                .inspect_err(|e| tracing::warn!(%business, %edge, reason = %e, "cannot check the edge's last change"))
                .ok(),
            _ => None,
        };
        let facts = Facts {
            registered: record.map(|r| Registration {
                node: r.node,
                up_cursor: r.up_cursor,
            }),
            holds_last,
            head: self.head().await,
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
        if let Err(e) = self.wms.edge_seen(business, edge.clone(), sighting).await {
            tracing::warn!(%business, %edge, reason = %e, "cannot record the edge's hello");
        }
        let up_cursor = facts.registered.map_or(0, |r| r.up_cursor);
        tracing::info!(%business, %edge, %session, %version, cursor, ?head, up_cursor, "edge said hello");
        let (hand_back, ack, feed_from) = match answered {
            Ok(serve) => serve,
            // Not this log (a cloud database restored from an older
            // backup, say): the edge must reload.
            Err(reason) => {
                tracing::warn!(%business, %edge, %session, %reason, "sent a reset");
                self.edges.remove(&key);
                self.send(business, &edge, encode(&DownMessage::Reset { reason }))
                    .await;
                return;
            }
        };
        // An edge whose log may lack its tail takes back what this cloud
        // applied from it, a page per hello, before it sends anything new.
        if let Some((after, through)) = hand_back {
            match self
                .wms
                .own_page(business, &edge, &session, after, through)
                .await
            {
                Ok(page) => {
                    tracing::info!(%business, %edge, after, through, "handing an edge back its own events");
                    self.send(business, &edge, encode(&page)).await;
                }
                Err(e) => {
                    tracing::warn!(%business, %edge, reason = %e, "cannot read the edge's own events");
                }
            }
        }
        self.send(business, &edge, encode(&ack)).await;
        self.edges.insert(
            key,
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
