//! `depot-cloud`: the `/v1` API on the warehouse engine and the office, the
//! release-notes API and its OAuth server, and the sync service that serves
//! every edge. [`Daemon`] starts it all on a listener the caller binds
//! (tests bind `127.0.0.1:0`); `main.rs` only parses arguments.

pub mod admin;
pub mod broker;
pub mod changelog;
pub mod connectors;
mod daemon;
pub mod html;
pub mod logging;
pub mod metrics;
pub mod oauth;
pub mod ratelimit;
pub mod settings;
pub mod sync;
pub mod systemd;
pub mod webhooks;

pub use daemon::Daemon;

use settings::Settings;
use std::future::Future;

/// The broker the service syncs through: an external one from the settings,
/// or the embedded one, started here and kept running while this lives.
pub struct Broker {
    pub url: broker::MqttUrl,
    /// TLS to an external `mqtts://` broker (the files are read at start).
    pub tls: depot_mqtt::Tls,
    embedded: Option<broker::EmbeddedBroker>,
}

impl Broker {
    /// Connects to the configured broker, or starts the embedded one.
    pub async fn start(settings: &Settings) -> anyhow::Result<Self> {
        if let Some(url) = settings.broker.external()? {
            return Ok(Self {
                url,
                tls: settings.broker.tls()?,
                embedded: None,
            });
        }
        let listen = settings.broker.embedded_listen;
        let embedded = tokio::task::spawn_blocking(move || broker::EmbeddedBroker::start(listen))
            .await
            .map_err(|e| anyhow::anyhow!("starting the embedded broker: {e}"))??;
        tracing::info!(addr = %embedded.addr, "embedded MQTT broker started");
        Ok(Self {
            url: embedded.url(),
            tls: depot_mqtt::Tls::default(),
            embedded: Some(embedded),
        })
    }

    pub fn is_embedded(&self) -> bool {
        self.embedded.is_some()
    }
}

/// Resolves on Ctrl-C or SIGTERM.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    // Registered now, not when first polled: the server is polled only once
    // the application is built, and a SIGTERM before that (a supervisor
    // stopping a daemon that just said where it listens) would kill it
    // without a clean stop.
    #[cfg(unix)]
    let term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    async move {
        let ctrl_c = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        #[cfg(unix)]
        let term = async move {
            match term {
                Some(mut s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        #[cfg(not(unix))]
        let term = std::future::pending::<()>();
        tokio::select! {
            () = ctrl_c => {},
            () = term => {},
        }
    }
}
