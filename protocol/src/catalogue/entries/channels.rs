//! Sales channels and what each may sell: cloud records, followed by
//! connectors through webhooks.

use crate::catalogue::Audience::Business;
use crate::catalogue::Replication;
use crate::catalogue::Source::Cloud;
use crate::catalogue::refs::Entity as E;
use crate::catalogue::refs::{makes, names};
use crate::catalogue::{EventType, record};
use crate::channel::{AvailabilityChanged, Channel};
use crate::event::EventKind;

pub const CHANNEL_SAVED: EventType = EventType {
    kind: EventKind::ChannelSaved,
    replication: Replication::Local,
    version: 1,
    summary: "A sales channel was made or edited: the warehouses whose stock it may sell, what \
              is held back from it and the most it may take.",
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
