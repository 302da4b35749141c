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
            match wms.all_connectors().await {
                Ok(all) => connector_metrics(&mut scrape, &all),
                Err(error) => tracing::warn!(%error, "metrics: cannot read the connectors"),
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

#[derive(Debug, Clone, Hash, PartialEq, Eq, prometheus_client::encoding::EncodeLabelSet)]
struct ConnectorLabels {
    business: i64,
    channel: String,
    kind: String,
}

/// Each connector: whether it is up, its failures in a row, and what it
/// moved.
fn connector_metrics(
    scrape: &mut Scrape,
    all: &[(
        depot_protocol::BusinessId,
        depot_protocol::connector::Connector,
    )],
) {
    use depot_protocol::connector::ConnectorState;
    let labels = |c: &depot_protocol::connector::Connector, business: i64| ConnectorLabels {
        business,
        channel: c.channel.clone(),
        kind: c.kind.as_str().to_owned(),
    };
    let rows: Vec<(ConnectorLabels, &depot_protocol::connector::Connector)> =
        all.iter().map(|(b, c)| (labels(c, b.0), c)).collect();
    scrape.gauges(
        "depot_connector_up",
        "1 while a channel's connector's last run went through (or it has not run yet), 0 while it fails or is off",
        rows.iter().map(|(l, c)| {
            (
                l.clone(),
                i64::from(matches!(c.state, ConnectorState::Ok | ConnectorState::Starting)),
            )
        }),
    );
    scrape.gauges(
        "depot_connector_failures",
        "A connector's failed runs in a row",
        rows.iter().map(|(l, c)| (l.clone(), c.failures)),
    );
    let count = |v: i64| u64::try_from(v).unwrap_or(0);
    scrape.counters(
        "depot_connector_orders_in",
        "Orders a connector brought in from its platform",
        rows.iter().map(|(l, c)| (l.clone(), count(c.orders_in))),
    );
    scrape.counters(
        "depot_connector_orders_refused",
        "Orders of a connector's platform Depot refused (passed over)",
        rows.iter()
            .map(|(l, c)| (l.clone(), count(c.orders_refused))),
    );
    scrape.counters(
        "depot_connector_figures_out",
        "Figures a connector pushed to its platform",
        rows.iter().map(|(l, c)| (l.clone(), count(c.figures_out))),
    );
    scrape.counters(
        "depot_connector_fulfilments_out",
        "Dispatches a connector told its platform",
        rows.iter()
            .map(|(l, c)| (l.clone(), count(c.fulfilments_out))),
    );
}
