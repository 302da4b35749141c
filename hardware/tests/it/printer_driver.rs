//! The driver under arbitrary event sequences: whatever the printer and the
//! network do, a job is reported printed at most once, in submission order,
//! never after it failed, and a connection carries at most one job.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use depot_hardware::printer::driver::{
    Action, Driver, DriverConfig, Job, JobId, JobOutcome, Moment,
};
use depot_hardware::printer::status::PrinterStatus;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Event {
    Connected,
    AnswerReady,
    AnswerPaperOut,
    AnswerBytes(Vec<u8>),
    WriteFinished,
    Closed,
    Lost,
    Timer,
    Submit,
    Wait(u64),
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        3 => Just(Event::Connected),
        3 => Just(Event::AnswerReady),
        1 => Just(Event::AnswerPaperOut),
        1 => proptest::collection::vec(any::<u8>(), 0..40).prop_map(Event::AnswerBytes),
        4 => Just(Event::WriteFinished),
        3 => Just(Event::Closed),
        1 => Just(Event::Lost),
        2 => Just(Event::Timer),
        2 => Just(Event::Submit),
        1 => (0u64..5_000).prop_map(Event::Wait),
    ]
}

fn job(id: u64) -> Job {
    Job {
        id: JobId(id),
        data: format!("^XA^FDjob {id}^FS^XZ").into_bytes(),
    }
}

#[derive(Default)]
struct Observed {
    printed: Vec<u64>,
    failed: HashSet<u64>,
    jobs_on_this_connection: usize,
    timer: Option<Instant>,
}

impl Observed {
    fn take(&mut self, driver: &mut Driver) -> Result<(), TestCaseError> {
        while let Some(action) = driver.poll_action() {
            match action {
                Action::Connect => self.jobs_on_this_connection = 0,
                Action::Write(data) if data != b"~HS" => {
                    self.jobs_on_this_connection += 1;
                    prop_assert!(
                        self.jobs_on_this_connection <= 1,
                        "two jobs on one connection"
                    );
                }
                Action::ArmTimer(at) => self.timer = Some(at),
                Action::Job(JobOutcome::Printed { id }) => {
                    prop_assert!(!self.printed.contains(&id.0), "job {id} printed twice");
                    prop_assert!(
                        !self.failed.contains(&id.0),
                        "job {id} printed after failing"
                    );
                    prop_assert!(
                        self.printed.last().is_none_or(|&last| last < id.0),
                        "job {id} printed out of order"
                    );
                    self.printed.push(id.0);
                }
                Action::Job(JobOutcome::Failed { id, .. }) => {
                    self.failed.insert(id.0);
                }
                _ => {}
            }
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn jobs_are_printed_at_most_once_and_in_order(events in proptest::collection::vec(event(), 0..200)) {
        let config = DriverConfig { max_transfer_attempts: 3, ..DriverConfig::default() };
        let mut now = Moment::now();
        let mut driver = Driver::new(config, now);
        let mut observed = Observed::default();
        let mut next_id = 1;
        observed.take(&mut driver)?;
        for event in events {
            match event {
                Event::Connected => driver.connected(now),
                Event::AnswerReady => driver.received(now, &PrinterStatus::default().encode()),
                Event::AnswerPaperOut => {
                    let status = PrinterStatus { paper_out: true, ..PrinterStatus::default() };
                    driver.received(now, &status.encode());
                }
                Event::AnswerBytes(bytes) => driver.received(now, &bytes),
                Event::WriteFinished => driver.write_finished(now),
                Event::Closed => driver.closed(now),
                Event::Lost => driver.connection_lost(now, "lost"),
                Event::Timer => {
                    if let Some(at) = observed.timer {
                        now = now.after(at.saturating_duration_since(now.instant));
                    }
                    driver.timer_fired(now);
                }
                Event::Submit => {
                    prop_assert!(driver.submit(now, job(next_id)));
                    next_id += 1;
                }
                Event::Wait(millis) => now = now.after(Duration::from_millis(millis)),
            }
            observed.take(&mut driver)?;
        }
        // Every job is accounted for: printed, failed, or still queued.
        let queued: HashSet<u64> = driver.queued().map(|id| id.0).collect();
        for id in 1..next_id {
            let places = [
                observed.printed.contains(&id),
                observed.failed.contains(&id),
                queued.contains(&id),
            ];
            prop_assert_eq!(places.iter().filter(|&&p| p).count(), 1, "job {} lost or duplicated", id);
        }
    }
}
