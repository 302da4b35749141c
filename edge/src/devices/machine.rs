//! A station's state machine, without I/O. The glue (`stations.rs`) feeds
//! it one input at a time (a task set, a scan, a weighing, what the engine
//! answered); each answer is a [`Step`]: an [`Effect`] to carry out, whose
//! result is the next input, or the [`Report`] that ends what an input
//! from the floor (a task, a scan, a pack request) started.
//!
//! Picking and receiving pass each scan to the engine as it is. Packing
//! collects the order's units scan by scan; the scan that completes the
//! order (or an explicit pack) weighs the package, checks the weight
//! against the catalog's, packs, and queues the shipping label.

mod types;

pub use types::{
    Effect, Input, Outcome, PackPlan, PackedOrder, PackingLine, PackingView, PlanLine, Report,
    Rules, Scanned, Step, Task,
};

use super::failure::Failure;
use depot_protocol::order::units_per_item;
use depot_protocol::plural::counted;
use depot_protocol::returns::{parse_rma, rma};
use depot_protocol::{FieldError, ItemId};
use serde_json::json;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
enum Pending {
    Nothing,
    Plan,
    Engine,
    Resolve(String),
    Weigh,
    Pack(i64),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Packing {
    plan: PackPlan,
    /// Ordered units per item, with the SKU and unit weight.
    ordered: BTreeMap<ItemId, (String, i64, Option<i64>)>,
    scanned: BTreeMap<ItemId, i64>,
    /// The codes as scanned, with their units: what pack-order is given.
    items: Vec<(String, i64)>,
}

#[derive(Debug, Clone)]
pub struct Station {
    rules: Rules,
    task: Task,
    packing: Option<Packing>,
    /// Putaway: the goods scanned, waiting for the location's label.
    goods: Option<String>,
    /// Counting: the location whose label was scanned, being counted.
    counting_at: Option<String>,
    pending: Pending,
}

impl Station {
    pub fn new(rules: Rules) -> Self {
        Self {
            rules,
            task: Task::Idle {},
            packing: None,
            goods: None,
            counting_at: None,
            pending: Pending::Nothing,
        }
    }

    pub fn task(&self) -> &Task {
        &self.task
    }

    pub fn packing(&self) -> Option<PackingView> {
        self.packing.as_ref().map(|p| PackingView {
            order_id: p.plan.order_id,
            lines: p
                .ordered
                .iter()
                .map(|(item, (sku, ordered, _))| PackingLine {
                    sku: sku.clone(),
                    ordered: *ordered,
                    scanned: p.scanned.get(item).copied().unwrap_or(0),
                })
                .collect(),
            remaining: p.remaining(),
            expected_weight_g: p.expected_g(self.rules.packaging_g),
        })
    }

    /// Takes one input and answers what to do next.
    pub fn handle(&mut self, input: Input) -> Step {
        let pending = std::mem::replace(&mut self.pending, Pending::Nothing);
        match (input, pending) {
            (Input::SetTask(task), Pending::Nothing) => self.set_task(task),
            (Input::PlanLoaded(plan), Pending::Plan) => self.plan_loaded(plan),
            (Input::Scan(code), Pending::Nothing) => self.scan(code),
            (Input::Pack, Pending::Nothing) => match &self.packing {
                Some(_) => self.start_pack(),
                None => refuse(Failure::conflict(format!(
                    "station {} is not packing an order: set a packing task first",
                    self.rules.name
                ))),
            },
            (Input::Done(outcome), Pending::Engine) => match outcome {
                Ok(o) => report(Report::ok(o.message, o.result)),
                Err(f) => {
                    // A location the count does not have: the next scan
                    // is a label again.
                    if f.errors.iter().any(|e| e.name == "location") {
                        self.counting_at = None;
                    }
                    refuse(f)
                }
            },
            (Input::Resolved(scanned), Pending::Resolve(code)) => match scanned {
                Ok(s) => self.count(code, s),
                Err(f) => refuse(f),
            },
            (Input::Weighed(weight), Pending::Weigh) => match weight {
                Ok(g) => self.weighed(g),
                Err(f) => self.not_packed(f, "check the scale"),
            },
            (Input::Packed(packed), Pending::Pack(weight_g)) => self.packed(packed, weight_g),
            (Input::Release, Pending::Nothing) => self.release(),
            (input, pending) => {
                // The glue feeds one input at a time and answers each
                // action: anything else is a bug there, said so rather
                // than acted on.
                self.pending = pending;
                report(Report::failed(Failure::new(
                    axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                    format!("station {} got {input:?} out of turn", self.rules.name),
                )))
            }
        }
    }

    fn set_task(&mut self, task: Task) -> Step {
        let message = match &task {
            Task::Packing { order_id } => {
                // The task is taken once the order is known to be packable.
                self.pending = Pending::Plan;
                return Step::Do(Effect::LoadPlan(*order_id));
            }
            Task::Idle {} => "task cleared: scans are refused until a task is set".to_owned(),
            Task::Picking {
                wave_id,
                order_id: Some(order),
            } => format!("picking wave {wave_id}, order {order}"),
            Task::Picking { wave_id, .. } => format!("picking wave {wave_id}"),
            Task::Receiving { inbound_id, .. } => format!("receiving inbound order {inbound_id}"),
            Task::Putaway { task_id } => {
                format!("putaway task {task_id}: scan the goods, then the location's label")
            }
            Task::Counting { count_id } => format!(
                "count {count_id}: scan a location's label, its goods one by one, then the label again when it is done"
            ),
            Task::Returns {
                return_id: Some(id),
                grade,
            } => format!("{}: scan each unit to grade it {grade}", rma(*id)),
            Task::Returns {
                return_id: None,
                grade,
            } => {
                format!("returns: scan the parcel's RMA label, then each unit to grade it {grade}")
            }
        };
        self.packing = None;
        self.goods = None;
        self.counting_at = None;
        self.task = task;
        report(Report::ok(message, json!({ "task": self.task })))
    }

    fn plan_loaded(&mut self, plan: Result<PackPlan, Failure>) -> Step {
        let plan = match plan {
            Ok(plan) => plan,
            Err(f) => return refuse(f),
        };
        let id = plan.order_id;
        if let Err(why) = plan.status.check_packable(id) {
            return refuse(Failure::conflict(why));
        }
        let ordered: BTreeMap<ItemId, (String, i64, Option<i64>)> =
            units_per_item(plan.lines.iter().map(|l| (l.item_id, l.quantity)))
                .into_iter()
                .filter_map(|(item, units)| {
                    // The item's first line says its SKU and unit weight.
                    let first = plan.lines.iter().find(|l| l.item_id == item)?;
                    Some((item, (first.sku.clone(), units, first.unit_weight_g)))
                })
                .collect();
        let packing = Packing {
            plan,
            ordered,
            scanned: BTreeMap::new(),
            items: Vec::new(),
        };
        let units = packing.remaining();
        if units <= 0 {
            return refuse(Failure::conflict(format!("order {id} has nothing to pack")));
        }
        self.packing = Some(packing);
        self.task = Task::Packing { order_id: id };
        let view = self.packing();
        report(Report::ok(
            format!("packing order {id}: scan its {}", counted(units, "unit")),
            json!({ "task": self.task, "packing": view }),
        ))
    }

    fn scan(&mut self, code: String) -> Step {
        match &self.task {
            Task::Idle {} => refuse(Failure::conflict(format!(
                "station {0} has no task: set one with PUT /v1/edge/stations/{0}/task",
                self.rules.name
            ))),
            Task::Picking { wave_id, order_id } => {
                self.pending = Pending::Engine;
                Step::Do(Effect::Pick {
                    wave_id: *wave_id,
                    order_id: *order_id,
                    code,
                })
            }
            Task::Receiving {
                inbound_id,
                location,
            } => {
                self.pending = Pending::Engine;
                Step::Do(Effect::Receive {
                    inbound_id: *inbound_id,
                    location: location.clone(),
                    code,
                })
            }
            Task::Packing { .. } => {
                self.pending = Pending::Resolve(code.clone());
                Step::Do(Effect::Resolve(code))
            }
            Task::Putaway { task_id } => match self.goods.take() {
                None => {
                    let message = format!("{code}: now scan the location you put it at");
                    self.goods = Some(code);
                    report(Report::ok(message, json!({ "goods": self.goods })))
                }
                Some(goods) => {
                    self.pending = Pending::Engine;
                    Step::Do(Effect::Putaway {
                        task_id: *task_id,
                        code: goods,
                        location: code,
                    })
                }
            },
            Task::Counting { count_id } => {
                let count_id = *count_id;
                match self.counting_at.take() {
                    None => {
                        let message = format!(
                            "counting {code}: scan its goods, then {code} again when it is done"
                        );
                        self.counting_at = Some(code);
                        report(Report::ok(message, json!({ "location": self.counting_at })))
                    }
                    // The label again: the location is closed, and the
                    // next scan is another location's label.
                    Some(location) if location == code => {
                        self.pending = Pending::Engine;
                        Step::Do(Effect::Count {
                            count_id,
                            location,
                            code: None,
                        })
                    }
                    Some(location) => {
                        self.counting_at = Some(location.clone());
                        self.pending = Pending::Engine;
                        Step::Do(Effect::Count {
                            count_id,
                            location,
                            code: Some(code),
                        })
                    }
                }
            }
            Task::Returns { .. } => self.returned(code),
        }
    }

    /// A returns bench scan: an RMA label opens its return; anything else
    /// is a unit of the open one.
    fn returned(&mut self, code: String) -> Step {
        let Task::Returns { return_id, grade } = &mut self.task else {
            return refuse(Failure::conflict("the station is not at the returns bench"));
        };
        if let Some(id) = parse_rma(&code) {
            *return_id = Some(id);
            let message = format!("{} open: scan each unit to grade it {grade}", rma(id));
            return report(Report::ok(message, json!({ "task": self.task })));
        }
        let Some(id) = *return_id else {
            return refuse(Failure::conflict(format!(
                "{code}: scan the parcel's RMA label first"
            )));
        };
        self.pending = Pending::Engine;
        Step::Do(Effect::Return {
            return_id: id,
            grade: *grade,
            code,
        })
    }

    fn count(&mut self, code: String, s: Scanned) -> Step {
        let Some(p) = self.packing.as_mut() else {
            return refuse(Failure::conflict("no packing in progress"));
        };
        let id = p.plan.order_id;
        let units = s.count.unwrap_or(1);
        let Some((_, ordered, _)) = p.ordered.get(&s.item_id) else {
            return refuse(
                Failure::invalid(format!("{} is not in order {id}: put it aside", s.sku))
                    .with_errors(vec![FieldError::new(&s.sku, "not in the order")]),
            );
        };
        let ordered = *ordered;
        let had = p.scanned.get(&s.item_id).copied().unwrap_or(0);
        let now = had.saturating_add(units);
        if now > ordered {
            return refuse(
                Failure::conflict(format!(
                    "{} more of {} would make {now}, but order {id} has {ordered}",
                    units, s.sku
                ))
                .with_errors(vec![FieldError::new(
                    &s.sku,
                    format!("{} more than the {ordered} ordered", now - ordered),
                )]),
            );
        }
        p.scanned.insert(s.item_id, now);
        p.items.push((code, units));
        let remaining = p.remaining();
        if remaining == 0 {
            return self.start_pack();
        }
        let view = self.packing();
        report(Report::ok(
            format!(
                "{} {now} of {ordered}; {} left in order {id}",
                s.sku,
                counted(remaining, "unit")
            ),
            json!({ "packing": view }),
        ))
    }

    /// Weighs (or, without a scale, takes the catalog's weight) and packs.
    fn start_pack(&mut self) -> Step {
        let Some(p) = &self.packing else {
            return refuse(Failure::conflict("no packing in progress"));
        };
        let missing = p.missing();
        if !missing.is_empty() {
            return refuse(
                Failure::invalid(format!(
                    "order {} is not complete: scan {} more units",
                    p.plan.order_id,
                    p.remaining()
                ))
                .with_errors(missing),
            );
        }
        if self.rules.has_scale {
            self.pending = Pending::Weigh;
            return Step::Do(Effect::Weigh);
        }
        match p.expected_g(self.rules.packaging_g) {
            Some(g) => self.pack(g),
            None => refuse(Failure::invalid(format!(
                "station {} has no scale and the catalog does not weigh every item of order {}: the package weight is unknown; release the order and pack it at a station with a scale",
                self.rules.name, p.plan.order_id
            ))),
        }
    }

    fn weighed(&mut self, measured: i64) -> Step {
        let Some(p) = &self.packing else {
            return refuse(Failure::conflict("no packing in progress"));
        };
        if measured <= 0 {
            return self.not_packed(
                Failure::invalid(format!("the scale shows {measured} g")),
                "put the package on the scale",
            );
        }
        if let Some(expected) = p.expected_g(self.rules.packaging_g) {
            let allowed = self.tolerance(expected);
            if (measured - expected).abs() > allowed {
                return self.not_packed(
                    Failure::invalid(format!(
                        "the package weighs {measured} g but should weigh {expected} g ± {allowed} g"
                    ))
                    .with_errors(vec![FieldError::new(
                        "weight_g",
                        format!("measured {measured} g, expected {expected} g ± {allowed} g"),
                    )]),
                    "check its contents",
                );
            }
        }
        self.pack(measured)
    }

    fn tolerance(&self, expected: i64) -> i64 {
        let pct = (expected as f64 * self.rules.tolerance_pct / 100.0).round() as i64;
        self.rules.tolerance_g.max(pct)
    }

    fn pack(&mut self, weight_g: i64) -> Step {
        let Some(p) = &self.packing else {
            return refuse(Failure::conflict("no packing in progress"));
        };
        self.pending = Pending::Pack(weight_g);
        Step::Do(Effect::Pack {
            order_id: p.plan.order_id,
            items: p.items.clone(),
            weight_g,
            print_label: self.rules.has_printer,
        })
    }

    fn packed(&mut self, packed: Result<PackedOrder, Failure>, weight_g: i64) -> Step {
        let packed = match packed {
            Ok(packed) => packed,
            Err(f) => return self.not_packed(f, "correct what it says"),
        };
        let done = self.finish();
        let shipment = packed.shipment_id;
        match packed.label_job {
            Some(job) => report(Report::ok(
                format!("{done}: {weight_g} g, shipment {shipment}, label queued"),
                json!({ "pack": packed.result, "label_job": job }),
            )),
            None => report(Report::ok(
                format!("{done}: {weight_g} g, shipment {shipment}"),
                json!({ "pack": packed.result }),
            )),
        }
    }

    /// A pack that did not happen: nothing was packed and the scans stay
    /// counted, so the packer is told what failed and the two ways on
    /// (the same pack again once `fix` is done, or giving the order up).
    /// A failure of the edge itself has no fix at the station: a second
    /// try, then someone who can read the edge's log.
    fn not_packed(&self, f: Failure, fix: &str) -> Step {
        let order = self.packing.as_ref().map_or_else(
            || "the order".to_owned(),
            |p| format!("order {}", p.plan.order_id),
        );
        let ways = if f.status >= 500 {
            "retry the pack; if it fails again, release the order and call a supervisor".to_owned()
        } else {
            format!("{fix}, then retry the pack, or release the order")
        };
        refuse(Failure {
            message: format!("{order} was not packed ({}): {ways}", f.message),
            ..f
        })
    }

    /// Gives the task up: the station goes idle and says what becomes of
    /// what was done. Nothing is undone: a packing's scans were never
    /// written (the order stays packable, by this station or another),
    /// picks and receptions are written one by one and stay.
    fn release(&mut self) -> Step {
        let message = match &self.task {
            Task::Idle {} => format!(
                "station {} has no task: nothing to release",
                self.rules.name
            ),
            Task::Packing { order_id } => {
                let scanned: i64 = self
                    .packing
                    .as_ref()
                    .map_or(0, |p| p.scanned.values().sum());
                if scanned > 0 {
                    format!(
                        "order {order_id} released, not packed: keep its {} together with the order; it can be packed again later",
                        counted(scanned, "scanned unit")
                    )
                } else {
                    format!("order {order_id} released, not packed")
                }
            }
            Task::Picking { wave_id, .. } => {
                format!("wave {wave_id} released: what was picked stays picked")
            }
            Task::Receiving { inbound_id, .. } => {
                format!("inbound order {inbound_id} released: what was received stays received")
            }
            Task::Putaway { task_id } => {
                format!("putaway task {task_id} released: what was put away stays put")
            }
            Task::Counting { count_id } => {
                format!("count {count_id} released: what was counted stays counted")
            }
            Task::Returns { .. } => "returns bench released: what was graded stays graded".into(),
        };
        self.goods = None;
        self.counting_at = None;
        let released = std::mem::replace(&mut self.task, Task::Idle {});
        self.packing = None;
        report(Report::ok(
            message,
            json!({ "task": self.task, "released": released }),
        ))
    }

    /// The order is packed: the station waits for its next task.
    fn finish(&mut self) -> String {
        let order = self.packing.take().map(|p| p.plan.order_id);
        self.task = Task::Idle {};
        match order {
            Some(id) => format!("order {id} packed"),
            None => "packed".into(),
        }
    }
}

fn report(r: Report) -> Step {
    Step::Report(r)
}

fn refuse(f: Failure) -> Step {
    report(Report::failed(f))
}

impl Packing {
    fn remaining(&self) -> i64 {
        self.ordered
            .iter()
            .map(|(item, (_, q, _))| q - self.scanned.get(item).copied().unwrap_or(0))
            .sum()
    }

    fn missing(&self) -> Vec<FieldError> {
        self.ordered
            .iter()
            .filter_map(|(item, (sku, q, _))| {
                let got = self.scanned.get(item).copied().unwrap_or(0);
                (got < *q).then(|| FieldError::new(sku, format!("missing {} of {q}", q - got)))
            })
            .collect()
    }

    /// Items and packaging, if every item has a weight.
    fn expected_g(&self, packaging_g: i64) -> Option<i64> {
        self.ordered
            .values()
            .try_fold(packaging_g, |sum, (_, q, unit)| {
                sum.checked_add(unit.as_ref()?.checked_mul(*q)?)
            })
    }
}

#[cfg(test)]
mod tests;
