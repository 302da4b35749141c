//! Starting the edge: one builder, with the same verbs as the cloud's
//! (`depot_cloud::Daemon`): the database and settings, then what is
//! optional (the bus USB scanners are found on, a systemd notifier and,
//! built with the `faults` feature for tests, faults injected into the
//! link), then `serve` on a listener until shutdown, or `router` for the
//! HTTP application alone.

use crate::devices::{self, Devices, routes};
use crate::settings::Settings;
use crate::{disk, identity, link, metrics, releases, station_page, status, systemd};
use axum::Router;
use axum::extract::DefaultBodyLimit;
use depot_hardware::scanner::registry::{DeviceBus, HidapiBus};
use depot_wms::Wms;
use depot_wms::http::{self, BODY_LIMIT};
use depot_wms::sd_notify::Notifier;
use std::future::Future;
use tokio::net::TcpListener;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Expired idempotency keys are deleted, and the planner's statistics
/// refreshed, this long after start (start-up has other work), then every
/// hour.
const KEYS_PRUNED_FIRST: std::time::Duration = std::time::Duration::from_secs(60);
const KEYS_PRUNED_EVERY: std::time::Duration = std::time::Duration::from_secs(3600);

/// The edge, ready to start.
pub struct Daemon<B = HidapiBus> {
    wms: Wms,
    settings: Settings,
    bus: B,
    notifier: Notifier,
    #[cfg(feature = "faults")]
    faults: crate::faults::Faults,
}

impl Daemon {
    /// USB scanners are looked for on the machine's own bus (hidapi).
    pub fn new(wms: Wms, settings: Settings) -> Self {
        Self {
            wms,
            settings,
            bus: HidapiBus::new(),
            notifier: Notifier::disabled(),
            #[cfg(feature = "faults")]
            faults: crate::faults::Faults::default(),
        }
    }
}

impl<B: DeviceBus> Daemon<B> {
    /// Looks for USB scanners on `bus` instead (a simulated one, in tests).
    pub fn devices<C: DeviceBus>(self, bus: C) -> Daemon<C> {
        Daemon {
            wms: self.wms,
            settings: self.settings,
            bus,
            notifier: self.notifier,
            #[cfg(feature = "faults")]
            faults: self.faults,
        }
    }

    /// Keeps systemd informed through `notifier`: ready once the floor is
    /// served, the sync state as the status line, the watchdog fed while
    /// the writer and the runtime answer, stopping when shutdown comes.
    pub fn notifier(mut self, notifier: Notifier) -> Self {
        self.notifier = notifier;
        self
    }

    /// Injects `faults` into the link's sync topics: for tests only, and
    /// only in a build with the `faults` feature.
    #[cfg(feature = "faults")]
    pub fn faults(mut self, faults: crate::faults::Faults) -> Self {
        self.faults = faults;
        self
    }

    /// The HTTP application with no devices running (`serve` starts them).
    pub fn router(&self) -> Router {
        router(self.wms.clone(), &self.settings, Devices::default())
    }

    /// Serves the floor's API, runs the devices and the link to the cloud,
    /// until `shutdown` resolves; then all of them stop.
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let Self {
            wms,
            settings,
            bus,
            notifier,
            #[cfg(feature = "faults")]
            faults,
        } = self;
        // Before the API serves: a box that has never been online has no
        // other keys.
        let live = match settings.install_local_keys(&wms).await {
            Ok(live) => live,
            // The floor is served all the same, on the keys of the last start.
            Err(depot_wms::WmsError::Full) => {
                tracing::error!(
                    "the disk is full: the keys in the configuration are not installed until space is freed and the box restarts"
                );
                0
            }
            Err(e) => return Err(e.into()),
        };
        if !settings.local_keys.is_empty() {
            tracing::info!(live, "keys provisioned in the configuration installed");
        }
        let (devices, running) =
            devices::start(&wms, &settings, bus).map_err(|e| anyhow::anyhow!(e))?;
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let link_wms = wms.clone();
        let link_settings = settings.clone();
        let link = tokio::spawn(async move {
            let mut stopped = stopped;
            let until = async move {
                let _ = stopped.wait_for(|s| *s).await;
            };
            #[cfg(feature = "faults")]
            return link::run_with_faults(link_wms, link_settings, faults, until).await;
            #[cfg(not(feature = "faults"))]
            link::run(link_wms, link_settings, until).await
        });
        let informer = systemd::Informer::start(
            notifier.clone(),
            wms.clone(),
            devices.clone(),
            disk::probe(&settings),
            listener.local_addr().ok(),
        );
        let keys = tokio::spawn(depot_wms::housekeeping::every(
            wms.clone(),
            settings.idempotency.retention(),
            KEYS_PRUNED_FIRST,
            KEYS_PRUNED_EVERY,
        ));
        let router = router(wms, &settings, devices);
        let shutdown = async move {
            shutdown.await;
            notifier.stopping();
        };
        let served = http::server::serve(listener, router, settings.http, shutdown).await;
        keys.abort();
        informer.stop();
        running.stop().await;
        let _ = stop.send(true);
        match link.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::error!(error = %e, "the link stopped"),
            Err(e) => tracing::error!(error = %e, "the link task failed"),
        }
        Ok(served?)
    }
}

/// The HTTP application: the warehouse routes plus the edge's own, serving
/// the state of running `devices`.
fn router(wms: Wms, settings: &Settings, devices: Devices) -> Router {
    let identity = identity::Identity {
        business_id: settings.business_id,
        edge_id: settings.edge_id.clone(),
        node: settings.node,
        version: link::VERSION.into(),
    };
    let (api, openapi) = http::edge_routes()
        .merge(
            OpenApiRouter::new()
                .routes(routes!(status::status))
                .routes(routes!(releases::releases))
                .routes(routes!(routes::devices))
                .routes(routes!(routes::weight))
                .routes(routes!(routes::zero))
                .routes(routes!(routes::tare))
                .routes(routes!(routes::stations))
                .routes(routes!(routes::set_task))
                .routes(routes!(routes::scan))
                .routes(routes!(routes::pack))
                .routes(routes!(routes::release)),
        )
        .split_for_parts();
    let documents = http::contract::Documents::new(openapi, false);
    let idempotency =
        http::idempotency::Idempotency::new(wms.clone(), settings.idempotency.retention_hours);
    wms.set_own_fleet(settings.own_fleet);
    let probe = disk::probe(settings);
    // A route layer, so that a method the path does not take is answered
    // 405 before any key is looked at or claimed.
    let router = api
        .with_state(wms.clone())
        .route_layer(axum::middleware::from_fn_with_state(
            idempotency,
            http::idempotency::layer,
        ))
        .merge(documents.routes("/v1"))
        .merge(station_page::routes())
        .fallback(http::no_route)
        .method_not_allowed_fallback(http::wrong_method)
        .layer(axum::Extension(identity))
        .layer(axum::Extension(devices.clone()))
        .layer(axum::Extension(probe.clone()))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(http::panics::layer())
        .layer(http::trace::layer());
    metrics::mount(router, &wms, devices, probe)
}
