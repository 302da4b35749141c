//! Request counts and latencies per route, by a middleware around every
//! route of an application (and its fallback).
//!
//! The route label is the template axum matched (`/v1/orders/{business_id}/
//! {order_id}`), never the path asked for, so no business id, order number
//! or SKU becomes a label and the number of series stays bounded by the
//! routes served; a request no route takes is counted as `unmatched`.
//! Methods outside the standard set are counted as `other`, for the same
//! reason.

use axum::extract::{MatchedPath, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::fmt::Write;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

/// The route label of a request no route matched.
pub const UNMATCHED: &str = "unmatched";

/// Upper bounds of the latency histogram, in seconds: a cached read takes
/// about a millisecond, a long poll up to 30 seconds.
const LATENCY_BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The template a request matched. Holds axum's own (reference-counted)
/// template, so labelling a request copies no string.
#[derive(Debug, Clone)]
pub struct Route(Option<MatchedPath>);

impl Route {
    pub fn as_str(&self) -> &str {
        self.0.as_ref().map_or(UNMATCHED, MatchedPath::as_str)
    }
}

impl PartialEq for Route {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Route {}

impl Hash for Route {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl EncodeLabelValue for Route {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        encoder.write_str(self.as_str())
    }
}

/// A method as a label: the standard ones by name, anything else `other`.
pub fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::CONNECT => "CONNECT",
        Method::TRACE => "TRACE",
        _ => "other",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RequestLabels {
    route: Route,
    method: &'static str,
    status: u16,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct LatencyLabels {
    route: Route,
    method: &'static str,
}

type Latencies = Family<LatencyLabels, Histogram, fn() -> Histogram>;

/// The request counters and latency histograms of one application.
#[derive(Debug, Clone)]
pub struct HttpMetrics {
    requests: Family<RequestLabels, Counter>,
    latency: Latencies,
}

impl Default for HttpMetrics {
    fn default() -> Self {
        Self {
            requests: Family::default(),
            latency: Family::new_with_constructor(|| Histogram::new(LATENCY_BUCKETS)),
        }
    }
}

impl HttpMetrics {
    pub(super) fn register(&self, registry: &mut Registry) {
        registry.register(
            "depot_http_requests",
            "HTTP requests answered, by route template, method and status",
            self.requests.clone(),
        );
        registry.register(
            "depot_http_request_duration_seconds",
            "Time from a request's arrival to its response's headers, by route template and method",
            self.latency.clone(),
        );
    }

    /// Counts one answered request; `method` as [`method_label`] gives it.
    pub fn observe(&self, route: Route, method: &'static str, status: u16, took: Duration) {
        self.latency
            .get_or_create(&LatencyLabels {
                route: route.clone(),
                method,
            })
            .observe(took.as_secs_f64());
        self.requests
            .get_or_create(&RequestLabels {
                route,
                method,
                status,
            })
            .inc();
    }
}

/// The middleware: times the request and counts its answer.
pub async fn track(State(metrics): State<HttpMetrics>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = Route(req.extensions().get::<MatchedPath>().cloned());
    let method = method_label(req.method());
    let response = next.run(req).await;
    metrics.observe(route, method, response.status().as_u16(), started.elapsed());
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::exposition;

    #[test]
    fn unknown_methods_share_one_label() {
        assert_eq!(method_label(&Method::GET), "GET");
        assert_eq!(method_label(&Method::DELETE), "DELETE");
        let odd = Method::from_bytes(b"PROPFIND").expect("method");
        assert_eq!(method_label(&odd), "other");
    }

    #[test]
    fn requests_are_counted_by_route_method_and_status() {
        let metrics = HttpMetrics::default();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        let none = Route(None);
        let ms = Duration::from_millis(3);
        metrics.observe(none.clone(), "GET", 404, ms);
        metrics.observe(none.clone(), "GET", 404, ms);
        metrics.observe(none, "other", 404, ms);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encode");
        let samples = exposition::parse(&text).expect("parse");
        let count = |method: &str| {
            exposition::value(
                &samples,
                "depot_http_requests_total",
                &[("route", UNMATCHED), ("method", method), ("status", "404")],
            )
        };
        assert_eq!((count("GET"), count("other")), (Some(2.0), Some(1.0)));
        let took = exposition::value(
            &samples,
            "depot_http_request_duration_seconds_count",
            &[("route", UNMATCHED), ("method", "GET")],
        );
        assert_eq!(took, Some(2.0));
        let under_5ms = exposition::value(
            &samples,
            "depot_http_request_duration_seconds_bucket",
            &[("route", UNMATCHED), ("method", "GET"), ("le", "0.005")],
        );
        assert_eq!(under_5ms, Some(2.0));
    }
}
