//! Starting the demo: the cloud on embedded defaults with its embedded
//! broker, one edge, and the packing station's simulated devices; then
//! serving until told to stop, and stopping them together.

use super::station::Station;
use super::{Announce, DEMO_EDGE, DEMO_WEBHOOK_SECRET, Demo, edge_node, prepare};
use anyhow::Context;
use depot_cloud::settings::{CarrierSettings, Secret, Settings};
use depot_edge::settings::Settings as EdgeSettings;
use depot_wms::Wms;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use tokio::net::TcpListener;

#[derive(Debug, Clone)]
pub struct Options {
    /// Where the cloud API listens; port 0 picks a free one.
    pub listen: SocketAddr,
    /// Where the edge's API listens.
    pub edge_listen: SocketAddr,
    /// Where the databases, the labels and the scanner's trigger are.
    pub data_dir: PathBuf,
}

/// The demo, started: listening, seeded and its devices up, not yet
/// serving ([`Running::run`] serves).
pub struct Running {
    pub demo: Demo,
    pub station: Station,
    /// The embedded broker's URL.
    pub broker_url: String,
    /// The edge's settings as a file, for `depot-edge --config … doctor`.
    edge_config: PathBuf,
    listener: TcpListener,
    edge_listener: TcpListener,
    wms: Wms,
    edge: Wms,
    settings: Settings,
    edge_settings: EdgeSettings,
    broker: depot_cloud::Broker,
}

async fn bind(addr: SocketAddr, flag: &str) -> anyhow::Result<TcpListener> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e} (try {flag} 127.0.0.1:0)"))
}

/// Binds, seeds (on first use), starts the broker and the station's
/// devices, and configures the edge with them.
pub async fn start(options: Options, announce: Announce) -> anyhow::Result<Running> {
    // Absolute: the edge's settings file names it, and is read by commands
    // run from anywhere.
    let data_dir = std::path::absolute(&options.data_dir)?;
    let mut settings = Settings {
        listen: options.listen,
        data_dir,
        ..Settings::default()
    };
    settings.carriers.insert(
        "own".into(),
        CarrierSettings {
            webhook_secret: Secret(DEMO_WEBHOOK_SECRET.into()),
        },
    );
    // The demo is one person's laptop: webhooks may go to a receiver on it.
    settings.webhooks.allow_private_targets = true;
    // A free port: a broker the machine already runs on 1883 is left alone.
    settings.broker.embedded_listen = SocketAddr::from(([127, 0, 0, 1], 0));
    let listener = bind(options.listen, "--listen").await?;
    let edge_listener = bind(options.edge_listen, "--edge-listen").await?;
    // The release-notes API names itself (OAuth issuer, feed links) by the
    // address it was actually given, which --listen may have left to chance.
    let public = format!("http://{}", listener.local_addr()?);
    settings.changelog.base_url.clone_from(&public);
    settings.changelog.login_url = public;
    settings.changelog.translations_dir = Some(super::translations(&settings.data_dir)?);
    let wms = depot_cloud::admin::open(&settings)?;
    let demo = prepare(&wms).await?;
    let node = edge_node(&wms, demo.business).await?;
    let broker = depot_cloud::Broker::start(&settings).await?;
    let mut edge_settings = EdgeSettings {
        business_id: demo.business.0,
        edge_id: DEMO_EDGE.into(),
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
    let station = Station::start(&settings.data_dir, edge.clone(), announce).await?;
    station.configure(&mut edge_settings);
    let edge_config = settings.data_dir.join(EDGE_CONFIG);
    write_edge_config(&edge_settings, &edge_config)?;
    Ok(Running {
        demo,
        station,
        broker_url: broker.url.to_string(),
        edge_config,
        listener,
        edge_listener,
        wms,
        edge,
        settings,
        edge_settings,
        broker,
    })
}

/// The edge's settings file, in the data directory.
const EDGE_CONFIG: &str = "edge.toml";

/// Writes the edge's settings as `edge.toml` would hold them: what differs
/// from the defaults (identity, address, broker, devices, station), so that
/// `depot-edge --config FILE doctor` checks the demo's own edge. Written at
/// every start: the ports and pseudo-terminals change from run to run.
fn write_edge_config(settings: &EdgeSettings, path: &Path) -> anyhow::Result<()> {
    let defaults = toml::Table::try_from(EdgeSettings::default())?;
    let mut table = toml::Table::try_from(settings)?;
    table.retain(|key, value| defaults.get(key) != Some(value));
    let text = format!(
        "# The demo's edge, as `depot demo` runs it: written at every start (its\n\
         # ports and devices change from run to run); the demo prints the\n\
         # command that runs `depot-edge doctor` on it.\n\n{}",
        toml::to_string(&table)?
    );
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

impl Running {
    pub fn cloud_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    pub fn edge_addr(&self) -> std::io::Result<SocketAddr> {
        self.edge_listener.local_addr()
    }

    pub fn data_dir(&self) -> &Path {
        &self.settings.data_dir
    }

    /// The cloud's engine: what `depot-cloud --data-dir …` admin commands
    /// act on.
    pub fn cloud(&self) -> &Wms {
        &self.wms
    }

    /// The edge's settings file (`edge.toml` in the data directory).
    pub fn edge_config(&self) -> &Path {
        &self.edge_config
    }

    /// Serves the cloud and the edge until `shutdown` resolves, then stops
    /// the edge before its devices.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let Running {
            station,
            listener,
            edge_listener,
            wms,
            edge,
            settings,
            edge_settings,
            broker,
            ..
        } = self;
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let until = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
            let _ = rx.wait_for(|s| *s).await;
        };
        let edge_task = tokio::spawn(
            depot_edge::Daemon::new(edge.clone(), edge_settings)
                .serve(edge_listener, until(stopped.clone())),
        );
        let cloud = depot_cloud::Daemon::new(wms.clone(), settings.clone())
            .sync_through(&broker)
            .serve(listener, until(stopped));
        let signal = async move {
            shutdown.await;
            let _ = stop.send(true);
        };
        let (served, ()) = tokio::join!(cloud, signal);
        let edge_served = edge_task.await;
        // Unplugged only now: the edge stopped driving them first.
        drop(station);
        // Whatever ended the demo, both databases are left whole.
        edge.close_at_exit(depot_wms::CLOSE_AT_EXIT_WITHIN).await;
        wms.close_at_exit(depot_wms::CLOSE_AT_EXIT_WITHIN).await;
        served?;
        edge_served??;
        Ok(())
    }
}
