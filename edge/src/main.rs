use anyhow::Context;
use clap::{Parser, Subcommand};
use depot_edge::settings::Settings;
use depot_edge::systemd::headline;
use depot_protocol::plural::counted;
use depot_wms::database::Recovery;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;

#[derive(Debug, Parser)]
#[command(
    name = "depot-edge",
    version,
    about = "Depot edge daemon: the warehouse API on the box, synced with the cloud"
)]
struct Cli {
    /// TOML settings file.
    #[arg(long, global = true, env = "DEPOT_CONFIG")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the API to the stations and sync with the cloud.
    Serve,
    /// Print the sync state from the database (works while the daemon runs).
    Status,
    /// Sync commands.
    Sync {
        /// Wait, with a progress bar, until the cloud has acknowledged every event.
        #[arg(long)]
        wait: bool,
        /// Give up after this many seconds (exit status 1).
        #[arg(long, default_value_t = 3600)]
        timeout: u64,
    },
    /// Copy the database to FILE; safe while the daemon runs.
    Backup {
        file: PathBuf,
        /// Pages copied per step; the daemon keeps writing between steps.
        #[arg(long, default_value_t = depot_edge::backup::PAGES_PER_STEP)]
        pages_per_step: u32,
    },
    /// Replace the database with a backup; the daemon must be stopped.
    Restore { file: PathBuf },
    /// Check that this build works on this machine (database, key hashing,
    /// GS1, ZPL) in a scratch directory; needs no settings.
    SelfTest,
    /// Check the configuration, data directory, database, devices, broker
    /// and clock; exit status 1 if any check fails.
    Doctor {
        /// The cloud's HTTP address, to compare clocks with.
        #[arg(long, env = "DEPOT_CLOUD_URL")]
        cloud: Option<String>,
    },
    /// About the settings themselves.
    #[command(subcommand)]
    Config(ConfigCmd),
}

#[derive(Debug, Subcommand)]
enum ConfigCmd {
    /// Print every setting with its default, environment variable and
    /// meaning (markdown; docs/edge-configuration.md); needs no settings.
    Reference,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if let Command::Doctor { cloud } = &cli.command {
        // Before the settings load: whether they do is the first check.
        if !depot_edge::doctor::run(cli.config.as_deref(), cloud.as_deref()).await {
            anyhow::bail!("some checks failed");
        }
        return Ok(());
    }
    if let Command::Config(ConfigCmd::Reference) = cli.command {
        let reference = depot_edge::settings::reference_markdown().map_err(anyhow::Error::msg)?;
        print!("{reference}");
        return Ok(());
    }
    if let Command::SelfTest = cli.command {
        for line in depot_edge::selftest::run().await? {
            println!("{line}");
        }
        return Ok(());
    }
    let settings = Settings::load(cli.config.as_deref()).context("loading settings")?;
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_new(&settings.log).unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match cli.command {
        Command::Serve => {
            // Held while serving: `restore` must not swap the database under us.
            let _lock = depot_edge::backup::DataDirLock::acquire(&settings.data_dir).context(
                "is another depot-edge serving from this data directory, or restoring into it?",
            )?;
            let wms = depot_edge::disk::open_to_serve(&settings)
                .with_context(|| format!("opening {}", settings.database().display()))?;
            let _reserve = depot_edge::disk::probe(&settings)
                .tend_reserve(depot_edge::disk::TEND_RESERVE_EVERY);
            let listener = TcpListener::bind(settings.listen)
                .await
                .with_context(|| format!("cannot listen on {}", settings.listen))?;
            // A daemon must not die because nobody reads its stdout.
            let _ = writeln!(
                std::io::stdout(),
                "depot-edge {} listening on http://{}",
                settings.edge_id,
                listener.local_addr()?
            );
            depot_wms::sd_notify::arm_test_hang(&wms);
            let notifier = depot_wms::sd_notify::Notifier::from_env();
            let served = depot_edge::Daemon::new(wms.clone(), settings)
                .notifier(notifier)
                .serve(listener, shutdown_signal())
                .await;
            wms.close_at_exit(depot_wms::CLOSE_AT_EXIT_WITHIN).await;
            served
        }
        Command::Status => {
            let s = snapshot(&settings)?;
            println!(
                "edge          {} (business {}, node {})",
                settings.edge_id, settings.business_id, settings.node
            );
            println!(
                "link          {}{}",
                match (s.connected, s.link_error.is_some()) {
                    (true, false) => "connected",
                    // Up to the broker, and yet nothing moves: the line
                    // below says why.
                    (true, true) => "connected, but not syncing",
                    (false, _) => "not connected",
                },
                s.connected_since
                    .map(|t| format!(" since {t}"))
                    .unwrap_or_default()
            );
            if let Some(why) = &s.link_error {
                println!("link error    {why}");
            }
            println!(
                "outbox        {} waiting (made {}, acknowledged {})",
                counted(s.depth, "event"),
                s.head,
                s.acked
            );
            if let Some(t) = s.oldest_unacked_at {
                println!("oldest        {t}");
            }
            println!(
                "last ack      {}",
                s.last_ack_at.unwrap_or_else(|| "never".into())
            );
            println!("cloud cursor  {}", s.cloud_cursor);
            if s.resets > 0 {
                println!(
                    "reloads       {} (the cloud's log from the start; last {})",
                    s.resets,
                    s.last_reset_at.unwrap_or_default()
                );
            }
            match s.recovery {
                Some(Recovery {
                    stalled: Some(why),
                    from,
                    ..
                }) => println!("recovery      stalled: {why} (its log is certain through {from})"),
                Some(r) => println!(
                    "recovery      taking this box's own events back from the cloud: its log is certain through {}, taken back through {}; nothing of its own goes up until done",
                    r.from, r.recovered
                ),
                None => {}
            }
            println!("conflicts     {}", s.conflicts);
            if let Some(line) = refused_line(&s.refused) {
                println!("refused       {line}");
            }
            match depot_edge::disk::probe(&settings).read(None) {
                Ok(storage) => println!("disk          {}", storage.summary()),
                Err(e) => println!(
                    "disk          cannot read {}: {e}",
                    settings.data_dir.display()
                ),
            }
            Ok(())
        }
        Command::Sync { wait, timeout } => {
            if !wait {
                anyhow::bail!("nothing to do: use `depot-edge sync --wait`");
            }
            wait_for_drain(&settings, Duration::from_secs(timeout)).await
        }
        Command::Backup {
            file,
            pages_per_step,
        } => {
            let report = depot_edge::backup::backup(&settings, &file, pages_per_step)?;
            println!("{report}");
            Ok(())
        }
        Command::Restore { file } => {
            println!("{}", depot_edge::backup::restore(&settings, &file)?);
            Ok(())
        }
        // Handled before the settings load.
        Command::Doctor { .. } | Command::SelfTest | Command::Config(_) => Ok(()),
    }
}

fn snapshot(settings: &Settings) -> anyhow::Result<depot_wms::sync::SyncSnapshot> {
    let path = settings.database();
    depot_wms::database::sync_snapshot(&path).with_context(|| format!("reading {}", path.display()))
}

/// Shows the backlog draining until the cloud has acknowledged everything.
async fn wait_for_drain(settings: &Settings, timeout: Duration) -> anyhow::Result<()> {
    let start = Instant::now();
    let first = snapshot(settings)?;
    let bar = indicatif::ProgressBar::new(first.depth.max(0) as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} {msg} [{bar:40}] {pos}/{len} events ({eta} left)",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    loop {
        let s = snapshot(settings)?;
        let total = (first.depth + (s.head - first.head)).max(0) as u64;
        bar.set_length(total);
        bar.set_position(total.saturating_sub(s.depth.max(0) as u64));
        bar.set_message(match (&s.recovery, s.connected, &s.link_error) {
            (Some(r), ..) => format!("taking own events back (through {})", r.recovered),
            (None, true, None) => "syncing".into(),
            (None, true, Some(why)) => format!("not syncing: {}", headline(why)),
            (None, false, Some(why)) => format!("waiting for the broker: {}", headline(why)),
            (None, false, None) => "waiting for the broker".into(),
        });
        // A log not known whole may lack events the cloud has, whatever the
        // outbox says.
        if s.depth == 0 && s.recovery.is_none() {
            bar.finish_with_message("in sync");
            return Ok(());
        }
        // Waiting would not end it: someone has to act.
        if let Some(why) = s.recovery.as_ref().and_then(|r| r.stalled.as_deref()) {
            bar.abandon_with_message("stalled");
            anyhow::bail!("{why}; {} waiting behind that", counted(s.depth, "event"));
        }
        if start.elapsed() > timeout {
            bar.abandon_with_message("timed out");
            let down = match (s.link_error, s.connected) {
                (Some(why), true) => format!("; {why}"),
                (Some(why), false) => format!("; the link to the broker is down: {why}"),
                (None, _) => String::new(),
            };
            if let Some(r) = s.recovery {
                anyhow::bail!(
                    "after {}s this box is still taking its own events back from the cloud (its log is certain through {}, taken back through {}); {} waiting behind that{down}",
                    timeout.as_secs(),
                    r.from,
                    r.recovered,
                    counted(s.depth, "event")
                );
            }
            anyhow::bail!(
                "{} still waiting for the cloud after {}s{down}",
                counted(s.depth, "event"),
                timeout.as_secs()
            );
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Resolves on Ctrl-C or SIGTERM, registered when called: the server is
/// polled only once the application is built, and a SIGTERM before that
/// would kill the edge without a clean stop.
fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    let term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    async move {
        let ctrl_c = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        let term = async move {
            match term {
                Some(mut s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            () = ctrl_c => {},
            () = term => {},
        }
    }
}

/// What sync refused, both ways, and the last refusal, for `status`: an
/// event that cannot be applied is refused and sync goes on past it, so
/// this line is where an operator sees that it happened, and why.
fn refused_line(r: &depot_wms::sync::SyncRefusals) -> Option<String> {
    let last = r.last.as_ref()?;
    let direction = match last.direction.as_deref() {
        Some("by_cloud") => "by the cloud",
        _ => "here",
    };
    Some(format!(
        "{} from the cloud refused here, {} of this box's refused by the cloud; last {direction} at {}: {} ({})",
        counted(r.from_cloud, "change"),
        counted(r.by_cloud, "event"),
        depot_protocol::format_ts(&last.at),
        last.kind,
        last.reason
    ))
}
