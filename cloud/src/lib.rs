//! `depot-cloud`: the `/v1` API on the warehouse engine. `run` serves it on
//! a listener the caller binds (tests bind `127.0.0.1:0`); `main.rs` only
//! parses arguments.

pub mod admin;
pub mod broker;
pub mod changelog;
pub mod html;
pub mod logging;
pub mod metrics;
pub mod oauth;
pub mod ratelimit;
pub mod settings;
pub mod sync;
pub mod systemd;
pub mod webhooks;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use depot_wms::Wms;
use depot_wms::http::{self, BODY_LIMIT};
use depot_wms::sd_notify::{self, Notifier};
use settings::Settings;
use std::future::Future;
use std::sync::Arc;
use tokio::net::TcpListener;

/// Expired idempotency keys are deleted this long after start (start-up
/// has other work), then every hour.
const KEYS_PRUNED_FIRST: std::time::Duration = std::time::Duration::from_secs(60);
const KEYS_PRUNED_EVERY: std::time::Duration = std::time::Duration::from_secs(3600);

/// The whole HTTP application: `/v1`, the release-notes API and its
/// authorization server (whose signing keys are loaded, or made, here).
pub async fn app(
    wms: Wms,
    settings: &Settings,
) -> anyhow::Result<(Router, Arc<ratelimit::Limiter>)> {
    app_waking(wms, settings, webhooks::Wake::default(), None).await
}

/// `app`, whose webhook routes wake the dispatcher through `wake`, and whose
/// metrics show the sync service's `link` to the broker where there is one.
async fn app_waking(
    wms: Wms,
    settings: &Settings,
    wake: webhooks::Wake,
    link: Option<sync::BrokerLink>,
) -> anyhow::Result<(Router, Arc<ratelimit::Limiter>)> {
    let oauth = oauth::OAuth::start(wms.clone(), settings.oauth_config()).await?;
    let (api, openapi) = http::routes()
        .merge(depot_office::http::routes())
        .merge(webhooks::routes())
        .split_for_parts();
    let documents = http::contract::Documents::new(openapi, true);
    let idempotency =
        http::idempotency::Idempotency::new(wms.clone(), settings.idempotency.retention_hours);
    wms.set_own_fleet(settings.own_fleet);
    let limiter = ratelimit::limiter(settings.rate_limit);
    let secrets = http::tracking::CarrierSecrets(Arc::new(settings.webhook_secrets()));
    let changelog = changelog::Changelog::new(wms.clone(), &settings.changelog);
    // A route layer, so that a method the path does not take is answered
    // 405 before any key is looked at or claimed.
    let idempotent = axum::middleware::from_fn_with_state(idempotency, http::idempotency::layer);
    let router = api
        .with_state(wms.clone())
        .route_layer(idempotent.clone())
        .merge(documents.routes("/v1"))
        .merge(
            changelog::public_routes(&changelog)
                .merge(
                    changelog::write_routes()
                        .route_layer(axum::middleware::from_fn_with_state(
                            oauth.clone(),
                            oauth::guard::require_releases_write,
                        ))
                        .route_layer(idempotent),
                )
                .with_state(changelog),
        )
        .merge(oauth::routes(oauth))
        .fallback(http::no_route)
        .method_not_allowed_fallback(http::wrong_method)
        .layer(axum::Extension(secrets))
        .layer(axum::Extension(webhooks::Context {
            wake,
            allow_private: settings.webhooks.allow_private_targets,
        }))
        .layer(axum::middleware::from_fn_with_state(
            limiter.clone(),
            ratelimit::limit,
        ))
        .layer(axum::middleware::from_fn_with_state(
            ratelimit::public_throttle(),
            ratelimit::limit_public,
        ))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(http::trace::layer());
    let router = metrics::mount(router, &wms, link, settings.storage());
    Ok((router, limiter))
}

/// Serves until `shutdown` resolves, then finishes the requests in flight.
pub async fn run(
    listener: TcpListener,
    wms: Wms,
    settings: &Settings,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    run_notifying(listener, wms, settings, &Notifier::disabled(), shutdown).await
}

/// `run`, keeping systemd informed through `notifier`: ready once the
/// application is built (migrations ran when `wms` was opened, the
/// listener is bound, the signing keys are loaded), the watchdog fed while
/// the writer and the runtime answer, stopping when `shutdown` resolves.
pub async fn run_notifying(
    listener: TcpListener,
    wms: Wms,
    settings: &Settings,
    notifier: &Notifier,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    run_linked(listener, wms, settings, notifier, None, shutdown).await
}

/// `run_notifying`, with the sync service's link to the broker on
/// `/metrics`.
async fn run_linked(
    listener: TcpListener,
    wms: Wms,
    settings: &Settings,
    notifier: &Notifier,
    link: Option<sync::BrokerLink>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let wake = webhooks::Wake::default();
    let (router, limiter) = app_waking(wms.clone(), settings, wake.clone(), link.clone()).await?;
    let pruner = tokio::spawn(ratelimit::prune(limiter));
    let dispatcher = webhooks::dispatch::Dispatcher::new(wms.clone(), &settings.webhooks, wake)?;
    let dispatcher = tokio::spawn(dispatcher.run());
    let retention = tokio::spawn(webhooks::retention::run(
        wms.clone(),
        settings.webhooks.keep_finished_days,
    ));
    let keys = tokio::spawn(depot_wms::idempotency::prune_every(
        wms.clone(),
        settings.idempotency.retention(),
        KEYS_PRUNED_FIRST,
        KEYS_PRUNED_EVERY,
    ));
    let watchdog = sd_notify::watchdog_from_env()
        .filter(|_| notifier.is_enabled())
        .map(|period| {
            tokio::spawn(sd_notify::feed_watchdog(
                notifier.clone(),
                wms.clone(),
                period,
            ))
        });
    let listen = listener.local_addr().ok();
    let status = systemd::status_line(listen, link.as_ref(), None, None);
    notifier.ready(status.clone());
    let informer = notifier.is_enabled().then(|| {
        tokio::spawn(systemd::keep_informed(
            notifier.clone(),
            wms,
            link,
            settings.storage(),
            listen,
            status,
        ))
    });
    let stopping = notifier.clone();
    let shutdown = async move {
        shutdown.await;
        stopping.stopping();
    };
    let served = http::server::serve(listener, router, settings.http, shutdown).await;
    pruner.abort();
    dispatcher.abort();
    retention.abort();
    keys.abort();
    for task in [watchdog, informer].into_iter().flatten() {
        task.abort();
    }
    Ok(served?)
}

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

/// Serves the API and syncs with the edges through `broker` until
/// `shutdown` resolves; then both stop.
pub async fn serve(
    listener: TcpListener,
    wms: Wms,
    settings: &Settings,
    broker: &Broker,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    serve_notifying(
        listener,
        wms,
        settings,
        broker,
        &Notifier::disabled(),
        shutdown,
    )
    .await
}

/// `serve`, keeping systemd informed through `notifier` (see
/// [`run_notifying`]): what `depot-cloud serve` runs.
pub async fn serve_notifying(
    listener: TcpListener,
    wms: Wms,
    settings: &Settings,
    broker: &Broker,
    notifier: &Notifier,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let client_id = format!("depot-cloud-{}", uuid::Uuid::now_v7().simple());
    let sync_stopped = async move {
        let mut stopped = stopped;
        let _ = stopped.wait_for(|s| *s).await;
    };
    let link = sync::BrokerLink::default();
    let options = sync::SyncOptions {
        share_group: settings.broker.share_group.clone(),
        tls: broker.tls.clone(),
        link: link.clone(),
        ..sync::SyncOptions::default()
    };
    options.check()?;
    let sync = tokio::spawn(sync::run_sync_with(
        wms.clone(),
        broker.url.clone(),
        client_id,
        options,
        sync_stopped,
    ));
    let served = run_linked(listener, wms, settings, notifier, Some(link), shutdown).await;
    let _ = stop.send(true);
    match sync.await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::error!(error = %e, "the sync service stopped"),
        Err(e) => tracing::error!(error = %e, "the sync task failed"),
    }
    served
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
