use clap::{Parser, Subcommand};
use depot_cloud::settings::{CarrierSettings, Secret, Settings};
use std::net::SocketAddr;
use std::path::PathBuf;
use tokio::net::TcpListener;

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
    /// Run the cloud API on embedded defaults with a seeded demo business.
    Demo {
        /// Address to listen on; port 0 picks a free one.
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: SocketAddr,
        /// Where the demo keeps its database.
        #[arg(long, default_value = "depot-demo")]
        data_dir: PathBuf,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("DEPOT_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().command {
        Command::Demo { listen, data_dir } => demo(listen, data_dir).await,
    }
}

async fn demo(listen: SocketAddr, data_dir: PathBuf) -> anyhow::Result<()> {
    let mut settings = Settings {
        listen,
        data_dir,
        ..Settings::default()
    };
    settings.carriers.insert(
        "own".into(),
        CarrierSettings {
            webhook_secret: Secret(depot::demo::DEMO_WEBHOOK_SECRET.into()),
        },
    );
    let listener = TcpListener::bind(listen).await.map_err(|e| {
        anyhow::anyhow!("cannot listen on {listen}: {e} (try --listen 127.0.0.1:0)")
    })?;
    let wms = depot_cloud::admin::open(&settings)?;
    eprintln!("preparing the demo in {} …", settings.data_dir.display());
    let demo = depot::demo::prepare(&wms).await?;
    let base = format!("http://{}", listener.local_addr()?);
    println!("Depot demo is running.");
    println!("  API          {base}/v1");
    println!("  OpenAPI      {base}/v1/openapi.json");
    println!("  data         {}", settings.database().display());
    println!("  business id  {}", demo.business);
    println!("  API key      {}", demo.key);
    println!(
        "  webhooks     carrier \"own\" signs with {:?}",
        depot::demo::DEMO_WEBHOOK_SECRET
    );
    println!();
    println!("Try:");
    for e in depot::demo::examples(demo.business) {
        println!("  {}", e.curl(&base, &demo.key));
    }
    println!();
    println!(
        "Ctrl-C stops it; the data stays in {} for the next run.",
        settings.data_dir.display()
    );
    depot_cloud::run(listener, wms, &settings, depot_cloud::shutdown_signal()).await?;
    Ok(())
}
