//! What goes in and out of a station's machine.

use crate::devices::failure::Failure;
use depot_protocol::returns::Grade;
use depot_protocol::{
    CountId, FieldError, ItemId, OrderId, OrderStatus, PutawayTaskId, ReturnId, WaveId,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a station is set to do: the body of
/// `PUT /v1/edge/stations/{station}/task`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "task", rename_all = "snake_case", deny_unknown_fields)]
pub enum Task {
    /// Scans are refused until a task is set. A variant with (no) fields,
    /// not a unit one: serde lets a unit variant of a tagged enum take any
    /// other field unseen, and a body with a field the route does not take
    /// is refused here, as everywhere.
    Idle {},
    /// Each scan is a pick of the wave, restricted to one order's pick list
    /// if `order_id` is given.
    Picking {
        wave_id: WaveId,
        #[serde(default)]
        order_id: Option<OrderId>,
    },
    /// Each scan receives its units (1, or a GS1 count) into `location`.
    Receiving {
        inbound_id: i64,
        #[serde(default)]
        location: Option<String>,
    },
    /// Scans fill the order's package; the last one weighs, packs and
    /// prints the label.
    Packing { order_id: OrderId },
    /// Scans come in pairs: the goods of the putaway task, then the label
    /// of the location they were put at, which moves them there.
    Putaway { task_id: PutawayTaskId },
    /// A cycle count: a location's label, then its goods one scan at a
    /// time (each adds its units), then the label again to close it.
    Counting { count_id: CountId },
    /// The returns bench: a parcel's RMA label opens its return (or
    /// `return_id` names it), then each unit scanned is graded `grade`.
    /// Set the task again to grade the next units otherwise.
    Returns {
        #[serde(default)]
        return_id: Option<ReturnId>,
        grade: Grade,
    },
}

/// What the station needs to know of an order to pack it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackPlan {
    pub order_id: OrderId,
    pub status: OrderStatus,
    pub lines: Vec<PlanLine>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanLine {
    pub item_id: ItemId,
    pub sku: String,
    pub quantity: i64,
    /// The catalog's weight of one unit, if it has one.
    pub unit_weight_g: Option<i64>,
}

/// A scan, resolved to the item it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scanned {
    pub item_id: ItemId,
    pub sku: String,
    /// Units the code stands for (a GS1 count).
    pub count: Option<i64>,
}

/// A successful engine call: a line for the screen, and the engine's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub message: String,
    pub result: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PackedOrder {
    pub shipment_id: depot_protocol::ShipmentId,
    pub result: Value,
    /// The labels' print job, queued in the same write as the pack on a
    /// station with a printer.
    pub label_job: Option<Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    SetTask(Task),
    PlanLoaded(Result<PackPlan, Failure>),
    Scan(String),
    /// The answer to a pick or a reception.
    Done(Result<Outcome, Failure>),
    Resolved(Result<Scanned, Failure>),
    /// Pack what was scanned (it must be the whole order).
    Pack,
    /// Give the task up: the station goes idle.
    Release,
    /// A stable weight, in grams.
    Weighed(Result<i64, Failure>),
    Packed(Result<PackedOrder, Failure>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Do(Effect),
    Report(Report),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    LoadPlan(OrderId),
    Pick {
        wave_id: WaveId,
        order_id: Option<OrderId>,
        code: String,
    },
    Receive {
        inbound_id: i64,
        location: Option<String>,
        code: String,
    },
    /// Put the goods scanned (`code`) of a putaway task at `location`.
    Putaway {
        task_id: PutawayTaskId,
        code: String,
        location: String,
    },
    /// Count the goods scanned (`code`) at `location`, adding their units;
    /// without `code`, close the location.
    Count {
        count_id: CountId,
        location: String,
        code: Option<String>,
    },
    /// Grade one unit (or a GS1 count of them) of a return.
    Return {
        return_id: ReturnId,
        grade: Grade,
        code: String,
    },
    Resolve(String),
    /// Wait for a stable weight on the station's scale.
    Weigh,
    /// Pack the order: the codes as scanned with their units, one package;
    /// with `print_label`, its label queued on the station's printer in
    /// the same write (a pack whose label cannot be queued is no pack).
    Pack {
        order_id: OrderId,
        items: Vec<(String, i64)>,
        weight_g: i64,
        print_label: bool,
    },
}

impl Effect {
    /// The input that answers this effect when it could not be carried out
    /// at all.
    pub fn failed(&self, f: Failure) -> Input {
        match self {
            Effect::LoadPlan(_) => Input::PlanLoaded(Err(f)),
            Effect::Pick { .. }
            | Effect::Receive { .. }
            | Effect::Putaway { .. }
            | Effect::Count { .. }
            | Effect::Return { .. } => Input::Done(Err(f)),
            Effect::Resolve(_) => Input::Resolved(Err(f)),
            Effect::Weigh => Input::Weighed(Err(f)),
            Effect::Pack { .. } => Input::Packed(Err(f)),
        }
    }
}

/// The answer to one input from the floor: a status as HTTP would give it,
/// a message for the screen, and the engine's answer if there is one.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Report {
    pub status: u16,
    pub message: String,
    pub errors: Vec<FieldError>,
    /// The engine's answer; null when there is none (a refusal, a
    /// release).
    #[schema(value_type = Option<Object>)]
    pub result: Value,
}

impl Report {
    pub(super) fn ok(message: impl Into<String>, result: Value) -> Self {
        Self {
            status: 200,
            message: message.into(),
            errors: Vec::new(),
            result,
        }
    }

    pub(crate) fn failed(f: Failure) -> Self {
        Self {
            status: f.status,
            message: f.message,
            errors: f.errors,
            result: Value::Null,
        }
    }

    pub fn is_ok(&self) -> bool {
        self.status < 400
    }
}

/// A station's fixed rules, from its configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Rules {
    pub name: String,
    pub has_scale: bool,
    pub has_printer: bool,
    pub tolerance_g: i64,
    pub tolerance_pct: f64,
    pub packaging_g: i64,
}

/// What the station screen shows of a packing in progress.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct PackingView {
    pub order_id: OrderId,
    pub lines: Vec<PackingLine>,
    /// Units still to scan.
    pub remaining: i64,
    /// Items plus packaging, if the catalog weighs every item.
    pub expected_weight_g: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct PackingLine {
    pub sku: String,
    pub ordered: i64,
    pub scanned: i64,
}
