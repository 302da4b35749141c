//! Business records: tenants, keys, the catalogue, stock, orders and inbound
//! orders.

use super::{BUSINESS, f};
use crate::catalog::Item;
use crate::catalogue::Audience::{Business, Internal};
use crate::catalogue::Presence::{Optional, Required};
use crate::catalogue::Replication;
use crate::catalogue::Source::{Any, Cloud};
use crate::catalogue::Ty::{Array, Integer, Object, String};
use crate::catalogue::refs::Entity as E;
use crate::catalogue::refs::{makes, names};
use crate::catalogue::{EventType, Payload, record};
use crate::event::EventKind;
use crate::inbound::InboundOrder;
use crate::location::LocationRecord;
use crate::order::Order;
use crate::stock::Movement;
use crate::tenant::{ApiKey, Business as BusinessRecord, Warehouse};

pub const BUSINESS_CREATED: EventType = EventType {
    kind: EventKind::BusinessCreated,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A business was created (the first event of its log).",
    source: Cloud,
    audience: Business,
    refs: &[names("/id", E::Business)],
    payload: record::<BusinessRecord>(&[]),
};

pub const BUSINESS_UPDATED: EventType = EventType {
    kind: EventKind::BusinessUpdated,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A business's settings changed (its GS1 company prefix): the whole record as it now stands.",
    source: Cloud,
    audience: Business,
    refs: &[names("/id", E::Business)],
    payload: record::<BusinessRecord>(&[]),
};

pub const WAREHOUSE_CREATED: EventType = EventType {
    kind: EventKind::WarehouseCreated,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A warehouse was added to a business.",
    source: Cloud,
    audience: Business,
    refs: &[makes("/id", E::Warehouse)],
    payload: record::<Warehouse>(&[]),
};

pub const WAREHOUSE_UPDATED: EventType = EventType {
    kind: EventKind::WarehouseUpdated,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A warehouse's name or address changed: the whole record as it now stands.",
    source: Cloud,
    audience: Business,
    refs: &[names("/id", E::Warehouse)],
    payload: record::<Warehouse>(&[]),
};

pub const SSCC_BLOCK_GRANTED: EventType = EventType {
    kind: EventKind::SsccBlockGranted,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A block of SSCC serials of the business's GS1 company prefix was granted to a node \
              (the cloud or an edge), which numbers its parcels from it, offline too.",
    source: Cloud,
    audience: Internal,
    refs: &[names("/business_id", E::Business)],
    payload: Payload::Fields(&[
        BUSINESS,
        f(
            "node",
            Integer,
            Required,
            "The node the block is for (0: the cloud; an edge's number as registered).",
        ),
        f("prefix", String, Required, "The GS1 company prefix."),
        f(
            "first",
            Integer,
            Required,
            "The block's first serial (extension digit and serial reference as one number).",
        ),
        f("last", Integer, Required, "The block's last serial."),
        f("first_sscc", String, Required, "The block's first SSCC."),
        f("last_sscc", String, Required, "The block's last SSCC."),
        f("at", String, Required, "When (RFC 3339)."),
    ]),
};

pub const KEY_CREATED: EventType = EventType {
    kind: EventKind::KeyCreated,
    replication: Replication::Everywhere,
    version: 1,
    summary: "An API key was issued; carries its hash so edges authenticate offline.",
    source: Cloud,
    audience: Internal,
    refs: &[
        names("/key/business_id", E::Business),
        makes("/key/id", E::Key),
    ],
    payload: Payload::Fields(&[
        f(
            "key",
            Object,
            Required,
            "The key's record (ApiKey), never the secret.",
        ),
        f("hash", String, Required, "Hex SHA-256 of the secret."),
    ]),
};

pub const KEY_REVOKED: EventType = EventType {
    kind: EventKind::KeyRevoked,
    replication: Replication::Everywhere,
    version: 1,
    summary: "An API key was revoked; edges stop accepting it.",
    source: Cloud,
    audience: Internal,
    refs: &[names("/id", E::Key)],
    payload: record::<ApiKey>(&[]),
};

pub const ITEM_CREATED: EventType = EventType {
    kind: EventKind::ItemCreated,
    replication: Replication::Everywhere,
    version: 1,
    summary: "An item was added to the catalog.",
    source: Cloud,
    audience: Business,
    refs: &[
        makes("/id", E::Item),
        names("/locations/*/warehouse_id", E::Warehouse),
    ],
    payload: record::<Item>(&[]),
};

pub const ITEM_UPDATED: EventType = EventType {
    kind: EventKind::ItemUpdated,
    replication: Replication::Everywhere,
    version: 1,
    summary: "An item changed (an edit, or a price a pricing job set).",
    source: Cloud,
    audience: Business,
    refs: &[
        makes("/id", E::Item),
        names("/locations/*/warehouse_id", E::Warehouse),
    ],
    payload: record::<Item>(&[]),
};

pub const LOCATION_SAVED: EventType = EventType {
    kind: EventKind::LocationSaved,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A location was made or edited, at the cloud or on the floor: the whole record as it now \
              stands. Stock names a location by its code within the warehouse, which never changes.",
    source: Any,
    audience: Business,
    refs: &[
        makes("/id", E::Location),
        names("/warehouse_id", E::Warehouse),
    ],
    payload: record::<LocationRecord>(&[]),
};

pub const STOCK_MOVED: EventType = EventType {
    kind: EventKind::StockMoved,
    replication: Replication::Everywhere,
    version: 1,
    summary: "Inventory changed: one movement of the stock ledger (receipt, \
              adjustment, reservation, shipment).",
    source: Any,
    audience: Business,
    refs: &[
        names("/item_id", E::Item),
        names("/warehouse_id", E::Warehouse),
    ],
    payload: record::<Movement>(&[]),
};

pub const ORDER_CREATED: EventType = EventType {
    kind: EventKind::OrderCreated,
    replication: Replication::Everywhere,
    version: 1,
    summary: "An order was created.",
    source: Cloud,
    audience: Business,
    refs: &[
        makes("/id", E::Order),
        names("/warehouse_id", E::Warehouse),
        names("/lines/*/item_id", E::Item),
        // Only the detail view lists returns; a new order has none.
        names("/returns/*/id", E::Return),
        names("/backorder/lines/*/item_id", E::Item),
        names("/split_from", E::Order),
    ],
    payload: record::<Order>(&[]),
};

pub const ORDER_STATUS_CHANGED: EventType = EventType {
    kind: EventKind::OrderStatusChanged,
    replication: Replication::Everywhere,
    version: 1,
    summary: "An order moved in its state machine (confirmed, picking, packed, \
              dispatched, delivered, cancelled).",
    source: Any,
    audience: Business,
    refs: &[
        names("/order_id", E::Order),
        names("/warehouse_id", E::Warehouse),
    ],
    payload: Payload::Fields(&[
        f("order_id", Integer, Required, "The order."),
        f(
            "warehouse_id",
            Integer,
            Optional,
            "The order's warehouse (absent from events written before it was added).",
        ),
        f(
            "change",
            Object,
            Required,
            "The change: `from`, `to`, `at`, `actor`, `note`.",
        ),
    ]),
};

pub const ORDER_ADDRESS_CHANGED: EventType = EventType {
    kind: EventKind::OrderAddressChanged,
    replication: Replication::Everywhere,
    version: 1,
    summary: "Someone corrected an order's shipping address (before it was packed).",
    source: Any,
    audience: Business,
    refs: &[
        names("/order_id", E::Order),
        names("/warehouse_id", E::Warehouse),
    ],
    payload: Payload::Fields(&[
        f("order_id", Integer, Required, "The order."),
        f("warehouse_id", Integer, Required, "The order's warehouse."),
        f(
            "shipping_address",
            Object,
            Required,
            "The address as corrected, whole: `name`, `line1`, `line2`, `city`, `region`, `postal_code`, `country`.",
        ),
        f(
            "address_issues",
            Array,
            Required,
            "What still keeps it from being shipped to (`name`, `status`); empty when nothing does.",
        ),
        f("actor", String, Required, "Who corrected it."),
        f("note", String, Optional, "Why."),
        f("at", String, Required, "When (RFC 3339)."),
    ]),
};

pub const INBOUND_CREATED: EventType = EventType {
    kind: EventKind::InboundCreated,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A purchase order (inbound) is expected.",
    source: Cloud,
    audience: Business,
    refs: &[
        makes("/id", E::Inbound),
        names("/warehouse_id", E::Warehouse),
        names("/lines/*/item_id", E::Item),
    ],
    payload: record::<InboundOrder>(&[]),
};

pub const INBOUND_RECEIVED: EventType = EventType {
    kind: EventKind::InboundReceived,
    replication: Replication::Everywhere,
    version: 1,
    summary: "Goods of an inbound were received (accepted or rejected).",
    source: Any,
    audience: Business,
    refs: &[
        names("/inbound_id", E::Inbound),
        names("/received/*/item_id", E::Item),
        names("/received/*/putaway_task_id", E::PutawayTask),
    ],
    payload: Payload::Fields(&[
        f("inbound_id", Integer, Required, "The inbound."),
        BUSINESS,
        f(
            "received",
            Array,
            Required,
            "Each line received: sku, item_id, accepted, rejected, lot, expiry, \
             serial, unexpected, movement_id.",
        ),
        f("status", String, Required, "The inbound's status after it."),
    ]),
};
