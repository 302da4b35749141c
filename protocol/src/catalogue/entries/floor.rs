//! Work on the floor: waves and picks, packing, shipments and their
//! milestones, dispatch runs.

use super::{BUSINESS, WAREHOUSE, f};
use crate::catalogue::Audience::Business;
use crate::catalogue::Presence::{Nullable, Required};
use crate::catalogue::Replication;
use crate::catalogue::Source::{Any, Cloud};
use crate::catalogue::Ty::{Array, Date, Integer, Object, String, Timestamp};
use crate::catalogue::refs::Entity as E;
use crate::catalogue::refs::{makes, names};
use crate::catalogue::{EventType, Payload, record};
use crate::event::EventKind;
use crate::picking::Wave;
use crate::putaway::PutawayTask;
use crate::shipping::{DispatchRun, Shipment};

pub const WAVE_CREATED: EventType = EventType {
    kind: EventKind::WaveCreated,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A pick wave was released, with its pick lists in walking order.",
    source: Any,
    audience: Business,
    refs: &[
        makes("/id", E::Wave),
        names("/warehouse_id", E::Warehouse),
        names("/pick_lists/*/order_id", E::Order),
        makes("/pick_lists/*/lines/*/id", E::PickLine),
        names("/pick_lists/*/lines/*/order_id", E::Order),
        names("/pick_lists/*/lines/*/item_id", E::Item),
    ],
    payload: record::<Wave>(&[]),
};

pub const PICK_SCANNED: EventType = EventType {
    kind: EventKind::PickScanned,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A pick scan was accepted: what was taken and what is left.",
    source: Any,
    audience: Business,
    refs: &[
        names("/wave_id", E::Wave),
        names("/order_id", E::Order),
        names("/line_id", E::PickLine),
        names("/takes/*/line_id", E::PickLine),
    ],
    payload: Payload::Fields(&[
        BUSINESS,
        f("wave_id", Integer, Required, "The wave."),
        f(
            "order_id",
            Integer,
            Required,
            "The order the units are for.",
        ),
        f(
            "line_id",
            Integer,
            Required,
            "The first pick line that took the scan.",
        ),
        f("sku", String, Required, "The item scanned."),
        f("location", String, Nullable, "Where it was picked."),
        f("lot", String, Nullable, "The lot, for lot-tracked items."),
        f(
            "picked",
            Integer,
            Required,
            "Units picked on the line so far.",
        ),
        f("quantity", Integer, Required, "Units the line asks for."),
        f("remaining", Integer, Required, "Left on the line."),
        f(
            "order_remaining",
            Integer,
            Required,
            "Left on the order's pick list.",
        ),
        f(
            "wave_remaining",
            Integer,
            Required,
            "Left in the whole wave.",
        ),
        f(
            "order_status",
            String,
            Required,
            "The order's status after the scan.",
        ),
        f(
            "takes",
            Array,
            Required,
            "Units per pick line (`line_id`, `quantity`): a scan of several units \
             may fill more than one line.",
        ),
    ]),
};

pub const PICK_LINE_COMPLETED: EventType = EventType {
    kind: EventKind::PickLineCompleted,
    replication: Replication::Recorded,
    version: 1,
    summary: "A pick line has all its units: written with the scan that completed it.",
    source: Any,
    audience: Business,
    refs: &[
        names("/warehouse_id", E::Warehouse),
        names("/wave_id", E::Wave),
        names("/order_id", E::Order),
        names("/line_id", E::PickLine),
    ],
    payload: Payload::Fields(&[
        BUSINESS,
        WAREHOUSE,
        f("wave_id", Integer, Required, "The wave."),
        f("order_id", Integer, Required, "The order."),
        f("line_id", Integer, Required, "The pick line."),
        f("sku", String, Required, "The item."),
        f(
            "quantity",
            Integer,
            Required,
            "Units the line asked for, all picked.",
        ),
        f("location", String, Nullable, "Where they were picked."),
    ]),
};

pub const WAVE_COMPLETED: EventType = EventType {
    kind: EventKind::WaveCompleted,
    replication: Replication::Recorded,
    version: 1,
    summary: "A wave's last unit was picked.",
    source: Any,
    audience: Business,
    refs: &[
        names("/warehouse_id", E::Warehouse),
        names("/wave_id", E::Wave),
    ],
    payload: Payload::Fields(&[
        BUSINESS,
        WAREHOUSE,
        f("wave_id", Integer, Required, "The wave."),
        f(
            "completed_at",
            Timestamp,
            Required,
            "When the last unit was picked.",
        ),
    ]),
};

pub const SHIPMENT_PACKED: EventType = EventType {
    kind: EventKind::ShipmentPacked,
    replication: Replication::Everywhere,
    version: 1,
    summary: "An order was packed: its shipment, packages and tracking number.",
    source: Any,
    audience: Business,
    refs: &[
        makes("/id", E::Shipment),
        names("/order_id", E::Order),
        names("/warehouse_id", E::Warehouse),
        makes("/dispatch_run_id", E::DispatchRun),
    ],
    payload: record::<Shipment>(&[]),
};

pub const SHIPMENT_MILESTONE: EventType = EventType {
    kind: EventKind::ShipmentMilestone,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A carrier reported a tracking milestone (dispatched, in transit, \
              out for delivery, delivered, exception).",
    source: Any,
    audience: Business,
    refs: &[names("/shipment_id", E::Shipment)],
    payload: Payload::Fields(&[
        BUSINESS,
        f("shipment_id", Integer, Required, "The shipment."),
        f(
            "event",
            Object,
            Required,
            "The milestone: `milestone`, `at`, `description`, `city`.",
        ),
        f("source", String, Required, "The carrier that reported it."),
        f(
            "dedup_key",
            String,
            Required,
            "`<carrier>:<carrier's event id>`: a milestone is recorded once.",
        ),
    ]),
};

pub const SHIPMENT_ESTIMATED_DELIVERY_CHANGED: EventType = EventType {
    kind: EventKind::ShipmentEstimatedDeliveryChanged,
    replication: Replication::Local,
    version: 1,
    summary: "A milestone set or moved a shipment's estimated delivery date: \
              what the buyer is told.",
    source: Cloud,
    audience: Business,
    refs: &[
        names("/shipment_id", E::Shipment),
        names("/order_id", E::Order),
    ],
    payload: Payload::Fields(&[
        BUSINESS,
        f("shipment_id", Integer, Required, "The shipment."),
        f("order_id", Integer, Required, "Its order."),
        f("tracking_number", String, Required, "Its tracking number."),
        f(
            "previous_estimate",
            Date,
            Nullable,
            "The estimate before, if there was one.",
        ),
        f("estimated_delivery", Date, Required, "The new estimate."),
        f(
            "milestone",
            Object,
            Required,
            "The milestone that moved it: `milestone`, `at`, `description`, `city`.",
        ),
    ]),
};

pub const PACKAGE_LOADED: EventType = EventType {
    kind: EventKind::PackageLoaded,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A package was scanned onto its dispatch run's vehicle (by its SSCC or piece number).",
    source: Any,
    audience: Business,
    refs: &[
        names("/shipment_id", E::Shipment),
        names("/dispatch_run_id", E::DispatchRun),
    ],
    payload: Payload::Fields(&[
        BUSINESS,
        f("shipment_id", Integer, Required, "The package's shipment."),
        f(
            "package",
            Integer,
            Required,
            "The package's index in its shipment (1-based).",
        ),
        f(
            "dispatch_run_id",
            Integer,
            Required,
            "The run it was loaded for.",
        ),
        f(
            "sscc",
            String,
            Nullable,
            "The package's SSCC, if it has one.",
        ),
        f(
            "piece_number",
            String,
            Required,
            "The package's own tracking number.",
        ),
        f("actor", String, Required, "Who scanned it."),
        f("at", String, Required, "When (RFC 3339)."),
    ]),
};

pub const DISPATCH_RUN_CLOSED: EventType = EventType {
    kind: EventKind::DispatchRunClosed,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A carrier's dispatch run was closed: the goods left, a manifest was made.",
    source: Any,
    audience: Business,
    refs: &[
        makes("/id", E::DispatchRun),
        names("/warehouse_id", E::Warehouse),
        names("/shipments/*/shipment_id", E::Shipment),
        names("/shipments/*/order_id", E::Order),
    ],
    payload: record::<DispatchRun>(&[]),
};

pub const PUTAWAY_CREATED: EventType = EventType {
    kind: EventKind::PutawayCreated,
    replication: Replication::Everywhere,
    version: 1,
    summary: "Goods were received at a dock or staging location: a task to put them away, with \
              where the rules suggest.",
    source: Any,
    audience: Business,
    refs: &[
        makes("/id", E::PutawayTask),
        names("/warehouse_id", E::Warehouse),
        names("/item_id", E::Item),
    ],
    payload: record::<PutawayTask>(&[]),
};

pub const PUTAWAY_SCANNED: EventType = EventType {
    kind: EventKind::PutawayScanned,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A putaway scan moved goods from the dock to a location: the task as it now stands \
              (the movements are stock.moved events of their own).",
    source: Any,
    audience: Business,
    refs: &[
        names("/id", E::PutawayTask),
        names("/warehouse_id", E::Warehouse),
        names("/item_id", E::Item),
    ],
    payload: record::<PutawayTask>(&[
        f("moved", Integer, Required, "Units this scan moved."),
        f(
            "location",
            String,
            Required,
            "Where they were put (a location's code).",
        ),
    ]),
};
