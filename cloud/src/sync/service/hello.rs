//! Hellos: what an edge asks when it connects, and the cloud's answer.

use super::{Downlink, Service};
use depot_protocol::sync::DownMessage;
use depot_protocol::sync::downstream::Feed;
use depot_protocol::sync::message::{Landmark, encode};
use depot_protocol::sync::topic::EdgeTopic;
use depot_wms::sync::Sighting;
use tokio::time::Instant;

/// A hello as it arrived.
pub(super) struct Hello {
    pub session: String,
    pub version: String,
    pub cursor: i64,
    pub head: Option<i64>,
    pub last: Option<Landmark>,
    pub recover_after: Option<i64>,
    pub node: Option<u32>,
}

/// What makes a hello impossible to answer: positions in a log are never
/// negative, and the change an edge applied last is at or before its
/// cursor. (A cursor past the cloud's head is possible: the cloud's
/// database was restored from an older backup; that is answered with
/// `reset`.)
fn malformed(
    cursor: i64,
    head: Option<i64>,
    recover_after: Option<i64>,
    last: Option<Landmark>,
) -> Option<String> {
    if cursor < 0 {
        return Some(format!("the hello's cursor {cursor} is below 0"));
    }
    if let Some(head) = head.filter(|h| *h < 0) {
        return Some(format!("the hello's head {head} is below 0"));
    }
    if let Some(after) = recover_after.filter(|a| *a < 0) {
        return Some(format!("the hello's recover_after {after} is below 0"));
    }
    if let Some(last) = last.filter(|l| l.rev < 0 || l.rev > cursor) {
        return Some(format!(
            "the hello's last change (rev {}) is not within its cursor 0..={cursor}",
            last.rev
        ));
    }
    None
}

impl Service {
    /// A hello: refused when it cannot be answered, not answered when it
    /// comes too soon after the last ones, else recorded and answered
    /// (an ack with the cursor here, a hand-back, then pages).
    pub(super) async fn hello(&mut self, topic: EdgeTopic, hello: Hello) {
        let Hello {
            session,
            version,
            cursor,
            head,
            last,
            recover_after,
            node,
        } = hello;
        if let Some(reason) = malformed(cursor, head, recover_after, last) {
            tracing::warn!(%topic, %reason, "refused a hello");
            let refused = encode(&DownMessage::Refused { reason });
            self.send(topic.business, &topic.edge, refused).await;
            return;
        }
        let key = (topic.business, topic.edge.clone());
        if !self.hellos.admit(&key, Instant::now().into_std()) {
            tracing::debug!(%topic, "a hello too soon after the last ones: not answered");
            return;
        }
        let sighting = Sighting {
            session: Some(session),
            version: Some(version),
            head,
            taking_back_after: None,
            by_state: false,
        };
        let EdgeTopic { business, edge, .. } = topic;
        let session = sighting.session.clone().unwrap_or_default();
        let version = sighting.version.clone().unwrap_or_default();
        let head = sighting.head;
        let record = match self.wms.edge(business, edge.clone()).await {
            Ok(Some(record)) => record,
            Ok(None) => {
                tracing::warn!(%business, %edge, reason = "the edge is not registered", "refused a hello");
                let reason = format!(
                    "edge {edge} is not registered in business {business}: register it in the cloud (depot-cloud edge register --business {business} --edge {edge}) or correct business_id and edge_id in this box's settings"
                );
                self.send(business, &edge, encode(&DownMessage::Refused { reason }))
                    .await;
                return;
            }
            Err(e) => {
                tracing::warn!(%business, %edge, reason = %e, "cannot look up the edge");
                return;
            }
        };
        if let Some(node) = node.filter(|n| *n != record.node) {
            tracing::warn!(%business, %edge, node, registered = record.node, reason = "the edge runs as another node", "refused a hello");
            let reason = format!(
                "this box runs as node {node}, but edge {edge} is registered in business {business} as node {}: its records' ids would collide with another box's. Set node = {} in its settings, on a new data directory (a database keeps the node it was made with)",
                record.node, record.node
            );
            self.send(business, &edge, encode(&DownMessage::Refused { reason }))
                .await;
            return;
        }
        // Listed as taking its events back only if there is any to take.
        let sighting = Sighting {
            taking_back_after: Some(recover_after.filter(|after| *after < record.up_cursor)),
            ..sighting
        };
        if let Err(e) = self.wms.edge_seen(business, edge.clone(), sighting).await {
            tracing::warn!(%business, %edge, reason = %e, "cannot record the edge's hello");
        }
        tracing::info!(%business, %edge, %session, %version, cursor, ?head, up_cursor = record.up_cursor, "edge said hello");
        let stranger = match last {
            Some(last) => match self.wms.holds(last).await {
                Ok(holds) => (!holds).then(|| {
                    format!(
                        "the change the edge applied last ({} at rev {}) is not in the cloud's log there",
                        last.id, last.rev
                    )
                }),
                Err(e) => {
                    tracing::warn!(%business, %edge, reason = %e, "cannot check the edge's last change");
                    None
                }
            },
            None => None,
        };
        let past =
            self.head().await.filter(|head| cursor > *head).map(|head| {
                format!("the edge's cursor {cursor} is past the cloud's log (at {head})")
            });
        if let Some(reason) = past.or(stranger) {
            // Not this log (a cloud database restored from an older backup,
            // say): the edge must reload.
            tracing::warn!(%business, %edge, %session, %reason, "sent a reset");
            self.edges.remove(&(business, edge.clone()));
            self.send(business, &edge, encode(&DownMessage::Reset { reason }))
                .await;
            return;
        }
        // An edge whose log may lack its tail takes back what this cloud
        // applied from it, a page per hello, before it sends anything new.
        if let Some(after) = recover_after.filter(|after| *after < record.up_cursor) {
            match self
                .wms
                .own_page(business, &edge, after.max(0), record.up_cursor)
                .await
            {
                Ok(page) => {
                    tracing::info!(%business, %edge, after, through = record.up_cursor, "handing an edge back its own events");
                    self.send(business, &edge, encode(&page)).await;
                }
                Err(e) => {
                    tracing::warn!(%business, %edge, reason = %e, "cannot read the edge's own events");
                }
            }
        }
        // The cursor as it stands: an edge acknowledged further than this
        // (a cloud restored from an older backup) sends the rest again.
        let ack = DownMessage::Ack {
            session: session.clone(),
            through_seq: record.up_cursor,
            gap: false,
            rejected: vec![],
            hello: true,
            hands_back: true,
        };
        self.send(business, &edge, encode(&ack)).await;
        self.edges.insert(
            (business, edge),
            Downlink {
                session,
                feed: Feed::from_hello(cursor.max(0)),
                pending: true,
                stalled: None,
            },
        );
        self.dirty = true;
    }
}
