//! `depot-bench-cloud`: loads a realistic business through the engine, serves
//! the real `/v1` router on loopback and measures it under closed-loop load.
//!
//! Per the design's conventions every figure is reported as a ratio against
//! a hello-world route served by the same process in the same run, so the
//! numbers mean something on any machine; absolute figures sit beside them.

use anyhow::bail;
use clap::Parser;
use depot_bench::closed_loop::Baseline;
use depot_bench::load::PARALLEL;
use depot_bench::picking::WAVE_ORDERS;
use depot_bench::pin::{self, Split};
use depot_bench::{OpenRun, load, sku};
use depot_cloud::settings::{RateLimit, Settings};
use depot_protocol::catalog::{ItemCreate, Price};
use depot_protocol::order::Address;
use depot_protocol::stock::{AdjustRequest, MovementReason};
use depot_protocol::tenant::Caller;
use depot_protocol::{Money, PriceListId};
use depot_wms::Wms;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[path = "bench/data.rs"]
mod data;
#[path = "bench/feed.rs"]
mod feed;
#[path = "bench/picking.rs"]
mod picking;
#[path = "bench/target.rs"]
mod target;

use data::{CATEGORIES, DAY, mix, order, status_path};
use feed::change_feed;
use target::{Scenario, Target, measure, measure_open, measure_picks};

#[derive(Parser, Debug)]
#[command(about = "Benchmarks the cloud API against a hello-world baseline")]
struct Args {
    /// Catalog items to load.
    #[arg(long, default_value_t = 10_000)]
    items: usize,
    /// Orders to load.
    #[arg(long, default_value_t = 100_000)]
    orders: usize,
    /// Seconds each scenario runs.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// Concurrent HTTP clients (closed loop: each waits for its answer).
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
    /// An empty PostgreSQL database to run on
    /// (`postgres://user@host/db?sslmode=disable`), instead of SQLite in a
    /// scratch directory. Its tables are left as the run wrote them.
    #[arg(long)]
    database: Option<String>,
    /// Engines on the one PostgreSQL database, each serving on its own
    /// port, as instances behind a load balancer: requests go to each in
    /// turn. One process on one machine: what a second instance costs or
    /// adds in coordination, not in cores.
    #[arg(long, default_value_t = 1, requires = "database")]
    instances: usize,
    /// Open loop: requests a second offered to hello and the order list,
    /// whatever the answers do, each timed from when it was due (0: no
    /// open-loop runs).
    #[arg(long, default_value_t = 500.0)]
    rate: f64,
    /// Server and load generator share every core, instead of each
    /// pinned to half of them.
    #[arg(long)]
    no_pin: bool,
    /// Only these scenarios (hello always runs: it is the baseline), to
    /// time or profile one change without the others' minutes.
    #[arg(long, value_enum, value_delimiter = ',')]
    only: Vec<Part>,
}

/// The bench's scenarios, as `--only` names them.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// The order list, by offset and by cursor (and open loop).
    List,
    /// Order create.
    Create,
    /// Inventory adjust, without and with sales channels, and the feed.
    Adjust,
    /// Pick scans.
    Pick,
}

impl Args {
    fn runs(&self, part: Part) -> bool {
        self.only.is_empty() || self.only.contains(&part)
    }
}

/// Removes the data directory however `main` ends.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The group-commit writers' (jobs, commits, round trips) so far, summed
/// over the instances.
fn writer_counts(engines: &[Wms]) -> (u64, u64, u64) {
    engines
        .iter()
        .fold((0, 0, 0), |(jobs, commits, trips), wms| {
            let s = wms.writer_stats();
            (
                jobs + s.jobs.load(Ordering::Relaxed),
                commits + s.commits.load(Ordering::Relaxed),
                trips + s.round_trips.load(Ordering::Relaxed),
            )
        })
}

/// How well the writer batched between two snapshots, and (on
/// PostgreSQL) how many times a job waited for the server.
fn print_batching(what: &str, before: (u64, u64, u64), after: (u64, u64, u64)) {
    let (jobs, commits, trips) = (after.0 - before.0, after.1 - before.1, after.2 - before.2);
    let trips = if trips == 0 {
        String::new()
    } else {
        format!(", {:.1} round trips/job", trips as f64 / jobs.max(1) as f64)
    };
    println!(
        "writer, {what}: {jobs} jobs in {commits} commits = {:.1} jobs/commit{trips}",
        jobs as f64 / commits.max(1) as f64
    );
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    // Before pinning, which narrows what the process is told it has.
    let machine = depot_bench::machine();
    // The engines' threads (writer, readers) inherit the mask of the
    // thread that opens them: the server's cores.
    let (split, server) = pin::server(args.no_pin)?;
    // The pid makes the name unique among running benches; a leftover of
    // a killed run that had the same pid is cleared first.
    let dir =
        TempDir(std::env::temp_dir().join(format!("depot-bench-cloud-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    let engines = {
        let _in = server.enter();
        let mut engines = vec![match &args.database {
            Some(url) => Wms::open_postgres(url, &dir.0, "cloud")?,
            None => Wms::open(&dir.0.join("cloud.db"), "cloud")?,
        }];
        if let Some(url) = &args.database {
            for i in 1..args.instances {
                let dir = dir.0.join(format!("instance-{i}"));
                std::fs::create_dir_all(&dir)?;
                engines.push(Wms::open_postgres(url, &dir, "cloud")?);
            }
        }
        engines
    };
    let pinning = format!("{machine}; {}", Split::describe(split.as_ref()));
    match &split {
        Some(s) => {
            pin::pin_current(&s.clients)?;
            let clients = pin::runtime("bench-client", &s.clients)?;
            clients.block_on(run(args, engines, server.handle().clone(), pinning))
        }
        None => server.block_on(run(args, engines, server.handle().clone(), pinning)),
    }
}

/// Loads the data set, serves it on `server` and measures it from the
/// runtime this runs on.
async fn run(
    args: Args,
    engines: Vec<Wms>,
    server: tokio::runtime::Handle,
    pinning: String,
) -> anyhow::Result<()> {
    let wms = engines[0].clone();

    // --- The data set, written through the engine as the API would.
    let bid = wms.create_business("Bench", "EUR", "UTC").await?.id;
    let w1 = wms
        .create_warehouse(bid, "W1", "Main", Address::default(), false)
        .await?;
    // W2 holds only the pick scenario's stock, orders and waves.
    let w2 = wms
        .create_warehouse(bid, "W2", "Overflow", Address::default(), false)
        .await?;
    let key = wms.create_key(bid, None).await?;
    let caller = Caller {
        key_id: key.key.id,
        business_id: key.key.business_id,
    };
    let now = depot_protocol::now();
    let n_items = args.items.max(1) as u64;
    eprintln!("loading {} items and {} orders", args.items, args.orders);
    let loading = Instant::now();

    // Each item gets plenty of stock in W1, so confirming orders (which
    // reserves) never runs short.
    let items = load("items + stock", args.items, PARALLEL, |i| {
        let wms = wms.clone();
        let item = ItemCreate {
            sku: sku(i as u64),
            name: format!("Bench item {i}"),
            category: Some(CATEGORIES[i % CATEGORIES.len()].into()),
            prices: Some(vec![Price {
                price_list_id: PriceListId(1),
                amount: Money(100 + (mix(i as u64) % 10_000) as i64),
                currency: "EUR".into(),
            }]),
            ..ItemCreate::default()
        };
        async move {
            let id = wms.create_item(bid, item).await?.id;
            let stock = AdjustRequest {
                warehouse_id: w1.id,
                item_id: Some(id),
                sku: None,
                reason: MovementReason::Received,
                quantity: Some(1_000),
                delta: None,
                counted: None,
                to_warehouse_id: None,
                to_location: None,
                location: None,
                reference: None,
                note: None,
            };
            wms.adjust(caller, stock).await?;
            Ok(id)
        }
    })
    .await?;
    let orders = load("orders", args.orders, PARALLEL, |i| {
        let wms = wms.clone();
        let req = order(i as u64, n_items, now);
        async move { Ok(wms.create_order(caller, req).await?.0.id) }
    })
    .await?;
    let changes: Vec<_> = orders
        .iter()
        .map(|id| (*id, status_path(id.0 as u64)))
        .filter(|(_, path)| !path.is_empty())
        .collect();
    load("status changes", changes.len(), PARALLEL, |i| {
        let (wms, (id, path)) = (wms.clone(), changes[i]);
        async move {
            for to in path {
                wms.set_order_status(caller, id, *to, None).await?;
            }
            Ok(())
        }
    })
    .await?;
    let load_secs = loading.elapsed().as_secs_f64();
    let writes = items.len() * 2 + orders.len() + changes.iter().map(|c| c.1.len()).sum::<usize>();
    let loaded = writer_counts(std::slice::from_ref(&wms));
    // PostgreSQL plans by statistics its autovacuum gathers within a
    // minute of a bulk load, and reads an index alone only where that
    // vacuum has marked the table's pages all-visible; the measurement
    // starts seconds after one, so both are done now. (SQLite's plans do
    // not wait on statistics.)
    wms.gather_statistics().await?;

    // --- The real router, with the limiter out of the way: it is per key
    // and every client here shares one key.
    let settings = Settings {
        rate_limit: RateLimit {
            per_second: 1_000_000,
            burst: 1_000_000,
        },
        ..Settings::default()
    };
    let mut bases = Vec::new();
    let mut servers = Vec::new();
    for engine in &engines {
        // Built on the server's runtime: whatever it spawns runs there.
        let daemon = depot_cloud::Daemon::new(engine.clone(), settings.clone());
        let (router, _) = server.spawn(async move { daemon.router().await }).await??;
        let router = router.route("/hello", axum::routing::get(|| async { "hello" }));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        bases.push(format!("http://{}", listener.local_addr()?));
        // Served as the daemon serves it: its timeouts and connection cap.
        servers.push(server.spawn(depot_wms::http::server::serve(
            listener,
            router,
            settings.http,
            std::future::pending(),
        )));
    }

    let target = Arc::new(Target {
        client: reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()?,
        list: format!(
            "/v1/orders/{bid}/list?status=confirmed&length=50&date_from={}&date_to={}",
            (now - Duration::from_secs(60 * DAY)).format("%Y-%m-%d"),
            now.format("%Y-%m-%d")
        ),
        cursors: std::sync::OnceLock::new(),
        bases,
        key: key.secret.clone(),
        business: bid.0,
        warehouse: w1.id,
        items: n_items,
        concurrency: args.concurrency,
        seq: AtomicU64::new(0),
    });

    // A filter that matches nothing would make the list scenario trivially
    // fast: check it selects a real share of the orders first.
    let probe: serde_json::Value = target
        .request(Scenario::OrderList, 0)
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let matching = probe["recordsFiltered"].as_str().unwrap_or("?").to_owned();
    let total = probe["recordsTotal"].as_str().unwrap_or("?");
    eprintln!("order list filter matches {matching} of {total} orders");
    let mut cursors = vec![None];
    while cursors.len() < 10 {
        let page: serde_json::Value = target
            .request(Scenario::OrderListCursor, 0)
            .query(&[("cursor", cursors.last().cloned().flatten())])
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        match page["cursor"].as_str() {
            Some(c) => cursors.push(Some(c.to_owned())),
            None => break,
        }
    }
    let _ = target.cursors.set(cursors);

    eprintln!(
        "measuring: {} clients, {} s per scenario",
        args.concurrency, args.seconds
    );
    // Unrecorded warm-up: opens the clients' connections and wakes the CPU,
    // which otherwise penalises whichever scenario happens to run first.
    let secs = args.seconds;
    measure(&target, Scenario::Hello, "warm-up", 1).await?;
    let hello1 = measure(&target, Scenario::Hello, "hello (1st run)", secs).await?;
    let mut runs = vec![hello1];
    if args.runs(Part::List) {
        runs.push(measure(&target, Scenario::OrderList, "order list", secs).await?);
        runs.push(
            measure(
                &target,
                Scenario::OrderListCursor,
                "order list by cursor",
                secs,
            )
            .await?,
        );
    }
    let mut batching = vec![("loading", (0, 0, 0), loaded)];
    if args.runs(Part::Create) {
        let before = writer_counts(&engines);
        runs.push(measure(&target, Scenario::OrderCreate, "order create", secs).await?);
        batching.push(("order create", before, writer_counts(&engines)));
    }
    let mut feed = None;
    if args.runs(Part::Adjust) {
        let before = writer_counts(&engines);
        runs.push(measure(&target, Scenario::Adjust, "inventory adjust", secs).await?);
        // The same adjustments with 5 sales channels selling from the
        // warehouse: what keeping their figures in each write costs.
        for n in 1..=5 {
            let fields = serde_json::from_value(serde_json::json!({"code": format!("bench-{n}"),
                "name": format!("Bench channel {n}"), "kind": "marketplace",
                "warehouse_ids": [w1.id.0], "buffer_units": n}))?;
            wms.create_channel(bid, fields).await?;
        }
        // The channels wrote every item's figures into a table that was
        // empty when the statistics were gathered: as after the load,
        // they are gathered again, as autovacuum would within a minute
        // (without them PostgreSQL read the figures by scanning them).
        wms.gather_statistics().await?;
        runs.push(measure(&target, Scenario::Adjust, "adjust, 5 channels", secs).await?);
        feed = Some(change_feed(&wms, &target, bid).await?);
        batching.push(("inventory adjust", before, writer_counts(&engines)));
    }
    let mut picks = None;
    if args.runs(Part::Pick) {
        // Built here rather than with the data set, so the scenarios above
        // see the same data as before: these orders are confirmed, and
        // would count in the list filter.
        eprintln!("setting up {} pick waves in W2", args.concurrency);
        let before = writer_counts(&engines);
        let setting_up = Instant::now();
        let (pick, walks) =
            picking::setup(&wms, caller, w2.id, args.concurrency, n_items, secs).await?;
        let setup_secs = setting_up.elapsed().as_secs_f64();
        let set_up = writer_counts(&engines);
        let scanners = walks.len();
        let scans = measure_picks(&target, walks, secs).await?;
        batching.push(("pick setup", before, set_up));
        batching.push(("pick scan", set_up, writer_counts(&engines)));
        picks = Some((pick, scanners, scans.ran_out, setup_secs));
        runs.push(scans);
    }
    let hello2 = measure(&target, Scenario::Hello, "hello (2nd run)", secs).await?;
    let mut open = Vec::new();
    if args.rate > 0.0 {
        open.push(measure_open(&target, Scenario::Hello, "hello", args.rate, secs).await);
        if args.runs(Part::List) {
            open.push(
                measure_open(&target, Scenario::OrderList, "order list", args.rate, secs).await,
            );
            open.push(
                measure_open(
                    &target,
                    Scenario::OrderListCursor,
                    "order list by cursor",
                    args.rate,
                    secs,
                )
                .await,
            );
        }
    }
    for server in servers {
        server.abort();
    }

    let base = Baseline::of(&runs[0], &hello2);
    runs.insert(1, hello2);
    println!();
    println!("machine: {pinning}");
    println!(
        "depot-cloud on {}, {} items, {} orders ({matching} confirmed in the last 60 days), {} clients, {} s each",
        match (&args.database, args.instances) {
            (None, _) => "SQLite".to_owned(),
            (Some(_), 1) => "PostgreSQL".to_owned(),
            (Some(_), n) => format!("PostgreSQL, {n} instances"),
        },
        args.items,
        args.orders,
        args.concurrency,
        args.seconds
    );
    println!(
        "baseline = mean of two hello-world runs: {:.0} req/s, p50 {:.3} ms, p99 {:.3} ms",
        base.rps, base.p50_ms, base.p99_ms
    );
    println!();
    base.print_table("scenario", &runs.iter().collect::<Vec<_>>());
    println!();
    println!(
        "load: {writes} writes in {load_secs:.1} s = {:.0} writes/s",
        writes as f64 / load_secs
    );
    for (what, before, after) in batching {
        print_batching(what, before, after);
    }
    // Whether the list's pages were read on the server's own threads, as
    // meant, or overran their budget and went to the read pool.
    let (answered, overran) = engines.iter().fold((0, 0), |(a, o), wms| {
        let s = wms.brief_read_stats();
        (
            a + s.answered.load(Ordering::Relaxed),
            o + s.overran.load(Ordering::Relaxed),
        )
    });
    if answered + overran > 0 {
        println!(
            "brief reads: {answered} within their budget, {overran} overran it and went to the pool"
        );
    }
    if let Some(feed) = feed {
        println!(
            "channel edit: every item's figure recomputed in {:.0} ms; the change feed read {} changed items in {} pages in {:.0} ms = {:.0} items/s",
            feed.edit_ms,
            feed.items,
            feed.pages,
            feed.read_ms,
            feed.items as f64 / (feed.read_ms / 1000.0)
        );
    }
    if let Some((pick, scanners, ran_out, setup_secs)) = picks {
        println!(
            "pick setup: {scanners} waves of {WAVE_ORDERS} orders × {} lines × {} units, {} writes in {setup_secs:.1} s",
            pick.lines_per_order,
            pick.units_per_line,
            pick.writes()
        );
        println!(
            "pick scan: {scanners} scanners on {scanners} waves, one unit per scan; {ran_out} ran out of work before the end{}",
            if ran_out > 0 {
                " (so its req/s understates)"
            } else {
                ""
            }
        );
    }

    if !open.is_empty() {
        println!();
        println!(
            "open loop: {:.0} requests/s offered for {secs} s each, latency from when each was due",
            args.rate
        );
        OpenRun::print_header();
        for r in &open {
            r.print();
        }
    }

    let failed: usize =
        runs.iter().map(|r| r.errors).sum::<usize>() + open.iter().map(|r| r.errors).sum::<usize>();
    if failed > 0 {
        bail!("{failed} requests failed; the figures above are not valid");
    }
    Ok(())
}
