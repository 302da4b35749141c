//! The driver driven by scripted events and a fake clock.

use std::time::{Duration, SystemTime};

use super::*;

const SEC: Duration = Duration::from_secs(1);

fn config() -> DriverConfig {
    DriverConfig {
        connect_timeout: 5 * SEC,
        status_timeout: 3 * SEC,
        transfer_timeout: 60 * SEC,
        close_timeout: 10 * SEC,
        backoff_initial: SEC,
        backoff_max: 30 * SEC,
        idle_poll: Some(30 * SEC),
        max_transfer_attempts: 3,
    }
}

fn ready() -> Vec<u8> {
    PrinterStatus::default().encode()
}

fn paper_out() -> Vec<u8> {
    PrinterStatus {
        paper_out: true,
        ..PrinterStatus::default()
    }
    .encode()
}

fn job(id: u64) -> Job {
    Job {
        id: JobId(id),
        data: format!("^XA^FDjob {id}^FS^XZ").into_bytes(),
    }
}

struct Harness {
    driver: Driver,
    now: Moment,
    /// Every outcome reported so far, in order.
    outcomes: Vec<JobOutcome>,
    states: Vec<PrinterState>,
}

impl Harness {
    fn new(config: DriverConfig) -> Self {
        let now = Moment::now();
        Self {
            driver: Driver::new(config, now),
            now,
            outcomes: Vec::new(),
            states: Vec::new(),
        }
    }

    /// A harness whose first status query got a ready answer.
    fn idle() -> Self {
        let mut h = Self::new(config());
        h.drain();
        h.driver.connected(h.now);
        h.driver.received(h.now, &ready());
        h.drain();
        h
    }

    fn advance(&mut self, by: Duration) {
        self.now = self.now.after(by);
    }

    /// Takes the pending actions, recording outcomes and states.
    fn drain(&mut self) -> Vec<Action> {
        let mut actions = Vec::new();
        while let Some(action) = self.driver.poll_action() {
            match &action {
                Action::Job(outcome) => self.outcomes.push(outcome.clone()),
                Action::StateChanged(state) => self.states.push(state.clone()),
                _ => {}
            }
            actions.push(action);
        }
        actions
    }

    /// Fires the armed timer: advances the clock to it.
    fn fire_timer(&mut self) -> Vec<Action> {
        let deadline = self.driver.deadline.expect("a timer is armed");
        let wait = deadline.saturating_duration_since(self.now.instant);
        self.advance(wait);
        self.driver.timer_fired(self.now);
        self.drain()
    }

    fn submit(&mut self, id: u64) -> Vec<Action> {
        assert!(self.driver.submit(self.now, job(id)));
        self.drain()
    }

    /// Connects and answers `~HS` with `answer`, acknowledging the query
    /// write the way the I/O task does.
    fn query(&mut self, answer: &[u8]) -> Vec<Action> {
        self.driver.connected(self.now);
        let mut actions = self.drain();
        assert_eq!(
            actions.first(),
            Some(&Action::Write(HOST_STATUS_QUERY.to_vec()))
        );
        self.driver.write_finished(self.now);
        self.driver.received(self.now, answer);
        actions.extend(self.drain());
        actions
    }

    /// Finishes writing the job and has the printer acknowledge the close.
    fn complete_transfer(&mut self) -> Vec<Action> {
        self.driver.write_finished(self.now);
        let mut actions = self.drain();
        assert!(actions.contains(&Action::Close), "{actions:?}");
        self.driver.closed(self.now);
        actions.extend(self.drain());
        actions
    }

    fn printed(&self) -> Vec<u64> {
        self.outcomes
            .iter()
            .filter_map(|o| match o {
                JobOutcome::Printed { id } => Some(id.0),
                _ => None,
            })
            .collect()
    }
}

fn writes_job(actions: &[Action], id: u64) -> bool {
    actions.contains(&Action::Write(job(id).data))
}

#[test]
fn starts_by_asking_for_status() {
    let mut h = Harness::new(config());
    let start = h.now.instant;
    assert_eq!(
        h.drain(),
        vec![Action::Connect, Action::ArmTimer(start + 5 * SEC)]
    );
    assert_eq!(h.driver.state(), &PrinterState::Unknown);
    h.driver.connected(h.now);
    assert_eq!(
        h.drain(),
        vec![
            Action::Write(b"~HS".to_vec()),
            Action::ArmTimer(start + 3 * SEC)
        ]
    );
    h.driver.received(h.now, &ready());
    assert_eq!(
        h.drain(),
        vec![
            Action::Abort,
            Action::StateChanged(PrinterState::Ready),
            Action::ArmTimer(start + 30 * SEC)
        ]
    );
}

#[test]
fn ready_path_prints_one_job() {
    let mut h = Harness::idle();
    assert_eq!(
        h.submit(1),
        vec![
            Action::StateChanged(PrinterState::Busy),
            Action::Connect,
            Action::ArmTimer(h.now.instant + 5 * SEC)
        ]
    );
    let actions = h.query(&ready());
    assert!(writes_job(&actions, 1));
    let actions = h.complete_transfer();
    assert!(actions.contains(&Action::Job(JobOutcome::Printed { id: JobId(1) })));
    // The status after the job is asked on a new connection.
    assert!(actions.contains(&Action::Connect));
    let actions = h.query(&ready());
    assert!(actions.contains(&Action::StateChanged(PrinterState::Ready)));
    assert_eq!(h.printed(), vec![1]);
    assert_eq!(h.driver.queued().count(), 0);
}

#[test]
fn jobs_go_one_at_a_time_in_order() {
    let mut h = Harness::idle();
    for id in [3, 1, 2] {
        h.submit(id);
    }
    assert_eq!(
        h.driver.queued().map(|id| id.0).collect::<Vec<_>>(),
        vec![3, 1, 2]
    );
    for id in [3, 1, 2] {
        let actions = h.query(&ready());
        assert!(writes_job(&actions, id), "job {id} expected: {actions:?}");
        assert_eq!(
            actions
                .iter()
                .filter(|a| matches!(a, Action::Write(_)))
                .count(),
            2,
            "only the query and one job per connection"
        );
        h.complete_transfer();
    }
    h.query(&ready());
    assert_eq!(h.printed(), vec![3, 1, 2]);
    assert_eq!(h.driver.state(), &PrinterState::Ready);
}

#[test]
fn paper_out_mid_queue_then_loaded_prints_each_job_once() {
    let mut h = Harness::idle();
    for id in 1..=4 {
        h.submit(id);
    }
    for id in 1..=2 {
        assert!(writes_job(&h.query(&ready()), id));
        h.complete_transfer();
    }
    // The roll ran out during job 2: the status after it says so.
    let actions = h.query(&paper_out());
    assert!(
        actions.contains(&Action::StateChanged(PrinterState::Faulted {
            problems: vec![Problem::PaperOut]
        }))
    );
    assert!(actions.contains(&Action::Abort));
    assert!(
        !actions
            .iter()
            .any(|a| matches!(a, Action::Write(data) if data != b"~HS"))
    );
    // Still out at the next two polls, 1 s then 2 s later.
    for wait in [SEC, 2 * SEC] {
        let before = h.now.instant;
        let actions = h.fire_timer();
        assert_eq!(h.now.instant - before, wait);
        assert!(actions.contains(&Action::Connect));
        let actions = h.query(&paper_out());
        assert!(!writes_job(&actions, 3));
    }
    // Paper loaded.
    h.fire_timer();
    assert!(writes_job(&h.query(&ready()), 3));
    assert_eq!(h.driver.state(), &PrinterState::Busy);
    h.complete_transfer();
    assert!(writes_job(&h.query(&ready()), 4));
    h.complete_transfer();
    h.query(&ready());
    assert_eq!(h.printed(), vec![1, 2, 3, 4]);
    assert_eq!(
        h.states,
        vec![
            PrinterState::Ready,
            PrinterState::Busy,
            PrinterState::Faulted {
                problems: vec![Problem::PaperOut]
            },
            PrinterState::Busy,
            PrinterState::Ready
        ]
    );
}

#[test]
fn silence_is_unreachable_and_the_job_waits() {
    let mut h = Harness::idle();
    h.submit(1);
    h.driver.connected(h.now);
    h.drain();
    h.driver.write_finished(h.now);
    let silent_since = h.now;
    let actions = h.fire_timer();
    assert!(actions.contains(&Action::Abort));
    let since = silent_since.wall + 3 * SEC;
    assert!(actions.contains(&Action::StateChanged(PrinterState::Unreachable { since })));
    assert!(!writes_job(&actions, 1));
    assert_eq!(h.driver.queued().count(), 1);
    assert!(h.outcomes.is_empty());
}

#[test]
fn unreachable_retries_with_doubling_backoff_up_to_the_cap() {
    let mut h = Harness::new(config());
    h.drain();
    let mut waits = Vec::new();
    for _ in 0..8 {
        // Connection refused each time.
        h.driver.connection_lost(h.now, "refused");
        h.drain();
        let before = h.now.instant;
        let actions = h.fire_timer();
        waits.push((h.now.instant - before).as_secs());
        assert_eq!(actions.first(), Some(&Action::Connect));
    }
    assert_eq!(waits, vec![1, 2, 4, 8, 16, 30, 30, 30]);
    // One Unreachable, dated when contact was first lost.
    assert_eq!(h.states.len(), 1);
    assert!(matches!(h.states[0], PrinterState::Unreachable { .. }));
}

#[test]
fn connect_timeout_is_unreachable() {
    let mut h = Harness::new(config());
    h.drain();
    let actions = h.fire_timer();
    assert!(actions.contains(&Action::Abort));
    assert!(matches!(h.driver.state(), PrinterState::Unreachable { .. }));
}

#[test]
fn recovery_resets_the_backoff() {
    let mut h = Harness::idle();
    h.submit(1);
    for _ in 0..3 {
        h.driver.connection_lost(h.now, "refused");
        h.drain();
        h.fire_timer();
    }
    assert!(writes_job(&h.query(&ready()), 1));
    h.complete_transfer();
    // A fault now waits the initial backoff again.
    h.query(&paper_out());
    let before = h.now.instant;
    h.fire_timer();
    assert_eq!(h.now.instant - before, SEC);
}

#[test]
fn connection_lost_mid_transfer_resends_the_job_whole() {
    let mut h = Harness::idle();
    h.submit(1);
    h.submit(2);
    assert!(writes_job(&h.query(&ready()), 1));
    h.driver.connection_lost(h.now, "reset by peer");
    let actions = h.drain();
    assert!(actions.contains(&Action::Job(JobOutcome::Retrying {
        id: JobId(1),
        attempt: 1,
        reason: "reset by peer".into()
    })));
    assert!(matches!(h.driver.state(), PrinterState::Unreachable { .. }));
    h.fire_timer();
    let actions = h.query(&ready());
    assert!(writes_job(&actions, 1), "job 1 again, not job 2");
    h.complete_transfer();
    assert!(writes_job(&h.query(&ready()), 2));
    h.complete_transfer();
    assert_eq!(h.printed(), vec![1, 2]);
}

#[test]
fn unacknowledged_close_resends() {
    let mut h = Harness::idle();
    h.submit(1);
    h.query(&ready());
    h.driver.write_finished(h.now);
    h.drain();
    // The printer reset the connection instead of closing it.
    h.driver.connection_lost(h.now, "reset");
    h.drain();
    assert!(matches!(
        h.outcomes[..],
        [JobOutcome::Retrying { attempt: 1, .. }]
    ));
    h.fire_timer();
    assert!(writes_job(&h.query(&ready()), 1));
}

#[test]
fn close_timeout_resends() {
    let mut h = Harness::idle();
    h.submit(1);
    h.query(&ready());
    h.driver.write_finished(h.now);
    h.drain();
    let actions = h.fire_timer();
    assert!(actions.contains(&Action::Abort));
    assert!(matches!(
        &h.outcomes[..],
        [JobOutcome::Retrying { reason, .. }] if reason.contains("acknowledge")
    ));
    assert_eq!(h.driver.queued().count(), 1);
}

#[test]
fn transfer_timeout_resends() {
    let mut h = Harness::idle();
    h.submit(1);
    h.query(&ready());
    let actions = h.fire_timer();
    assert!(actions.contains(&Action::Abort));
    assert!(matches!(
        &h.outcomes[..],
        [JobOutcome::Retrying { reason, .. }] if reason.contains("timed out")
    ));
}

#[test]
fn a_job_is_given_up_after_too_many_cut_off_transfers() {
    let mut h = Harness::idle();
    h.submit(1);
    h.submit(2);
    for _ in 0..3 {
        assert!(writes_job(&h.query(&ready()), 1));
        h.driver.connection_lost(h.now, "reset");
        h.drain();
        h.fire_timer();
    }
    assert!(matches!(
        h.outcomes.last(),
        Some(JobOutcome::Failed { id: JobId(1), reason }) if reason.starts_with("3 transfers")
    ));
    assert!(writes_job(&h.query(&ready()), 2));
    h.complete_transfer();
    assert_eq!(h.printed(), vec![2]);
}

#[test]
fn garbage_status_is_a_fault_then_recovers() {
    let mut h = Harness::idle();
    h.submit(1);
    let actions = h.query(b"\x02HELLO,1,2\x03\r\n\x02x\x03\r\n\x02y\x03\r\n");
    assert!(
        actions.contains(&Action::StateChanged(PrinterState::Faulted {
            problems: vec![Problem::UnreadableStatus]
        }))
    );
    assert!(actions.contains(&Action::Abort));
    assert!(!writes_job(&actions, 1));
    h.fire_timer();
    assert!(writes_job(&h.query(&ready()), 1));
}

#[test]
fn endless_noise_without_a_frame_is_a_fault() {
    let mut h = Harness::idle();
    h.fire_timer();
    h.driver.connected(h.now);
    h.drain();
    for _ in 0..5 {
        h.driver.received(h.now, &[b'z'; 1000]);
    }
    assert_eq!(
        h.driver.state(),
        &PrinterState::Faulted {
            problems: vec![Problem::UnreadableStatus]
        }
    );
}

#[test]
fn status_in_pieces() {
    let mut h = Harness::idle();
    h.submit(1);
    h.driver.connected(h.now);
    h.drain();
    let answer = ready();
    // Everything up to the last ETX, five bytes at a time.
    let (head, tail) = answer.split_at(answer.len() - 3);
    for chunk in head.chunks(5) {
        h.driver.received(h.now, chunk);
        assert!(!writes_job(&h.drain(), 1));
    }
    h.driver.received(h.now, tail);
    assert!(writes_job(&h.drain(), 1));
}

#[test]
fn query_write_acknowledged_after_the_answer_does_not_end_the_job() {
    let mut h = Harness::idle();
    h.submit(1);
    h.driver.connected(h.now);
    h.drain();
    // The answer is handled before the task reports the query written.
    h.driver.received(h.now, &ready());
    assert!(writes_job(&h.drain(), 1));
    h.driver.write_finished(h.now);
    assert!(!h.drain().contains(&Action::Close));
    h.driver.write_finished(h.now);
    assert!(h.drain().contains(&Action::Close));
}

#[test]
fn duplicate_submissions_are_ignored() {
    let mut h = Harness::idle();
    h.submit(7);
    assert!(!h.driver.submit(h.now, job(7)));
    assert_eq!(h.driver.queued().count(), 1);
}

#[test]
fn a_job_during_backoff_waits_for_the_next_poll() {
    let mut h = Harness::idle();
    h.fire_timer();
    h.query(&paper_out());
    let actions = h.submit(1);
    assert!(!actions.contains(&Action::Connect));
    let actions = h.fire_timer();
    assert!(actions.contains(&Action::Connect));
}

#[test]
fn stale_and_early_timers_are_ignored() {
    let mut h = Harness::new(config());
    h.drain();
    h.driver.timer_fired(h.now);
    assert!(h.drain().is_empty());
    h.driver.connected(h.now);
    h.drain();
    // A timer firing before the current deadline (the status timeout,
    // which replaced the connect timeout) does nothing.
    h.advance(2 * SEC);
    h.driver.timer_fired(h.now);
    assert!(h.drain().is_empty());
}

#[test]
fn events_out_of_turn_are_ignored() {
    let mut h = Harness::idle();
    h.driver.received(h.now, &paper_out());
    h.driver.closed(h.now);
    h.driver.connected(h.now);
    h.driver.write_finished(h.now);
    h.driver.connection_lost(h.now, "late");
    assert!(h.drain().is_empty());
    assert_eq!(h.driver.state(), &PrinterState::Ready);
}

#[test]
fn a_printer_with_work_of_its_own_is_busy_until_done() {
    let mut h = Harness::idle();
    h.fire_timer();
    let printing = PrinterStatus {
        formats_in_buffer: 2,
        ..PrinterStatus::default()
    };
    h.query(&printing.encode());
    assert_eq!(h.driver.state(), &PrinterState::Busy);
    let before = h.now.instant;
    h.fire_timer();
    assert_eq!(h.now.instant - before, SEC);
    h.query(&ready());
    assert_eq!(h.driver.state(), &PrinterState::Ready);
}

#[test]
fn without_idle_poll_an_idle_printer_is_left_alone() {
    let mut h = Harness::new(DriverConfig {
        idle_poll: None,
        ..config()
    });
    h.drain();
    h.query(&ready());
    assert_eq!(h.driver.deadline, None);
}

#[test]
fn unreachable_is_dated_by_the_wall_clock() {
    let mut h = Harness::new(config());
    h.now.wall = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    h.drain();
    h.driver.connection_lost(h.now, "refused");
    assert_eq!(
        h.driver.state(),
        &PrinterState::Unreachable {
            since: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000)
        }
    );
}

#[test]
fn outcome_ids() {
    assert_eq!(JobOutcome::Printed { id: JobId(4) }.id(), JobId(4));
    let failed = JobOutcome::Failed {
        id: JobId(5),
        reason: String::new(),
    };
    assert_eq!(failed.id(), JobId(5));
}
