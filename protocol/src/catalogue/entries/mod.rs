//! The entries: one per kind of the event log, in the order of
//! [`EventKind`].
//!
//! Each entry is a constant in the file of its family; [`CATALOGUE`] lists
//! them all, in that order.

mod channels;
mod devices;
mod floor;
mod office;
mod records;
mod returns;
mod stock_tasks;
mod sync;

use super::Presence::Required;
use super::Ty::Integer;
use super::{EventType, Field, Presence, Ty};
use crate::event::EventKind;

const fn f(name: &'static str, ty: Ty, presence: Presence, doc: &'static str) -> Field {
    Field {
        name,
        ty,
        presence,
        doc,
    }
}

const BUSINESS: Field = f("business_id", Integer, Required, "The business.");
const WAREHOUSE: Field = f("warehouse_id", Integer, Required, "The warehouse.");

/// Every entry, at its kind's place in [`EventKind::ALL`] (checked as the
/// crate compiles), so a kind's entry is found by its index.
pub static CATALOGUE: &[EventType] = &ENTRIES;

const ENTRIES: [EventType; EventKind::ALL.len()] = [
    records::BUSINESS_CREATED,
    records::BUSINESS_UPDATED,
    records::WAREHOUSE_CREATED,
    records::WAREHOUSE_UPDATED,
    records::SSCC_BLOCK_GRANTED,
    records::KEY_CREATED,
    records::KEY_REVOKED,
    records::ITEM_CREATED,
    records::ITEM_UPDATED,
    records::LOCATION_SAVED,
    records::STOCK_MOVED,
    records::ORDER_CREATED,
    records::ORDER_STATUS_CHANGED,
    records::ORDER_ADDRESS_CHANGED,
    channels::ORDER_OVERSOLD,
    channels::ORDER_SPLIT,
    records::INBOUND_CREATED,
    records::INBOUND_RECEIVED,
    floor::WAVE_CREATED,
    floor::PICK_SCANNED,
    floor::PICK_LINE_COMPLETED,
    floor::WAVE_COMPLETED,
    floor::SHIPMENT_PACKED,
    floor::SHIPMENT_MILESTONE,
    floor::PACKAGE_LOADED,
    floor::SHIPMENT_ESTIMATED_DELIVERY_CHANGED,
    floor::DISPATCH_RUN_CLOSED,
    floor::PUTAWAY_CREATED,
    floor::PUTAWAY_SCANNED,
    stock_tasks::COUNT_CREATED,
    stock_tasks::COUNT_SCANNED,
    stock_tasks::COUNT_APPROVED,
    stock_tasks::COUNT_CANCELLED,
    stock_tasks::REPLENISH_LEVEL_SAVED,
    stock_tasks::REPLENISH_CREATED,
    stock_tasks::REPLENISH_SCANNED,
    returns::RETURN_CREATED,
    returns::RETURN_RECEIVED,
    returns::RETURN_CANCELLED,
    channels::CHANNEL_SAVED,
    channels::CHANNEL_AVAILABILITY_CHANGED,
    devices::PRINTER_SAVED,
    devices::PRINT_JOB_CREATED,
    devices::PRINT_JOB_UPDATED,
    devices::STATION_SCANNED,
    devices::PRINTER_STATE_CHANGED,
    devices::PRINTER_SEEN,
    devices::SCALE_WEIGHED,
    office::DOCUMENT_ATTACHED,
    office::RELEASE_PUBLISHED,
    office::RELEASE_TRANSLATED,
    office::CRM_DEPARTMENT_SAVED,
    office::CRM_FORM_SAVED,
    office::CRM_THREAD_OPENED,
    office::CRM_MESSAGE_POSTED,
    office::PRICING_RULES_CHANGED,
    office::PRICING_JOB_EXECUTED,
    sync::SYNC_CONFLICT,
    sync::EDGE_ONLINE,
    sync::EDGE_OFFLINE,
    sync::SYNC_BACKLOG,
];

// A kind without its entry, or entries out of order, fails the build.
const _: () = {
    let mut i = 0;
    while i < ENTRIES.len() {
        assert!(
            ENTRIES[i].kind as usize == i,
            "CATALOGUE is not in the order of EventKind"
        );
        i += 1;
    }
};
