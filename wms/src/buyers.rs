//! Buyers: who bought, kept with each order as it is ingested (in its
//! transaction) and with each contact form a buyer writes through
//! (the office side calls [`note`]); found by name, id or wildcard.

use crate::store::buyers as sql;
use crate::{Result, Wms};
use depot_protocol::crm::buyers::{BuyerResults, BuyerSearch};
use depot_protocol::order::Order;
use depot_protocol::{BusinessId, Page};
use depot_sql::Db;

pub use sql::Sighting;

/// Keeps a buyer seen on an order or through a form, inside the caller's
/// write; answers the buyer's id, or `None` when the sighting names no one.
pub fn note(conn: &Db, business: BusinessId, sighting: Sighting) -> Result<Option<i64>> {
    sql::note(conn, business, sighting)
}

/// Sends the reads finding an order's buyer, with the order's own reads
/// (see [`sql::Lookup`]); `None` when it names no one.
pub(crate) fn look_up(
    conn: &Db,
    business: BusinessId,
    buyer: &depot_protocol::order::Buyer,
) -> Result<Option<sql::Lookup>> {
    sql::look_up(
        conn,
        business,
        buyer.name.as_deref(),
        buyer.email.as_deref(),
        buyer.phone.as_deref(),
    )
}

/// Keeps the buyer of an order just ingested, in its transaction, found
/// by `lookup` ([`look_up`] of its buyer).
pub(crate) fn note_order(conn: &Db, order: &Order, lookup: Option<sql::Lookup>) -> Result<()> {
    let Some(lookup) = lookup else {
        return Ok(());
    };
    sql::note_found(
        conn,
        Sighting {
            name: order.buyer.name.as_deref(),
            email: order.buyer.email.as_deref(),
            phone: order.buyer.phone.as_deref(),
            channel: &order.channel,
            at: &order.created_at,
            order: true,
        },
        lookup,
    )?;
    Ok(())
}

impl Wms {
    /// Buyers a checked search finds, a page of them.
    pub async fn find_buyers(
        &self,
        business: BusinessId,
        search: BuyerSearch,
        page: Page,
    ) -> Result<BuyerResults> {
        self.read(move |conn| {
            let found = sql::search(conn, business, &search, page)?;
            Ok(BuyerResults::new(found.rows, found.total, found.filtered))
        })
        .await
    }
}
