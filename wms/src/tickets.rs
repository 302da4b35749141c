//! Single-use tickets that open the live feed's websocket for clients
//! that cannot send the key as a header (browsers). They are kept in the
//! database, so on a cloud of several instances a ticket issued by one
//! opens a stream on any (see `store/tickets.rs`).

use crate::documents::sha256_hex;
use crate::store::tickets as sql;
use crate::tenants::new_secret;
use crate::{Result, Wms};
use depot_protocol::now;
use depot_protocol::tenant::Caller;
use std::time::Duration;

impl Wms {
    /// A new ticket for `caller`, valid once within `ttl`; `None` when
    /// `max` tickets are already waiting.
    pub async fn issue_ticket(
        &self,
        caller: Caller,
        ttl: Duration,
        max: u32,
    ) -> Result<Option<String>> {
        let ticket = new_secret("wst_");
        let hash = sha256_hex(ticket.as_bytes());
        let now = now().timestamp_millis();
        let expires_at = now.saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX));
        let kept = self
            .write(move |conn| sql::issue(conn, &hash, caller, now, expires_at, max))
            .await?;
        Ok(kept.then_some(ticket))
    }

    /// Spends `ticket`: whose it was, if it is known and unexpired.
    pub async fn redeem_ticket(&self, ticket: &str) -> Result<Option<Caller>> {
        let hash = sha256_hex(ticket.as_bytes());
        let now = now().timestamp_millis();
        self.write(move |conn| sql::redeem(conn, &hash, now)).await
    }
}
