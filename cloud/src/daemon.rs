//! Starting the cloud: one builder, with the same verbs as the edge's
//! (`depot_edge::Daemon`): the database and settings, then what is optional
//! (a broker to sync the edges through, a systemd notifier), then `serve`
//! on a listener until shutdown, or `router` for the HTTP application
//! alone.

use crate::settings::Settings;
use crate::{Broker, changelog, connectors, metrics, oauth, ratelimit, sync, systemd, webhooks};
use axum::Router;
use axum::extract::DefaultBodyLimit;
use depot_wms::Wms;
use depot_wms::http::{self, BODY_LIMIT};
use depot_wms::sd_notify::{self, Notifier};
use std::future::Future;
use std::sync::Arc;
use tokio::net::TcpListener;

/// Expired idempotency keys are deleted, and the planner's statistics
/// refreshed, this long after start (start-up has other work), then every
/// hour.
const KEYS_PRUNED_FIRST: std::time::Duration = std::time::Duration::from_secs(60);
const KEYS_PRUNED_EVERY: std::time::Duration = std::time::Duration::from_secs(3600);
/// What a sales channel may sell is announced (`channel.availability_changed`)
/// at most this often per channel and item: a burst of movements is one
/// event, the last figure. The change feed has every change at once.
const AVAILABILITY_DEBOUNCE: std::time::Duration = std::time::Duration::from_secs(1);
/// How often backorders are tried against the stock that came meanwhile.
const BACKORDERS_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// The cloud, ready to start.
pub struct Daemon {
    wms: Wms,
    settings: Settings,
    notifier: Notifier,
    /// The broker the sync service serves the edges through; none, no sync
    /// service (the API alone, as some tests and benchmarks want it).
    broker: Option<(crate::broker::MqttUrl, depot_mqtt::Tls)>,
}

impl Daemon {
    pub fn new(wms: Wms, settings: Settings) -> Self {
        Self {
            wms,
            settings,
            notifier: Notifier::disabled(),
            broker: None,
        }
    }

    /// Keeps systemd informed through `notifier`: ready once the
    /// application is built (migrations ran when the database was opened,
    /// the listener is bound, the signing keys are loaded), the status
    /// line, the watchdog fed while the writer and the runtime answer,
    /// stopping when shutdown comes.
    pub fn notifier(mut self, notifier: Notifier) -> Self {
        self.notifier = notifier;
        self
    }

    /// Syncs with the edges through `broker` (which the caller keeps
    /// running: an embedded one stops when it is dropped).
    pub fn sync_through(mut self, broker: &Broker) -> Self {
        self.broker = Some((broker.url.clone(), broker.tls.clone()));
        self
    }

    /// The whole HTTP application: `/v1`, the release-notes API and its
    /// authorization server (whose signing keys are loaded, or made, here),
    /// with the rate limiter it shares with its pruner.
    pub async fn router(&self) -> anyhow::Result<(Router, Arc<ratelimit::Limiter>)> {
        router(
            self.wms.clone(),
            &self.settings,
            webhooks::Wake::default(),
            None,
        )
        .await
    }

    /// Serves until `shutdown` resolves, then finishes the requests in
    /// flight; the sync service, when there is one, stops with it.
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let Some((url, tls)) = self.broker.clone() else {
            return self.run(listener, None, shutdown).await;
        };
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let client_id = format!("depot-cloud-{}", uuid::Uuid::now_v7().simple());
        let sync_stopped = async move {
            let mut stopped = stopped;
            let _ = stopped.wait_for(|s| *s).await;
        };
        let link = sync::BrokerLink::default();
        let options = sync::SyncOptions {
            share_group: self.settings.broker.share_group.clone(),
            tls,
            link: link.clone(),
            ..sync::SyncOptions::default()
        };
        options.check()?;
        let sync = tokio::spawn(sync::run_sync_with(
            self.wms.clone(),
            url,
            client_id,
            options,
            sync_stopped,
        ));
        let served = self.run(listener, Some(link), shutdown).await;
        let _ = stop.send(true);
        match sync.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::error!(error = %e, "the sync service stopped"),
            Err(e) => tracing::error!(error = %e, "the sync task failed"),
        }
        served
    }

    /// The API and its housekeeping, with the sync service's `link` to the
    /// broker on `/metrics` and the status line where there is one.
    async fn run(
        self,
        listener: TcpListener,
        link: Option<sync::BrokerLink>,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let Self {
            wms,
            settings,
            notifier,
            ..
        } = self;
        let wake = webhooks::Wake::default();
        let (router, limiter) = router(wms.clone(), &settings, wake.clone(), link.clone()).await?;
        let pruner = tokio::spawn(ratelimit::prune(limiter));
        let dispatcher =
            webhooks::dispatch::Dispatcher::new(wms.clone(), &settings.webhooks, wake)?;
        let dispatcher = tokio::spawn(dispatcher.run());
        let retention = tokio::spawn(webhooks::retention::run(
            wms.clone(),
            settings.webhooks.keep_finished_days,
        ));
        let keys = tokio::spawn(depot_wms::housekeeping::every(
            wms.clone(),
            settings.idempotency.retention(),
            KEYS_PRUNED_FIRST,
            KEYS_PRUNED_EVERY,
        ));
        let connectors = match settings.connectors.run {
            true => Some(tokio::spawn(
                connectors::runner::Runner::new(wms.clone(), &settings.connectors)?.run(),
            )),
            false => None,
        };
        let backorders = tokio::spawn(depot_wms::backorders::fill_every(
            wms.clone(),
            BACKORDERS_EVERY,
        ));
        let announcer = tokio::spawn(depot_wms::channels::announce_every(
            wms.clone(),
            AVAILABILITY_DEBOUNCE,
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
        // Stopped, and waited for: a task stopped only at its next await
        // could still read once the caller has closed the database, and
        // log the closed pool as an error.
        let tasks = [
            Some(pruner),
            Some(dispatcher),
            Some(retention),
            Some(keys),
            Some(announcer),
            Some(backorders),
            watchdog,
            informer,
            connectors,
        ];
        for task in tasks.iter().flatten() {
            task.abort();
        }
        for task in tasks.into_iter().flatten() {
            let _ = task.await;
        }
        Ok(served?)
    }
}

/// The HTTP application, whose webhook routes wake the dispatcher through
/// `wake`, and whose metrics show the sync service's `link` to the broker
/// where there is one.
async fn router(
    wms: Wms,
    settings: &Settings,
    wake: webhooks::Wake,
    link: Option<sync::BrokerLink>,
) -> anyhow::Result<(Router, Arc<ratelimit::Limiter>)> {
    // Items' own bins were codes before locations were records: each gets
    // its record once, here, where records are numbered the same for every
    // box (see `depot_wms::locations`).
    let made = wms.record_item_locations().await?;
    if made > 0 {
        tracing::info!(
            locations = made,
            "made location records of the items' own bins"
        );
    }
    // Figures kept by rules older than this release are made again once:
    // only those that differ are written (and announced).
    wms.refresh_all_channels().await?;
    let oauth = oauth::OAuth::start(wms.clone(), settings.oauth_config()).await?;
    let (api, openapi) = http::routes()
        .merge(depot_office::http::routes())
        .merge(webhooks::routes())
        .merge(connectors::routes())
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
        .layer(axum::Extension(connectors::Context {
            allow_private: settings.connectors.allow_private_targets,
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
        .layer(http::panics::layer())
        .layer(http::trace::layer());
    let router = metrics::mount(router, &wms, link, settings.storage());
    Ok((router, limiter))
}
