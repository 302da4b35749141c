//! The closed-loop load runner: workers that each send, wait for the full
//! answer and send again until a deadline; what a run measured, and the
//! table of runs against a hello-world baseline.

use anyhow::Context;
use std::future::Future;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

/// What one run measured.
pub struct Run {
    pub name: &'static str,
    pub requests: usize,
    pub errors: usize,
    pub rps: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    /// Workers that stopped early because their work was done.
    pub ran_out: usize,
    /// CPU time the whole process (clients, server, writer) used per
    /// request, in microseconds; 0 where procfs is not there.
    pub cpu_us: f64,
    /// The server's share of it (its runtime's threads and the engine's
    /// writer), where the server runs on threads of its own
    /// ([`crate::pin`]); 0 otherwise.
    pub server_cpu_us: f64,
    /// CPU time the whole machine used per request (a database server's
    /// processes included, which the process's figure leaves out).
    pub machine_cpu_us: f64,
}

/// What one closed-loop worker brings back.
#[derive(Default)]
pub struct Tally {
    pub lat: Vec<Duration>,
    pub errors: Vec<String>,
    /// The worker stopped before the deadline: its work was done.
    pub ran_out: bool,
}

/// Closed loop: `workers` workers each send, wait for the full answer, and
/// send again until the deadline they are given. Latency covers send to
/// last byte.
pub async fn closed_loop<F, Fut>(
    name: &'static str,
    secs: u64,
    workers: usize,
    worker: F,
) -> anyhow::Result<Run>
where
    F: Fn(usize, Instant) -> Fut,
    Fut: Future<Output = Tally> + Send + 'static,
{
    let started = Instant::now();
    let cpu_before = crate::cpu::process();
    let server_before = crate::cpu::server();
    let machine_before = crate::cpu::machine();
    let deadline = started + Duration::from_secs(secs);
    let mut set = JoinSet::new();
    for w in 0..workers {
        set.spawn(worker(w, deadline));
    }
    let (mut lat, mut errors, mut ran_out) = (Vec::new(), Vec::new(), 0);
    while let Some(done) = set.join_next().await {
        let t = done.context("client worker panicked")?;
        lat.extend(t.lat);
        errors.extend(t.errors);
        ran_out += usize::from(t.ran_out);
    }
    let secs = started.elapsed().as_secs_f64();
    let cpu = crate::cpu::since(cpu_before);
    let server_cpu = crate::cpu::server()
        .zip(server_before)
        .map(|(after, before)| after.saturating_sub(before));
    let machine_cpu = crate::cpu::machine()
        .zip(machine_before)
        .map(|(after, before)| after.saturating_sub(before));
    report_errors(name, &errors);
    lat.sort_unstable();
    let pct = |p: usize| {
        lat.get((lat.len() * p / 100).min(lat.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    let rps = lat.len() as f64 / secs;
    eprintln!("  {name}: {} requests, {rps:.0} req/s", lat.len());
    Ok(Run {
        name,
        requests: lat.len(),
        errors: errors.len(),
        rps,
        p50_ms: pct(50),
        p99_ms: pct(99),
        ran_out,
        cpu_us: cpu.map_or(0.0, |c| crate::cpu::micros_per(c, lat.len())),
        server_cpu_us: server_cpu.map_or(0.0, |c| crate::cpu::micros_per(c, lat.len())),
        machine_cpu_us: machine_cpu.map_or(0.0, |c| crate::cpu::micros_per(c, lat.len())),
    })
}

/// Says on stderr how many requests of a run failed, with a few of them.
pub(crate) fn report_errors(name: &str, errors: &[String]) {
    if !errors.is_empty() {
        eprintln!("!! {name}: {} failed requests, e.g.:", errors.len());
        for e in errors.iter().take(5) {
            eprintln!("!!   {e}");
        }
    }
}

/// One closed-loop worker over HTTP: sends what `request` builds until the
/// deadline. Every answer, good or bad, counts; the whole body is read, as
/// a list is not served until sent, but kept as bytes: decoding a 35 KB
/// page as text would be the load generator's CPU, not the server's, and
/// only a failure's body is shown.
pub async fn requests(
    deadline: Instant,
    mut request: impl FnMut() -> reqwest::RequestBuilder,
) -> Tally {
    let mut tally = Tally::default();
    while Instant::now() < deadline {
        let sent = Instant::now();
        let outcome = match request().send().await {
            Ok(resp) => (resp.status(), resp.bytes().await),
            Err(e) => (reqwest::StatusCode::default(), Err(e)),
        };
        tally.lat.push(sent.elapsed());
        match outcome {
            (status, Ok(_)) if status.is_success() => {}
            (status, Ok(body)) => tally.errors.push(failure(status, &body)),
            (_, Err(e)) => tally.errors.push(e.to_string()),
        }
    }
    tally
}

/// A refused request as a run reports it: its status and the start of its
/// body.
pub(crate) fn failure(status: reqwest::StatusCode, body: &[u8]) -> String {
    format!("{status}: {:.300}", String::from_utf8_lossy(body))
}

/// The baseline of a table: the mean of a hello-world run before and after
/// the others, so drift over the run (heat, caches) weighs on both sides of
/// the ratio.
pub struct Baseline {
    pub rps: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub cpu_us: f64,
    pub server_cpu_us: f64,
}

impl Baseline {
    pub fn of(before: &Run, after: &Run) -> Self {
        Self {
            rps: (before.rps + after.rps) / 2.0,
            p50_ms: (before.p50_ms + after.p50_ms) / 2.0,
            p99_ms: (before.p99_ms + after.p99_ms) / 2.0,
            cpu_us: (before.cpu_us + after.cpu_us) / 2.0,
            server_cpu_us: (before.server_cpu_us + after.server_cpu_us) / 2.0,
        }
    }

    /// Prints `runs`, one row each, as ratios against the baseline and in
    /// absolute figures; `first` heads the column of their names. "CPU
    /// µs" is the process's CPU time per request (clients included), which
    /// other load on the machine moves far less than req/s; "hello ÷ CPU"
    /// is the baseline's CPU per request over the run's, the throughput
    /// ratio the run would reach were every core busy with it alone.
    /// "server µs" is the server's own share where it runs on threads of
    /// its own, and "÷ server" hello's over the run's: the clients' cost
    /// (reading a large answer costs them too) left out. "machine µs" is
    /// every process's CPU per request: on PostgreSQL, its server's too.
    pub fn print_table(&self, first: &str, runs: &[&Run]) {
        println!(
            "{first:<21}req/s ×     p50 ×     p99 ×  hello ÷ CPU |  requests      req/s    p50 ms    p99 ms  CPU µs  errors  server µs  ÷ server  machine µs"
        );
        println!("{}", "-".repeat(160));
        for r in runs {
            println!(
                "{:<18} {:>9.3} {:>9.2} {:>9.2} {:>12.3} | {:>9} {:>10.0} {:>9.3} {:>9.3} {:>7.1} {:>7} {:>10} {:>9} {:>11.1}",
                r.name,
                r.rps / self.rps,
                r.p50_ms / self.p50_ms,
                r.p99_ms / self.p99_ms,
                self.cpu_us / r.cpu_us.max(f64::MIN_POSITIVE),
                r.requests,
                r.rps,
                r.p50_ms,
                r.p99_ms,
                r.cpu_us,
                r.errors,
                if r.server_cpu_us > 0.0 {
                    format!("{:.1}", r.server_cpu_us)
                } else {
                    "-".into()
                },
                if r.server_cpu_us > 0.0 && self.server_cpu_us > 0.0 {
                    format!("{:.3}", self.server_cpu_us / r.server_cpu_us)
                } else {
                    "-".into()
                },
                r.machine_cpu_us
            );
        }
    }
}
