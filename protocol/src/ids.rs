//! Typed identifiers: an order id can never be passed where an item id is
//! expected. Integer ids are assigned by the store that owns the record;
//! movement and event ids are UUIDv7 so any node can mint them.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The largest id: ids stay exact in every JSON reader (2^53 - 1).
pub const MAX_ID: i64 = (1 << 53) - 1;

macro_rules! int_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
            utoipa::ToSchema,
        )]
        #[serde(transparent)]
        pub struct $name(pub i64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

int_id!(
    /// A tenant: every resource belongs to exactly one business.
    BusinessId
);
int_id!(
    /// A warehouse of a business.
    WarehouseId
);
int_id!(
    /// A catalog item (one SKU).
    ItemId
);
int_id!(
    /// An order ingested into fulfilment.
    OrderId
);
int_id!(
    /// An API key (its id, never its secret).
    KeyId
);
int_id!(
    /// A price list of a business (retail, wholesale, a channel's list).
    PriceListId
);
int_id!(
    /// A wave of orders picked together.
    WaveId
);
int_id!(
    /// One line of a wave's pick lists: an item from a location for an order.
    PickLineId
);
int_id!(
    /// A printer of a business, in the cloud or attached to an edge.
    PrinterId
);
int_id!(
    /// A job sent to a printer.
    PrintJobId
);
int_id!(
    /// A shipment: an order's packages with a carrier.
    ShipmentId
);
int_id!(
    /// A dispatch run: shipments handed to one carrier together.
    DispatchRunId
);
int_id!(
    /// A location in a warehouse: a dock, a bulk rack, a pick face.
    LocationId
);
int_id!(
    /// Received goods to move from the dock to where they are kept.
    PutawayTaskId
);
int_id!(
    /// A cycle count: locations a counter is sent to count.
    CountId
);
int_id!(
    /// Stock to move from reserve to a pick location.
    ReplenishTaskId
);
int_id!(
    /// A customer return: an RMA for units of a dispatched order.
    ReturnId
);
int_id!(
    /// A sales channel: a storefront, a marketplace, a till.
    ChannelId
);

macro_rules! uuid_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
            utoipa::ToSchema,
        )]
        #[serde(transparent)]
        #[schema(value_type = String, format = "uuid")]
        pub struct $name(pub uuid::Uuid);

        impl $name {
            /// A new time-ordered id.
            pub fn new() -> Self {
                Self(uuid::Uuid::now_v7())
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

uuid_id!(
    /// A stock movement: minted where the movement happens (cloud or edge).
    MovementId
);
uuid_id!(
    /// An entry of the event log.
    EventId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_ids_are_time_ordered() {
        let a = MovementId::new();
        let b = MovementId::new();
        assert!(a < b);
    }

    #[test]
    fn int_ids_serialize_as_plain_numbers() {
        assert_eq!(
            serde_json::to_string(&OrderId(42)).ok().as_deref(),
            Some("42")
        );
    }
}
