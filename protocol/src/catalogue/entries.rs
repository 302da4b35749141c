//! The entries: one per kind of the event log, in the order of
//! [`EventKind`](crate::event::EventKind).

use super::Audience::{Business, Internal};
use super::Presence::{Nullable, Optional, Required};
use super::Source::{Any, Cloud, Edge};
use super::Ty::{Array, Boolean, Date, Integer, Object, String, Timestamp};
use super::{EventType, Field, Payload, Presence, Ty, record};
use crate::crm::contact::{ContactForm, Department};
use crate::document::Document;
use crate::inbound::InboundOrder;
use crate::picking::Wave;
use crate::printing::{PrintJob, Printer};
use crate::shipping::{DispatchRun, Shipment};
use crate::stock::Movement;
use crate::tenant::{ApiKey, Business as BusinessRecord, Warehouse};
use crate::{catalog::Item, order::Order, release::Release};

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

pub static CATALOGUE: &[EventType] = &[
    EventType {
        name: "business.created",
        version: 1,
        summary: "A business was created (the first event of its log).",
        source: Cloud,
        audience: Business,
        payload: record::<BusinessRecord>(&[]),
    },
    EventType {
        name: "warehouse.created",
        version: 1,
        summary: "A warehouse was added to a business.",
        source: Cloud,
        audience: Business,
        payload: record::<Warehouse>(&[]),
    },
    EventType {
        name: "key.created",
        version: 1,
        summary: "An API key was issued; carries its hash so edges authenticate offline.",
        source: Cloud,
        audience: Internal,
        payload: Payload::Fields(&[
            f(
                "key",
                Object,
                Required,
                "The key's record (ApiKey), never the secret.",
            ),
            f("hash", String, Required, "Hex SHA-256 of the secret."),
        ]),
    },
    EventType {
        name: "key.revoked",
        version: 1,
        summary: "An API key was revoked; edges stop accepting it.",
        source: Cloud,
        audience: Internal,
        payload: record::<ApiKey>(&[]),
    },
    EventType {
        name: "item.created",
        version: 1,
        summary: "An item was added to the catalog.",
        source: Cloud,
        audience: Business,
        payload: record::<Item>(&[]),
    },
    EventType {
        name: "item.updated",
        version: 1,
        summary: "An item changed (an edit, or a price a pricing job set).",
        source: Cloud,
        audience: Business,
        payload: record::<Item>(&[]),
    },
    EventType {
        name: "stock.moved",
        version: 1,
        summary: "Inventory changed: one movement of the stock ledger (receipt, \
                  adjustment, reservation, shipment).",
        source: Any,
        audience: Business,
        payload: record::<Movement>(&[]),
    },
    EventType {
        name: "order.created",
        version: 1,
        summary: "An order was created.",
        source: Cloud,
        audience: Business,
        payload: record::<Order>(&[]),
    },
    EventType {
        name: "order.status_changed",
        version: 1,
        summary: "An order moved in its state machine (confirmed, picking, packed, \
                  dispatched, delivered, cancelled).",
        source: Any,
        audience: Business,
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
    },
    EventType {
        name: "inbound.created",
        version: 1,
        summary: "A purchase order (inbound) is expected.",
        source: Cloud,
        audience: Business,
        payload: record::<InboundOrder>(&[]),
    },
    EventType {
        name: "inbound.received",
        version: 1,
        summary: "Goods of an inbound were received (accepted or rejected).",
        source: Any,
        audience: Business,
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
    },
    EventType {
        name: "wave.created",
        version: 1,
        summary: "A pick wave was released, with its pick lists in walking order.",
        source: Any,
        audience: Business,
        payload: record::<Wave>(&[]),
    },
    EventType {
        name: "pick.scanned",
        version: 1,
        summary: "A pick scan was accepted: what was taken and what is left.",
        source: Any,
        audience: Business,
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
    },
    EventType {
        name: "pick.line_completed",
        version: 1,
        summary: "A pick line has all its units: written with the scan that completed it.",
        source: Any,
        audience: Business,
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
    },
    EventType {
        name: "wave.completed",
        version: 1,
        summary: "A wave's last unit was picked.",
        source: Any,
        audience: Business,
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
    },
    EventType {
        name: "shipment.packed",
        version: 1,
        summary: "An order was packed: its shipment, packages and tracking number.",
        source: Any,
        audience: Business,
        payload: record::<Shipment>(&[]),
    },
    EventType {
        name: "shipment.milestone",
        version: 1,
        summary: "A carrier reported a tracking milestone (dispatched, in transit, \
                  out for delivery, delivered, exception).",
        source: Any,
        audience: Business,
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
    },
    EventType {
        name: "shipment.estimated_delivery_changed",
        version: 1,
        summary: "A milestone set or moved a shipment's estimated delivery date: \
                  what the buyer is told.",
        source: Cloud,
        audience: Business,
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
    },
    EventType {
        name: "dispatch_run.closed",
        version: 1,
        summary: "A carrier's dispatch run was closed: the goods left, a manifest was made.",
        source: Any,
        audience: Business,
        payload: record::<DispatchRun>(&[]),
    },
    EventType {
        name: "printer.saved",
        version: 1,
        summary: "A printer was added or edited.",
        source: Cloud,
        audience: Business,
        payload: record::<Printer>(&[]),
    },
    EventType {
        name: "print_job.created",
        version: 1,
        summary: "A print job was queued (a label, a document).",
        source: Any,
        audience: Business,
        payload: record::<PrintJob>(&[
            BUSINESS,
            f(
                "data_base64",
                String,
                Optional,
                "The job's bytes, for a printer attached to an edge (`edge://…`).",
            ),
        ]),
    },
    EventType {
        name: "print_job.updated",
        version: 1,
        summary: "A printer printed a job (`printed`: the label is out), failed it \
                  (`failed`, with the error), or will retry it.",
        source: Any,
        audience: Business,
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
    },
    EventType {
        name: "station.scanned",
        version: 1,
        summary: "A packing or picking station handled an input: a scan accepted \
                  (`ok`) or rejected (with the error), a weighing, a task set.",
        source: Edge,
        audience: Business,
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
                "What came in: `{scan, scanner}`, `{task}` or `{pack}`.",
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
    },
    EventType {
        name: "printer.state_changed",
        version: 1,
        summary: "A printer attached to an edge changed state: ready, faulted (with its \
                  problems) or unreachable. Written when the state or its problems change, \
                  never per status poll; printing does not count (a busy printer is ready). Paced per \
                  printer: writes at least 1 s apart, the gap doubling up to 5 min while \
                  changes keep coming and back to 1 s after 10 quiet minutes; a state that \
                  did not last until the next write is skipped, so a flapping printer \
                  writes a handful of events, and the last one says the state it settled \
                  in. The cloud sets the printer record's `status` (`online`, `offline`) \
                  and `last_seen` from it.",
        source: Edge,
        audience: Business,
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
    },
    EventType {
        name: "scale.weighed",
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
    },
    EventType {
        name: "document.attached",
        version: 1,
        summary: "A document was attached to an order, shipment, item or inbound.",
        source: Cloud,
        audience: Business,
        payload: record::<Document>(&[]),
    },
    EventType {
        name: "release.published",
        version: 1,
        summary: "Release notes were published (every edge keeps them).",
        source: Cloud,
        audience: Internal,
        payload: record::<Release>(&[]),
    },
    EventType {
        name: "release.translated",
        version: 1,
        summary: "A locale's notes were added to a published release.",
        source: Cloud,
        audience: Internal,
        payload: Payload::Fields(&[
            f("release_id", Integer, Required, "The release."),
            f("product", String, Required, "edge or cloud."),
            f("version", String, Required, "The release's version."),
            f("locale", String, Required, "The locale added."),
            f("note", Object, Required, "The notes in that locale."),
            f("updated_at", Timestamp, Required, "When."),
        ]),
    },
    EventType {
        name: "crm.department_saved",
        version: 1,
        summary: "A contact department was created or edited (cloud only).",
        source: Cloud,
        audience: Business,
        payload: record::<Department>(&[]),
    },
    EventType {
        name: "crm.form_saved",
        version: 1,
        summary: "A contact form was created or edited (cloud only).",
        source: Cloud,
        audience: Business,
        payload: record::<ContactForm>(&[]),
    },
    EventType {
        name: "crm.thread_opened",
        version: 1,
        summary: "A contact form opened a customer thread with its first message.",
        source: Cloud,
        audience: Business,
        payload: Payload::Fields(&[
            f("thread", Object, Required, "The thread (Thread)."),
            f("message", Object, Required, "Its first message (Message)."),
        ]),
    },
    EventType {
        name: "crm.message_posted",
        version: 1,
        summary: "A message was added to a customer thread.",
        source: Cloud,
        audience: Business,
        payload: Payload::Fields(&[
            f("thread_id", Integer, Required, "The thread."),
            f("message", Object, Required, "The message (Message)."),
        ]),
    },
    EventType {
        name: "pricing_rules.changed",
        version: 1,
        summary: "A pricing rule was created, edited, deleted or moved (cloud only).",
        source: Cloud,
        audience: Business,
        payload: Payload::Fields(&[
            f(
                "change",
                String,
                Required,
                "created, edited, deleted or moved.",
            ),
            f("rule", Object, Optional, "The rule, for all but moves."),
            f(
                "positions",
                Array,
                Optional,
                "For moves: each rule's new position.",
            ),
        ]),
    },
    EventType {
        name: "pricing_job.executed",
        version: 1,
        summary: "A pricing job ran; the prices it changed are `item.updated` events.",
        source: Cloud,
        audience: Business,
        payload: Payload::Fields(&[
            f("job_id", String, Required, "The job's key."),
            f(
                "rules",
                Array,
                Required,
                "Per rule: rule_id, items_matched, items_changed, items_skipped.",
            ),
        ]),
    },
    EventType {
        name: "sync.conflict",
        version: 1,
        summary: "Applying another node's event clashed here: what, why, and what stands.",
        source: Any,
        audience: Business,
        payload: Payload::Fields(&[
            f("event_id", String, Required, "The other node's event."),
            f("origin", String, Required, "The node that wrote it."),
            f("kind", String, Required, "Its kind."),
            f("reason", String, Required, "Why it clashed."),
            f("resolution", String, Required, "What stands now."),
        ]),
    },
    EventType {
        name: "edge.online",
        version: 1,
        summary: "An edge connected to the cloud: a new run of it, or back after being away.",
        source: Cloud,
        audience: Business,
        payload: Payload::Fields(&[
            BUSINESS,
            f("edge_id", String, Required, "The edge, as registered."),
            f(
                "session",
                String,
                Nullable,
                "Its run: changes when the edge restarts.",
            ),
            f("version", String, Nullable, "The edge's software version."),
            f(
                "head",
                Integer,
                Nullable,
                "The newest event of its log, as it reported.",
            ),
        ]),
    },
    EventType {
        name: "edge.offline",
        version: 1,
        summary: "An edge's connection to the cloud ended: its goodbye, or its last will \
                  when the connection dropped. The floor keeps working; its events follow \
                  when it is back.",
        source: Cloud,
        audience: Business,
        payload: Payload::Fields(&[
            BUSINESS,
            f("edge_id", String, Required, "The edge."),
            f("session", String, Required, "The run that went."),
        ]),
    },
    EventType {
        name: "sync.backlog",
        version: 1,
        summary: "An edge came back with events the cloud does not have yet (`backlog` \
                  > 0), or has since sent them all (`backlog` 0). Once per backlog, \
                  not per batch.",
        source: Cloud,
        audience: Business,
        payload: Payload::Fields(&[
            BUSINESS,
            f("edge_id", String, Required, "The edge."),
            f(
                "backlog",
                Integer,
                Required,
                "Its events not yet in the cloud.",
            ),
            f(
                "up_cursor",
                Integer,
                Required,
                "The last of its events the cloud applied.",
            ),
            f(
                "reported_head",
                Integer,
                Nullable,
                "The newest event of its log, as reported.",
            ),
        ]),
    },
];
