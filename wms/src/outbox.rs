//! The edge's outbox: this node's own events, by `out_seq`, as the link
//! reads them to send up, and the cloud's acknowledgement of them. The
//! rules of what to send when are the protocol's
//! (`depot_protocol::sync::outbox`); every read and write of the outbox
//! the link makes is here.

use crate::store::{events, sync as sql};
use crate::{Result, Wms};
use depot_protocol::event::Event;
use depot_protocol::now;
use depot_protocol::sync::SyncEvent;

impl Wms {
    /// This node's own events with `out_seq` in `(after, through]`.
    pub async fn outgoing(
        &self,
        after: i64,
        through: i64,
        limit: u32,
    ) -> Result<Vec<(i64, Event)>> {
        self.read(move |conn| events::outgoing(conn, after, through, limit))
            .await
    }

    /// The newest `out_seq` of this node's log (0 when empty).
    pub async fn outgoing_head(&self) -> Result<i64> {
        self.read(events::outgoing_head).await
    }

    /// Edge: this node's own events with `out_seq` in `(after, through]`,
    /// as the link sends them up.
    pub async fn outgoing_sync(
        &self,
        after: i64,
        through: i64,
        limit: u32,
    ) -> Result<Vec<SyncEvent>> {
        self.read(move |conn| events::outgoing_sync(conn, after, through, limit))
            .await
    }

    /// Edge: the cloud acknowledged this node's log through `through`.
    pub async fn record_ack(&self, through: i64) -> Result<()> {
        self.write(move |conn| sql::set_acked(conn, through, &now()))
            .await
    }

    /// Edge: the cloud has less of this node's log than it acknowledged (a
    /// cloud restored from an older backup): the acknowledgement moves back
    /// to `to`, so what follows is sent again, after a restart too.
    pub async fn rewind_ack(&self, to: i64) -> Result<()> {
        self.write(move |conn| sql::rewind_acked(conn, to)).await
    }
}
