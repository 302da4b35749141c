//! The printer connection as a state machine without I/O: the I/O task
//! reports what happened (connected, bytes received, write finished,
//! closed, connection lost, timer fired, job submitted) and executes the
//! [`Action`]s it then polls, in order.
//!
//! Each job gets its own connection: connect, ask `~HS`, and only if the
//! printer answers without a problem send the job and close. A job counts as
//! printed once every byte was written and the printer acknowledged the
//! close; on TCP that is the printer closing its side after reading ours to
//! the end, as the CUPS socket backend waits for. Then the driver connects
//! again and asks `~HS`, which is how it notices paper running out after a
//! job. A transfer that does not end in that acknowledgement (the
//! connection lost while the job is written or closed, or no close within
//! `close_timeout`) leaves the job first in line, to be sent again whole: if
//! the printer had in fact taken it all and only the acknowledgement was
//! lost, it prints twice. That window is at least once; everywhere else a
//! job is sent exactly once.
//!
//! No answer to `~HS` is not success: the printer is `Unreachable` and jobs
//! wait. A printer that answers with a problem is `Faulted` and jobs wait.
//! Either way it is asked again after a backoff that doubles while the
//! trouble lasts.

#[cfg(test)]
mod tests;
mod types;

pub use types::{Action, DriverConfig, Job, JobId, JobOutcome, Moment, PrinterState};

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::printer::status::{PrinterStatus, Problem};

/// The host status query; answered ahead of any queued format.
pub const HOST_STATUS_QUERY: &[u8] = b"~HS";

/// More answer than three `~HS` strings could ever be: the peer is not a
/// ZPL printer, or the line is noise.
const MAX_ANSWER: usize = 4096;

#[derive(Debug)]
enum Phase {
    /// No connection; the timer, if armed, is the next idle poll.
    Idle,
    /// No connection; the timer is the end of a backoff.
    Waiting,
    Connecting,
    Querying {
        answer: Vec<u8>,
    },
    /// The first queued job is being written.
    Sending,
    /// The job is written; waiting for the printer to acknowledge the close.
    Closing,
}

#[derive(Debug)]
struct Queued {
    job: Job,
    attempts: u32,
}

/// One printer connection's state. See the module documentation.
#[derive(Debug)]
pub struct Driver {
    config: DriverConfig,
    phase: Phase,
    queue: VecDeque<Queued>,
    state: PrinterState,
    actions: VecDeque<Action>,
    deadline: Option<Instant>,
    backoff: Duration,
    writes_in_flight: usize,
}

impl Driver {
    /// A driver that starts by asking the printer for its status.
    pub fn new(config: DriverConfig, now: Moment) -> Self {
        let backoff = config.backoff_initial;
        let mut driver = Self {
            config,
            phase: Phase::Idle,
            queue: VecDeque::new(),
            state: PrinterState::Unknown,
            actions: VecDeque::new(),
            deadline: None,
            backoff,
            writes_in_flight: 0,
        };
        driver.connect(now);
        driver
    }

    pub fn state(&self) -> &PrinterState {
        &self.state
    }

    /// Queued jobs in sending order, the one in progress first.
    pub fn queued(&self) -> impl Iterator<Item = JobId> + '_ {
        self.queue.iter().map(|queued| queued.job.id)
    }

    /// The next thing to do, if any.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// Queues a job behind the others. A job whose id is already queued is
    /// ignored (returns `false`), so a caller may resubmit everything it
    /// still has pending after a restart of the I/O task.
    pub fn submit(&mut self, now: Moment, job: Job) -> bool {
        if self.queue.iter().any(|queued| queued.job.id == job.id) {
            return false;
        }
        self.queue.push_back(Queued { job, attempts: 0 });
        if self.state == PrinterState::Ready {
            self.set_state(PrinterState::Busy);
        }
        // During a backoff the printer has a known problem: the job waits
        // for the next poll rather than hurrying it.
        if matches!(self.phase, Phase::Idle) {
            self.connect(now);
        }
        true
    }

    pub fn connected(&mut self, now: Moment) {
        if !matches!(self.phase, Phase::Connecting) {
            return;
        }
        self.writes_in_flight = 0;
        self.write(HOST_STATUS_QUERY.to_vec());
        self.phase = Phase::Querying { answer: Vec::new() };
        self.arm(now.instant + self.config.status_timeout);
    }

    pub fn received(&mut self, now: Moment, bytes: &[u8]) {
        let Phase::Querying { answer } = &mut self.phase else {
            // Unasked-for output (a late answer, printer chatter) is not
            // a status.
            return;
        };
        answer.extend_from_slice(bytes);
        let too_long = answer.len() > MAX_ANSWER;
        match PrinterStatus::parse(answer) {
            Ok((status, _)) => self.on_status(now, &status),
            Err(error) if error.is_incomplete() && !too_long => {}
            Err(error) => {
                tracing::warn!(%error, "unreadable printer status");
                self.set_state(PrinterState::Faulted {
                    problems: vec![Problem::UnreadableStatus],
                });
                self.actions.push_back(Action::Abort);
                self.back_off(now);
            }
        }
    }

    pub fn write_finished(&mut self, now: Moment) {
        self.writes_in_flight = self.writes_in_flight.saturating_sub(1);
        if matches!(self.phase, Phase::Sending) && self.writes_in_flight == 0 {
            self.actions.push_back(Action::Close);
            self.phase = Phase::Closing;
            self.arm(now.instant + self.config.close_timeout);
        }
    }

    /// The connection ended as asked by [`Action::Close`], acknowledged by
    /// the printer.
    pub fn closed(&mut self, now: Moment) {
        if !matches!(self.phase, Phase::Closing) {
            return;
        }
        if let Some(done) = self.queue.pop_front() {
            self.actions
                .push_back(Action::Job(JobOutcome::Printed { id: done.job.id }));
        }
        // Ask again at once: the status after a job is how a roll that ran
        // out during it is noticed.
        self.connect(now);
    }

    /// The connection failed to open, broke, or ended other than by an
    /// acknowledged [`Action::Close`].
    pub fn connection_lost(&mut self, now: Moment, reason: &str) {
        match self.phase {
            Phase::Idle | Phase::Waiting => return,
            Phase::Connecting | Phase::Querying { .. } => {}
            Phase::Sending | Phase::Closing => self.interrupted(reason),
        }
        tracing::debug!(reason, "printer connection lost");
        self.unreachable(now);
        self.back_off(now);
    }

    pub fn timer_fired(&mut self, now: Moment) {
        match self.deadline {
            Some(deadline) if now.instant >= deadline => self.deadline = None,
            // Stale or early: a newer timer replaced it.
            _ => return,
        }
        let interruption = match self.phase {
            Phase::Idle | Phase::Waiting => {
                self.connect(now);
                return;
            }
            Phase::Connecting | Phase::Querying { .. } => None,
            Phase::Sending => Some("the transfer timed out"),
            Phase::Closing => Some("the printer did not acknowledge the end of the job"),
        };
        if let Some(reason) = interruption {
            self.interrupted(reason);
        }
        self.actions.push_back(Action::Abort);
        self.unreachable(now);
        self.back_off(now);
    }

    fn on_status(&mut self, now: Moment, status: &PrinterStatus) {
        let problems = status.problems();
        if !problems.is_empty() {
            self.set_state(PrinterState::Faulted { problems });
            self.actions.push_back(Action::Abort);
            self.back_off(now);
            return;
        }
        self.backoff = self.config.backoff_initial;
        if let Some(next) = self.queue.front() {
            let data = next.job.data.clone();
            self.set_state(PrinterState::Busy);
            self.write(data);
            self.phase = Phase::Sending;
            self.arm(now.instant + self.config.transfer_timeout);
            return;
        }
        self.actions.push_back(Action::Abort);
        self.phase = Phase::Idle;
        self.deadline = None;
        if status.has_work() {
            // Printing what it already has: look again soon to see it done.
            self.set_state(PrinterState::Busy);
            self.arm(now.instant + self.config.backoff_initial);
        } else {
            self.set_state(PrinterState::Ready);
            if let Some(interval) = self.config.idle_poll {
                self.arm(now.instant + interval);
            }
        }
    }

    /// The job being sent was cut off: count the attempt, give up after
    /// too many.
    fn interrupted(&mut self, reason: &str) {
        let Some(current) = self.queue.front_mut() else {
            return;
        };
        current.attempts += 1;
        let id = current.job.id;
        let attempt = current.attempts;
        let outcome = if attempt >= self.config.max_transfer_attempts {
            self.queue.pop_front();
            JobOutcome::Failed {
                id,
                reason: format!("{attempt} transfers cut off, the last: {reason}"),
            }
        } else {
            JobOutcome::Retrying {
                id,
                attempt,
                reason: reason.to_owned(),
            }
        };
        self.actions.push_back(Action::Job(outcome));
    }

    fn connect(&mut self, now: Moment) {
        self.actions.push_back(Action::Connect);
        self.phase = Phase::Connecting;
        self.arm(now.instant + self.config.connect_timeout);
    }

    fn write(&mut self, data: Vec<u8>) {
        self.writes_in_flight += 1;
        self.actions.push_back(Action::Write(data));
    }

    fn arm(&mut self, deadline: Instant) {
        self.deadline = Some(deadline);
        self.actions.push_back(Action::ArmTimer(deadline));
    }

    fn back_off(&mut self, now: Moment) {
        self.phase = Phase::Waiting;
        self.arm(now.instant + self.backoff);
        self.backoff = (self.backoff * 2).min(self.config.backoff_max);
    }

    fn unreachable(&mut self, now: Moment) {
        if !matches!(self.state, PrinterState::Unreachable { .. }) {
            self.set_state(PrinterState::Unreachable { since: now.wall });
        }
    }

    fn set_state(&mut self, state: PrinterState) {
        if self.state != state {
            self.state = state.clone();
            self.actions.push_back(Action::StateChanged(state));
        }
    }
}
