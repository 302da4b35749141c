use clap::{Parser, Subcommand};
use depot::demo::station::{PRINTER, SCALE, SCANNER, STATION};
use depot::demo::{Announce, Options};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Parser)]
#[command(
    name = "depot",
    version,
    about = "Depot: warehouse edge appliance with cloud sync"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the cloud, its embedded broker and one edge on embedded defaults,
    /// with a seeded demo business and a packing station on simulated
    /// devices.
    Demo {
        /// Where the cloud API listens; port 0 picks a free one.
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: SocketAddr,
        /// Where the edge's API (what stations talk to) listens.
        #[arg(long, default_value = "127.0.0.1:8081")]
        edge_listen: SocketAddr,
        /// Where the demo keeps its databases, its labels and its
        /// scanner's trigger.
        #[arg(long, default_value = "depot-demo")]
        data_dir: PathBuf,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    depot_cloud::logging::init(
        tracing_subscriber::EnvFilter::try_from_env("DEPOT_LOG").unwrap_or_else(|_| "warn".into()),
    );
    match Cli::parse().command {
        Command::Demo {
            listen,
            edge_listen,
            data_dir,
        } => demo(listen, edge_listen, data_dir).await,
    }
}

/// `path` relative to the working directory when it is below it: what a
/// person types.
fn shown(path: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_owned))
        .unwrap_or_else(|| path.to_owned())
        .display()
        .to_string()
}

async fn demo(
    listen: SocketAddr,
    edge_listen: SocketAddr,
    data_dir: PathBuf,
) -> anyhow::Result<()> {
    eprintln!("preparing the demo in {} …", data_dir.display());
    let options = Options {
        listen,
        edge_listen,
        data_dir,
    };
    let announce: Announce = Arc::new(|line| println!("  {line}"));
    let running = depot::demo::start(options, announce).await?;
    let demo = running.demo.clone();
    let station = &running.station;
    let data_dir = running.data_dir().display().to_string();
    let base = format!("http://{}", running.cloud_addr()?);
    let edge_base = format!("http://{}", running.edge_addr()?);
    println!("Depot demo is running.");
    println!("  cloud API    {base}/v1   (OpenAPI: {base}/v1/openapi.json)");
    println!(
        "  edge API     {edge_base}/v1   (what scanning stations talk to; status: {edge_base}/v1/edge/status)"
    );
    println!("  broker       {}", running.broker_url);
    println!("  data         {data_dir}");
    println!("  business id  {}", demo.business);
    println!(
        "  API key      {}   (works on the cloud and, once synced, on the edge)",
        demo.key
    );
    println!(
        "  webhooks     carrier \"own\" signs with {:?}",
        depot::demo::DEMO_WEBHOOK_SECRET
    );
    println!();
    println!("Packing station {STATION} at the edge, on simulated devices:");
    println!(
        "  scanner      {SCANNER} (serial, {}); scan a code with: printf '%s\\n' DEMO-001 > {}",
        station.scanner_port(),
        shown(station.trigger())
    );
    println!(
        "  scale        {SCALE} (MT-SICS, {}); the demo's operator puts each order's parcel on it",
        station.scale_port()
    );
    println!(
        "  printer      {PRINTER} (ZPL, tcp://{}); its labels land in {}/",
        station.printer_addr(),
        shown(station.labels())
    );
    println!(
        "  station      {edge_base}/v1/edge/stations (PUT …/{STATION}/task to pack an order; docs/devices.md shows how)"
    );
    println!();
    println!("Try:");
    for e in depot::demo::examples(demo.business) {
        println!("  {}", e.curl(&base, &demo.key));
    }
    println!();
    println!(
        "docs/tour.md walks a whole warehouse day (receive, wave, pick, pack, label, dispatch, track) from here,"
    );
    println!("and packs an order at {STATION} until its label arrives.");
    println!("Ctrl-C stops it; the data stays in {data_dir} for the next run.");
    println!();
    // One Ctrl-C stops everything.
    running.run(depot_cloud::shutdown_signal()).await
}
