//! The event log's vocabulary: what every write appends, and what sync
//! replicates.

use crate::{BusinessId, EventId};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The kinds of events the engine appends. The string form is stored and
/// sent; new kinds are added, existing ones never change meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EventKind {
    #[serde(rename = "business.created")]
    BusinessCreated,
    /// The business's settings changed (its GS1 company prefix).
    #[serde(rename = "business.updated")]
    BusinessUpdated,
    #[serde(rename = "warehouse.created")]
    WarehouseCreated,
    /// A warehouse's name or address changed.
    #[serde(rename = "warehouse.updated")]
    WarehouseUpdated,
    /// Cloud: a block of SSCC serials was granted to a node, which numbers
    /// its parcels from it.
    #[serde(rename = "sscc.block_granted")]
    SsccBlockGranted,
    #[serde(rename = "key.created")]
    KeyCreated,
    #[serde(rename = "key.revoked")]
    KeyRevoked,
    #[serde(rename = "item.created")]
    ItemCreated,
    #[serde(rename = "item.updated")]
    ItemUpdated,
    #[serde(rename = "stock.moved")]
    StockMoved,
    #[serde(rename = "order.created")]
    OrderCreated,
    #[serde(rename = "order.status_changed")]
    OrderStatusChanged,
    /// Someone corrected an order's shipping address.
    #[serde(rename = "order.address_changed")]
    OrderAddressChanged,
    #[serde(rename = "inbound.created")]
    InboundCreated,
    #[serde(rename = "inbound.received")]
    InboundReceived,
    #[serde(rename = "wave.created")]
    WaveCreated,
    #[serde(rename = "pick.scanned")]
    PickScanned,
    /// A pick line has all its units (with the scan that completed it).
    #[serde(rename = "pick.line_completed")]
    PickLineCompleted,
    /// A wave's last unit was picked.
    #[serde(rename = "wave.completed")]
    WaveCompleted,
    #[serde(rename = "shipment.packed")]
    ShipmentPacked,
    #[serde(rename = "shipment.milestone")]
    ShipmentMilestone,
    /// A package was scanned onto its dispatch run's vehicle.
    #[serde(rename = "package.loaded")]
    PackageLoaded,
    /// A carrier's milestone set or moved a shipment's estimated delivery
    /// (cloud only, never sent to edges).
    #[serde(rename = "shipment.estimated_delivery_changed")]
    ShipmentEstimatedDeliveryChanged,
    #[serde(rename = "dispatch_run.closed")]
    DispatchRunClosed,
    #[serde(rename = "printer.saved")]
    PrinterSaved,
    #[serde(rename = "print_job.created")]
    PrintJobCreated,
    /// A device printed a job, failed it, or is waiting to retry it.
    #[serde(rename = "print_job.updated")]
    PrintJobUpdated,
    /// What a station did with a scan from its scanner (or a weighing):
    /// the station screens follow these.
    #[serde(rename = "station.scanned")]
    StationScanned,
    /// Edge: a configured printer went from one state to another (ready,
    /// faulted with its problems, unreachable).
    #[serde(rename = "printer.state_changed")]
    PrinterStateChanged,
    /// Edge: what a configured printer is, for its record: when the device
    /// is bound to the record, and now and then while it answers.
    #[serde(rename = "printer.seen")]
    PrinterSeen,
    /// Edge: a scale settled on a new weight.
    #[serde(rename = "scale.weighed")]
    ScaleWeighed,
    #[serde(rename = "document.attached")]
    DocumentAttached,
    #[serde(rename = "release.published")]
    ReleasePublished,
    /// A locale's notes added to a published release.
    #[serde(rename = "release.translated")]
    ReleaseTranslated,
    /// CRM records live in the cloud only: these are never sent to edges.
    #[serde(rename = "crm.department_saved")]
    CrmDepartmentSaved,
    #[serde(rename = "crm.form_saved")]
    CrmFormSaved,
    /// A contact form opened a thread with its first message.
    #[serde(rename = "crm.thread_opened")]
    CrmThreadOpened,
    #[serde(rename = "crm.message_posted")]
    CrmMessagePosted,
    /// Pricing rules (cloud only, never sent to edges): one created,
    /// edited, deleted or moved.
    #[serde(rename = "pricing_rules.changed")]
    PricingRulesChanged,
    /// A pricing job ran; the prices it changed are `item.updated` events.
    #[serde(rename = "pricing_job.executed")]
    PricingJobExecuted,
    /// Applying another node's event clashed here: what and why.
    #[serde(rename = "sync.conflict")]
    SyncConflict,
    /// Cloud: an edge connected (a new run of it, or back after being away).
    #[serde(rename = "edge.online")]
    EdgeOnline,
    /// Cloud: an edge's connection ended (its goodbye or its last will).
    #[serde(rename = "edge.offline")]
    EdgeOffline,
    /// Cloud: an edge came back with events to send, or has sent them all.
    #[serde(rename = "sync.backlog")]
    SyncBacklog,
}

impl EventKind {
    /// Every kind, for checks that must cover them all (the catalogue's).
    pub const ALL: [EventKind; 44] = [
        Self::BusinessCreated,
        Self::BusinessUpdated,
        Self::WarehouseCreated,
        Self::WarehouseUpdated,
        Self::SsccBlockGranted,
        Self::KeyCreated,
        Self::KeyRevoked,
        Self::ItemCreated,
        Self::ItemUpdated,
        Self::StockMoved,
        Self::OrderCreated,
        Self::OrderStatusChanged,
        Self::OrderAddressChanged,
        Self::InboundCreated,
        Self::InboundReceived,
        Self::WaveCreated,
        Self::PickScanned,
        Self::PickLineCompleted,
        Self::WaveCompleted,
        Self::ShipmentPacked,
        Self::ShipmentMilestone,
        Self::PackageLoaded,
        Self::ShipmentEstimatedDeliveryChanged,
        Self::DispatchRunClosed,
        Self::PrinterSaved,
        Self::PrintJobCreated,
        Self::PrintJobUpdated,
        Self::StationScanned,
        Self::PrinterStateChanged,
        Self::PrinterSeen,
        Self::ScaleWeighed,
        Self::DocumentAttached,
        Self::ReleasePublished,
        Self::ReleaseTranslated,
        Self::CrmDepartmentSaved,
        Self::CrmFormSaved,
        Self::CrmThreadOpened,
        Self::CrmMessagePosted,
        Self::PricingRulesChanged,
        Self::PricingJobExecuted,
        Self::SyncConflict,
        Self::EdgeOnline,
        Self::EdgeOffline,
        Self::SyncBacklog,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::BusinessCreated => "business.created",
            Self::BusinessUpdated => "business.updated",
            Self::WarehouseCreated => "warehouse.created",
            Self::WarehouseUpdated => "warehouse.updated",
            Self::SsccBlockGranted => "sscc.block_granted",
            Self::KeyCreated => "key.created",
            Self::KeyRevoked => "key.revoked",
            Self::ItemCreated => "item.created",
            Self::ItemUpdated => "item.updated",
            Self::StockMoved => "stock.moved",
            Self::OrderCreated => "order.created",
            Self::OrderStatusChanged => "order.status_changed",
            Self::OrderAddressChanged => "order.address_changed",
            Self::InboundCreated => "inbound.created",
            Self::InboundReceived => "inbound.received",
            Self::WaveCreated => "wave.created",
            Self::PickScanned => "pick.scanned",
            Self::PickLineCompleted => "pick.line_completed",
            Self::WaveCompleted => "wave.completed",
            Self::ShipmentPacked => "shipment.packed",
            Self::ShipmentMilestone => "shipment.milestone",
            Self::PackageLoaded => "package.loaded",
            Self::ShipmentEstimatedDeliveryChanged => "shipment.estimated_delivery_changed",
            Self::DispatchRunClosed => "dispatch_run.closed",
            Self::PrinterSaved => "printer.saved",
            Self::PrintJobCreated => "print_job.created",
            Self::PrintJobUpdated => "print_job.updated",
            Self::StationScanned => "station.scanned",
            Self::PrinterStateChanged => "printer.state_changed",
            Self::PrinterSeen => "printer.seen",
            Self::ScaleWeighed => "scale.weighed",
            Self::DocumentAttached => "document.attached",
            Self::ReleasePublished => "release.published",
            Self::ReleaseTranslated => "release.translated",
            Self::CrmDepartmentSaved => "crm.department_saved",
            Self::CrmFormSaved => "crm.form_saved",
            Self::CrmThreadOpened => "crm.thread_opened",
            Self::CrmMessagePosted => "crm.message_posted",
            Self::PricingRulesChanged => "pricing_rules.changed",
            Self::PricingJobExecuted => "pricing_job.executed",
            Self::SyncConflict => "sync.conflict",
            Self::EdgeOnline => "edge.online",
            Self::EdgeOffline => "edge.offline",
            Self::SyncBacklog => "sync.backlog",
        }
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
    fn kind_strings_match_serde() {
        for k in EventKind::ALL {
            assert_eq!(
                serde_json::to_string(&k).unwrap_or_default(),
                format!("\"{}\"", k.as_str())
            );
        }
    }
}
