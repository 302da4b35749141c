//! The stations' glue: one task per station owns its [`Station`] machine,
//! takes scans from its scanners and requests from the routes one at a
//! time, does the actions the machine asks for with the same engine calls
//! the warehouse routes make, and logs every answer as a `station.scanned`
//! event for the station screens.

use super::config::StationConfig;
use super::failure::Failure;
use super::machine::{
    Effect, Input, Outcome, PackPlan, PackedOrder, PackingView, PlanLine, Report, Rules, Scanned,
    Station, Step, Task,
};
use super::printers;
use super::routes::answer_of;
use super::scales::{self, Scale};
use super::stopped;
use depot_protocol::count::{CountScan, CountStatus};
use depot_protocol::event::Event;
use depot_protocol::inbound::{ReceptionLine, ReceptionRequest};
use depot_protocol::picking::ScanRequest;
use depot_protocol::putaway::{PutawayScan, PutawayStatus};
use depot_protocol::returns::{ReturnReceive, ReturnStatus};
use depot_protocol::shipping::{PackItem, PackRequest, PackageIn};
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, FieldError, OrderId};
use depot_wms::Wms;
use depot_wms::http::error::ApiError;
use depot_wms::http::idempotency::sha256_hex;
use depot_wms::idempotency::Context as Keyed;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};

/// Scans waiting for a busy station (one that is weighing, say): far more
/// than a person scans meanwhile.
const BACKLOG: usize = 64;

/// A command, and the request with an `Idempotency-Key` it acts for (a
/// scan from a scanner gets a key of its own): its writes record the key,
/// and the write that logs its report stores the answer.
struct Work {
    command: Command,
    keyed: Option<Arc<Keyed>>,
}

enum Command {
    /// A scan; the keyboard route waits for its answer, scanners do not.
    Scan {
        scanner: String,
        code: String,
        reply: Option<oneshot::Sender<Report>>,
    },
    SetTask(Caller, Task, oneshot::Sender<Report>),
    Pack(Caller, oneshot::Sender<Report>),
    Release(Caller, oneshot::Sender<Report>),
}

/// What the station screen and `GET /v1/edge/stations` show.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct StationState {
    pub task: Task,
    pub packing: Option<PackingView>,
    /// The answer to the last scan or request.
    pub last: Option<Report>,
}

/// A running station: where to send it work and read its state.
#[derive(Debug, Clone)]
pub struct StationHandle {
    pub config: StationConfig,
    commands: mpsc::Sender<Work>,
    state: watch::Receiver<StationState>,
}

impl StationHandle {
    pub fn state(&self) -> StationState {
        self.state.borrow().clone()
    }

    /// Hands a scan over; `false` if the station cannot take it now. The
    /// scan gets a key of its own: whatever runs it again applies it once.
    pub fn scan(&self, scanner: String, code: String) -> bool {
        let keyed = scan_key(&self.config.name, &scanner, &code);
        self.commands
            .try_send(Work {
                command: Command::Scan {
                    scanner,
                    code,
                    reply: None,
                },
                keyed: Some(keyed),
            })
            .is_ok()
    }

    /// A scan typed at the station's screen: handled exactly as one from
    /// its scanners (in turn with them, acting as the key that set the
    /// task), with its answer.
    pub async fn scan_and_answer(&self, scanner: String, code: String) -> Result<Report, Failure> {
        self.ask(|reply| Command::Scan {
            scanner,
            code,
            reply: Some(reply),
        })
        .await
    }

    pub async fn set_task(&self, caller: Caller, task: Task) -> Result<Report, Failure> {
        self.ask(|reply| Command::SetTask(caller, task, reply))
            .await
    }

    pub async fn pack(&self, caller: Caller) -> Result<Report, Failure> {
        self.ask(|reply| Command::Pack(caller, reply)).await
    }

    /// Gives the station's task up; in turn with scans, so a scan under
    /// way finishes first.
    pub async fn release(&self, caller: Caller) -> Result<Report, Failure> {
        self.ask(|reply| Command::Release(caller, reply)).await
    }

    async fn ask(
        &self,
        command: impl FnOnce(oneshot::Sender<Report>) -> Command,
    ) -> Result<Report, Failure> {
        let stopped = || {
            Failure::new(
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                format!("station {} is shutting down", self.config.name),
            )
        };
        let (reply, answer) = oneshot::channel();
        let work = Work {
            command: command(reply),
            // The request's key, if it has one: the station runs it.
            keyed: Keyed::current(),
        };
        self.commands.send(work).await.map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())
    }
}

/// What a station works with.
pub struct Context {
    pub wms: Wms,
    pub business: BusinessId,
    pub edge_id: String,
    pub scale: Option<Scale>,
}

/// Starts a station's task; it ends when `stop` turns true.
pub fn start(
    config: StationConfig,
    context: Context,
    stop: watch::Receiver<bool>,
) -> (StationHandle, impl Future<Output = ()> + Send) {
    let (commands, receiver) = mpsc::channel(BACKLOG);
    let machine = Station::new(Rules {
        name: config.name.clone(),
        has_scale: context.scale.is_some(),
        has_printer: config.printer.is_some(),
        tolerance_g: config.tolerance_g,
        tolerance_pct: config.tolerance_pct,
        packaging_g: config.packaging_g,
    });
    let (publish, state) = watch::channel(StationState {
        task: Task::Idle {},
        packing: None,
        last: None,
    });
    let glue = Glue {
        config: config.clone(),
        context,
        machine,
        caller: None,
        publish,
    };
    let handle = StationHandle {
        config,
        commands,
        state,
    };
    (handle, glue.run(receiver, stop))
}

struct Glue {
    config: StationConfig,
    context: Context,
    machine: Station,
    /// The key that set the task: scans act as it.
    caller: Option<Caller>,
    publish: watch::Sender<StationState>,
}

impl Glue {
    async fn run(mut self, mut commands: mpsc::Receiver<Work>, mut stop: watch::Receiver<bool>) {
        loop {
            let Work { command, keyed } = tokio::select! {
                () = stopped(&mut stop) => break,
                work = commands.recv() => match work {
                    Some(work) => work,
                    None => break,
                },
            };
            let (input, source, caller, reply) = match command {
                Command::Scan {
                    scanner,
                    code,
                    reply,
                } => {
                    let source = json!({"scan": code, "scanner": scanner});
                    (Input::Scan(code), source, self.caller, reply)
                }
                Command::SetTask(caller, task, reply) => {
                    let source = json!({"task": task});
                    (Input::SetTask(task), source, Some(caller), Some(reply))
                }
                Command::Pack(caller, reply) => {
                    (Input::Pack, json!({"pack": {}}), Some(caller), Some(reply))
                }
                Command::Release(caller, reply) => (
                    Input::Release,
                    json!({"release": {}}),
                    Some(caller),
                    Some(reply),
                ),
            };
            let report = match keyed {
                Some(ctx) => {
                    let step = self.step(input, source, caller, Some(&ctx));
                    ctx.clone().run(step).await
                }
                None => self.step(input, source, caller, None).await,
            };
            if let Some(reply) = reply {
                // The caller may have gone; the event has the answer.
                let _ = reply.send(report);
            }
        }
    }

    /// Handles one input and logs its report; under `keyed`, the write
    /// that logs it stores the answer with the key (a 5xx is not kept).
    async fn step(
        &mut self,
        input: Input,
        source: Value,
        caller: Option<Caller>,
        keyed: Option<&Keyed>,
    ) -> Report {
        let sets_task = matches!(input, Input::SetTask(_));
        let known = match &input {
            Input::SetTask(task) => self.known(task).await,
            _ => Ok(()),
        };
        let report = match known {
            Ok(()) => self.drive(input, caller).await,
            Err(f) => Report::failed(f),
        };
        if sets_task && report.is_ok() {
            self.caller = caller;
        }
        // State first: whoever reads the event may ask for the station
        // next and must find this report there.
        self.publish.send_replace(StationState {
            task: self.machine.task().clone(),
            packing: self.machine.packing(),
            last: Some(report.clone()),
        });
        if let Some(ctx) = keyed {
            let answer = (report.status < 500).then(|| answer_of(&report));
            ctx.expect(move |_: &Event| answer.clone());
        }
        self.log(source, &report).await;
        report
    }

    /// Whether what a picking or receiving task names is here: a task for
    /// a wave, an order of it or an inbound order this box does not have
    /// (an id of 0, -1, `i64::MAX`...) is refused with 404 and the station
    /// keeps its task. A packing task's order is checked by the machine,
    /// which loads it.
    async fn known(&self, task: &Task) -> Result<(), Failure> {
        let b = self.context.business;
        match *task {
            Task::Picking { wave_id, order_id } => {
                let found = self.context.wms.wave_holds(b, wave_id, order_id).await?;
                match (found, order_id) {
                    (None, _) => Err(Failure::not_found(format!(
                        "wave {wave_id} does not exist at this edge"
                    ))),
                    (Some(false), Some(o)) => Err(Failure::not_found(format!(
                        "order {o} is not in wave {wave_id}"
                    ))),
                    _ => Ok(()),
                }
            }
            Task::Receiving {
                inbound_id,
                ref location,
            } => {
                let found = self.context.wms.has_inbound(b, inbound_id).await?;
                if !found {
                    return Err(Failure::not_found(format!(
                        "inbound order {inbound_id} does not exist at this edge"
                    )));
                }
                // A location not on record would refuse every scan: say so
                // now, not at the first carton.
                if let Some(code) = location {
                    let order = self.context.wms.inbound(b, inbound_id).await?;
                    let known = self
                        .context
                        .wms
                        .location_by_code(b, order.warehouse_id, code)
                        .await?;
                    if known.is_none() {
                        let message =
                            format!("warehouse {} has no location {code}", order.warehouse_id);
                        return Err(Failure::invalid(message.clone())
                            .with_errors(vec![FieldError::new("location", message)]));
                    }
                }
                Ok(())
            }
            Task::Putaway { task_id } => {
                let task = self.context.wms.putaway_task(b, task_id).await?;
                if task.status == PutawayStatus::Done {
                    return Err(Failure::conflict(format!(
                        "putaway task {task_id} is done: all {} units are put away",
                        task.quantity
                    )));
                }
                Ok(())
            }
            Task::Counting { count_id } => {
                let count = self.context.wms.count(b, count_id).await?;
                if count.summary.status != CountStatus::Open {
                    return Err(Failure::conflict(format!(
                        "count {count_id} is {}",
                        count.summary.status
                    )));
                }
                Ok(())
            }
            Task::Returns {
                return_id: Some(id),
                ..
            } => {
                let r = self.context.wms.customer_return(b, id).await?;
                if matches!(r.status, ReturnStatus::Received | ReturnStatus::Cancelled) {
                    return Err(Failure::conflict(format!(
                        "{} is {}: nothing of it is left to grade",
                        r.rma, r.status
                    )));
                }
                Ok(())
            }
            Task::Idle {} | Task::Packing { .. } | Task::Returns { .. } => Ok(()),
        }
    }

    /// Feeds the machine until it answers with its report.
    async fn drive(&mut self, input: Input, caller: Option<Caller>) -> Report {
        let mut step = self.machine.handle(input);
        loop {
            match step {
                Step::Report(report) => return report,
                Step::Do(effect) => {
                    let next = self.act(effect, caller).await;
                    step = self.machine.handle(next);
                }
            }
        }
    }

    async fn act(&self, effect: Effect, caller: Option<Caller>) -> Input {
        let wms = &self.context.wms;
        let b = self.context.business;
        let Some(caller) = caller else {
            // A task is only ever set with a key, and a station without a
            // task does nothing: this is for completeness.
            return effect.failed(Failure::conflict("no key has set this station's task"));
        };
        // Scans act with the key that set the task; once it is revoked they
        // stop, as its requests would.
        match wms.key_active(caller.key_id).await {
            Ok(true) => {}
            Ok(false) => {
                return effect.failed(Failure::from(ApiError::unauthorized(
                    "the key that set this station's task was revoked: set the task again with a valid key",
                )));
            }
            Err(e) => return effect.failed(Failure::from(e)),
        }
        match effect {
            Effect::LoadPlan(order) => Input::PlanLoaded(plan(wms, b, order).await),
            Effect::Pick {
                wave_id,
                order_id,
                code,
            } => {
                let req = ScanRequest {
                    wave_id,
                    order_id,
                    code,
                    quantity: None,
                };
                Input::Done(
                    wms.pick_scan(caller, req)
                        .await
                        .map_err(Failure::from)
                        .map(|r| Outcome {
                            // As a packing scan says it: the line's count
                            // first, not the units this scan took.
                            message: format!(
                                "{} {} of {}{}; {} left in order {}, {} in wave {}",
                                r.sku,
                                r.picked,
                                r.quantity,
                                r.location
                                    .as_deref()
                                    .map(|l| format!(" from {l}"))
                                    .unwrap_or_default(),
                                r.order_remaining,
                                r.order_id,
                                r.wave_remaining,
                                r.wave_id
                            ),
                            result: json!(r),
                        }),
                )
            }
            Effect::Receive {
                inbound_id,
                location,
                code,
            } => {
                let req = ReceptionRequest {
                    inbound_id,
                    location,
                    lines: vec![ReceptionLine {
                        code,
                        quantity: None,
                        accepted: None,
                        rejected: None,
                        reason: None,
                        lot: None,
                        expiry: None,
                    }],
                };
                Input::Done(
                    wms.receive(caller, req)
                        .await
                        .map_err(Failure::from)
                        .map(|r| {
                            let lines: Vec<String> = r
                                .received
                                .iter()
                                .map(|l| format!("{} {}", l.accepted, l.sku))
                                .collect();
                            Outcome {
                                message: format!(
                                    "received {} into inbound order {}",
                                    lines.join(", "),
                                    r.order.id
                                ),
                                result: json!(r),
                            }
                        }),
                )
            }
            Effect::Putaway {
                task_id,
                code,
                location,
            } => {
                let req = PutawayScan {
                    task_id,
                    code,
                    location,
                    quantity: None,
                };
                Input::Done(
                    wms.putaway_scan(caller, req)
                        .await
                        .map_err(Failure::from)
                        .map(|r| Outcome {
                            message: r.message.clone(),
                            result: json!(r),
                        }),
                )
            }
            Effect::Count {
                count_id,
                location,
                code,
            } => {
                let req = CountScan {
                    location,
                    code,
                    quantity: None,
                    add: true,
                };
                Input::Done(
                    wms.count_scan(caller, count_id, req)
                        .await
                        .map_err(Failure::from)
                        .map(|r| Outcome {
                            message: r.message.clone(),
                            result: json!(r),
                        }),
                )
            }
            Effect::Return {
                return_id,
                grade,
                code,
            } => {
                let req = ReturnReceive {
                    code,
                    grade,
                    quantity: None,
                    lot: None,
                    note: None,
                };
                Input::Done(
                    wms.receive_return(caller, return_id, req)
                        .await
                        .map_err(Failure::from)
                        .map(|r| Outcome {
                            message: r.message.clone(),
                            result: json!(r),
                        }),
                )
            }
            Effect::Resolve(code) => Input::Resolved(
                wms.resolve_scan(b, code)
                    .await
                    .map(|s| Scanned {
                        item_id: s.item_id,
                        sku: s.sku,
                        count: s.count,
                    })
                    .map_err(Failure::from),
            ),
            Effect::Weigh => Input::Weighed(self.weigh().await),
            Effect::Pack {
                order_id,
                items,
                weight_g,
                print_label,
            } => {
                let req = PackRequest {
                    order_id,
                    items: items
                        .into_iter()
                        .map(|(code, quantity)| PackItem {
                            code,
                            quantity: Some(quantity),
                        })
                        .collect(),
                    packages: vec![PackageIn {
                        weight_g,
                        length_mm: None,
                        width_mm: None,
                        height_mm: None,
                    }],
                };
                Input::Packed(if print_label {
                    self.pack_and_print(caller, req).await
                } else {
                    wms.pack_order(caller, req)
                        .await
                        .map_err(Failure::from)
                        .map(|r| PackedOrder {
                            shipment_id: r.shipment.id,
                            result: json!({
                                "shipment": r.shipment,
                                "order_status": r.order_status,
                            }),
                            label_job: None,
                        })
                })
            }
        }
    }

    async fn weigh(&self) -> Result<i64, Failure> {
        let Some(scale) = &self.context.scale else {
            return Err(Failure::conflict("this station has no scale"));
        };
        let timeout = Duration::from_millis(self.config.weigh_timeout_ms);
        let reading = scale.handle.weigh_stable(timeout).await?;
        scales::grams(&reading).ok_or_else(|| {
            Failure::invalid(format!("scale {} shows {reading}: out of range", scale.id))
        })
    }

    /// Packs and queues the labels (ZPL, as `generate-label` renders them)
    /// on the station's printer in one write: a printer this edge does not
    /// drive refuses the pack before anything is written.
    async fn pack_and_print(
        &self,
        caller: Caller,
        req: PackRequest,
    ) -> Result<PackedOrder, Failure> {
        let Some(name) = &self.config.printer else {
            return Err(Failure::conflict("this station has no printer"));
        };
        let c = &self.context;
        let printer = printers::resolve(&c.wms, c.business, &c.edge_id, name)
            .await?
            .map_err(|why| Failure::conflict(format!("{why}: nothing was packed")))?;
        let (r, job) = c.wms.pack_and_print(caller, req, printer.id).await?;
        Ok(PackedOrder {
            shipment_id: r.shipment.id,
            result: json!({
                "shipment": r.shipment,
                "order_status": r.order_status,
            }),
            label_job: Some(json!(job)),
        })
    }

    async fn log(&self, source: Value, report: &Report) {
        let payload = json!({
            "business_id": self.context.business,
            "station": self.config.name,
            "input": source,
            "task": self.machine.task(),
            "ok": report.is_ok(),
            "status": report.status,
            "message": report.message,
            "errors": report.errors,
            "result": report.result,
        });
        if let Err(error) = self
            .context
            .wms
            .station_event(self.context.business, payload)
            .await
        {
            tracing::warn!(station = %self.config.name, %error, "cannot log a station event");
        }
    }
}

/// How long a scanner's scan keeps its key (it is never sent again from
/// outside, so this only bounds the row).
const SCAN_KEY_HOURS: i64 = 24;

/// A key of its own for a scan from a scanner.
fn scan_key(station: &str, scanner: &str, code: &str) -> Arc<Keyed> {
    Keyed::new(
        sha256_hex(&[b"station", station.as_bytes()]),
        uuid::Uuid::now_v7().to_string(),
        sha256_hex(&[scanner.as_bytes(), code.as_bytes()]),
        "SCAN".into(),
        format!("/v1/edge/stations/{station}/scan"),
        chrono::Duration::hours(SCAN_KEY_HOURS),
    )
}

/// The order's lines with the catalog's unit weights.
async fn plan(wms: &Wms, business: BusinessId, id: OrderId) -> Result<PackPlan, Failure> {
    let order = wms.order(business, id).await?;
    let items: BTreeSet<_> = order.lines.iter().map(|l| l.item_id).collect();
    let mut weights = Vec::new();
    for item in items {
        weights.push((item, wms.item(business, item).await?.weight_g));
    }
    let weight = |item| {
        weights
            .iter()
            .find(|(i, _)| *i == item)
            .and_then(|(_, w)| *w)
    };
    Ok(PackPlan {
        order_id: order.id,
        status: order.status,
        lines: order
            .lines
            .iter()
            .map(|l| PlanLine {
                item_id: l.item_id,
                sku: l.sku.clone(),
                quantity: l.quantity,
                unit_weight_g: weight(l.item_id),
            })
            .collect(),
    })
}
