//! Work on the stock locations hold: cycle counts (made, counted location
//! by location, approved or called off) and replenishment (pick locations
//! refilled from reserve).

use crate::catalogue::Audience::Business;
use crate::catalogue::Presence::Required;
use crate::catalogue::Replication;
use crate::catalogue::Source::Any;
use crate::catalogue::Ty::Integer;
use crate::catalogue::entries::f;
use crate::catalogue::refs::Entity as E;
use crate::catalogue::refs::{makes, names};
use crate::catalogue::{EventType, record};
use crate::count::{Count, CountScanned, CountSummary};
use crate::event::EventKind;
use crate::replenish::{ReplenishLevel, ReplenishTask};

pub const COUNT_CREATED: EventType = EventType {
    kind: EventKind::CountCreated,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A cycle count was made: the locations to count and the lines (item and lot) they \
              held, the expected figures included (the API hides them from a blind count's \
              counter; this event is for nodes and integrations).",
    source: Any,
    audience: Business,
    refs: &[
        makes("/id", E::Count),
        names("/warehouse_id", E::Warehouse),
        names("/item_ids/*", E::Item),
        names("/lines/*/item_id", E::Item),
    ],
    payload: record::<Count>(&[]),
};

pub const COUNT_SCANNED: EventType = EventType {
    kind: EventKind::CountScanned,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A count scan counted a line, or closed a location (settling its lines: final, or \
              waiting for a recount): the location and the lines it changed, as they now stand.",
    source: Any,
    audience: Business,
    refs: &[
        names("/id", E::Count),
        names("/warehouse_id", E::Warehouse),
        names("/lines/*/item_id", E::Item),
    ],
    payload: record::<CountScanned>(&[]),
};

pub const COUNT_APPROVED: EventType = EventType {
    kind: EventKind::CountApproved,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A count was approved: each final line's variance is booked as a cycle_count \
              movement (stock.moved events of their own, named by the count and the line, so \
              an approval made on two nodes books once).",
    source: Any,
    audience: Business,
    refs: &[names("/id", E::Count), names("/warehouse_id", E::Warehouse)],
    payload: record::<CountSummary>(&[]),
};

pub const COUNT_CANCELLED: EventType = EventType {
    kind: EventKind::CountCancelled,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A count was called off; nothing was booked. An approval of the same count on \
              another node wins over it.",
    source: Any,
    audience: Business,
    refs: &[names("/id", E::Count), names("/warehouse_id", E::Warehouse)],
    payload: record::<CountSummary>(&[]),
};

pub const REPLENISH_LEVEL_SAVED: EventType = EventType {
    kind: EventKind::ReplenishLevelSaved,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A pick location's min and max of an item were set.",
    source: Any,
    audience: Business,
    refs: &[
        names("/warehouse_id", E::Warehouse),
        names("/item_id", E::Item),
    ],
    payload: record::<ReplenishLevel>(&[]),
};

pub const REPLENISH_CREATED: EventType = EventType {
    kind: EventKind::ReplenishCreated,
    replication: Replication::Everywhere,
    version: 1,
    summary: "What left a pick location took it below its min: a task to refill it to its max \
              from reserve, the lot that expires first first.",
    source: Any,
    audience: Business,
    refs: &[
        makes("/id", E::ReplenishTask),
        names("/warehouse_id", E::Warehouse),
        names("/item_id", E::Item),
    ],
    payload: record::<ReplenishTask>(&[]),
};

pub const REPLENISH_SCANNED: EventType = EventType {
    kind: EventKind::ReplenishScanned,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A replenishment scan moved stock from reserve to the pick location: the task as \
              it now stands (the movements are stock.moved events of their own).",
    source: Any,
    audience: Business,
    refs: &[
        names("/id", E::ReplenishTask),
        names("/warehouse_id", E::Warehouse),
        names("/item_id", E::Item),
    ],
    payload: record::<ReplenishTask>(&[f(
        "units",
        Integer,
        Required,
        "Units this scan moved (`moved` is the task's total).",
    )]),
};
