//! `--edges N`: many edges reconnecting at once to one cloud.
//!
//! Each edge is a business's own by default, as a cloud of many merchants
//! with a box each; with `--edges-per-business N` a business has N, each
//! its own warehouse, as a business with a few sites, and the cloud pages
//! each edge's events down to the others. Every edge makes its backlog
//! (the single-edge run's stock adjustments) while its link is down. Then
//! every edge starts behind an uplink that is down (`uplink.rs`), and the
//! uplink comes back: every link reaches the broker at one moment, as
//! after an outage of the sites' internet, the cloud or the broker, with
//! the edges' own start-up not timed. Timed: until the cloud's cursor for every edge
//! reaches that edge's last event (the aggregate drain), and each edge's
//! own drain; beside them the baseline, raw QoS 1 publish → subscribe of
//! the same messages through the same broker, one publisher per edge at
//! once into one subscriber. Then the edges of a business hear each
//! other's events (the cloud pages them down), and the bench checks that
//! every event is in the cloud's log exactly once and every stock level is
//! as the adjustments make it, in the cloud and at every edge.

use super::drain::{self, Business};
use super::raw::{self, FanIn, Payload};
use super::rig::{self, start_cloud};
use super::{Args, encode_backlog, machine};
use anyhow::bail;
use depot_mqtt::MqttUrl;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[path = "fleet_edges.rs"]
mod edges;
#[path = "fleet_verify.rs"]
mod verify;

use edges::{Member, POLL, SETUP_PARALLEL, WRITER, Watched, downlinks, drain_all, make_edges};
use verify::verify;

/// The goals: the aggregate drain at least half as fast as raw
/// publish → subscribe of the same messages through the same broker; no
/// edge's drain longer than twice the median edge's.
const GOAL_AGGREGATE: f64 = 0.5;
const GOAL_FAIRNESS: f64 = 2.0;
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
    rig::say_broker(&mqtt, own_broker);
    let (cloud, cloud_server) = start_cloud(dir, url, args.database.as_deref()).await?;
    // The cloud's writer: the one writer thread before any edge opens. A
    // new thread names itself once it runs, so it may not be named yet
    // (then its CPU was counted as an edge's writer's): asked again until
    // it is, for a second at most.
    let mut cloud_writers: Vec<u32> = Vec::new();
    for _ in 0..100 {
        cloud_writers = rig::thread_times()
            .into_iter()
            .filter(|(_, name, _)| name == WRITER)
            .map(|(tid, _, _)| tid)
            .collect();
        if !cloud_writers.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    if cloud_writers.is_empty() {
        eprintln!("the cloud's writer thread was not found: its CPU is not told apart");
    }

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
    println!("the cloud on {}", args.cloud_database());
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
    let from = match drained.started_up {
        Some(took) => format!(
            "timed from the moment every edge's uplink came back (the edges were started before with it down, and had connected to it: {took:.2} s, not timed; it then carries their bytes to the broker, an extra hop the raw baseline does not make)"
        ),
        _ => "timed from starting every edge at once (their daemons' start-up included: the broker is reached over TLS, which the bench's uplink cannot stand in for)".to_owned(),
    };
    println!(
        "{from} until the cloud's cursor for every edge reached that edge's last event (all applied, durable); each edge's drain until its own cursor did (all cursors read every {} ms; one reading took {:.1} ms median, {:.1} ms at most: the resolution of each edge's time)",
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
    if let Some(machine) = c.machine {
        println!(
            "the machine during the drain (every process, the database server's included): {:.2} cores busy, {:.0} µs an event",
            busy(machine),
            machine * 1e6 / total.max(1) as f64
        );
    }
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
