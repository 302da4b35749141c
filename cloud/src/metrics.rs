//! `GET /metrics` on the cloud: the request and writer metrics every
//! application has (`depot_wms::metrics`), the disk under its database, its
//! edges taken together, and, where it syncs, whether its connection to the
//! broker is up and its subscriptions granted.

use crate::sync::BrokerLink;
use axum::Router;
use depot_wms::Wms;
use depot_wms::disk::Probe;
use depot_wms::metrics::{Metrics, Scrape, sync};

/// Serves the metrics on `router` and counts the requests it answers;
/// `link` is the sync service's connection, where this process runs one.
pub fn mount(router: Router, wms: &Wms, link: Option<BrokerLink>, probe: Probe) -> Router {
    let metrics = Metrics::new(wms);
    let wms = wms.clone();
    metrics.mount(router, move || {
        let wms = wms.clone();
        let link = link.clone();
        let probe = probe.clone();
        async move {
            let mut scrape = Scrape::default();
            if let Some(storage) = probe.read_serving(&wms).await {
                depot_wms::disk::gauges(&mut scrape, &storage);
            }
            if let Some(link) = &link {
                scrape.gauge(
                    "depot_sync_broker_connected",
                    "1 while this instance's sync connection to the MQTT broker is up, else 0",
                    i64::from(link.is_up()),
                );
                scrape.gauge(
                    "depot_sync_broker_subscriptions_refused",
                    "1 while the broker refuses a sync subscription of this instance's connection (its access rules: nothing from the edges arrives), else 0",
                    i64::from(link.is_refused()),
                );
            }
            // What cannot be read is left out of this answer, not the rest.
            match wms.fleet().await {
                Ok(fleet) => sync::cloud(&mut scrape, &fleet, depot_protocol::now()),
                Err(error) => tracing::warn!(%error, "metrics: cannot read the edges"),
            }
            scrape
        }
    })
}
