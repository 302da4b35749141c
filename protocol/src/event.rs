//! The event log's vocabulary: what every write appends, and what sync
//! replicates.

use crate::{BusinessId, EventId};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Declares the kinds once: the enum, its string forms both ways, `ALL`.
macro_rules! kinds {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, )*) => {
        /// The kinds of events the engine appends. The string form is
        /// stored and sent; new kinds are added, existing ones never change
        /// meaning. Each has its entry in [`crate::catalogue`], which says
        /// who writes it and what sync does with it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum EventKind {
            $( $(#[$doc])* $variant, )*
        }

        impl EventKind {
            /// Every kind, in the order of the catalogue.
            pub const ALL: [EventKind; [$(stringify!($variant)),*].len()] = [$(Self::$variant),*];

            pub const fn as_str(self) -> &'static str {
                match self {
                    $( Self::$variant => $name, )*
                }
            }

            /// The kind of a stored or sent name; `None` for a kind this
            /// node does not know (a newer node wrote it).
            pub fn parse(name: &str) -> Option<Self> {
                match name {
                    $( $name => Some(Self::$variant), )*
                    _ => None,
                }
            }
        }
    };
}

kinds! {
    BusinessCreated = "business.created",
    /// The business's settings changed (its GS1 company prefix).
    BusinessUpdated = "business.updated",
    WarehouseCreated = "warehouse.created",
    /// A warehouse's name or address changed.
    WarehouseUpdated = "warehouse.updated",
    /// Cloud: a block of SSCC serials was granted to a node, which numbers
    /// its parcels from it.
    SsccBlockGranted = "sscc.block_granted",
    KeyCreated = "key.created",
    KeyRevoked = "key.revoked",
    ItemCreated = "item.created",
    ItemUpdated = "item.updated",
    /// A location was made or edited (at the cloud or on the floor).
    LocationSaved = "location.saved",
    StockMoved = "stock.moved",
    OrderCreated = "order.created",
    OrderStatusChanged = "order.status_changed",
    /// Someone corrected an order's shipping address.
    OrderAddressChanged = "order.address_changed",
    /// An order came for more than its channel could sell (cloud only).
    OrderOversold = "order.oversold",
    /// A backorder's units in stock went ahead; the rest waits as a new
    /// order.
    OrderSplit = "order.split",
    InboundCreated = "inbound.created",
    InboundReceived = "inbound.received",
    WaveCreated = "wave.created",
    PickScanned = "pick.scanned",
    /// A pick line has all its units (with the scan that completed it).
    PickLineCompleted = "pick.line_completed",
    /// A wave's last unit was picked.
    WaveCompleted = "wave.completed",
    ShipmentPacked = "shipment.packed",
    ShipmentMilestone = "shipment.milestone",
    /// A package was scanned onto its dispatch run's vehicle.
    PackageLoaded = "package.loaded",
    /// A carrier's milestone set or moved a shipment's estimated delivery
    /// (cloud only, never sent to edges).
    ShipmentEstimatedDeliveryChanged = "shipment.estimated_delivery_changed",
    DispatchRunClosed = "dispatch_run.closed",
    /// Goods were received at a dock or staging location: a task to put
    /// them away.
    PutawayCreated = "putaway.created",
    /// A putaway scan moved goods from the dock to a location.
    PutawayScanned = "putaway.scanned",
    /// A cycle count was made: its locations and the lines they hold.
    CountCreated = "count.created",
    /// A count scan counted a line, or closed a location.
    CountScanned = "count.scanned",
    /// A count's variances were booked.
    CountApproved = "count.approved",
    /// A count was called off.
    CountCancelled = "count.cancelled",
    /// A pick location's min and max of an item were set.
    ReplenishLevelSaved = "replenishment.level_saved",
    /// A pick location went below its min: a task to refill it.
    ReplenishCreated = "replenishment.created",
    /// A replenishment scan moved stock from reserve to the pick location.
    ReplenishScanned = "replenishment.scanned",
    /// A customer return was authorised: its RMA number and lines.
    ReturnCreated = "return.created",
    /// A returns station graded returned units: restock, damaged or scrap.
    ReturnReceived = "return.received",
    /// A return was called off before anything of it arrived.
    ReturnCancelled = "return.cancelled",
    /// A sales channel was made or edited (at the cloud; edges keep its
    /// figures too).
    ChannelSaved = "channel.saved",
    /// What a channel may sell of an item changed (cloud only, debounced).
    ChannelAvailabilityChanged = "channel.availability_changed",
    PrinterSaved = "printer.saved",
    PrintJobCreated = "print_job.created",
    /// A device printed a job, failed it, or is waiting to retry it.
    PrintJobUpdated = "print_job.updated",
    /// What a station did with a scan from its scanner (or a weighing):
    /// the station screens follow these.
    StationScanned = "station.scanned",
    /// Edge: a configured printer went from one state to another (ready,
    /// faulted with its problems, unreachable).
    PrinterStateChanged = "printer.state_changed",
    /// Edge: what a configured printer is, for its record: when the device
    /// is bound to the record, and now and then while it answers.
    PrinterSeen = "printer.seen",
    /// Edge: a scale settled on a new weight.
    ScaleWeighed = "scale.weighed",
    DocumentAttached = "document.attached",
    ReleasePublished = "release.published",
    /// A locale's notes added to a published release.
    ReleaseTranslated = "release.translated",
    /// CRM records live in the cloud only: these are never sent to edges.
    CrmDepartmentSaved = "crm.department_saved",
    CrmFormSaved = "crm.form_saved",
    /// A contact form opened a thread with its first message.
    CrmThreadOpened = "crm.thread_opened",
    CrmMessagePosted = "crm.message_posted",
    /// Pricing rules (cloud only, never sent to edges): one created,
    /// edited, deleted or moved.
    PricingRulesChanged = "pricing_rules.changed",
    /// A pricing job ran; the prices it changed are `item.updated` events.
    PricingJobExecuted = "pricing_job.executed",
    /// Applying another node's event clashed here: what and why.
    SyncConflict = "sync.conflict",
    /// Cloud: an edge connected (a new run of it, or back after being away).
    EdgeOnline = "edge.online",
    /// Cloud: an edge's connection ended (its goodbye or its last will).
    EdgeOffline = "edge.offline",
    /// Cloud: an edge came back with events to send, or has sent them all.
    SyncBacklog = "sync.backlog",
}

impl Serialize for EventKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for EventKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<str>::deserialize(d)?;
        Self::parse(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown event kind {name:?}")))
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One entry of the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Event {
    /// Position in the local log (assigned on append).
    pub seq: i64,
    pub id: EventId,
    /// The node that made the change ("cloud", "edge:<id>").
    pub origin: String,
    pub business_id: Option<BusinessId>,
    pub kind: String,
    /// The version of the payload's shape (see [`crate::catalogue`]).
    #[serde(default = "first_version")]
    pub version: u32,
    pub payload: serde_json::Value,
    pub at: DateTime<Utc>,
}

fn first_version() -> u32 {
    1
}

/// An event made on another node, as this node logs and applies it. Its
/// payload stays the JSON text it arrived as: logged as such, and parsed
/// only into the shape its kind is applied from.
#[derive(Debug, Clone)]
pub struct RemoteEvent {
    pub id: EventId,
    /// The node that made it.
    pub origin: String,
    pub business_id: Option<BusinessId>,
    pub kind: String,
    pub payload: Box<serde_json::value::RawValue>,
    pub at: DateTime<Utc>,
    /// Its position in the log of the edge that made it, when it came up
    /// by sync: kept so that edge can take it back if it loses it.
    pub seq: Option<i64>,
}

impl RemoteEvent {
    /// An event read from another node's log, its payload written out.
    pub fn from_event(e: Event) -> serde_json::Result<Self> {
        Ok(Self {
            payload: serde_json::value::to_raw_value(&e.payload)?,
            id: e.id,
            origin: e.origin,
            business_id: e.business_id,
            kind: e.kind,
            at: e.at,
            seq: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_read_back_what_they_write() {
        for k in EventKind::ALL {
            let json = serde_json::to_string(&k).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", k.as_str()));
            assert_eq!(serde_json::from_str::<EventKind>(&json).ok(), Some(k));
        }
        assert_eq!(EventKind::parse("from.a_newer_node"), None);
    }
}
