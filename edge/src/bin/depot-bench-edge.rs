//! `depot-bench-edge`: what a warehouse's box does under its stations, and
//! what it costs to keep running.
//!
//! 1. Pick scans over HTTP: the edge's own router on loopback, one wave per
//!    station, every station scanning closed-loop; then putaway scans, one
//!    pallet per station put away unit by unit to a rack of its own; then
//!    count scans, one location per station counted unit by unit;
//!    against a hello-world route served by the same process in the same
//!    run. Then hello and pick scans open loop, at a fixed rate. The server
//!    (its runtime and the edge engine's threads) and the load generator
//!    run on two halves of the cores unless `--no-pin`.
//! 2. The real `depot-edge serve` process on a database with a long history
//!    (a million events by default): time from spawn until
//!    `GET /v1/edge/status` answers, and resident memory once idle; against
//!    the same binary on a database holding only what the cloud sent it.
//!
//! Per the design's conventions every figure is reported as a ratio against
//! its baseline, with absolute figures beside it.

use anyhow::bail;
use clap::Parser;
use depot_bench::closed_loop::{Baseline, requests};
use depot_bench::pin::{self, Split};
use depot_bench::{OpenRun, Run, Tally, closed_loop};
use depot_edge::settings::Settings;
use depot_wms::Wms;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

#[path = "bench_edge/counting.rs"]
mod counting;
#[path = "bench_edge/picking.rs"]
mod picking;
#[path = "bench_edge/putaway.rs"]
mod putaway;
#[path = "bench_edge/seed.rs"]
mod seed;
#[path = "bench_edge/startup.rs"]
mod startup;

/// Issue 32, item 4, as restated there: a pick scan over HTTP costs at most
/// twice a hello-world request's CPU (hello's CPU per request over the
/// scan's at least 0.5).
const GOAL_CPU_RATIO: f64 = 0.5;
/// The same item's latency goal: a p99 of at most 5 ms open loop at 2,000
/// scans a second, every answer durable.
const GOAL_RATE: f64 = 2_000.0;
const GOAL_OPEN_P99_MS: f64 = 5.0;
/// The goals before the restatement: at least half of hello-world's
/// throughput (still printed), and a closed-loop p99 of at most 2 ms
/// (superseded by the open-loop goal).
const GOAL_RATIO: f64 = 0.5;
const SUPERSEDED_P99_MS: f64 = 2.0;

#[derive(Parser, Debug)]
#[command(about = "Benchmarks the edge: pick scans over HTTP, start-up and idle memory")]
struct Args {
    /// Seconds each HTTP run lasts.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Concurrent stations scanning (closed loop: each waits for its
    /// answer), one wave each.
    #[arg(long, default_value_t = 64)]
    stations: usize,
    /// Catalog items of the pick scenario.
    #[arg(long, default_value_t = 1_000)]
    items: usize,
    /// Events in the history of the start-up scenario's database.
    #[arg(long, default_value_t = 1_000_000)]
    events: usize,
    /// Keep the start-up scenario's database here, and use it again on the
    /// next run if it has at least `--events` events (a temporary directory,
    /// removed at the end, otherwise).
    #[arg(long)]
    data: Option<PathBuf>,
    /// Starts of the daemon per database; the median is reported.
    #[arg(long, default_value_t = 5)]
    starts: usize,
    /// Seconds the daemon idles before its memory is read.
    #[arg(long, default_value_t = 2)]
    idle_secs: u64,
    /// Skip the pick-scan scenario.
    #[arg(long)]
    skip_pick: bool,
    /// Skip the start-up scenario.
    #[arg(long)]
    skip_startup: bool,
    /// Open loop: hello and pick scans a second, offered whatever the
    /// answers do, each timed from when it was due; the scans go round
    /// robin over the stations, on waves of their own (0: no open-loop
    /// runs).
    #[arg(long, default_value_t = GOAL_RATE)]
    rate: f64,
    /// Server and load generator share every core, instead of each
    /// pinned to half of them.
    #[arg(long)]
    no_pin: bool,
}

/// Removes a directory however `main` ends.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `GET /hello`, closed loop, `workers` clients.
async fn hello(
    client: &reqwest::Client,
    base: &str,
    name: &'static str,
    secs: u64,
    workers: usize,
) -> anyhow::Result<Run> {
    let url = Arc::new(format!("{base}/hello"));
    closed_loop(name, secs, workers, |_, deadline| {
        let (client, url) = (client.clone(), url.clone());
        async move { requests(deadline, || client.get(url.as_str())).await }
    })
    .await
}

/// `GET /hello`, open loop: `rate` a second for `secs`.
async fn hello_open(client: &reqwest::Client, base: &str, rate: f64, secs: u64) -> OpenRun {
    let url = Arc::new(format!("{base}/hello"));
    depot_bench::open_loop("hello", rate, secs as f64, |_| {
        depot_bench::open_loop::answered(client.get(url.as_str()))
    })
    .await
}

/// The group-commit writer's jobs, commits and CPU time so far.
fn writer_counts(wms: &Wms) -> (u64, u64, Duration) {
    let s = wms.writer_stats();
    (
        s.jobs.load(Ordering::Relaxed),
        s.commits.load(Ordering::Relaxed),
        depot_bench::cpu::threads("depot-writer").unwrap_or_default(),
    )
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "NOT met" }
}

/// The pick scenario's databases: the cloud's, which plays the cloud, and
/// the edge's, opened as its registered node.
struct Opened {
    cloud: seed::Cloud,
    settings: Settings,
    edge: Wms,
}

impl Opened {
    /// Opens both on the thread this runs on: their writer threads inherit
    /// its cores. (Reads run on the blocking threads of the runtime that
    /// asks: the server's, for what the router serves.)
    async fn new(args: &Args, dir: &Path) -> anyhow::Result<Self> {
        let cloud =
            seed::Cloud::create(&dir.join("cloud.db"), args.items.max(1), "bench-edge").await?;
        let settings = cloud.edge_settings(&dir.join("edge"), "mqtt://127.0.0.1:1");
        let edge = depot_edge::open(&settings)?;
        Ok(Self {
            cloud,
            settings,
            edge,
        })
    }
}

/// The pick-scan scenario with the server and the load generator each
/// pinned to half of the cores (unless `--no-pin`), as the cloud's bench
/// runs; answers the failed requests. The calling thread is left on every
/// core the process had.
fn pick_scan_pinned(args: &Args, machine: &str, dir: &Path) -> anyhow::Result<usize> {
    eprintln!("== pick scan: {} stations", args.stations);
    // The engines' writer threads inherit the mask of the thread that
    // opens them: the server's cores.
    let (split, server) = pin::server(args.no_pin)?;
    let opened = server.block_on(Opened::new(args, dir))?;
    let pinning = if args.no_pin {
        format!("{machine}; not pinned (--no-pin): server and load generator share the cores")
    } else {
        format!("{machine}; {}", Split::describe(split.as_ref()))
    };
    let handle = server.handle().clone();
    let failed = match &split {
        Some(s) => {
            pin::pin_current(&s.clients)?;
            let clients = pin::runtime("bench-client", &s.clients)?;
            clients.block_on(pick_scan(args, &pinning, handle, opened))
        }
        None => server.block_on(pick_scan(args, &pinning, handle, opened)),
    };
    // What runs next (the start-up scenario's daemon inherits the mask of
    // the thread that starts it) has every core again.
    if let Some(s) = &split {
        pin::pin_current(&[s.server.as_slice(), s.clients.as_slice()].concat())?;
    }
    failed
}

/// The pick-scan scenario, its server on `server` and its clients on the
/// runtime this runs on; prints its table, answers the failed requests.
async fn pick_scan(
    args: &Args,
    pinning: &str,
    server: tokio::runtime::Handle,
    opened: Opened,
) -> anyhow::Result<usize> {
    let Opened {
        cloud,
        settings,
        edge,
    } = opened;
    let items = args.items.max(1);
    let catalog = cloud.replicate_to(&edge).await?;
    let setting_up = Instant::now();
    let (secs, n) = (args.seconds, args.stations);
    // A set of waves per run that scans them: one over HTTP, one through
    // the engine directly (what the engine alone can do), and one open
    // loop over HTTP; so none runs out of the others' work.
    let sets = if args.rate > 0.0 { 3 } else { 2 };
    let setup = picking::setup(&cloud, &edge, sets, n, items as u64, secs, args.rate).await?;
    let pallets = Arc::new(putaway::setup(&cloud, &edge, n, secs).await?);
    let shelves = Arc::new(counting::setup(&cloud, &edge, n).await?);
    let setup_secs = setting_up.elapsed().as_secs_f64();
    let mut walks = setup.walks;
    let open_walks = Arc::new(walks.split_off((2 * n).min(walks.len())));
    let direct_walks = Arc::new(walks.split_off(n.min(walks.len())));
    let walks = Arc::new(walks);

    // The edge's router exactly as `depot-edge serve` builds it (on the
    // server's runtime: whatever it spawns runs there), plus a hello-world
    // route (outside its layers) as the baseline.
    let router = {
        let (edge, settings) = (edge.clone(), settings.clone());
        server
            .spawn(async move { depot_edge::Daemon::new(edge, settings).router() })
            .await?
    }
    .route("/hello", axum::routing::get(|| async { "hello" }));
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let base = format!("http://{}", listener.local_addr()?);
    // Served on the server's runtime as the daemon serves it: its timeouts
    // and connection cap.
    let http = settings.http;
    let serving = server.spawn(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        depot_wms::http::server::serve(listener, router, http, std::future::pending()).await
    });
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()?;

    eprintln!("measuring: {n} clients, {secs} s per run");
    // Unrecorded warm-up: opens the connections and wakes the CPU.
    hello(&client, &base, "warm-up", 1, n).await?;
    let hello1 = hello(&client, &base, "hello (1st run)", secs, n).await?;
    let before = writer_counts(&edge);
    let url = Arc::new(format!("{base}/v1/picking/{}/item/scan", cloud.business));
    let key = Arc::new(cloud.key.clone());
    let scans = closed_loop("pick scan (HTTP)", secs, walks.len(), |w, deadline| {
        let (client, walks, url, key) = (client.clone(), walks.clone(), url.clone(), key.clone());
        async move {
            let Some(walk) = walks.get(w) else {
                return Tally::default();
            };
            picking::station(walk, deadline, |s| {
                picking::over_http(&client, &url, &key, s)
            })
            .await
        }
    })
    .await?;
    let after = writer_counts(&edge);
    let caller = cloud.caller;
    let direct = closed_loop(
        "scan, engine only",
        secs,
        direct_walks.len(),
        |w, deadline| {
            let (edge, walks) = (edge.clone(), direct_walks.clone());
            async move {
                let Some(walk) = walks.get(w) else {
                    return Tally::default();
                };
                picking::station(walk, deadline, |s| picking::direct(&edge, caller, s)).await
            }
        },
    )
    .await?;
    let directed = writer_counts(&edge);
    let put_url = Arc::new(format!("{base}/v1/putaway/{}/scan", cloud.business));
    let puts = closed_loop("putaway scan (HTTP)", secs, pallets.len(), |w, deadline| {
        let (client, pallets, url, key) = (
            client.clone(),
            pallets.clone(),
            put_url.clone(),
            key.clone(),
        );
        async move {
            let Some(pallet) = pallets.get(w) else {
                return Tally::default();
            };
            putaway::station(&client, &url, &key, pallet, deadline).await
        }
    })
    .await?;
    let put_away = writer_counts(&edge);
    let business = cloud.business.0;
    let count_base = Arc::new(base.clone());
    let counts = closed_loop("count scan (HTTP)", secs, shelves.len(), |w, deadline| {
        let (client, shelves, base, key) = (
            client.clone(),
            shelves.clone(),
            count_base.clone(),
            key.clone(),
        );
        async move {
            let Some(shelf) = shelves.get(w) else {
                return Tally::default();
            };
            counting::station(&client, &base, business, &key, shelf, deadline).await
        }
    })
    .await?;
    let counted = writer_counts(&edge);
    let hello2 = hello(&client, &base, "hello (2nd run)", secs, n).await?;
    let mut writer_spans = vec![
        ("HTTP", before, after),
        ("engine only", after, directed),
        ("putaway, HTTP", directed, put_away),
        ("count, HTTP", put_away, counted),
    ];
    // Open loop: hello, then the scans on their own waves; then what the
    // edge's database holds of them.
    let mut open = Vec::new();
    let mut open_scans = None;
    if args.rate > 0.0 {
        open.push(hello_open(&client, &base, args.rate, secs).await);
        // The stations start their first orders within a few ms of each
        // other (each first scan moves its order to picking): a transient
        // no floor has, which the warm-up second takes (reported on stderr,
        // not recorded), as the closed loop's warm-up does.
        let at = picking::positions(&open_walks);
        let warm = picking::open_loop(
            "warm-up (open loop)",
            &client,
            (&url, &key),
            (&open_walks, &at),
            args.rate,
            1,
        )
        .await;
        let from = writer_counts(&edge);
        let run = picking::open_loop(
            "pick scan (HTTP)",
            &client,
            (&url, &key),
            (&open_walks, &at),
            args.rate,
            secs,
        )
        .await;
        writer_spans.push(("open loop, HTTP", from, writer_counts(&edge)));
        // Everything scanned on those waves, the warm-up's too.
        let units = picking::picked(&edge, cloud.business, &open_walks).await?
            - (warm.requests - warm.errors) as i64;
        open_scans = Some((run.clone(), units));
        open.push(run);
    }
    serving.abort();

    let base = Baseline::of(&hello1, &hello2);
    println!();
    println!(
        "depot-edge pick scan over HTTP: {n} stations on {} waves, {secs} s per run, one unit per scan",
        walks.len()
    );
    println!("machine: {pinning}");
    println!(
        "the link to the broker is not running: the edge serves its stations from its own database, as when offline"
    );
    println!(
        "baseline = mean of two hello-world runs on the same server: {:.0} req/s, p50 {:.3} ms, p99 {:.3} ms, CPU per request {:.1} µs (server's {:.1} µs)",
        base.rps, base.p50_ms, base.p99_ms, base.cpu_us, base.server_cpu_us
    );
    println!();
    let runs = [&hello1, &hello2, &scans, &direct, &puts, &counts];
    base.print_table("run", &runs);
    if !open.is_empty() {
        println!();
        println!(
            "open loop: {:.0} requests/s offered for {secs} s each, latency from when each was due; the scans round robin over {} stations, each on a wave of its own",
            args.rate,
            open_walks.len()
        );
        OpenRun::print_header();
        for r in &open {
            r.print();
        }
    }
    println!();
    // Issue 32, item 4: CPU per scan within twice hello-world's. The
    // server's CPU where it has threads of its own (pinned), else the
    // process's.
    let process_ratio = base.cpu_us / scans.cpu_us.max(f64::MIN_POSITIVE);
    if base.server_cpu_us > 0.0 && scans.server_cpu_us > 0.0 {
        let ratio = base.server_cpu_us / scans.server_cpu_us;
        println!(
            "goal (issue 32, item 4): CPU per pick scan over HTTP <= 2 x hello-world's (ratio >= {GOAL_CPU_RATIO}): server CPU hello ÷ scan {ratio:.3} ({:.1} µs ÷ {:.1} µs); process CPU {process_ratio:.3} ({:.1} µs ÷ {:.1} µs) -> {}",
            base.server_cpu_us,
            scans.server_cpu_us,
            base.cpu_us,
            scans.cpu_us,
            verdict(ratio >= GOAL_CPU_RATIO)
        );
    } else {
        println!(
            "goal (issue 32, item 4): CPU per pick scan over HTTP <= 2 x hello-world's (ratio >= {GOAL_CPU_RATIO}): no server CPU (not pinned, so the server has no threads of its own); process CPU hello ÷ scan {process_ratio:.3} ({:.1} µs ÷ {:.1} µs) -> {} on the process's CPU",
            base.cpu_us,
            scans.cpu_us,
            verdict(process_ratio >= GOAL_CPU_RATIO)
        );
    }
    let mut lost = 0;
    match &open_scans {
        Some((run, units)) => {
            let answered = run.requests - run.errors;
            lost = units.abs_diff(answered as i64);
            let judged = if run.offered < GOAL_RATE {
                format!(
                    "not judged: {:.0}/s offered, below the goal's rate",
                    run.offered
                )
            } else {
                verdict(run.p99_ms <= GOAL_OPEN_P99_MS && run.errors == 0 && lost == 0).to_owned()
            };
            println!(
                "goal (issue 32, item 4): pick-scan p99 <= {GOAL_OPEN_P99_MS} ms open loop at {GOAL_RATE:.0} scans/s, every answer durable: p99 {:.3} ms, {:.0}/s offered, {:.0}/s achieved, {} errors; {answered} scans answered and {units} units picked on their waves in the edge's database (its writer answers after the commit, synchronous=FULL) -> {judged}",
                run.p99_ms, run.offered, run.achieved, run.errors
            );
        }
        None => println!(
            "goal (issue 32, item 4): pick-scan p99 <= {GOAL_OPEN_P99_MS} ms open loop at {GOAL_RATE:.0} scans/s: not measured (--rate 0)"
        ),
    }
    let ratio = scans.rps / base.rps;
    println!(
        "throughput (the goal before issue 32 restated it in CPU): pick scans over HTTP >= {GOAL_RATIO} x hello-world's req/s: {ratio:.3} x -> {}",
        verdict(ratio >= GOAL_RATIO)
    );
    println!(
        "superseded: pick-scan p99 <= {SUPERSEDED_P99_MS} ms closed loop ({:.3} ms in this run); issue 32 restated it as the open-loop goal above",
        scans.p99_ms
    );
    println!(
        "\"scan, engine only\": the same scans on {} other waves as engine calls (Wms::pick_scan), no HTTP: what the engine alone serves",
        direct_walks.len()
    );
    println!(
        "\"putaway scan (HTTP)\": {} stations, each putting its own pallet (one putaway task) away to its own rack, one unit per scan: {:.3} x hello-world",
        pallets.len(),
        puts.rps / base.rps
    );
    println!(
        "\"count scan (HTTP)\": {} stations, each counting a location of its own (one open blind count each) unit by unit, one scan adding one unit: {:.3} x hello-world",
        shelves.len(),
        counts.rps / base.rps
    );
    for (what, from, to) in writer_spans {
        let (jobs, commits) = (to.0 - from.0, to.1 - from.1);
        println!(
            "edge writer during the scans ({what}): {jobs} jobs in {commits} commits = {:.1} jobs/commit (synchronous=FULL), {:.1} µs of its thread's CPU per job",
            jobs as f64 / commits.max(1) as f64,
            depot_bench::cpu::micros_per(to.2.saturating_sub(from.2), jobs as usize)
        );
    }
    println!(
        "setup: {catalog} changes (business, key, catalog) then {} (stock, {} confirmed orders of {} lines x {} units) applied from the cloud's feed, {} waves made at the edge, in {setup_secs:.1} s",
        setup.replicated,
        setup.work.orders,
        setup.work.lines_per_order,
        setup.work.units_per_line,
        walks.len() + direct_walks.len() + open_walks.len(),
    );
    let ran_out = scans.ran_out + direct.ran_out + puts.ran_out + counts.ran_out;
    println!(
        "{ran_out} stations ran out of work before the end{}",
        if ran_out > 0 {
            " (so the scan req/s understates)"
        } else {
            ""
        }
    );
    if lost > 0 {
        eprintln!(
            "!! open loop: the scans answered and the units the edge's database holds differ by {lost}"
        );
    }
    Ok(runs.iter().map(|r| r.errors).sum::<usize>()
        + open.iter().map(|r| r.errors).sum::<usize>()
        + lost as usize)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// The start-up and idle-memory scenario; prints its table.
async fn start_up(args: &Args, machine: &str, tmp: &Path) -> anyhow::Result<()> {
    let exe = std::env::current_exe()?.with_file_name("depot-edge");
    if !exe.exists() {
        bail!(
            "{} is missing: build it with the bench (cargo build --release -p depot-edge --bins)",
            exe.display()
        );
    }
    eprintln!("== start-up and idle memory: {}", exe.display());
    let data = args.data.clone().unwrap_or_else(|| tmp.join("history"));
    let full = startup::prepare(&data, args.events).await?;
    let empty = startup::prepare_empty(&tmp.join("empty")).await?;
    let idle = Duration::from_secs(args.idle_secs);
    let mut samples: [Vec<startup::Start>; 2] = [Vec::new(), Vec::new()];
    // Interleaved, so drift over the run weighs on both.
    for i in 0..args.starts.max(1) {
        for (k, db) in [&empty, &full].into_iter().enumerate() {
            let s = startup::start(&exe, db, idle).await?;
            eprintln!(
                "  start {} of the {} database: listening after {:.1} ms, ready after {:.1} ms, RSS {:.1} MiB",
                i + 1,
                if k == 0 { "baseline" } else { "history" },
                s.listening.as_secs_f64() * 1e3,
                s.ready.as_secs_f64() * 1e3,
                mib(s.rss_kib)
            );
            samples[k].push(s);
        }
    }
    let size = |db: &startup::EdgeDb| {
        ["edge.db", "edge.db-wal"]
            .iter()
            .filter_map(|f| std::fs::metadata(db.dir.join(f)).ok())
            .map(|m| m.len())
            .sum::<u64>() as f64
            / (1024.0 * 1024.0)
    };
    struct Row {
        name: String,
        events: i64,
        size_mib: f64,
        listening_ms: f64,
        ready_ms: f64,
        rss: f64,
        anon: f64,
        file: f64,
        peak: f64,
    }
    let row = |name: String, db: &startup::EdgeDb, s: &[startup::Start]| Row {
        name,
        events: db.events,
        size_mib: size(db),
        listening_ms: median(s.iter().map(|s| s.listening.as_secs_f64() * 1e3).collect()),
        ready_ms: median(s.iter().map(|s| s.ready.as_secs_f64() * 1e3).collect()),
        rss: median(s.iter().map(|s| mib(s.rss_kib)).collect()),
        anon: median(s.iter().map(|s| mib(s.anon_kib)).collect()),
        file: median(s.iter().map(|s| mib(s.file_kib)).collect()),
        peak: median(s.iter().map(|s| mib(s.peak_kib)).collect()),
    };
    let rows = [
        row("baseline (cloud's data only)".into(), &empty, &samples[0]),
        row(
            format!("history ({} events)", full.events),
            &full,
            &samples[1],
        ),
    ];
    let b = &rows[0];
    println!();
    println!(
        "depot-edge serve: start to ready (GET /v1/edge/status answers 200) and resident memory after {} s idle",
        args.idle_secs
    );
    println!("machine: {machine}; the daemon is not pinned");
    println!(
        "median of {} starts per database, interleaved; broker URL points at a closed port; page cache warm",
        args.starts.max(1)
    );
    println!(
        "baseline = the same binary on a database holding only the cloud's business, warehouse, key and catalog"
    );
    println!();
    println!(
        "database                         ready ×     RSS ×   |    events   db MiB  listening ms  ready ms  RSS MiB  anon MiB  file MiB  peak MiB"
    );
    println!("{}", "-".repeat(138));
    for r in &rows {
        println!(
            "{:<30} {:>8.2} {:>8.2}   | {:>9} {:>8.1} {:>13.1} {:>9.1} {:>8.1} {:>9.1} {:>9.1} {:>9.1}",
            r.name,
            r.ready_ms / b.ready_ms,
            r.rss / b.rss,
            r.events,
            r.size_mib,
            r.listening_ms,
            r.ready_ms,
            r.rss,
            r.anon,
            r.file,
            r.peak
        );
    }
    println!();
    println!(
        "the history is {} stock adjustments made at the edge and acknowledged by the cloud (outbox empty){}",
        full.own,
        if args.data.is_some() {
            format!("; kept in {}", data.display())
        } else {
            String::new()
        }
    );
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    // Before pinning, which narrows what the process is told it has.
    let machine = depot_bench::machine();
    // The pid makes the name unique among running benches; a leftover of a
    // killed run that had the same pid is cleared first.
    let tmp =
        TempDir(std::env::temp_dir().join(format!("depot-bench-edge-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&tmp.0);
    std::fs::create_dir_all(&tmp.0)?;
    let mut failed = 0;
    if !args.skip_pick {
        failed += pick_scan_pinned(&args, &machine, &tmp.0.join("pick"))?;
    }
    if !args.skip_startup {
        // On every core, as the daemon measured runs on a box.
        tokio::runtime::Runtime::new()?.block_on(start_up(&args, &machine, &tmp.0))?;
    }
    if failed > 0 {
        bail!("{failed} requests failed; the figures above are not valid");
    }
    Ok(())
}
