//! `--edges N`: many edges reconnecting at once to one cloud.
//!
//! Each edge is a business's own by default, as a cloud of many merchants
//! with a box each; with `--edges-per-business N` a business has N, each
//! its own warehouse, as a business with a few sites, and the cloud pages
//! each edge's events down to the others. Every edge makes its backlog (the single-edge run's stock adjustments) while its link is
//! down, then every link starts at one moment, as after an outage of the
//! cloud or of the broker. Timed: until the cloud's cursor for every edge
//! reaches that edge's last event (the aggregate drain), and each edge's
//! own drain; beside them the baseline, raw QoS 1 publish → subscribe of
//! the same messages through the same broker, one publisher per edge at
//! once into one subscriber. Then the edges of a business hear each
//! other's events (the cloud pages them down), and the bench checks that
//! every event is in the cloud's log exactly once and every stock level is
//! as the adjustments make it, in the cloud and at every edge.

use super::drain::{self, Business, Offered, Tenant};
use super::raw::{self, FanIn, Payload};
use super::rig::{self, Running, eventually, start_cloud, start_edge};
use super::{Args, Backlog, encode_backlog, machine};
use anyhow::{Context, bail};
use depot_mqtt::MqttUrl;
use depot_protocol::EventId;
use depot_wms::Wms;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// The goals: the aggregate drain at least half as fast as raw
/// publish → subscribe of the same messages through the same broker; no
/// edge's drain longer than twice the median edge's.
const GOAL_AGGREGATE: f64 = 0.5;
const GOAL_FAIRNESS: f64 = 2.0;
/// Edges set up (online for the catalog, then their backlogs) at once.
const SETUP_PARALLEL: usize = 16;
/// How often the cloud's cursors are read during the drain: the
/// resolution of each edge's drain time. A reading is a query per
/// business: every 10 ms, with 100 businesses, the bench's own readings
/// took 6 % of the run's CPU.
const POLL: Duration = Duration::from_millis(50);
/// Files an edge holds open, at most (its database's writer and readers,
/// each a file and its WAL, the shared memory, its HTTP listener, its MQTT
/// connection), and its publisher's in the baseline; with room to spare.
const FILES_PER_EDGE: u64 = 40;
const FILES_BESIDES: u64 = 256;

/// Files a run of `edges` edges may need open: `main` raises the limit
/// before Mosquitto starts (it inherits it).
pub fn files_needed(edges: usize) -> u64 {
    FILES_BESIDES + FILES_PER_EDGE * edges as u64
}

/// One edge of the fleet, its backlog made.
struct Member {
    t: Tenant,
    /// Its business's place in `businesses`.
    business: usize,
    backlog: Backlog,
}

/// What the timed drain saw, per edge in the order of the fleet.
struct Drained {
    /// When the links started.
    started: Instant,
    secs: f64,
    per_edge: Vec<Duration>,
    first_applied: Vec<Duration>,
    /// At each reading of the cursors: seconds since the start, events
    /// applied so far, edges done so far.
    progress: Vec<(f64, i64, usize)>,
    jobs: u64,
    commits: u64,
    /// How long one reading of every cursor took: median, max.
    poll: (Duration, Duration),
    cpu: Cpu,
}

/// The threads and process whose CPU time is reported.
struct Watched {
    cloud_writers: Vec<u32>,
    broker: Option<u32>,
}

/// Where the CPU time of the drain went, in seconds of one core.
#[derive(Default)]
struct Cpu {
    cloud_writer: f64,
    edge_writers: f64,
    runtime: f64,
    other: f64,
    broker: Option<f64>,
}

/// The name of the engine's writer threads (`depot_wms::writer`).
const WRITER: &str = "depot-writer";
/// Clock ticks a second in /proc (USER_HZ, 100 on Linux).
const TICKS: f64 = 100.0;

impl Cpu {
    fn between(
        before: &[(u32, String, u64)],
        after: &[(u32, String, u64)],
        watched: &Watched,
        broker: Option<u64>,
    ) -> Self {
        let was: HashMap<u32, u64> = before.iter().map(|(t, _, n)| (*t, *n)).collect();
        let mut cpu = Cpu::default();
        for (tid, name, ticks) in after {
            let spent = (ticks - was.get(tid).copied().unwrap_or(0).min(*ticks)) as f64 / TICKS;
            let slot = if name == WRITER && watched.cloud_writers.contains(tid) {
                &mut cpu.cloud_writer
            } else if name == WRITER {
                &mut cpu.edge_writers
            } else if name.starts_with("tokio-runtime") || name.starts_with("tokio-rt") {
                &mut cpu.runtime
            } else {
                &mut cpu.other
            };
            *slot += spent;
        }
        let now = watched.broker.and_then(rig::process_time);
        cpu.broker = match (broker, now) {
            (Some(b), Some(n)) => Some(n.saturating_sub(b) as f64 / TICKS),
            _ => None,
        };
        cpu
    }
}

/// `broker`: when the bench started its own Mosquitto, its process id.
pub async fn bench(
    args: &Args,
    edges: usize,
    dir: &Path,
    url: &str,
    broker: Option<Option<u32>>,
) -> anyhow::Result<()> {
    let own_broker = broker.is_some();
    let mqtt = MqttUrl::parse(url)?;
    let machine = machine();
    let events = args.events();
    let per_business = args.edges_per_business.max(1);
    if edges == 0 || events == 0 {
        bail!("--edges and --events must be at least 1");
    }
    eprintln!(
        "broker: {mqtt}{}",
        if own_broker {
            " (a Mosquitto started for this run)"
        } else {
            ""
        }
    );
    let (cloud, cloud_server) = start_cloud(dir, url, args.database.as_deref()).await?;
    // The cloud's writer: the one writer thread before any edge opens.
    let cloud_writers: Vec<u32> = rig::thread_times()
        .into_iter()
        .filter(|(_, name, _)| name == WRITER)
        .map(|(tid, _, _)| tid)
        .collect();

    // --- Setup: the businesses, then every edge online for its catalog and
    // then making its backlog, a few at a time.
    let setup = Instant::now();
    let n_businesses = edges.div_ceil(per_business);
    let mut businesses = Vec::with_capacity(n_businesses);
    for b in 0..n_businesses {
        let sites = per_business.min(edges - b * per_business);
        businesses.push(Arc::new(
            drain::business(&cloud, &format!("Fleet {}", b + 1), sites).await?,
        ));
    }
    let businesses_took = setup.elapsed();
    let edges_started = Instant::now();
    let mut members = make_edges(args, dir, url, &cloud, &businesses, edges).await?;
    let edges_took = edges_started.elapsed();
    let backlog_secs: Vec<f64> = members.iter().map(|m| m.1).collect();
    let encoded_started = Instant::now();
    let mut fleet = Vec::with_capacity(edges);
    for (t, _, business) in members.drain(..) {
        let made = t.head - t.acked;
        if made != i64::try_from(events)? {
            bail!("edge {} queued {made} events, not {events}", t.edge_id);
        }
        let backlog = encode_backlog(&t.edge, t.head, args.window).await?;
        fleet.push(Member {
            t,
            business,
            backlog,
        });
    }
    let encoded_took = encoded_started.elapsed();
    let setup_took = setup.elapsed();
    let total: usize = fleet.iter().map(|m| m.backlog.event_sizes.len()).sum();
    let total_bytes: usize = fleet
        .iter()
        .map(|m| m.backlog.event_sizes.iter().sum::<usize>())
        .sum();
    let mean = total_bytes / total.max(1);
    let batches: usize = fleet.iter().map(|m| m.backlog.batches.len()).sum();
    let batch_bytes: usize = fleet
        .iter()
        .flat_map(|m| m.backlog.batches.iter().map(|(_, b)| b.len()))
        .sum();
    let largest_batch = fleet
        .iter()
        .flat_map(|m| m.backlog.batches.iter().map(|(n, _)| *n))
        .max()
        .unwrap_or(0);
    eprintln!(
        "setup: {n_businesses} businesses in {:.1} s; {edges} edges online for the catalog and their backlogs made in {:.1} s; read back and encoded in {:.1} s: {total} events, mean {mean} bytes, {batches} batches",
        businesses_took.as_secs_f64(),
        edges_took.as_secs_f64(),
        encoded_took.as_secs_f64()
    );

    // --- Baselines before the drain: one publisher per edge, at once.
    let counts: Vec<usize> = fleet.iter().map(|m| m.backlog.event_sizes.len()).collect();
    let batch_counts: Vec<usize> = fleet.iter().map(|m| m.backlog.batches.len()).collect();
    let sizes: Arc<Vec<Vec<usize>>> = Arc::new(
        fleet
            .iter()
            .map(|m| m.backlog.event_sizes.clone())
            .collect(),
    );
    let batch_bytes_of: Arc<Vec<Vec<Vec<u8>>>> = Arc::new(
        fleet
            .iter()
            .map(|m| m.backlog.batches.iter().map(|(_, b)| b.clone()).collect())
            .collect(),
    );
    let single: Payload = {
        let sizes = sizes.clone();
        Arc::new(move |p, i| vec![b'x'; sizes[p][i]])
    };
    let whole: Payload = {
        let batches = batch_bytes_of.clone();
        Arc::new(move |p, i| batches[p][i].clone())
    };
    eprintln!("raw publish -> subscribe through the broker, {edges} publishers at once (before)");
    let raw_single_1 = raw::fan_in(&mqtt, "1st", &counts, single.clone()).await?;
    let raw_batches_1 = raw::fan_in(&mqtt, "b1st", &batch_counts, whole.clone()).await?;

    // --- The drain: every link at once.
    let open_before = rig::open_files();
    let watched = Watched {
        cloud_writers,
        broker: broker.flatten(),
    };
    let (drained, running) = drain_all(args, &cloud, &fleet, &businesses, &watched).await?;
    let open_during = rig::open_files();

    // --- The edges of each business hear each other's events.
    let settled = downlinks(args, &cloud, &fleet, &drained, running).await?;

    // --- Checks: nothing lost, nothing doubled, the books as they should be.
    let checked = verify(&cloud, &fleet, &businesses, events).await?;

    eprintln!("raw publish -> subscribe through the broker, {edges} publishers at once (after)");
    let raw_single_2 = raw::fan_in(&mqtt, "2nd", &counts, single).await?;
    let raw_batches_2 = raw::fan_in(&mqtt, "b2nd", &batch_counts, whole).await?;
    cloud_server.stop().await?;

    // --- The report.
    let rate = |f: &FanIn| total as f64 / f.took.as_secs_f64();
    let base = (rate(&raw_single_1) + rate(&raw_single_2)) / 2.0;
    let base_batches = (rate(&raw_batches_1) + rate(&raw_batches_2)) / 2.0;
    let drain_rate = total as f64 / drained.secs;
    let shape = if per_business == 1 {
        format!("{edges} edges of {n_businesses} businesses, one each")
    } else {
        format!(
            "{edges} edges in {n_businesses} businesses of up to {per_business} edges, each edge its own warehouse (the cloud pages each edge's events down to the other edges of its business)"
        )
    };
    println!();
    println!(
        "many edges at once through {}: {edges} edges reconnecting at the same moment to one cloud",
        if own_broker {
            "Mosquitto (started for this run)"
        } else {
            "the given broker"
        }
    );
    println!("machine: {machine}");
    if own_broker {
        println!(
            "broker: {}, on loopback, with max_queued_messages 0 (unbounded queues per client: Mosquitto before 2.0.13 drops QoS 1 messages to a connected subscriber under fan-in far below its default limit)",
            rig::mosquitto_version(&args.mosquitto).unwrap_or_else(|| "Mosquitto".to_owned())
        );
    }
    println!(
        "the cloud on {}",
        if args.database.is_some() {
            "PostgreSQL (--database)"
        } else {
            "SQLite"
        }
    );
    println!(
        "offered: {shape}; {events} stock adjustments queued at each edge while its link was down: {total} events, mean {mean} bytes encoded; window {} events per edge, which cuts each backlog into {} to {} batches of up to {largest_batch} events",
        args.window,
        batch_counts.iter().min().unwrap_or(&0),
        batch_counts.iter().max().unwrap_or(&0)
    );
    println!(
        "setup (not timed): {:.1} s: {n_businesses} businesses {:.1} s; {edges} edges online for their catalog, then their backlogs made with the links down, {SETUP_PARALLEL} edges at a time, {:.1} s (one backlog: median {:.2} s); backlogs read back and encoded {:.1} s",
        setup_took.as_secs_f64(),
        businesses_took.as_secs_f64(),
        edges_took.as_secs_f64(),
        percentile(&backlog_secs, 0.5),
        encoded_took.as_secs_f64()
    );
    println!(
        "open files: {open_before} before the drain, {open_during} after it, limit {}",
        rig::file_limit()
            .0
            .map_or_else(|| "unlimited".to_owned(), |l| l.to_string())
    );
    println!(
        "timed from starting every edge's link at once until the cloud's cursor for every edge reached that edge's last event (all applied, durable); each edge's drain until its own cursor did (all cursors read every {} ms; one reading took {:.1} ms median, {:.1} ms at most: the resolution of each edge's time)",
        POLL.as_millis(),
        drained.poll.0.as_secs_f64() * 1e3,
        drained.poll.1.as_secs_f64() * 1e3
    );
    println!(
        "baseline = mean of two raw QoS 1 publish -> subscribe runs through the same broker, before and after: {edges} rumqttc publishers at once (one per edge, each its edge's events, one a message of that event's encoded size) into one subscriber, {} in flight at most across them: {base:.0} msg/s",
        raw::WINDOW
    );
    println!();
    println!(
        "run                                          events/s × |  messages      MiB  seconds    events/s | each sender: median     p90     max  max/median"
    );
    println!("{}", "-".repeat(141));
    let row = |name: &str, messages: usize, bytes: usize, secs: f64, each: &[f64]| {
        let (median, p90, max) = (
            percentile(each, 0.5),
            percentile(each, 0.9),
            percentile(each, 1.0),
        );
        println!(
            "{name:<44} {:>10.3} | {messages:>9} {:>8.1} {secs:>8.2} {:>11.0} | {:>18.2} {p90:>7.2} {max:>7.2} {:>11.2}",
            total as f64 / secs / base,
            bytes as f64 / (1024.0 * 1024.0),
            total as f64 / secs,
            median,
            max / median
        );
    };
    let secs = |f: &FanIn| {
        f.per_publisher
            .iter()
            .map(Duration::as_secs_f64)
            .collect::<Vec<_>>()
    };
    row(
        "raw, 1 event per message (1st)",
        total,
        total_bytes,
        raw_single_1.took.as_secs_f64(),
        &secs(&raw_single_1),
    );
    row(
        "raw, the links' batches (1st)",
        batches,
        batch_bytes,
        raw_batches_1.took.as_secs_f64(),
        &secs(&raw_batches_1),
    );
    let each: Vec<f64> = drained.per_edge.iter().map(Duration::as_secs_f64).collect();
    row(
        &format!("sync drain, {edges} edges at once"),
        batches,
        batch_bytes,
        drained.secs,
        &each,
    );
    row(
        "raw, 1 event per message (2nd)",
        total,
        total_bytes,
        raw_single_2.took.as_secs_f64(),
        &secs(&raw_single_2),
    );
    row(
        "raw, the links' batches (2nd)",
        batches,
        batch_bytes,
        raw_batches_2.took.as_secs_f64(),
        &secs(&raw_batches_2),
    );
    println!(
        "(the drain's messages are counted as the links cut them by full windows: its hellos, acks and pages down are not)"
    );
    println!();
    let ratio = drain_rate / base;
    println!(
        "goal: aggregate drain >= {GOAL_AGGREGATE} x raw publish -> subscribe of the same messages through the same broker: {drain_rate:.0} events/s, {ratio:.3} x -> {}",
        met(ratio >= GOAL_AGGREGATE)
    );
    let (median, p90, max) = (
        percentile(&each, 0.5),
        percentile(&each, 0.9),
        percentile(&each, 1.0),
    );
    let fairness = max / median;
    println!(
        "goal: no edge's drain takes more than {GOAL_FAIRNESS} x the median edge's: median {median:.2} s, p90 {p90:.2} s, max {max:.2} s, max / median {fairness:.2} -> {}",
        met(fairness <= GOAL_FAIRNESS)
    );
    println!(
        "against raw transfer of the links' own batches (same bytes, same message sizes, {edges} publishers at once): {:.3} x",
        drain_rate / base_batches
    );
    let firsts: Vec<f64> = drained
        .first_applied
        .iter()
        .map(Duration::as_secs_f64)
        .collect();
    println!(
        "edges' drains: min {:.2} s, median {median:.2} s, p90 {p90:.2} s, max {max:.2} s; their first events applied in the cloud: median {:.0} ms, max {:.0} ms after the links started",
        percentile(&each, 0.0),
        percentile(&firsts, 0.5) * 1e3,
        percentile(&firsts, 1.0) * 1e3,
    );
    println!("{}", spread(&fleet, &businesses, &each));
    println!("{}", progress(&drained.progress, total, edges));
    println!(
        "cloud writer during the drain: {} jobs in {} commits ({:.1} jobs a commit)",
        drained.jobs,
        drained.commits,
        drained.jobs as f64 / drained.commits.max(1) as f64
    );
    let c = &drained.cpu;
    let busy = |s: f64| s / drained.secs;
    println!(
        "CPU during the drain, in cores busy (of {}): cloud writer {:.2}, edges' writers {:.2}, runtime threads (the cloud's and edges' async tasks and SQLite reads) {:.2}, other threads {:.2}{}",
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get),
        busy(c.cloud_writer),
        busy(c.edge_writers),
        busy(c.runtime),
        busy(c.other),
        c.broker
            .map(|b| format!(", Mosquitto {:.2}", busy(b)))
            .unwrap_or_default()
    );
    if per_business > 1 {
        println!(
            "downlinks: every edge held every change of its business (up to {} other edges' {events} events each) {:.2} s after the links started",
            per_business - 1,
            settled.as_secs_f64()
        );
    }
    println!("{checked}");
    Ok(())
}

fn met(ok: bool) -> &'static str {
    if ok { "met" } else { "NOT met" }
}

/// The `q` quantile (nearest rank) of `values`; 0 for none.
fn percentile(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Sets every edge up, `SETUP_PARALLEL` at a time: answers each edge (in
/// the order of the fleet) with the seconds its backlog took to make and
/// its business's place.
async fn make_edges(
    args: &Args,
    dir: &Path,
    url: &str,
    cloud: &Wms,
    businesses: &[Arc<Business>],
    edges: usize,
) -> anyhow::Result<Vec<(Tenant, f64, usize)>> {
    let per_business = args.edges_per_business.max(1);
    let room = Arc::new(Semaphore::new(SETUP_PARALLEL));
    let mut set = JoinSet::new();
    for n in 0..edges {
        let (b, site) = (n / per_business, n % per_business);
        let business = businesses.get(b).context("a business short")?.clone();
        let warehouse = *business.warehouses.get(site).context("a site short")?;
        let edge_id =
            depot_protocol::sync::EdgeId::parse(&format!("fleet-{:03}-{}", b + 1, site + 1))?;
        let (cloud, room, url, data_dir) = (
            cloud.clone(),
            room.clone(),
            url.to_owned(),
            dir.join(format!("fleet-{n}")),
        );
        let (window, events) = (args.window, args.events());
        set.spawn(async move {
            let _turn = room.acquire().await?;
            let offered = Offered {
                url: &url,
                window,
                events,
            };
            let label = edge_id.to_string();
            let (t, took) = drain::edge(
                &cloud, &business, &offered, edge_id, warehouse, data_dir, label,
            )
            .await?;
            anyhow::Ok((n, t, took.as_secs_f64(), b))
        });
    }
    let mut made: Vec<Option<(Tenant, f64, usize)>> = (0..edges).map(|_| None).collect();
    let mut reported = Instant::now();
    let mut done = 0;
    while let Some(joined) = set.join_next().await {
        let (n, t, took, b) = joined.context("an edge's setup panicked")??;
        made[n] = Some((t, took, b));
        done += 1;
        if reported.elapsed() >= Duration::from_secs(5) {
            reported = Instant::now();
            eprintln!("  {done} of {edges} edges set up");
        }
    }
    made.into_iter()
        .map(|m| m.context("an edge was not set up"))
        .collect()
}

/// Starts every edge's link at once and reads the cloud's cursors until
/// each edge's reached its head.
async fn drain_all(
    args: &Args,
    cloud: &Wms,
    fleet: &[Member],
    businesses: &[Arc<Business>],
    watched: &Watched,
) -> anyhow::Result<(Drained, Vec<Running>)> {
    let total: i64 = fleet.iter().map(|m| m.t.head - m.t.acked).sum();
    eprintln!(
        "draining {total} events of {} edges into the cloud, every link at once",
        fleet.len()
    );
    // Where each edge is, by business.
    let mut by_business: Vec<Vec<usize>> = vec![Vec::new(); businesses.len()];
    for (i, m) in fleet.iter().enumerate() {
        by_business[m.business].push(i);
    }
    let mut listeners = Vec::with_capacity(fleet.len());
    for _ in fleet {
        listeners.push(TcpListener::bind("127.0.0.1:0").await?);
    }
    let stats = cloud.writer_stats();
    let before = (
        stats.jobs.load(Ordering::Relaxed),
        stats.commits.load(Ordering::Relaxed),
    );
    let threads_before = rig::thread_times();
    let broker_before = watched.broker.and_then(rig::process_time);
    let started = Instant::now();
    let running: Vec<Running> = fleet
        .iter()
        .zip(listeners)
        .map(|(m, l)| start_edge(&m.t.edge, &m.t.settings, l))
        .collect();
    let limit = Duration::from_secs(args.timeout);
    let mut done: Vec<Option<Duration>> = vec![None; fleet.len()];
    let mut first: Vec<Option<Duration>> = vec![None; fleet.len()];
    let mut cursors: Vec<i64> = fleet.iter().map(|m| m.t.acked).collect();
    let mut progress = Vec::new();
    let mut reported = Instant::now();
    let mut polls = Vec::new();
    let outcome = loop {
        let poll = Instant::now();
        for (b, members) in by_business.iter().enumerate() {
            if members.iter().all(|&i| done[i].is_some()) {
                continue;
            }
            let records = cloud.edges(businesses[b].id).await?;
            let now = started.elapsed();
            for &i in members {
                let m = &fleet[i];
                let Some(r) = records.iter().find(|r| r.edge_id == m.t.edge_id.as_str()) else {
                    continue;
                };
                cursors[i] = r.up_cursor;
                if r.up_cursor > m.t.acked && first[i].is_none() {
                    first[i] = Some(now);
                }
                if r.up_cursor >= m.t.head && done[i].is_none() {
                    done[i] = Some(now);
                }
            }
        }
        polls.push(poll.elapsed());
        let elapsed = started.elapsed();
        let applied: i64 = cursors
            .iter()
            .zip(fleet)
            .map(|(c, m)| (c - m.t.acked).max(0))
            .sum();
        let finished = done.iter().filter(|d| d.is_some()).count();
        progress.push((elapsed.as_secs_f64(), applied, finished));
        if finished == fleet.len() {
            break Ok(elapsed);
        }
        if elapsed > limit {
            break Err(anyhow::anyhow!(
                "the drain did not finish in {} s: {finished} of {} edges drained, the cloud has {applied} of {total} events",
                limit.as_secs(),
                fleet.len()
            ));
        }
        if reported.elapsed() >= Duration::from_secs(2) {
            reported = Instant::now();
            eprintln!(
                "  {:.0} s: {finished} of {} edges drained, the cloud has {applied} of {total} events",
                elapsed.as_secs_f64(),
                fleet.len()
            );
        }
        tokio::time::sleep(POLL).await;
    };
    let after = (
        stats.jobs.load(Ordering::Relaxed),
        stats.commits.load(Ordering::Relaxed),
    );
    let cpu = Cpu::between(
        &threads_before,
        &rig::thread_times(),
        watched,
        broker_before,
    );
    polls.sort();
    let poll = (
        polls.get(polls.len() / 2).copied().unwrap_or_default(),
        polls.last().copied().unwrap_or_default(),
    );
    let took = match outcome {
        Ok(took) => took,
        Err(e) => {
            stop_all(running).await;
            return Err(e);
        }
    };
    // The edges stay online for their downlinks: `downlinks` stops them.
    Ok((
        Drained {
            started,
            secs: took.as_secs_f64(),
            per_edge: done.into_iter().map(Option::unwrap_or_default).collect(),
            first_applied: first.into_iter().map(Option::unwrap_or_default).collect(),
            progress,
            jobs: after.0 - before.0,
            commits: after.1 - before.1,
            poll,
            cpu,
        },
        running,
    ))
}

/// Stops every edge: all told at once, then each awaited.
async fn stop_all(running: Vec<Running>) {
    let mut tasks = Vec::with_capacity(running.len());
    for r in running {
        let _ = r.stop.send(());
        tasks.push(r.task);
    }
    for t in tasks {
        match t.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("an edge stopped with an error: {e:#}"),
            Err(e) => eprintln!("an edge's task failed: {e}"),
        }
    }
}

/// Waits until every edge has recorded the acknowledgement of its whole
/// outbox and holds every change of its business the cloud has (the other
/// edges' events, paged down), then stops the edges. Answers when the last
/// edge held them all, from the links' start.
async fn downlinks(
    args: &Args,
    cloud: &Wms,
    fleet: &[Member],
    drained: &Drained,
    running: Vec<Running>,
) -> anyhow::Result<Duration> {
    let outcome = async {
        let limit = Duration::from_secs(args.timeout);
        let mut settled: Vec<Option<Duration>> = vec![None; fleet.len()];
        let mut reported = Instant::now();
        loop {
            for (i, m) in fleet.iter().enumerate() {
                if settled[i].is_some() {
                    continue;
                }
                let (_, cursor) = m.t.edge.sync_state().await?;
                let owed = cloud
                    .changes_for(m.t.business, m.t.edge_id.clone(), cursor, 1)
                    .await?;
                if owed.changes.is_empty() {
                    settled[i] = Some(drained.started.elapsed());
                }
            }
            let left = settled.iter().filter(|s| s.is_none()).count();
            if left == 0 {
                break;
            }
            if drained.started.elapsed() > limit {
                bail!(
                    "{left} edges still miss changes of their business {} s after the links started",
                    limit.as_secs()
                );
            }
            if reported.elapsed() >= Duration::from_secs(2) {
                reported = Instant::now();
                eprintln!("  {left} edges still paged down");
            }
            tokio::time::sleep(POLL * 2).await;
        }
        for m in fleet {
            eventually("the edge to record the acknowledgement", || async {
                m.t.edge.sync_snapshot().await.is_ok_and(|s| s.depth == 0)
            })
            .await?;
        }
        anyhow::Ok(
            settled
                .into_iter()
                .map(Option::unwrap_or_default)
                .max()
                .unwrap_or_default(),
        )
    }
    .await;
    stop_all(running).await;
    outcome
}

/// Nothing lost, nothing doubled: every event of every edge is in the
/// cloud's log exactly once (the log read whole), each edge's count there
/// is its head; every stock level is what the adjustments make, in the
/// cloud and at every edge of the business (each warehouse's); no
/// conflicts on either side. Answers what was checked.
async fn verify(
    cloud: &Wms,
    fleet: &[Member],
    businesses: &[Arc<Business>],
    events: usize,
) -> anyhow::Result<String> {
    let started = Instant::now();
    let mut by_origin: HashMap<String, i64> = HashMap::new();
    let mut seen: HashMap<EventId, u32> = HashMap::new();
    let mut after = 0;
    let mut logged = 0usize;
    loop {
        let page = cloud.events_since(after, 10_000).await?;
        let Some(last) = page.last().map(|e| e.seq) else {
            break;
        };
        logged += page.len();
        for e in page {
            *by_origin.entry(e.origin).or_default() += 1;
            *seen.entry(e.id).or_default() += 1;
        }
        after = last;
    }
    let doubled = seen.values().filter(|&&n| n > 1).count();
    if doubled > 0 {
        bail!("{doubled} events are in the cloud's log more than once");
    }
    let mut lost = 0;
    for m in fleet {
        let origin = m.t.edge.origin().to_owned();
        let here = by_origin.get(&origin).copied().unwrap_or(0);
        let missing = m
            .backlog
            .ids
            .iter()
            .filter(|id| !seen.contains_key(id))
            .count();
        if here != m.t.head || missing > 0 {
            eprintln!(
                "edge {}: the cloud's log has {here} of its events, it made {}; {missing} of its backlog are missing",
                m.t.edge_id, m.t.head
            );
            lost += 1;
        }
    }
    if lost > 0 {
        bail!("{lost} edges' events are not all in the cloud's log, or more are");
    }
    let expected = drain::expected_on_hand(events);
    let mut levels = 0;
    for m in fleet {
        let b = &businesses[m.business];
        for &warehouse in &b.warehouses {
            for (item, &on_hand) in b.items.iter().zip(&expected) {
                let at_edge = m.t.edge.stock_level(*item, warehouse).await?;
                let want = (on_hand, 0);
                if at_edge != want {
                    bail!(
                        "edge {}: item {item} in warehouse {warehouse} is {at_edge:?}, the adjustments make {want:?}",
                        m.t.edge_id
                    );
                }
                levels += 1;
                if warehouse == m.t.warehouse {
                    let in_cloud = cloud.stock_level(*item, warehouse).await?;
                    if in_cloud != want {
                        bail!(
                            "the cloud: item {item} in edge {}'s warehouse {warehouse} is {in_cloud:?}, the adjustments make {want:?}",
                            m.t.edge_id
                        );
                    }
                    levels += 1;
                }
            }
        }
        let conflicts = m.t.edge.conflicts(None, 5).await?;
        if !conflicts.is_empty() {
            bail!("edge {} recorded conflicts: {conflicts:?}", m.t.edge_id);
        }
    }
    for b in businesses {
        let conflicts = cloud.conflicts(Some(b.id), 5).await?;
        if !conflicts.is_empty() {
            bail!("the cloud recorded conflicts: {conflicts:?}");
        }
    }
    let mine: i64 = fleet.iter().map(|m| m.t.head).sum();
    Ok(format!(
        "verified ({:.1} s): the cloud's log ({logged} events) holds each of the edges' {mine} events exactly once, each edge's all; {levels} stock levels as the adjustments make them, in the cloud and at every edge (every warehouse of its business); no conflicts",
        started.elapsed().as_secs_f64()
    ))
}

/// Who drained when: by the edge's place in its business and by its
/// business's (their order of creation), the median drain of each group.
fn spread(fleet: &[Member], businesses: &[Arc<Business>], each: &[f64]) -> String {
    let median_of = |pick: &dyn Fn(usize) -> bool| {
        let v: Vec<f64> = (0..fleet.len())
            .filter(|&i| pick(i))
            .map(|i| each[i])
            .collect();
        (percentile(&v, 0.5), v.len())
    };
    let sites = fleet
        .iter()
        .map(|m| {
            businesses[m.business]
                .warehouses
                .iter()
                .position(|&w| w == m.t.warehouse)
                .unwrap_or(0)
        })
        .collect::<Vec<_>>();
    let n_sites = sites.iter().max().map_or(0, |s| s + 1);
    let mut out = String::from("edges' drains by place: ");
    if n_sites > 1 {
        let parts: Vec<String> = (0..n_sites)
            .map(|s| {
                let (m, n) = median_of(&|i| sites[i] == s);
                format!("site {} median {m:.2} s ({n})", s + 1)
            })
            .collect();
        out.push_str(&parts.join(", "));
        out.push_str("; ");
    }
    let quarters = 4.min(businesses.len()).max(1);
    let parts: Vec<String> = (0..quarters)
        .map(|q| {
            let (m, n) = median_of(&|i| fleet[i].business * quarters / businesses.len() == q);
            format!("median {m:.2} s ({n})")
        })
        .collect();
    out.push_str(&format!(
        "businesses by order of creation, in {quarters} groups: {}",
        parts.join(", ")
    ));
    out
}

/// How the drain went: when a quarter, half, three quarters and all of
/// the events were applied, and how many edges were done by then.
fn progress(samples: &[(f64, i64, usize)], total: usize, edges: usize) -> String {
    let parts: Vec<String> = [0.25, 0.5, 0.75, 1.0]
        .iter()
        .filter_map(|&q| {
            let want = (q * total as f64).ceil() as i64;
            samples
                .iter()
                .find(|(_, applied, _)| *applied >= want)
                .map(|(t, _, done)| {
                    format!(
                        "{:.0} % by {t:.2} s ({done} of {edges} edges done)",
                        q * 100.0
                    )
                })
        })
        .collect();
    format!("the drain's course: {}", parts.join(", "))
}
