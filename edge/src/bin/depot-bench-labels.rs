//! `depot-bench-labels`: how long a packed order waits for its shipping
//! label, and how fast one printer takes a queue of labels.
//!
//! 1. Pack to label: confirmed orders packed one at a time over HTTP, as a
//!    packing station does (pack-order, generate-label, print job), against
//!    an edge served by `depot_edge::Daemon` whose printer is the simulated
//!    Zebra of depot-hardware; the clock runs from the pack-order answer to
//!    the simulator receiving the label's last byte.
//! 2. Labels at once: the same labels submitted together as print jobs;
//!    labels per second until the simulator has them all.
//!
//! The baselines, measured in the same run on the same simulator with the
//! same bytes: raw TCP with a connection per label (what the driver does
//! per job: connect, write, close), and one connection for all labels.
//! Depot-hardware's driver is also measured on its own, to tell its
//! protocol from what the edge adds. Per the design's conventions every
//! figure is a ratio against its baseline, with absolute figures beside it.

use anyhow::{Context, bail};
use clap::Parser;
use depot_bench::{load, progress_bar};
use depot_hardware::printer::sim::{PrintedLabel, SimError, Simulator};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[path = "bench_labels/raw.rs"]
mod raw;
#[path = "bench_edge/seed.rs"]
mod seed;
#[path = "bench_labels/station.rs"]
mod station;

/// How long the printer may go without taking a label before the bench
/// gives up.
const LIMIT: Duration = Duration::from_secs(30);
/// Print jobs in flight when they are submitted at once, as several
/// stations would.
const SUBMITTING: usize = 16;

#[derive(Parser, Debug)]
#[command(about = "Benchmarks shipping labels at the edge: pack to label, and a queue of labels")]
struct Args {
    /// Orders packed one at a time, and labels submitted at once.
    #[arg(long, default_value_t = 1_000, value_parser = clap::value_parser!(u32).range(1..))]
    labels: u32,
    /// The script of the addresses: latin (resident-font text), greek or
    /// cjk (shaped and sent as graphic fields).
    #[arg(long, value_enum, default_value = "latin")]
    script: station::Script,
}

/// Removes a directory however `main` ends.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Waits until the simulator has printed `until` labels, showing those
/// since `from`; fails if it takes none for [`LIMIT`].
async fn follow(sim: &Simulator, what: &str, from: usize, until: usize) -> anyhow::Result<()> {
    let bar = progress_bar(what, until.saturating_sub(from));
    let (mut seen, mut moved) = (from, Instant::now());
    loop {
        match sim
            .wait_until(|s| s.labels_printed >= until, Duration::from_millis(100))
            .await
        {
            Ok(_) => break,
            Err(SimError::Timeout(stats)) => {
                if stats.labels_printed > seen {
                    (seen, moved) = (stats.labels_printed, Instant::now());
                } else if moved.elapsed() > LIMIT {
                    bail!(
                        "{what}: the printer has taken no label for {} s, {} of {} ({stats:?})",
                        LIMIT.as_secs(),
                        seen - from,
                        until - from
                    );
                }
                bar.set_position(seen.saturating_sub(from) as u64);
            }
        }
    }
    bar.finish_and_clear();
    Ok(())
}

/// When the labels the simulator printed since `from` arrived whole, in
/// the order printed, after checking that they are exactly the labels of
/// `tracking` (by tracking number), each once, and in that order if
/// `in_order`.
fn received(
    sim: &Simulator,
    what: &str,
    from: usize,
    tracking: &[String],
    in_order: bool,
) -> anyhow::Result<Vec<Instant>> {
    let all = sim.labels();
    let new = all.get(from..).unwrap_or_default();
    if new.len() != tracking.len() {
        bail!(
            "{what}: the printer has {} new labels, not {}",
            new.len(),
            tracking.len()
        );
    }
    let index: HashMap<&str, usize> = tracking
        .iter()
        .enumerate()
        .map(|(i, t)| (t.as_str(), i))
        .collect();
    let of = |l: &PrintedLabel| {
        l.fields
            .iter()
            .find_map(|f| index.get(f.data.as_str()).copied())
    };
    let mut seen = vec![false; tracking.len()];
    for (k, label) in new.iter().enumerate() {
        let Some(i) = of(label) else {
            bail!("{what}: label {k} is none of ours: {:?}", label.texts());
        };
        if in_order && i != k {
            bail!("{what}: label {k} is that of order {i}");
        }
        if std::mem::replace(&mut seen[i], true) {
            bail!("{what}: the label of {} printed twice", tracking[i]);
        }
    }
    Ok(new.iter().map(|l| l.received_at).collect())
}

/// One measured run.
struct Run {
    name: String,
    /// Per label, sorted, in ms; empty when labels were not clocked one
    /// by one.
    lat: Vec<f64>,
    labels: usize,
    secs: f64,
    bytes: usize,
}

impl Run {
    /// A run whose label `i` was started at `starts[i]` and arrived at
    /// `ends[i]`; it lasted from `begun` to the last arrival.
    fn clocked(
        name: &str,
        begun: Instant,
        starts: &[Instant],
        ends: &[Instant],
        bytes: usize,
    ) -> Self {
        let mut lat: Vec<f64> = starts
            .iter()
            .zip(ends)
            .map(|(s, e)| e.saturating_duration_since(*s).as_secs_f64() * 1e3)
            .collect();
        lat.sort_by(f64::total_cmp);
        Self {
            lat,
            ..Self::at_once(name, begun, ends, bytes)
        }
    }

    /// A run that began at `begun` and lasted until the last arrival.
    fn at_once(name: &str, begun: Instant, ends: &[Instant], bytes: usize) -> Self {
        let last = ends.iter().max().copied().unwrap_or(begun);
        Self {
            name: name.to_owned(),
            lat: Vec::new(),
            labels: ends.len(),
            secs: last.saturating_duration_since(begun).as_secs_f64(),
            bytes,
        }
    }

    fn pct(&self, p: usize) -> f64 {
        percentile(&self.lat, p)
    }

    fn max(&self) -> f64 {
        self.lat.last().copied().unwrap_or(0.0)
    }

    fn per_sec(&self) -> f64 {
        self.labels as f64 / self.secs.max(1e-9)
    }

    fn mib_per_sec(&self) -> f64 {
        self.bytes as f64 / (1024.0 * 1024.0) / self.secs.max(1e-9)
    }
}

/// Of sorted values.
fn percentile(sorted: &[f64], p: usize) -> f64 {
    sorted
        .get((sorted.len() * p / 100).min(sorted.len().saturating_sub(1)))
        .copied()
        .unwrap_or(0.0)
}

fn sorted_ms(mut v: Vec<Duration>) -> Vec<f64> {
    v.sort_unstable();
    v.into_iter().map(|d| d.as_secs_f64() * 1e3).collect()
}

/// The pack-to-label scenario's run, the labels it printed, and where
/// each label's time went.
struct Packed {
    run: Run,
    labels: Vec<Vec<u8>>,
    tracking: Vec<String>,
    /// pack-order, from request to answer.
    pack: Vec<f64>,
    /// From the pack answer to the print job's answer: generate-label and
    /// the print job over HTTP.
    queue: Vec<f64>,
    /// From the print job's answer to the label's last byte at the
    /// printer: the spooler and the driver.
    spool: Vec<f64>,
}

/// Packs every order one at a time, as one packing station does, and
/// waits for its label at the printer before the next.
async fn pack_to_label(station: &station::Station, sim: &Simulator) -> anyhow::Result<Packed> {
    let api = &station.api;
    let n = station.orders.len();
    let from = sim.stats().labels_printed;
    let progress = progress_bar("pack to label", n);
    let (mut labels, mut tracking) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut sent, mut packed, mut queued) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let begun = Instant::now();
    for (i, order) in station.orders.iter().enumerate() {
        sent.push(Instant::now());
        let shipment = api.pack(order).await?;
        packed.push(Instant::now());
        let zpl = api.label(shipment.id.0).await?;
        let job = api.print(zpl.clone()).await?;
        queued.push(Instant::now());
        sim.wait_until(|s| s.labels_printed > from + i, LIMIT)
            .await
            .with_context(|| {
                format!(
                    "the label of order {} (shipment {}, print job {})",
                    order.id, shipment.id, job.id
                )
            })?;
        labels.push(zpl);
        tracking.push(shipment.tracking_number);
        progress.inc(1);
    }
    progress.finish_and_clear();
    let ends = received(sim, "pack to label", from, &tracking, true)?;
    let bytes = labels.iter().map(Vec::len).sum();
    let gaps = |a: &[Instant], b: &[Instant]| {
        sorted_ms(
            a.iter()
                .zip(b)
                .map(|(a, b)| b.saturating_duration_since(*a))
                .collect(),
        )
    };
    Ok(Packed {
        run: Run::clocked("edge: pack to label", begun, &packed, &ends, bytes),
        pack: gaps(&sent, &packed),
        queue: gaps(&packed, &queued),
        spool: gaps(&queued, &ends),
        labels,
        tracking,
    })
}

/// Raw TCP, a connection per label, one at a time.
async fn raw_per_label(sim: &Simulator, p: &Packed, nth: &str) -> anyhow::Result<Run> {
    let name = format!("raw, connection per label ({nth})");
    let from = sim.stats().labels_printed;
    let progress = progress_bar(&name, p.labels.len());
    let starts = raw::per_label(sim.addr(), &p.labels, &progress).await?;
    progress.finish_and_clear();
    let ends = received(sim, &name, from, &p.tracking, true)?;
    let begun = starts.first().copied().unwrap_or_else(Instant::now);
    Ok(Run::clocked(&name, begun, &starts, &ends, p.run.bytes))
}

/// Raw TCP, every label over one connection.
async fn raw_one_connection(sim: &Simulator, p: &Packed, nth: &str) -> anyhow::Result<Run> {
    let name = format!("raw, one connection ({nth})");
    let from = sim.stats().labels_printed;
    let begun = raw::one_connection(sim.addr(), &p.labels).await?;
    let ends = received(sim, &name, from, &p.tracking, true)?;
    Ok(Run::at_once(&name, begun, &ends, p.run.bytes))
}

/// An edge run of many jobs at once, and the moments besides the run's
/// clock.
struct EdgeRun {
    run: Run,
    /// When the clock started.
    begun: Instant,
    /// When the edge had answered every print job.
    answered: Instant,
    /// When the spooler had recorded every job as printed.
    recorded: Instant,
}

impl EdgeRun {
    fn after(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.begun).as_secs_f64()
    }
}

/// Every label submitted to the edge as a print job at once (over HTTP,
/// [`SUBMITTING`] in flight), until the printer has them all.
async fn edge_at_once(
    station: &station::Station,
    sim: &Simulator,
    p: &Packed,
) -> anyhow::Result<EdgeRun> {
    let name = "edge: print jobs at once";
    let from = sim.stats().labels_printed;
    let begun = Instant::now();
    submit(station, p).await?;
    let answered = Instant::now();
    follow(sim, name, from, from + p.labels.len()).await?;
    let ends = received(sim, name, from, &p.tracking, false)?;
    let recorded = station
        .until_queued("jobs recorded as printed (edge)", 0)
        .await?;
    Ok(EdgeRun {
        run: Run::at_once(name, begun, &ends, p.run.bytes),
        begun,
        answered,
        recorded,
    })
}

async fn submit(station: &station::Station, p: &Packed) -> anyhow::Result<()> {
    load(
        "print jobs over HTTP (edge)",
        p.labels.len(),
        SUBMITTING,
        |i| {
            let api = station.api.clone();
            let zpl = p.labels.get(i).cloned().unwrap_or_default();
            async move { api.print(zpl).await }
        },
    )
    .await?;
    Ok(())
}

/// Every label submitted while the printer is paused, all handed to the
/// driver, then the printer resumed: how fast the edge drains a full
/// queue, from the first label's last byte at the printer to the last's.
async fn edge_queue(
    station: &station::Station,
    sim: &Simulator,
    p: &Packed,
) -> anyhow::Result<EdgeRun> {
    let name = "edge: a full queue, resumed";
    let n = p.labels.len();
    let from = sim.stats().labels_printed;
    sim.set_paused(true);
    submit(station, p).await?;
    let answered = Instant::now();
    station
        .until_queued("jobs handed to the driver (edge)", n)
        .await?;
    sim.set_paused(false);
    follow(sim, name, from, from + n).await?;
    let ends = received(sim, name, from, &p.tracking, false)?;
    let recorded = station
        .until_queued("jobs recorded as printed (edge)", 0)
        .await?;
    let first = ends.iter().min().copied().unwrap_or(answered);
    let mut run = Run::at_once(name, first, &ends, p.run.bytes);
    // The first label is the start of the clock, not a label within it.
    run.labels = n.saturating_sub(1);
    run.bytes = p.run.bytes * run.labels / n;
    Ok(EdgeRun {
        run,
        begun: first,
        answered,
        recorded,
    })
}

/// Keeps the printer's thread; dropping it stops the thread.
struct PrinterThread(Option<tokio::sync::oneshot::Sender<()>>);

impl Drop for PrinterThread {
    fn drop(&mut self) {
        if let Some(stop) = self.0.take() {
            let _ = stop.send(());
        }
    }
}

/// The simulated printer on a thread and runtime of its own, as a device
/// of its own would be: its work is not scheduled among the edge's tasks.
fn printer() -> anyhow::Result<(Simulator, PrinterThread)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot build the printer's runtime")?;
    let (started, sim) = std::sync::mpsc::channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    std::thread::Builder::new()
        .name("printer".into())
        .spawn(move || {
            runtime.block_on(async move {
                let sim = Simulator::start().await;
                let _ = started.send(sim);
                let _ = stopped.await;
            });
        })
        .context("cannot start the printer's thread")?;
    let sim = sim
        .recv()
        .context("the printer's thread ended")?
        .context("cannot start the printer simulator")?;
    Ok((sim, PrinterThread(Some(stop))))
}

/// Cores and the 1-minute load average before a run: other work on the
/// machine moves every figure, the ratios less than the absolute ones.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into());
    format!("{cores} cores, load average {load} before the run")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// The raw baselines, run several times across the bench: each alone is a
/// fraction of a second, and loopback timings that short vary from run to
/// run with where the scheduler puts the two ends.
#[derive(Default)]
struct Baselines {
    per_label: Vec<Run>,
    one: Vec<Run>,
}

impl Baselines {
    async fn run(&mut self, sim: &Simulator, p: &Packed) -> anyhow::Result<()> {
        let nth = self.one.len() + 1;
        self.per_label
            .push(raw_per_label(sim, p, &format!("run {nth}")).await?);
        self.one
            .push(raw_one_connection(sim, p, &format!("run {nth}")).await?);
        Ok(())
    }
}

/// The driver alone: one job at a time, then all at once.
async fn driver_alone(sim: &Simulator, p: &Packed) -> anyhow::Result<(Run, Run)> {
    let progress = progress_bar("the driver alone, one at a time", p.labels.len());
    let from = sim.stats().labels_printed;
    let submitted = raw::driver_one_at_a_time(sim, &p.labels, &progress).await?;
    progress.finish_and_clear();
    let ends = received(sim, "the driver alone", from, &p.tracking, true)?;
    let begun = submitted.first().copied().unwrap_or_else(Instant::now);
    let one_at_a_time = Run::clocked(
        "driver alone, one at a time",
        begun,
        &submitted,
        &ends,
        p.run.bytes,
    );
    let from = sim.stats().labels_printed;
    let begun = raw::driver_at_once(sim, &p.labels).await?;
    let ends = received(sim, "the driver alone, at once", from, &p.tracking, true)?;
    let at_once = Run::at_once("driver alone, at once", begun, &ends, p.run.bytes);
    Ok((one_at_a_time, at_once))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let n = usize::try_from(args.labels)?;
    let machine = machine();
    let run_started = Instant::now();
    // The pid makes the name unique among running benches; a leftover of a
    // killed run that had the same pid is cleared first.
    let tmp =
        TempDir(std::env::temp_dir().join(format!("depot-bench-labels-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&tmp.0);
    std::fs::create_dir_all(&tmp.0)
        .with_context(|| format!("cannot create {}", tmp.0.display()))?;
    let (sim, _printer) = printer()?;

    eprintln!(
        "== setup: {n} confirmed orders to {:?} addresses, the edge's printer on the simulator at {}",
        args.script,
        sim.addr()
    );
    let setting_up = Instant::now();
    let station = station::Station::start(&tmp.0, n, sim.addr(), args.script).await?;
    let setup_secs = setting_up.elapsed().as_secs_f64();

    eprintln!("== pack to label: {n} orders, one at a time");
    let packed = pack_to_label(&station, &sim).await?;
    // Interleaved with the scenarios, so drift over the run weighs on the
    // baselines as on the rest.
    eprintln!("== baselines, the driver alone, labels at once");
    let mut base = Baselines::default();
    base.run(&sim, &packed).await?;
    let (driver_seq, driver_once) = driver_alone(&sim, &packed).await?;
    base.run(&sim, &packed).await?;
    let edge_once = edge_at_once(&station, &sim, &packed).await?;
    let edge_queue = edge_queue(&station, &sim, &packed).await?;
    base.run(&sim, &packed).await?;
    let replicated = station.replicated;
    station.stop().await?;

    let sizes: Vec<usize> = packed.labels.iter().map(Vec::len).collect();
    let (min, max) = (
        sizes.iter().min().copied().unwrap_or(0),
        sizes.iter().max().copied().unwrap_or(0),
    );
    let runs = base.one.len();
    println!();
    println!("machine: {machine}");
    println!(
        "printer: depot-hardware's simulated Zebra on {} (raw TCP, as port 9100); shipping labels of {min} to {max} bytes of ZPL, {:.0} on average",
        sim.addr(),
        packed.run.bytes as f64 / n as f64
    );
    println!(
        "the edge: depot_edge::Daemon with this printer configured (driver defaults), its spooler and driver in this process with the client and the printer; the link to the broker is not running"
    );

    let b_p50 = median(base.per_label.iter().map(|r| r.pct(50)).collect());
    let b_p99 = median(base.per_label.iter().map(|r| r.pct(99)).collect());
    let b_rate = median(base.per_label.iter().map(Run::per_sec).collect());
    println!();
    println!(
        "pack to label: {n} orders packed one at a time, each label at the printer before the next order"
    );
    println!(
        "baseline = median of {runs} runs of raw TCP, a connection per label, one at a time (connect, write, close, wait for the printer's close): p50 {b_p50:.3} ms, p99 {b_p99:.3} ms, {b_rate:.0} labels/s"
    );
    println!();
    println!(
        "run                                   p50 ×     p99 × labels/s ×  |  labels    p50 ms    p99 ms    max ms  labels/s"
    );
    println!("{}", "-".repeat(113));
    for r in base.per_label.iter().chain([&driver_seq, &packed.run]) {
        println!(
            "{:<33} {:>9.2} {:>9.2} {:>10.3}  | {:>7} {:>9.3} {:>9.3} {:>9.3} {:>9.0}",
            r.name,
            r.pct(50) / b_p50,
            r.pct(99) / b_p99,
            r.per_sec() / b_rate,
            r.labels,
            r.pct(50),
            r.pct(99),
            r.max(),
            r.per_sec()
        );
    }
    println!();
    println!(
        "clocks: raw, from connecting; the driver, from submitting the job; the edge, from the client having the pack-order answer (read and parsed: the shipment to label); each to the label's last byte (^XZ) read by the printer"
    );
    println!(
        "labels/s: labels over the time from the first start (for the edge, the first pack-order request) to the last label's last byte"
    );
    println!("where the edge's time went, per order (ms):");
    for (what, v) in [
        (
            "pack-order, request to answer (before the clock)",
            &packed.pack,
        ),
        (
            "pack answer to print job answer: generate-label + print job over HTTP",
            &packed.queue,
        ),
        (
            "print job answer to the label's last byte: spooler + driver",
            &packed.spool,
        ),
    ] {
        println!(
            "  {what}: p50 {:.3}, p99 {:.3}, max {:.3}",
            percentile(v, 50),
            percentile(v, 99),
            v.last().copied().unwrap_or(0.0)
        );
    }

    let base_rate = median(base.one.iter().map(Run::per_sec).collect());
    let per_label = Run {
        name: "raw, connection per label (median)".into(),
        lat: Vec::new(),
        labels: n,
        secs: median(base.per_label.iter().map(|r| r.secs).collect()),
        bytes: packed.run.bytes,
    };
    println!();
    println!(
        "labels at once: the same {n} labels queued together on one printer, until it has the last byte of the last"
    );
    println!(
        "baseline = median of {runs} runs of raw TCP, every label over one connection: {base_rate:.0} labels/s"
    );
    println!();
    println!(
        "run                                 labels/s ×  |  labels   seconds  labels/s     MiB/s"
    );
    println!("{}", "-".repeat(86));
    for r in base
        .one
        .iter()
        .chain([&per_label, &driver_once, &edge_once.run, &edge_queue.run])
    {
        println!(
            "{:<36} {:>10.3}  | {:>7} {:>9.3} {:>9.0} {:>9.2}",
            r.name,
            r.per_sec() / base_rate,
            r.labels,
            r.secs,
            r.per_sec(),
            r.mib_per_sec()
        );
    }
    println!();
    println!(
        "the driver sends each job on a connection of its own after a ~HS status query, and counts it printed once the printer has closed its side"
    );
    println!(
        "\"print jobs at once\": from the first print job request; the edge had answered all {n} (over HTTP, {SUBMITTING} in flight) after {:.3} s, the printer had the last label after {:.3} s, the edge had recorded every job as printed after {:.3} s",
        edge_once.after(edge_once.answered),
        edge_once.run.secs,
        edge_once.after(edge_once.recorded)
    );
    println!(
        "\"a full queue, resumed\": all {n} submitted and handed to the driver while the printer was paused; from the first label's last byte to the last's ({:.3} s), and to every job recorded as printed: {:.3} s",
        edge_queue.run.secs,
        edge_queue.after(edge_queue.recorded)
    );
    println!(
        "setup: {replicated} changes applied at the edge from the cloud's feed (business, key, catalog, stock, {n} confirmed orders, the printer) in {setup_secs:.1} s; whole run {:.1} s",
        run_started.elapsed().as_secs_f64()
    );
    Ok(())
}
