use clap::{Parser, Subcommand};
use depot::demo::{Announce, Options};
use std::net::SocketAddr;
use std::path::PathBuf;
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
    for line in depot::demo::banner::banner(&running)? {
        println!("{line}");
    }
    // One Ctrl-C stops everything.
    running.run(depot_cloud::shutdown_signal()).await
}
