//! Printers and their jobs, and what stations, printers and scales report.

use super::{BUSINESS, f};
use crate::catalogue::Audience::Business;
use crate::catalogue::Presence::{Nullable, Optional, Required};
use crate::catalogue::Replication;
use crate::catalogue::Source::{Any, Cloud, Edge};
use crate::catalogue::Ty::{Array, Boolean, Integer, Object, String, Timestamp};
use crate::catalogue::refs::Entity as E;
use crate::catalogue::refs::{makes, names};
use crate::catalogue::{EventType, Payload, record};
use crate::event::EventKind;
use crate::printing::{PrintJob, Printer};

pub const PRINTER_SAVED: EventType = EventType {
    kind: EventKind::PrinterSaved,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A printer was added or edited.",
    source: Cloud,
    audience: Business,
    refs: &[makes("/id", E::Printer)],
    payload: record::<Printer>(&[]),
};

pub const PRINT_JOB_CREATED: EventType = EventType {
    kind: EventKind::PrintJobCreated,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A print job was queued (a label, a document).",
    source: Any,
    audience: Business,
    refs: &[makes("/id", E::PrintJob), names("/printer_id", E::Printer)],
    payload: record::<PrintJob>(&[
        BUSINESS,
        f(
            "data_base64",
            String,
            Optional,
            "The job's bytes, for a printer attached to an edge (`edge://…`).",
        ),
    ]),
};

pub const PRINT_JOB_UPDATED: EventType = EventType {
    kind: EventKind::PrintJobUpdated,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A printer printed a job (`printed`: the label is out), failed it \
              (`failed`, with the error), or will retry it.",
    source: Any,
    audience: Business,
    refs: &[names("/id", E::PrintJob), names("/printer_id", E::Printer)],
    payload: Payload::Fields(&[
        f("id", Integer, Required, "The job."),
        BUSINESS,
        f("printer_id", Integer, Required, "The printer."),
        f(
            "status",
            String,
            Required,
            "queued, sending, printed, failed or cancelled.",
        ),
        f(
            "error",
            String,
            Nullable,
            "Why it failed, in the printer's terms.",
        ),
        f("at", Timestamp, Required, "When."),
    ]),
};

pub const STATION_SCANNED: EventType = EventType {
    kind: EventKind::StationScanned,
    replication: Replication::Recorded,
    version: 1,
    summary: "A packing or picking station handled an input: a scan accepted \
              (`ok`) or rejected (with the error), a weighing, a task set.",
    source: Edge,
    audience: Business,
    refs: &[
        names("**/warehouse_id", E::Warehouse),
        names("**/item_id", E::Item),
        names("**/order_id", E::Order),
        names("**/inbound_id", E::Inbound),
        names("**/wave_id", E::Wave),
        names("**/line_id", E::PickLine),
        names("**/shipment_id", E::Shipment),
        names("**/shipment/id", E::Shipment),
        names("**/dispatch_run_id", E::DispatchRun),
        names("**/printer_id", E::Printer),
        names("**/label_job/id", E::PrintJob),
    ],
    payload: Payload::Fields(&[
        BUSINESS,
        f(
            "station",
            String,
            Required,
            "The station, as configured on the edge.",
        ),
        f(
            "input",
            Object,
            Required,
            "What came in: `{scan, scanner}`, `{task}`, `{pack}` or `{release}`.",
        ),
        f("task", Object, Nullable, "The station's task after it."),
        f("ok", Boolean, Required, "Whether the input was accepted."),
        f(
            "status",
            Integer,
            Required,
            "The HTTP status the same call answers.",
        ),
        f(
            "message",
            String,
            Required,
            "What the station says, for the screen.",
        ),
        f(
            "errors",
            Array,
            Required,
            "Field errors of a rejected input.",
        ),
        f(
            "result",
            Object,
            Nullable,
            "What it did (a pick, a reception, a pack).",
        ),
    ]),
};

pub const PRINTER_STATE_CHANGED: EventType = EventType {
    kind: EventKind::PrinterStateChanged,
    replication: Replication::ToCloud,
    version: 1,
    summary: "A printer attached to an edge changed state: ready, faulted (with its \
              problems) or unreachable. Written when the state or its problems change, \
              never per status poll; printing does not count (a busy printer is ready). Paced per \
              printer: writes at least 1 s apart, the gap doubling up to 5 min while \
              changes keep coming and back to 1 s after 10 quiet minutes; a state that \
              did not last until the next write is skipped, so a flapping printer \
              writes a handful of events, and the last one says the state it settled \
              in. The edge, and the cloud once synced, set the printer record's \
              `status` (`online`, `offline`) and `last_seen` from it. A printer \
              bound to its record only after this event (the record reached the \
              edge later) is told to the record by a `printer.seen`.",
    source: Edge,
    audience: Business,
    refs: &[names("/printer_id", E::Printer)],
    payload: Payload::Fields(&[
        BUSINESS,
        f(
            "printer_id",
            Integer,
            Nullable,
            "The printer record this device prints for (connection \
             `edge://<edge id>`), if it had reached the edge when the event \
             was written.",
        ),
        f(
            "device",
            String,
            Required,
            "The printer as configured on the edge (`[[devices.printers]]`).",
        ),
        f(
            "station",
            String,
            Nullable,
            "The station that prints on it, as configured on the edge.",
        ),
        f(
            "state",
            String,
            Required,
            "`ready` (answers and can print), `faulted` (answers but cannot \
             print) or `unreachable` (no connection, or no answer).",
        ),
        f(
            "problems",
            Array,
            Required,
            "What keeps a faulted printer from printing: `paper_out`, \
             `ribbon_out`, `head_open`, `paused`, …; empty otherwise.",
        ),
        f(
            "previous",
            String,
            Required,
            "The state of the printer's previous event, or `unknown` for the \
             first since the edge started.",
        ),
        f(
            "at",
            Timestamp,
            Required,
            "When the printer was first seen in this state.",
        ),
    ]),
};

pub const PRINTER_SEEN: EventType = EventType {
    kind: EventKind::PrinterSeen,
    replication: Replication::ToCloud,
    version: 1,
    summary: "What a printer attached to an edge is, for its record: written when the \
              device is first bound to its record (at start, or when the record reaches \
              the edge) and then, while the printer answers, whenever the record's \
              `last_seen` would be more than 5 minutes old; never per status poll. A \
              state change is a `printer.state_changed` instead. The edge, and the \
              cloud once synced, set the record's `status` (`online`, `offline`) and \
              `last_seen` from it.",
    source: Edge,
    audience: Business,
    refs: &[names("/printer_id", E::Printer)],
    payload: Payload::Fields(&[
        BUSINESS,
        f(
            "printer_id",
            Integer,
            Required,
            "The printer record this device prints for (connection `edge://<edge id>`).",
        ),
        f(
            "device",
            String,
            Required,
            "The printer as configured on the edge (`[[devices.printers]]`).",
        ),
        f(
            "station",
            String,
            Nullable,
            "The station that prints on it, as configured on the edge.",
        ),
        f(
            "state",
            String,
            Required,
            "`ready`, `faulted` or `unreachable`, as in `printer.state_changed`.",
        ),
        f(
            "problems",
            Array,
            Required,
            "What keeps a faulted printer from printing; empty otherwise.",
        ),
        f(
            "at",
            Timestamp,
            Required,
            "When the edge saw the printer in this state.",
        ),
    ]),
};

pub const SCALE_WEIGHED: EventType = EventType {
    kind: EventKind::ScaleWeighed,
    replication: Replication::Recorded,
    version: 1,
    summary: "A scale attached to an edge settled on a new weight: a stable reading \
              away from zero that differs from the last one written by more than two \
              of the scale's display steps, not every reading. Emptying the scale \
              writes nothing, and the next load is written even if it weighs the \
              same. Paced per scale: at least 1 s apart, the gap doubling up to 5 min \
              while the weight keeps changing without the scale being emptied. This \
              is whatever lies on the scale; a station weighing a parcel to pack it \
              (checked against the order's weight) is a `station.scanned` with a \
              `pack` input.",
    source: Edge,
    audience: Business,
    refs: &[],
    payload: Payload::Fields(&[
        BUSINESS,
        f(
            "device",
            String,
            Required,
            "The scale as configured on the edge (`[[devices.scales]]` id).",
        ),
        f(
            "station",
            String,
            Nullable,
            "The station that weighs on it, as configured on the edge.",
        ),
        f(
            "grams",
            Integer,
            Required,
            "The weight, rounded to the gram.",
        ),
        f(
            "value",
            String,
            Required,
            "The weight as the scale reported it, in `unit` (`1.250`).",
        ),
        f("unit", String, Required, "`g`, `kg`, `lb` or `oz`."),
        f(
            "stable",
            Boolean,
            Required,
            "Always true: only settled weights are written.",
        ),
        f(
            "at",
            Timestamp,
            Required,
            "When the edge received the reading.",
        ),
    ]),
};
