use clap::{Parser, Subcommand};
use depot_cloud::settings::{CarrierSettings, Secret, Settings};
use depot_edge::settings::Settings as EdgeSettings;
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
    /// Run the cloud, its embedded broker and one edge on embedded defaults,
    /// with a seeded demo business.
    Demo {
        /// Where the cloud API listens; port 0 picks a free one.
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: SocketAddr,
        /// Where the edge's API (what stations talk to) listens.
        #[arg(long, default_value = "127.0.0.1:8081")]
        edge_listen: SocketAddr,
        /// Where the demo keeps its databases.
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
        Command::Demo {
            listen,
            edge_listen,
            data_dir,
        } => demo(listen, edge_listen, data_dir).await,
    }
}

async fn bind(addr: SocketAddr, flag: &str) -> anyhow::Result<TcpListener> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e} (try {flag} 127.0.0.1:0)"))
}

async fn demo(
    listen: SocketAddr,
    edge_listen: SocketAddr,
    data_dir: PathBuf,
) -> anyhow::Result<()> {
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
    // A free port: a broker the machine already runs on 1883 is left alone.
    settings.broker.embedded_listen = SocketAddr::from(([127, 0, 0, 1], 0));
    let listener = bind(listen, "--listen").await?;
    let edge_listener = bind(edge_listen, "--edge-listen").await?;
    let wms = depot_cloud::admin::open(&settings)?;
    eprintln!("preparing the demo in {} …", settings.data_dir.display());
    let demo = depot::demo::prepare(&wms).await?;
    let node = depot::demo::edge_node(&wms, demo.business).await?;
    let broker = depot_cloud::Broker::start(&settings).await?;
    let edge_settings = EdgeSettings {
        business_id: demo.business.0,
        edge_id: depot::demo::DEMO_EDGE.into(),
        node,
        listen: edge_listener.local_addr()?,
        data_dir: settings.data_dir.join("edge"),
        broker: depot_edge::settings::Broker {
            url: broker.url.to_string(),
            ..Default::default()
        },
        ..EdgeSettings::default()
    };
    let edge = depot_edge::open(&edge_settings)?;

    let base = format!("http://{}", listener.local_addr()?);
    let edge_base = format!("http://{}", edge_listener.local_addr()?);
    println!("Depot demo is running.");
    println!("  cloud API    {base}/v1   (OpenAPI: {base}/v1/openapi.json)");
    println!(
        "  edge API     {edge_base}/v1   (what scanning stations talk to; status: {edge_base}/v1/edge/status)"
    );
    println!("  broker       {}", broker.url);
    println!("  data         {}", settings.data_dir.display());
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
    println!("Try:");
    for e in depot::demo::examples(demo.business) {
        println!("  {}", e.curl(&base, &demo.key));
    }
    println!();
    println!(
        "The README walks a whole warehouse day (receive, wave, pick, pack, label, dispatch, track) from here."
    );
    println!(
        "Ctrl-C stops it; the data stays in {} for the next run.",
        settings.data_dir.display()
    );

    // One Ctrl-C stops both services.
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let until = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    let edge_task = tokio::spawn(depot_edge::serve(
        edge_listener,
        edge,
        edge_settings,
        until(stopped.clone()),
    ));
    let cloud = depot_cloud::serve(listener, wms, &settings, &broker, until(stopped));
    let signal = async move {
        depot_cloud::shutdown_signal().await;
        let _ = stop.send(true);
    };
    let (served, ()) = tokio::join!(cloud, signal);
    served?;
    edge_task.await??;
    Ok(())
}
