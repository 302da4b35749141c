use clap::Parser;
use depot_cloud::admin::{self, Cli, Command, ConfigCmd};
use std::io::Write;
use tokio::net::TcpListener;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if let Command::Config(ConfigCmd::Reference) = cli.command {
        // Before the settings load: it describes them, it needs none.
        print!(
            "{}",
            depot_cloud::settings::reference_markdown().map_err(anyhow::Error::msg)?
        );
        return Ok(());
    }
    // A test hook, read here only: exit right after the n-th write that
    // recorded an Idempotency-Key commits, as a process killed then would
    // (docs/idempotency.md).
    if let Ok(n) = std::env::var("DEPOT_FAULT_EXIT_AFTER_COMMIT") {
        let n = n
            .trim()
            .parse()
            .map_err(|e| anyhow::anyhow!("DEPOT_FAULT_EXIT_AFTER_COMMIT={n:?}: {e}"))?;
        depot_wms::idempotency::exit_after_commit(n);
    }
    let settings = cli.settings()?;
    depot_cloud::logging::init(
        tracing_subscriber::EnvFilter::try_new(&settings.log).unwrap_or_else(|_| "info".into()),
    );
    if let Command::MigrateToPostgres { from, to } = &cli.command {
        // Works on the two databases it names, not on the settings' one.
        return admin::migrate_to_postgres(from, to).await;
    }
    let wms = match cli.command {
        Command::Serve { .. } => admin::open_to_serve(&settings)?,
        _ => admin::open(&settings)?,
    };
    match cli.command {
        Command::Serve { listen } => {
            let addr = listen.unwrap_or(settings.listen);
            let listener = TcpListener::bind(addr)
                .await
                .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
            let broker = depot_cloud::Broker::start(&settings).await?;
            let _reserve = settings
                .storage()
                .tend_reserve(depot_wms::disk::TEND_RESERVE_EVERY);
            // A daemon must not die because nobody reads its stdout.
            let mut out = std::io::stdout();
            let _ = writeln!(
                out,
                "depot-cloud listening on http://{}",
                listener.local_addr()?
            );
            let _ = writeln!(out, "depot-cloud syncing through {}", broker.url);
            depot_wms::sd_notify::arm_test_hang(&wms);
            let served = depot_cloud::Daemon::new(wms.clone(), settings)
                .sync_through(&broker)
                .notifier(depot_wms::sd_notify::Notifier::from_env())
                .serve(listener, depot_cloud::shutdown_signal())
                .await;
            wms.close_at_exit(depot_wms::CLOSE_AT_EXIT_WITHIN).await;
            served?;
        }
        command => {
            let done = admin::run_admin(&wms, command).await;
            wms.close_at_exit(depot_wms::CLOSE_AT_EXIT_WITHIN).await;
            done?;
        }
    }
    Ok(())
}
