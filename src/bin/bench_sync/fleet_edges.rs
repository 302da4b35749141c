//! The fleet's edges: set up (each online for its catalog, then its
//! backlog made with the link down), every link started at once and the
//! cloud's cursors read until each edge drained, each edge then paged down
//! its business's changes and stopped; and where the CPU went meanwhile.

use super::super::drain::{self, Business, Offered, Tenant};
use super::super::rig::{self, Running, eventually, start_edge};
use super::super::uplink::Uplink;
use super::super::{Args, Backlog};
use anyhow::{Context, bail};
use depot_wms::Wms;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// Edges set up (online for the catalog, then their backlogs) at once.
pub(super) const SETUP_PARALLEL: usize = 16;

/// How often the cloud's cursors are read during the drain: the
/// resolution of each edge's drain time. A reading is a query per
/// business: every 10 ms, with 100 businesses, the bench's own readings
/// took 6 % of the run's CPU.
pub(super) const POLL: Duration = Duration::from_millis(50);

/// One edge of the fleet, its backlog made.
pub(super) struct Member {
    pub(super) t: Tenant,
    /// Its business's place in `businesses`.
    pub(super) business: usize,
    pub(super) backlog: Backlog,
}

/// What the timed drain saw, per edge in the order of the fleet.
pub(super) struct Drained {
    /// When the links started.
    pub(super) started: Instant,
    pub(super) secs: f64,
    pub(super) per_edge: Vec<Duration>,
    pub(super) first_applied: Vec<Duration>,
    /// At each reading of the cursors: seconds since the start, events
    /// applied so far, edges done so far.
    pub(super) progress: Vec<(f64, i64, usize)>,
    pub(super) jobs: u64,
    pub(super) commits: u64,
    /// How long one reading of every cursor took: median, max.
    pub(super) poll: (Duration, Duration),
    pub(super) cpu: Cpu,
    /// How long the edges took to start and reach their uplink, down (not
    /// timed); `None` when they started with the timing (no uplink).
    pub(super) started_up: Option<f64>,
    /// Kept up until the edges stop.
    pub(super) _uplink: Option<Uplink>,
}

/// The threads and process whose CPU time is reported.
pub(super) struct Watched {
    pub(super) cloud_writers: Vec<u32>,
    pub(super) broker: Option<u32>,
}

/// Where the CPU time of the drain went, in seconds of one core.
#[derive(Default)]
pub(super) struct Cpu {
    pub(super) cloud_writer: f64,
    pub(super) edge_writers: f64,
    pub(super) runtime: f64,
    pub(super) other: f64,
    pub(super) broker: Option<f64>,
    /// Every process on the machine, the database server's included.
    pub(super) machine: Option<f64>,
}

/// The name of the engine's writer threads (`depot_wms::writer`).
pub(super) const WRITER: &str = "depot-writer";
/// Clock ticks a second in /proc (USER_HZ, 100 on Linux).
pub(super) const TICKS: f64 = 100.0;

impl Cpu {
    fn between(
        before: &[(u32, String, u64)],
        after: &[(u32, String, u64)],
        watched: &Watched,
        broker: Option<u64>,
        machine: Option<u64>,
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
        cpu.machine = machine
            .zip(rig::machine_busy())
            .map(|(b, n)| n.saturating_sub(b) as f64 / TICKS);
        cpu
    }
}

/// Sets every edge up, `SETUP_PARALLEL` at a time: answers each edge (in
/// the order of the fleet) with the seconds its backlog took to make and
/// its business's place.
pub(super) async fn make_edges(
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
pub(super) async fn drain_all(
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
    // Every edge started behind its uplink, down: its daemon up and its
    // link connected to the uplink, held there. Timed from the moment the
    // uplink comes back. (Over TLS the uplink cannot stand in for the
    // broker's name: the edges start when the timing does.)
    let uplink = match fleet.first() {
        Some(m) => Uplink::for_edges(&m.t.settings).await?,
        None => None,
    };
    let starting = Instant::now();
    let running: Vec<Running> = fleet
        .iter()
        .zip(listeners)
        .map(|(m, l)| match &uplink {
            Some(uplink) => start_edge(&m.t.edge, &uplink.route(&m.t.settings), l),
            None => start_edge(&m.t.edge, &m.t.settings, l),
        })
        .collect();
    let started_up = match &uplink {
        Some(uplink) => {
            uplink.wait_for(fleet.len()).await;
            let took = starting.elapsed().as_secs_f64();
            eprintln!(
                "{} of {} edges started and connected to their uplink, down, in {took:.2} s (not timed): the uplink comes back",
                uplink.held(),
                fleet.len()
            );
            Some(took)
        }
        None => None,
    };
    let threads_before = rig::thread_times();
    let broker_before = watched.broker.and_then(rig::process_time);
    let machine_before = rig::machine_busy();
    let started = Instant::now();
    if let Some(uplink) = &uplink {
        uplink.up();
    }
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
        machine_before,
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
            started_up,
            _uplink: uplink,
        },
        running,
    ))
}

/// Stops every edge: all told at once, then each awaited.
pub(super) async fn stop_all(running: Vec<Running>) {
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
pub(super) async fn downlinks(
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
