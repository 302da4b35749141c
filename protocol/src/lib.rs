//! The shared language of Depot: typed ids, the records that cross the wire,
//! the spec's envelopes, and the pure rules both sides apply (the order state
//! machine, barcode check digits, money). Nothing here performs I/O.

pub mod address;
pub mod barcode;
pub mod catalog;
pub mod catalogue;
pub mod channel;
pub mod connector;
pub mod count;
pub mod crm;
pub mod document;
pub mod envelope;
pub mod error;
pub mod event;
#[cfg(test)]
mod extremes;
pub mod gs1;
pub mod ids;
pub mod inbound;
pub mod location;
pub mod money;
pub mod order;
pub mod order_request;
pub mod picking;
pub mod plural;
pub mod pricing;
pub mod printing;
pub mod putaway;
pub mod release;
pub mod replenish;
pub mod returns;
pub mod shipping;
pub mod stock;
pub mod subscription;
pub mod sync;
pub mod tenant;
pub mod validate;
pub mod webhook;

pub use envelope::{DataEnvelope, ListEnvelope, Listed, Page};
pub use error::{ErrorBody, FieldError, FieldErrors};
pub use ids::{
    BusinessId, ChannelId, CountId, DispatchRunId, EventId, ItemId, KeyId, LocationId, MAX_ID,
    MovementId, OrderId, PickLineId, PriceListId, PrintJobId, PrinterId, PutawayTaskId,
    ReplenishTaskId, ReturnId, ShipmentId, WarehouseId, WaveId,
};
pub use money::Money;
pub use order::{OrderStatus, StockEffect, Transition, TransitionError};

/// Timestamps on the wire: RFC 3339, whole seconds, `Z` (the spec's form).
pub type Timestamp = chrono::DateTime<chrono::Utc>;

/// Formats a timestamp the way the spec writes them: `YYYY-MM-DDTHH:MM:SSZ`.
pub fn format_ts(ts: &Timestamp) -> String {
    ts.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The current time, truncated to whole seconds so that what is stored and
/// what is answered are the same value.
pub fn now() -> Timestamp {
    use chrono::SubsecRound;
    chrono::Utc::now().trunc_subsecs(0)
}
