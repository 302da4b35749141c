//! Customer returns: authorised with an RMA number, then received and
//! graded unit by unit at the warehouse. A merchant refunds on these.

use crate::catalogue::Audience::Business;
use crate::catalogue::Presence::{Nullable, Required};
use crate::catalogue::Replication;
use crate::catalogue::Source::Any;
use crate::catalogue::Ty::{Integer, String};
use crate::catalogue::entries::f;
use crate::catalogue::refs::Entity as E;
use crate::catalogue::refs::{makes, names};
use crate::catalogue::{EventType, record};
use crate::event::EventKind;
use crate::returns::Return;

/// What an event about a return as it stands names: the return, its
/// order, its warehouse and its lines' items.
const NAMED: &[crate::catalogue::refs::Reference] = &[
    names("/id", E::Return),
    names("/order_id", E::Order),
    names("/warehouse_id", E::Warehouse),
    names("/lines/*/item_id", E::Item),
];

pub const RETURN_CREATED: EventType = EventType {
    kind: EventKind::ReturnCreated,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A customer return was authorised for units of a dispatched order: its RMA number, \
              and per line the units sent back and why. Nothing is in stock yet.",
    source: Any,
    audience: Business,
    refs: &[
        makes("/id", E::Return),
        names("/order_id", E::Order),
        names("/warehouse_id", E::Warehouse),
        names("/lines/*/item_id", E::Item),
    ],
    payload: record::<Return>(&[]),
};

pub const RETURN_CANCELLED: EventType = EventType {
    kind: EventKind::ReturnCancelled,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A return was called off before any of its units arrived; its units may be \
              returned again. A unit graded on another node meanwhile wins: the return is \
              received as far as it goes.",
    source: Any,
    audience: Business,
    refs: NAMED,
    payload: record::<Return>(&[]),
};

pub const RETURN_RECEIVED: EventType = EventType {
    kind: EventKind::ReturnReceived,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A returns station graded units of a return: restock (booked as returned into the \
              returns location, with a putaway task), damaged (returned into quarantine) or \
              scrap (never in stock). The return as it now stands, and what this scan graded; \
              a refund follows the graded units.",
    source: Any,
    audience: Business,
    refs: NAMED,
    payload: record::<Return>(&[
        f(
            "received_line",
            Integer,
            Required,
            "The return line (its order line's number) the units were graded on.",
        ),
        f("grade", String, Required, "restock, damaged or scrap."),
        f("units", Integer, Required, "Units this scan graded."),
        f(
            "location",
            String,
            Nullable,
            "Where they went (a location's code); null for scrap.",
        ),
    ]),
};
