//! The open-loop load runner: requests sent at a fixed rate whatever the
//! answers do, each timed from when it was due to be sent, not from when
//! it went (as wrk2 does). A closed loop waits for an answer before its
//! next request, so a slow server is offered less and its queueing never
//! shows ("coordinated omission"); here a server that falls behind shows
//! it in every request due meanwhile.

use std::future::Future;
use std::time::Duration;
use tokio::task::JoinSet;
// Tokio's clock: the same as the system's, but one a test can pause.
use tokio::time::Instant;

/// When each request of a run is due: `rate` a second, evenly, for
/// `secs`.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    start: Instant,
    interval: Duration,
    count: usize,
}

impl Schedule {
    /// No requests at all for a rate that is not a positive number.
    pub fn new(start: Instant, rate: f64, secs: f64) -> Self {
        match Duration::try_from_secs_f64(1.0 / rate) {
            Ok(interval) if rate > 0.0 => Self {
                start,
                interval,
                count: (rate * secs.max(0.0)).floor() as usize,
            },
            _ => Self {
                start,
                interval: Duration::from_secs(1),
                count: 0,
            },
        }
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// When request `i` is due.
    pub fn due(&self, i: usize) -> Instant {
        self.start + self.interval.mul_f64(i as f64)
    }
}

/// What an open-loop run measured.
#[derive(Debug, Clone)]
pub struct OpenRun {
    pub name: &'static str,
    /// Requests a second asked for, and answered.
    pub offered: f64,
    pub achieved: f64,
    pub requests: usize,
    pub errors: usize,
    /// Latency from when each request was due, in milliseconds.
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
    /// When the slowest request was due, in seconds from the start: a
    /// stall at the start is a warm-up's, one in the middle the server's.
    pub max_at_s: f64,
    /// CPU time of the whole process per request, in microseconds.
    pub cpu_us: f64,
}

/// The `p`th per-mille of sorted latencies, in milliseconds.
pub fn per_mille(sorted: &[Duration], p: usize) -> f64 {
    sorted
        .get((sorted.len() * p / 1000).min(sorted.len().saturating_sub(1)))
        .map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

/// Sends request `i` (by `send(i)`) when it is due, for `secs` at `rate` a
/// second, without waiting for earlier answers; each latency runs from
/// when its request was due to its answer.
pub async fn open_loop<F, Fut>(name: &'static str, rate: f64, secs: f64, send: F) -> OpenRun
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    let cpu_before = crate::cpu::process();
    let schedule = Schedule::new(Instant::now(), rate, secs);
    let mut set = JoinSet::new();
    let mut lat = Vec::with_capacity(schedule.len());
    let mut errors = Vec::new();
    let mut count =
        |done: Result<(usize, Duration, Result<(), String>), tokio::task::JoinError>| match done {
            Ok((i, took, outcome)) => {
                lat.push((i, took));
                if let Err(e) = outcome {
                    errors.push(e);
                }
            }
            Err(e) => errors.push(e.to_string()),
        };
    for i in 0..schedule.len() {
        let due = schedule.due(i);
        tokio::time::sleep_until(due).await;
        let request = send(i);
        set.spawn(async move {
            let outcome = request.await;
            (i, due.elapsed(), outcome)
        });
        // What has finished is counted now, so a long run holds few tasks.
        while let Some(done) = set.try_join_next() {
            count(done);
        }
    }
    while let Some(done) = set.join_next().await {
        count(done);
    }
    summarise(name, rate, schedule, lat, errors, cpu_before)
}

/// Sends `req` and reads its whole answer: `Err` (the status and the start
/// of the body) unless it is a success, as an open loop's request reports.
pub async fn answered(req: reqwest::RequestBuilder) -> Result<(), String> {
    let resp = req.send().await.map_err(|e| e.to_string())?;
    let status = resp.status();
    let body = resp.bytes().await.map_err(|e| e.to_string())?;
    if status.is_success() {
        Ok(())
    } else {
        Err(crate::closed_loop::failure(status, &body))
    }
}

fn summarise(
    name: &'static str,
    rate: f64,
    schedule: Schedule,
    by_due: Vec<(usize, Duration)>,
    errors: Vec<String>,
    cpu_before: Option<Duration>,
) -> OpenRun {
    let elapsed = schedule.start.elapsed().as_secs_f64();
    let cpu = crate::cpu::since(cpu_before);
    crate::closed_loop::report_errors(name, &errors);
    let at = |i: usize| (schedule.due(i) - schedule.start).as_secs_f64();
    let max_at_s = by_due
        .iter()
        .max_by_key(|(_, took)| *took)
        .map_or(0.0, |&(i, _)| at(i));
    let slow = Slow::of(&by_due, &at).map_or_else(String::new, |s| s.to_string());
    let mut lat: Vec<Duration> = by_due.into_iter().map(|(_, took)| took).collect();
    lat.sort_unstable();
    let run = OpenRun {
        name,
        offered: rate,
        achieved: lat.len() as f64 / elapsed.max(f64::MIN_POSITIVE),
        requests: lat.len(),
        errors: errors.len(),
        p50_ms: per_mille(&lat, 500),
        p99_ms: per_mille(&lat, 990),
        p999_ms: per_mille(&lat, 999),
        max_ms: lat.last().map_or(0.0, |d| d.as_secs_f64() * 1e3),
        max_at_s,
        cpu_us: cpu.map_or(0.0, |c| crate::cpu::micros_per(c, lat.len())),
    };
    eprintln!(
        "  {name}: offered {:.0}/s, achieved {:.0}/s, p99 {:.2} ms, max {:.1} ms (due {max_at_s:.2} s into the run){slow}",
        run.offered, run.achieved, run.p99_ms, run.max_ms
    );
    run
}

/// The requests slower than [`Slow::OVER`]: how many, and between which
/// due times, so one stall tells from many.
struct Slow {
    count: usize,
    first_s: f64,
    last_s: f64,
}

impl Slow {
    const OVER: Duration = Duration::from_millis(50);

    fn of(by_due: &[(usize, Duration)], at: &dyn Fn(usize) -> f64) -> Option<Self> {
        let slow: Vec<usize> = by_due
            .iter()
            .filter(|(_, took)| *took > Self::OVER)
            .map(|&(i, _)| i)
            .collect();
        Some(Self {
            count: slow.len(),
            first_s: at(*slow.iter().min()?),
            last_s: at(*slow.iter().max()?),
        })
    }
}

impl std::fmt::Display for Slow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "; {} over {} ms, due between {:.2} s and {:.2} s",
            self.count,
            Self::OVER.as_millis(),
            self.first_s,
            self.last_s
        )
    }
}

impl OpenRun {
    /// One line of the open-loop table.
    pub fn print(&self) {
        println!(
            "{:<20} {:>8.0} {:>9.0} {:>9} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>7.1} {:>7}",
            self.name,
            self.offered,
            self.achieved,
            self.requests,
            self.p50_ms,
            self.p99_ms,
            self.p999_ms,
            self.max_ms,
            self.cpu_us,
            self.errors
        );
    }

    pub fn print_header() {
        println!(
            "{:<20} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>7}",
            "open loop",
            "offered",
            "achieved",
            "requests",
            "p50 ms",
            "p99 ms",
            "p99.9 ms",
            "max ms",
            "CPU µs",
            "errors"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn the_schedule_is_even_and_counts_what_the_rate_asks() {
        let start = Instant::now();
        let s = Schedule::new(start, 500.0, 2.0);
        assert_eq!(s.len(), 1000);
        assert_eq!(s.due(0), start);
        assert_eq!(s.due(500) - start, Duration::from_secs(1));
        assert!(Schedule::new(start, 0.0, 1.0).is_empty());
    }

    #[test]
    fn per_mille_reads_sorted_latencies() {
        let lat: Vec<Duration> = (1..=1000).map(Duration::from_millis).collect();
        assert_eq!(per_mille(&lat, 500), 501.0);
        assert_eq!(per_mille(&lat, 990), 991.0);
        assert_eq!(per_mille(&lat, 999), 1000.0);
        assert_eq!(per_mille(&[], 990), 0.0);
    }

    /// A server that answers one request at a time, 20 ms each, offered
    /// 100 a second: it falls behind by 10 ms a request. Timed from when
    /// each was due, the queue shows (the last waits most of the run); a
    /// closed loop would have seen 20 ms throughout.
    #[tokio::test(start_paused = true)]
    async fn a_server_that_falls_behind_shows_its_queue() {
        let server = Arc::new(tokio::sync::Mutex::new(()));
        let run = open_loop("slow", 100.0, 1.0, |_| {
            let server = server.clone();
            async move {
                let _one_at_a_time = server.lock().await;
                tokio::time::sleep(Duration::from_millis(20)).await;
                Ok(())
            }
        })
        .await;
        assert_eq!(run.requests, 100);
        assert!(run.p50_ms > 400.0, "{run:?}");
        assert!(run.max_ms > 900.0, "{run:?}");
        assert!(run.achieved < 60.0, "{run:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_that_keeps_up_shows_its_own_time() {
        let run = open_loop("quick", 100.0, 1.0, |_| async {
            tokio::time::sleep(Duration::from_millis(2)).await;
            Ok(())
        })
        .await;
        assert_eq!(run.requests, 100);
        assert!(run.p99_ms < 3.0, "{run:?}");
    }
}
