//! `GET /metrics` on the cloud: the request and writer metrics every
//! application has (`depot_wms::metrics`), and its edges taken together.

use axum::Router;
use depot_wms::Wms;
use depot_wms::metrics::{Metrics, Scrape, sync};

/// Serves the metrics on `router` and counts the requests it answers.
pub fn mount(router: Router, wms: &Wms) -> Router {
    let metrics = Metrics::new(wms);
    let wms = wms.clone();
    metrics.mount(router, move || {
        let wms = wms.clone();
        async move {
            let mut scrape = Scrape::default();
            // What cannot be read is left out of this answer, not the rest.
            match wms.fleet().await {
                Ok(fleet) => sync::cloud(&mut scrape, &fleet, depot_protocol::now()),
                Err(error) => tracing::warn!(%error, "metrics: cannot read the edges"),
            }
            scrape
        }
    })
}
