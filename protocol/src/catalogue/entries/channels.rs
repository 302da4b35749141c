//! Sales channels and what each may sell: cloud records, followed by
//! connectors through webhooks; orders sold beyond it, and backorders.

use crate::catalogue::Audience::Business;
use crate::catalogue::Replication;
use crate::catalogue::Source::Cloud;
use crate::catalogue::refs::Entity as E;
use crate::catalogue::refs::{makes, names};
use crate::catalogue::{EventType, record};
use crate::channel::{AvailabilityChanged, Channel};
use crate::event::EventKind;
use crate::order::{Oversold, Split};

pub const CHANNEL_SAVED: EventType = EventType {
    kind: EventKind::ChannelSaved,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A sales channel was made or edited: the warehouses whose stock it may sell, what \
              is held back from it and the most it may take. Edges keep its figures from their \
              own books, offline too.",
    source: Cloud,
    audience: Business,
    refs: &[
        makes("/id", E::Channel),
        names("/warehouse_ids/*", E::Warehouse),
    ],
    payload: record::<Channel>(&[]),
};

pub const CHANNEL_AVAILABILITY_CHANGED: EventType = EventType {
    kind: EventKind::ChannelAvailabilityChanged,
    replication: Replication::Local,
    version: 1,
    summary: "What a channel may sell of an item changed: the figure as it stands. Changes within \
              a second of each other come as one event per channel and item, the last figure; \
              the change feed (GET /v1/channels/{business_id}/{channel}/availability/changes) \
              has every item that changed, by cursor.",
    source: Cloud,
    audience: Business,
    refs: &[names("/channel_id", E::Channel), names("/item_id", E::Item)],
    payload: record::<AvailabilityChanged>(&[]),
};

pub const ORDER_OVERSOLD: EventType = EventType {
    kind: EventKind::OrderOversold,
    replication: Replication::Local,
    version: 1,
    summary: "An order came for more of an item than its channel could sell: it is taken (the \
              channel sold it) and flagged. With `backordered` it waits for stock as a \
              backorder; otherwise it stays pending for someone to decide.",
    source: Cloud,
    audience: Business,
    refs: &[
        names("/order_id", E::Order),
        names("/warehouse_id", E::Warehouse),
        names("/lines/*/item_id", E::Item),
    ],
    payload: record::<Oversold>(&[]),
};

pub const ORDER_SPLIT: EventType = EventType {
    kind: EventKind::OrderSplit,
    replication: Replication::Everywhere,
    version: 1,
    summary: "Stock came for part of a backorder whose channel splits: the order keeps the \
              units in stock (its confirmation follows) and the rest waits as a new order, \
              `backorder_id`, in its place in the queue.",
    source: Cloud,
    audience: Business,
    refs: &[
        names("/order_id", E::Order),
        names("/warehouse_id", E::Warehouse),
        names("/lines/*/item_id", E::Item),
        names("/backorder_id", E::Order),
    ],
    payload: record::<Split>(&[]),
};
