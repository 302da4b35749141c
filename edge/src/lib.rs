//! `depot-edge`: the warehouse API served from the box's own database, so
//! the floor keeps working without the internet, and the link that syncs
//! it with the cloud. `serve` runs both on a listener the caller binds;
//! `main.rs` only parses arguments.

pub mod backup;
pub mod caller;
pub mod devices;
pub mod disk;
pub mod doctor;
pub mod faults;
pub mod identity;
pub mod link;
pub mod metrics;
pub mod releases;
pub mod selftest;
pub mod settings;
pub mod station_page;
pub mod status;
pub mod systemd;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use depot_hardware::scanner::registry::{DeviceBus, HidapiBus};
use depot_wms::Wms;
use depot_wms::http::{self, BODY_LIMIT};
use devices::{Devices, routes};
use settings::Settings;
use std::future::Future;
use tokio::net::TcpListener;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Expired idempotency keys are deleted this long after start (start-up
/// has other work), then every hour.
const KEYS_PRUNED_FIRST: std::time::Duration = std::time::Duration::from_secs(60);
const KEYS_PRUNED_EVERY: std::time::Duration = std::time::Duration::from_secs(3600);

/// The HTTP application: the warehouse routes plus the edge's own, with no
/// devices running (`serve` starts them).
pub fn app(wms: Wms, settings: &Settings) -> Router {
    app_with_devices(wms, settings, Devices::default())
}

/// The HTTP application, serving the state of running devices.
pub fn app_with_devices(wms: Wms, settings: &Settings, devices: Devices) -> Router {
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
        .layer(http::trace::layer());
    metrics::mount(router, &wms, devices, probe)
}

/// Opens the edge's database as its node.
pub fn open(settings: &Settings) -> depot_wms::Result<Wms> {
    Wms::open_node(&settings.database(), &settings.origin(), settings.node)
}

/// Serves the API and runs the link until `shutdown` resolves.
pub async fn serve(
    listener: TcpListener,
    wms: Wms,
    settings: Settings,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    serve_with_faults(listener, wms, settings, faults::Faults::default(), shutdown).await
}

/// `serve`, with faults injected into the link (for tests).
pub async fn serve_with_faults(
    listener: TcpListener,
    wms: Wms,
    settings: Settings,
    faults: faults::Faults,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    serve_with(listener, wms, settings, faults, HidapiBus::new(), shutdown).await
}

/// `serve`, keeping systemd informed through `notifier` (see [`notify`]):
/// what `depot-edge serve` runs.
pub async fn serve_notifying(
    listener: TcpListener,
    wms: Wms,
    settings: Settings,
    notifier: depot_wms::sd_notify::Notifier,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    run(
        listener,
        wms,
        settings,
        faults::Faults::default(),
        HidapiBus::new(),
        notifier,
        shutdown,
    )
    .await
}

/// `serve`, with faults injected into the link and USB scanners found on
/// `bus` (a simulated one, for tests).
pub async fn serve_with<B: DeviceBus>(
    listener: TcpListener,
    wms: Wms,
    settings: Settings,
    faults: faults::Faults,
    bus: B,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let notifier = depot_wms::sd_notify::Notifier::disabled();
    run(listener, wms, settings, faults, bus, notifier, shutdown).await
}

async fn run<B: DeviceBus>(
    listener: TcpListener,
    wms: Wms,
    settings: Settings,
    faults: faults::Faults,
    bus: B,
    notifier: depot_wms::sd_notify::Notifier,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
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
        link::run_with_faults(link_wms, link_settings, faults, until).await
    });
    let informer = systemd::Informer::start(
        notifier.clone(),
        wms.clone(),
        devices.clone(),
        disk::probe(&settings),
        listener.local_addr().ok(),
    );
    let keys = tokio::spawn(depot_wms::idempotency::prune_every(
        wms.clone(),
        settings.idempotency.retention(),
        KEYS_PRUNED_FIRST,
        KEYS_PRUNED_EVERY,
    ));
    let router = app_with_devices(wms, &settings, devices);
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
