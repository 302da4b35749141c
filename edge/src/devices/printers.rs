//! The spooler: one task per configured printer between the jobs in the
//! database and the printer's driver. Jobs are stored (queued) before they
//! are sent, whether submitted here or synced from the cloud; the spooler
//! hands the driver every queued job it has not handed it yet, at start and
//! whenever a commit touches print jobs, and records what the driver did
//! with each. A restart loses nothing: what was not printed is still
//! queued in the database and is handed to the new driver.
//!
//! It also logs the printer's state as `printer.state_changed` events, when
//! it changes and at the pace of [`super::pacing`], and keeps the printer's
//! record true with `printer.seen` events: when the device is bound to its
//! record after its state was written (the record reached the edge later,
//! as on a new box), and while it answers, before the record's `last_seen`
//! is [`SEEN_EVERY`] old. Both set the record's `status` and `last_seen`
//! here and, synced, in the cloud.

use super::config::PrinterDevice;
use super::pacing::{self, Pace};
use super::stopped;
use depot_hardware::printer::{Job, JobId, JobOutcome, Printer, PrinterState};
use depot_protocol::event::EventKind;
use depot_protocol::printing::{self, JobStatus};
use depot_protocol::{BusinessId, PrintJobId, PrinterId, Timestamp};
use depot_wms::Wms;
use serde::Serialize;
use std::collections::HashSet;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// The record and the queue are read again whenever a commit touches
/// printers or print jobs; this often besides, so nothing a missed wake-up
/// or a failed read left behind waits longer than this.
const LOOK_UP_EVERY: Duration = Duration::from_secs(30);

/// How old a printer record's `last_seen` may get while the printer
/// answers: one `printer.seen` per printer this often, not one per status
/// poll, so the log and the sync link carry a few hundred a day at most.
pub const SEEN_EVERY: Duration = Duration::from_secs(300);

/// A printer as the device route shows it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct PrinterStatus {
    pub name: String,
    pub endpoint: String,
    /// The printer's record at this edge, once it is known.
    pub printer_id: Option<PrinterId>,
    /// Why this edge does not print the record's jobs, when it does not.
    pub unbound: Option<String>,
    /// The device: unknown, ready, busy, faulted (with its problems) or
    /// unreachable.
    #[schema(value_type = Object)]
    pub device: PrinterState,
    /// Jobs handed to the printer and not yet printed.
    pub queued: usize,
    /// Jobs the printer failed since the spooler started (for the metrics;
    /// the jobs themselves say it in their status).
    #[serde(skip)]
    pub failed: u64,
}

impl PrinterStatus {
    /// What keeps it from printing, if anything.
    pub fn trouble(&self) -> Option<String> {
        if let Some(why) = &self.unbound {
            return Some(why.clone());
        }
        waiting_reason(&self.device)
    }
}

/// Why jobs wait on a printer in this state.
fn waiting_reason(state: &PrinterState) -> Option<String> {
    match state {
        PrinterState::Faulted { problems } => Some(
            problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", "),
        ),
        PrinterState::Unreachable { .. } => Some("unreachable".into()),
        _ => None,
    }
}

/// The record the device configured as `name` prints for: found by name
/// once, then followed by id (a rename in the cloud keeps it printing).
pub async fn resolve(
    wms: &Wms,
    business: BusinessId,
    edge_id: &str,
    name: &str,
) -> depot_wms::Result<Result<printing::Printer, String>> {
    wms.printer_for_device(business, edge_id, name).await
}

pub struct Spooler {
    pub config: PrinterDevice,
    /// The station that prints on it, for its events.
    pub station: Option<String>,
    pub wms: Wms,
    pub business: BusinessId,
    pub edge_id: String,
}

/// A printer's state as its events tell it: printing is no news (busy is
/// ready), and the `since` of an unreachable printer is a detail.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Shown {
    state: &'static str,
    problems: Vec<String>,
}

impl Shown {
    fn of(status: &PrinterStatus) -> Option<Self> {
        let (state, mut problems) = match &status.device {
            PrinterState::Unknown => return None,
            PrinterState::Ready | PrinterState::Busy => ("ready", Vec::new()),
            PrinterState::Faulted { problems } => ("faulted", problems.clone()),
            PrinterState::Unreachable { .. } => ("unreachable", Vec::new()),
        };
        problems.sort_unstable();
        problems.dedup();
        let problems = problems
            .iter()
            .filter_map(|p| match serde_json::to_value(p) {
                Ok(serde_json::Value::String(name)) => Some(name),
                _ => None,
            })
            .collect();
        Some(Self { state, problems })
    }
}

/// The printer's state against what its events said.
#[derive(Debug, Default)]
struct Reported {
    /// What the last event said.
    written: Option<Shown>,
    /// The printer now, and since when.
    current: Option<(Shown, Timestamp)>,
    pace: Pace,
    /// The record the last event with a record told, and when.
    told: Option<(PrinterId, Instant)>,
}

impl Reported {
    fn saw(&mut self, status: &PrinterStatus) {
        let Some(shown) = Shown::of(status) else {
            return;
        };
        if self
            .current
            .as_ref()
            .is_none_or(|(current, _)| *current != shown)
        {
            self.current = Some((shown, depot_protocol::now()));
        }
    }

    /// When the next event is to be written: the state not written yet,
    /// in its pace, or else the record's `printer.seen`.
    fn due(&self, record: Option<PrinterId>, now: Instant) -> Option<Instant> {
        let (shown, _) = self.current.as_ref()?;
        if self.written.as_ref() != Some(shown) {
            return Some(self.pace.next_at().unwrap_or(now));
        }
        self.seen_due(record, now)
    }

    /// When the record is to be told what is written: at once if it was
    /// never told (bound after the state's event, or to another record),
    /// then every [`SEEN_EVERY`] while the printer answers. Not while a
    /// change waits for its turn: the change's event tells the record.
    fn seen_due(&self, record: Option<PrinterId>, now: Instant) -> Option<Instant> {
        let id = record?;
        let (shown, _) = self.current.as_ref()?;
        if self.written.as_ref() != Some(shown) {
            return None;
        }
        match self.told {
            Some((told, at)) if told == id => {
                (shown.state != "unreachable").then_some(at + SEEN_EVERY)
            }
            _ => Some(now),
        }
    }

    /// The state to tell `record` now in a `printer.seen`, if it is due.
    fn take_seen(&mut self, record: Option<PrinterId>, now: Instant) -> Option<(PrinterId, Shown)> {
        let at = self.seen_due(record, now)?;
        let id = record?;
        if at > now {
            return None;
        }
        // Counted even if the write fails, as a change is: tried again in
        // SEEN_EVERY, not in a loop.
        self.told = Some((id, now));
        self.written.clone().map(|shown| (id, shown))
    }

    /// A change's event was written, telling `record` if it had one.
    fn told_in_change(&mut self, record: Option<PrinterId>, now: Instant) {
        if let Some(id) = record {
            self.told = Some((id, now));
        }
    }

    /// The change to write now, with the state the last event said.
    fn take(&mut self, now: Instant) -> Option<(Shown, &'static str, Timestamp)> {
        let (shown, at) = self.current.clone()?;
        if self.written.as_ref() == Some(&shown) || !self.pace.allows(now) {
            return None;
        }
        // Counted even if the write fails: a failing database is not
        // retried in a loop, and the next change is written in its turn.
        self.pace.wrote(now);
        let previous = self
            .written
            .replace(shown.clone())
            .map_or("unknown", |w| w.state);
        Some((shown, previous, at))
    }
}

/// Jobs handed to the driver, in the order they were (and as a set: a
/// long queue is checked against it after every change).
#[derive(Default)]
struct Handed {
    ids: Vec<PrintJobId>,
    set: HashSet<PrintJobId>,
    /// The job a waiting reason was last written to, and the reason.
    noted: Option<(PrintJobId, String)>,
}

impl Spooler {
    /// The status to read, and the task, which runs until `stop` is true.
    pub fn start(
        self,
        stop: watch::Receiver<bool>,
    ) -> (
        watch::Receiver<PrinterStatus>,
        impl Future<Output = ()> + Send,
    ) {
        let (status, read) = watch::channel(PrinterStatus {
            name: self.config.name.clone(),
            endpoint: self.config.endpoint.to_string(),
            printer_id: None,
            unbound: None,
            device: PrinterState::Unknown,
            queued: 0,
            failed: 0,
        });
        (read, self.run(status, stop))
    }

    async fn run(self, status: watch::Sender<PrinterStatus>, mut stop: watch::Receiver<bool>) {
        let mut printer = Printer::spawn(&self.config.endpoint, self.config.driver());
        let mut device = printer.watch_state();
        let mut jobs = self.wms.print_jobs_changed();
        let mut records = self.wms.printers_changed();
        let mut look_up = tokio::time::interval(LOOK_UP_EVERY);
        let mut handed = Handed::default();
        let mut reported = Reported::default();
        loop {
            tokio::select! {
                () = stopped(&mut stop) => break,
                _ = look_up.tick() => self.hand_over(&printer, &status, &mut handed).await,
                changed = records.changed() => {
                    if changed.is_err() {
                        break;
                    }
                    self.hand_over(&printer, &status, &mut handed).await;
                }
                changed = jobs.changed() => {
                    if changed.is_err() {
                        break;
                    }
                    self.hand_over(&printer, &status, &mut handed).await;
                }
                outcome = printer.next_outcome() => match outcome {
                    Some(outcome) => {
                        // A burst of outcomes (a queue printing) is recorded
                        // in one transaction.
                        let mut outcomes = vec![outcome];
                        while let Some(more) = printer.try_outcome() {
                            outcomes.push(more);
                        }
                        let failed = self.record(outcomes, &mut handed).await;
                        status.send_if_modified(|s| {
                            s.failed += failed;
                            failed > 0
                        });
                    }
                    None => break,
                },
                changed = device.changed() => {
                    if changed.is_err() {
                        break;
                    }
                    let state = device.borrow_and_update().clone();
                    status.send_modify(|s| s.device = state);
                }
                () = pacing::until(reported.due(status.borrow().printer_id, Instant::now())) => {}
            }
            // After any change: the first job may have changed as well as
            // the state, in either order.
            let state = status.borrow().device.clone();
            self.note_waiting(&state, &mut handed).await;
            status.send_if_modified(|s| {
                let changed = s.queued != handed.ids.len();
                s.queued = handed.ids.len();
                changed
            });
            reported.saw(&status.borrow());
            let printer_id = status.borrow().printer_id;
            let now = Instant::now();
            if let Some(change) = reported.take(now) {
                reported.told_in_change(printer_id, now);
                self.report(change, printer_id).await;
            } else if let Some((id, shown)) = reported.take_seen(printer_id, now) {
                self.seen(id, shown).await;
            }
        }
        printer.shutdown().await;
    }

    /// Logs a `printer.state_changed`.
    async fn report(
        &self,
        (shown, previous, at): (Shown, &'static str, Timestamp),
        printer_id: Option<PrinterId>,
    ) {
        let payload = serde_json::json!({
            "business_id": self.business,
            "printer_id": printer_id,
            "device": self.config.name,
            "station": self.station,
            "state": shown.state,
            "problems": shown.problems,
            "previous": previous,
            "at": depot_protocol::format_ts(&at),
        });
        if let Err(error) = self
            .wms
            .device_event(self.business, EventKind::PrinterStateChanged, payload)
            .await
        {
            tracing::warn!(printer = %self.config.name, %error, "cannot log the printer's state");
        }
    }

    /// Logs a `printer.seen`: the record told the state it is in now.
    async fn seen(&self, printer_id: PrinterId, shown: Shown) {
        let payload = serde_json::json!({
            "business_id": self.business,
            "printer_id": printer_id,
            "device": self.config.name,
            "station": self.station,
            "state": shown.state,
            "problems": shown.problems,
            "at": depot_protocol::format_ts(&depot_protocol::now()),
        });
        if let Err(error) = self
            .wms
            .device_event(self.business, EventKind::PrinterSeen, payload)
            .await
        {
            tracing::warn!(printer = %self.config.name, %error, "cannot tell the printer's record its state");
        }
    }

    /// Looks the record up and hands the driver the queued jobs it does
    /// not have yet (the driver also ignores an id it already has).
    async fn hand_over(
        &self,
        printer: &Printer,
        status: &watch::Sender<PrinterStatus>,
        handed: &mut Handed,
    ) {
        let name = &self.config.name;
        let record = match resolve(&self.wms, self.business, &self.edge_id, name).await {
            Ok(record) => record,
            Err(error) => {
                tracing::warn!(printer = %name, %error, "cannot look the printer up");
                return;
            }
        };
        let id = record.as_ref().ok().map(|p| p.id);
        status.send_if_modified(|s| {
            let unbound = record.as_ref().err().cloned();
            let changed = s.printer_id != id || s.unbound != unbound;
            s.printer_id = id;
            s.unbound = unbound;
            changed
        });
        let Some(id) = id else {
            return;
        };
        let queued = match self
            .wms
            .queued_print_jobs(vec![id], handed.set.clone())
            .await
        {
            Ok(queued) => queued,
            Err(error) => {
                tracing::warn!(printer = %name, %error, "cannot read the queued jobs");
                return;
            }
        };
        for (job, data) in queued {
            if handed.set.contains(&job.id) {
                continue;
            }
            let Ok(driver_id) = u64::try_from(job.id.0) else {
                tracing::error!(printer = %name, job = job.id.0, "a job id the driver cannot take");
                continue;
            };
            if printer
                .submit(Job {
                    id: JobId(driver_id),
                    data,
                })
                .is_err()
            {
                // The driver's task ended; the loop sees it next.
                return;
            }
            handed.ids.push(job.id);
            handed.set.insert(job.id);
        }
    }

    /// Records what the driver did with jobs; answers how many of them
    /// failed, once recorded.
    async fn record(&self, outcomes: Vec<JobOutcome>, handed: &mut Handed) -> u64 {
        let mut updates = Vec::with_capacity(outcomes.len());
        let mut done = HashSet::new();
        let mut failed = 0;
        for outcome in outcomes {
            let Ok(id) = i64::try_from(outcome.id().0).map(PrintJobId) else {
                continue;
            };
            let (status, error) = match outcome {
                JobOutcome::Printed { .. } => (JobStatus::Printed, None),
                JobOutcome::Retrying {
                    attempt, reason, ..
                } => (
                    JobStatus::Queued,
                    Some(format!(
                        "transfer {attempt} cut off ({reason}): sending it again"
                    )),
                ),
                JobOutcome::Failed { reason, .. } => {
                    failed += 1;
                    (JobStatus::Failed, Some(reason))
                }
            };
            if status != JobStatus::Queued {
                done.insert(id);
            }
            updates.push((id, status, error));
        }
        match self.wms.print_job_updates(updates).await {
            Ok(_) => {
                handed.ids.retain(|j| !done.contains(j));
                for id in &done {
                    handed.set.remove(id);
                }
                failed
            }
            // Kept as handed: sending them again would print them twice. A
            // restart hands them over again (at least once).
            Err(error) => {
                tracing::error!(jobs = ?done, %error, "cannot record print jobs' outcomes");
                0
            }
        }
    }

    /// Writes why the first job waits on the job itself ("paper out"), so
    /// the job lists say it, not only this edge's device route.
    async fn note_waiting(&self, state: &PrinterState, handed: &mut Handed) {
        let (Some(&first), Some(reason)) = (handed.ids.first(), waiting_reason(state)) else {
            return;
        };
        let note = (first, reason);
        if handed.noted.as_ref() == Some(&note) {
            return;
        }
        handed.noted = Some(note.clone());
        if let Err(error) = self
            .wms
            .print_job_update(first, JobStatus::Queued, Some(note.1))
            .await
        {
            tracing::warn!(job = first.0, %error, "cannot record why a print job waits");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(device: PrinterState) -> PrinterStatus {
        PrinterStatus {
            name: "label-1".into(),
            endpoint: "tcp://127.0.0.1:9100".into(),
            printer_id: None,
            unbound: None,
            device,
            queued: 0,
            failed: 0,
        }
    }

    const P7: PrinterId = PrinterId(7);
    const P8: PrinterId = PrinterId(8);

    fn state(r: &Option<(PrinterId, Shown)>) -> Option<(PrinterId, &'static str)> {
        r.as_ref().map(|(id, shown)| (*id, shown.state))
    }

    #[test]
    fn a_record_bound_after_the_state_is_told_at_once_then_every_few_minutes() {
        let start = Instant::now();
        let mut r = Reported::default();
        r.saw(&status(PrinterState::Ready));
        // Ready before the record reached the edge: the change carries none.
        assert!(r.take(start).is_some());
        r.told_in_change(None, start);
        assert_eq!(r.due(None, start), None, "nothing to tell, no record");
        assert_eq!(state(&r.take_seen(None, start)), None);
        // The record arrives: told at once, and only once.
        let bound = start + Duration::from_secs(3);
        assert_eq!(r.due(Some(P7), bound), Some(bound));
        assert_eq!(state(&r.take_seen(Some(P7), bound)), Some((P7, "ready")));
        assert_eq!(state(&r.take_seen(Some(P7), bound)), None);
        // Then again once its last_seen would be SEEN_EVERY old.
        assert_eq!(r.due(Some(P7), bound), Some(bound + SEEN_EVERY));
        let almost = bound + SEEN_EVERY - Duration::from_millis(1);
        assert_eq!(state(&r.take_seen(Some(P7), almost)), None);
        let later = bound + SEEN_EVERY;
        assert_eq!(state(&r.take_seen(Some(P7), later)), Some((P7, "ready")));
        // Bound to another record: that one is told at once.
        assert_eq!(state(&r.take_seen(Some(P8), later)), Some((P8, "ready")));
    }

    #[test]
    fn a_change_tells_the_record_and_an_unreachable_printer_is_not_refreshed() {
        let start = Instant::now();
        let mut r = Reported::default();
        r.saw(&status(PrinterState::Ready));
        assert!(r.take(start).is_some());
        r.told_in_change(Some(P7), start);
        // The change's event told it: no printer.seen for it.
        assert_eq!(state(&r.take_seen(Some(P7), start)), None);
        r.saw(&status(PrinterState::Unreachable {
            since: std::time::SystemTime::now(),
        }));
        // A change waiting for its turn is the change's to tell.
        let soon = start + Duration::from_millis(10);
        assert_eq!(r.seen_due(Some(P7), soon), None);
        assert_eq!(r.due(Some(P7), soon), r.pace.next_at());
        let turn = r.pace.next_at().unwrap_or(soon);
        assert!(r.take(turn).is_some());
        r.told_in_change(Some(P7), turn);
        // Not seen: nothing to refresh, however long it lasts.
        assert_eq!(r.due(Some(P7), turn), None);
        assert_eq!(state(&r.take_seen(Some(P7), turn + SEEN_EVERY * 10)), None);
    }
}
