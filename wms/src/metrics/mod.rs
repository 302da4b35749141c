//! Prometheus metrics at `GET /metrics`, on the edge and the cloud alike.
//!
//! Each application has its own registry (no process-global recorder), so
//! the many servers a test process runs count only their own requests.
//! What is counted as it happens (requests, the writer's commits) lives in
//! that registry; what is a state (the writer's queue, the outbox, the
//! devices) is read when Prometheus scrapes, into a [`Scrape`] made for
//! that one answer. Like `/healthz`, the endpoint takes no key: nothing in
//! it names a business, an order or a SKU (see `docs/metrics.md`).

pub mod exposition;
pub mod http;
pub mod sync;

use crate::Wms;
use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::{encode_eof, encode_registry};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::registry::Registry;
use std::fmt::Debug;
use std::future::Future;
use std::hash::Hash;
use std::sync::Arc;

/// Where the metrics are served.
pub const PATH: &str = "/metrics";

/// OpenMetrics text, which Prometheus asks for first (and has read since
/// 2.5); its samples are also valid in the older text format.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// One application's metrics; cheap to clone.
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

struct Inner {
    registry: Registry,
    http: http::HttpMetrics,
    wms: Wms,
}

impl Metrics {
    /// The request metrics and those of `wms`'s writer.
    pub fn new(wms: &Wms) -> Self {
        let mut registry = Registry::default();
        let http = http::HttpMetrics::default();
        http.register(&mut registry);
        let stats = wms.writer_stats();
        registry.register(
            "depot_writer_batch_size",
            "Jobs per group commit of the database's single writer",
            stats.batch_sizes.clone(),
        );
        registry.register(
            "depot_writer_commit_duration_seconds",
            "Time a group commit takes, from BEGIN to the end of COMMIT",
            stats.commit_seconds.clone(),
        );
        Self {
            inner: Arc::new(Inner {
                registry,
                http,
                wms: wms.clone(),
            }),
        }
    }

    /// The exposition: what was counted, the writer's queue as it is now,
    /// and what `scrape` read for this answer.
    pub fn render(&self, scrape: &Scrape) -> Result<String, std::fmt::Error> {
        let mut now = Scrape::default();
        now.gauge(
            "depot_writer_queue_depth",
            "Write jobs waiting for the database's single writer",
            i64::try_from(self.inner.wms.inner.writer.queue_depth()).unwrap_or(i64::MAX),
        );
        now.gauge(
            "depot_events_long_polls_waiting",
            "Calls to the event log (GET /v1/events/{business_id}/list with wait) waiting for an event",
            self.inner.wms.long_polls_waiting(),
        );
        let brief = self.inner.wms.brief_read_stats();
        now.counter(
            "depot_reads_brief",
            "Reads answered by the request's own task, not the read pool (a list's page): on SQLite within their time budget, on PostgreSQL over connections the requests share",
            brief.answered.load(std::sync::atomic::Ordering::Relaxed),
        );
        now.counter(
            "depot_reads_brief_overran",
            "Brief reads interrupted at their time budget and run again on the read pool",
            brief.overran.load(std::sync::atomic::Ordering::Relaxed),
        );
        let stats = self.inner.wms.writer_stats();
        now.counter(
            "depot_writer_refused_full",
            "Writes refused (answered 507) because the disk under the database was full",
            stats
                .refused_full
                .load(std::sync::atomic::Ordering::Relaxed),
        );
        now.gauge(
            "depot_writer_disk_full",
            "1 while writes are refused because the disk under the database is full, else 0",
            i64::from(stats.full_since().is_some()),
        );
        let mut text = String::with_capacity(16 * 1024);
        encode_registry(&mut text, &self.inner.registry)?;
        encode_registry(&mut text, &now.registry)?;
        encode_registry(&mut text, &scrape.registry)?;
        encode_eof(&mut text)?;
        Ok(text)
    }

    fn respond(&self, scrape: &Scrape) -> Response {
        match self.render(scrape) {
            Ok(text) => (
                [(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE))],
                text,
            )
                .into_response(),
            Err(error) => {
                crate::WmsError::Internal(format!("encoding the metrics: {error}")).into_response()
            }
        }
    }

    /// Serves [`PATH`] on `router` and counts every request its routes and
    /// fallback answer. Called once the routes and fallbacks are in place
    /// and the other layers are on, so that what they answer (a 429, a
    /// 413) is counted too. `scrape` reads what only this side knows, at
    /// each scrape.
    pub fn mount<F, Fut>(&self, router: Router, scrape: F) -> Router
    where
        F: Fn() -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Scrape> + Send + 'static,
    {
        let metrics = self.clone();
        let serve = move || {
            let metrics = metrics.clone();
            let scrape = scrape.clone();
            async move { metrics.respond(&scrape().await) }
        };
        router
            .route(PATH, get(serve))
            .layer(axum::middleware::from_fn_with_state(
                self.inner.http.clone(),
                http::track,
            ))
    }
}

impl Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

/// What one scrape read: states, as they are at that moment.
#[derive(Debug, Default)]
pub struct Scrape {
    registry: Registry,
}

impl Scrape {
    pub fn gauge(&mut self, name: &str, help: &str, value: i64) {
        self.registry.register(name, help, ConstGauge::new(value));
    }

    /// A total kept elsewhere (the database), exposed as a counter: `name`
    /// without its `_total`, which the encoding adds.
    pub fn counter(&mut self, name: &str, help: &str, value: u64) {
        self.registry.register(name, help, ConstCounter::new(value));
    }

    /// A gauge per label set.
    pub fn gauges<L>(&mut self, name: &str, help: &str, values: impl IntoIterator<Item = (L, i64)>)
    where
        L: EncodeLabelSet + Clone + Hash + Eq + Debug + Send + Sync + 'static,
    {
        let family = Family::<L, Gauge>::default();
        for (labels, value) in values {
            family.get_or_create(&labels).set(value);
        }
        self.registry.register(name, help, family);
    }

    /// Totals kept elsewhere, a counter per label set (see [`Self::counter`]).
    pub fn counters<L>(
        &mut self,
        name: &str,
        help: &str,
        values: impl IntoIterator<Item = (L, u64)>,
    ) where
        L: EncodeLabelSet + Clone + Hash + Eq + Debug + Send + Sync + 'static,
    {
        let family = Family::<L, Counter>::default();
        for (labels, value) in values {
            family.get_or_create(&labels).inc_by(value);
        }
        self.registry.register(name, help, family);
    }
}

/// The whole seconds from `at` (a stored timestamp) to `now`, never below
/// 0 (a clock stepped back); `None` without a readable `at`.
pub fn age_seconds(at: Option<&str>, now: depot_protocol::Timestamp) -> Option<i64> {
    let at = chrono::DateTime::parse_from_rfc3339(at?).ok()?;
    Some((now - at.with_timezone(&chrono::Utc)).num_seconds().max(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use exposition::value;

    #[tokio::test]
    async fn writer_commits_are_counted_and_its_queue_read_at_each_scrape() {
        let dir = tempfile::tempdir().expect("tempdir");
        let wms = Wms::open(&dir.path().join("m.db"), "test").expect("open");
        let metrics = Metrics::new(&wms);
        let read = |scrape: &Scrape| exposition::parse(&metrics.render(scrape).expect("render"));
        let before = read(&Scrape::default()).expect("parse");
        let commits = |s: &[exposition::Sample]| {
            value(s, "depot_writer_batch_size_count", &[]).expect("batch count")
        };
        for _ in 0..3 {
            wms.ping(std::time::Duration::from_secs(5))
                .await
                .expect("ping");
        }
        let mut scrape = Scrape::default();
        scrape.gauge("depot_test_gauge", "A gauge", -2);
        scrape.counter("depot_test", "A counter", 7);
        scrape.gauges(
            "depot_test_by_kind",
            "Gauges",
            [([("kind", "a")], 1), ([("kind", "b")], 0)],
        );
        let after = read(&scrape).expect("parse");
        assert_eq!(commits(&after) - commits(&before), 3.0);
        assert_eq!(value(&after, "depot_writer_queue_depth", &[]), Some(0.0));
        assert_eq!(value(&after, "depot_test_gauge", &[]), Some(-2.0));
        assert_eq!(value(&after, "depot_test_total", &[]), Some(7.0));
        assert_eq!(
            value(&after, "depot_test_by_kind", &[("kind", "b")]),
            Some(0.0)
        );
        let text = metrics.render(&Scrape::default()).expect("render");
        assert!(text.ends_with("# EOF\n"), "{text}");
    }

    #[tokio::test]
    async fn brief_reads_are_counted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let wms = Wms::open(&dir.path().join("m.db"), "test").expect("open");
        let metrics = Metrics::new(&wms);
        // The first opens the pool's connection, on the pool; the second
        // finds it idle and reads on this thread.
        for _ in 0..2 {
            wms.list_orders_json(
                depot_protocol::BusinessId(1),
                crate::orders::OrderFilter::default(),
                depot_protocol::Page::default(),
            )
            .await
            .expect("list");
        }
        let s =
            exposition::parse(&metrics.render(&Scrape::default()).expect("render")).expect("parse");
        assert_eq!(value(&s, "depot_reads_brief_total", &[]), Some(1.0));
        assert_eq!(value(&s, "depot_reads_brief_overran_total", &[]), Some(0.0));
    }

    #[test]
    fn ages_are_whole_seconds_and_never_negative() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:01:00Z")
            .expect("now")
            .with_timezone(&chrono::Utc);
        assert_eq!(age_seconds(Some("2026-01-01T00:00:00Z"), now), Some(60));
        assert_eq!(age_seconds(Some("2026-01-01T00:02:00Z"), now), Some(0));
        assert_eq!(age_seconds(Some("yesterday"), now), None);
        assert_eq!(age_seconds(None, now), None);
    }
}
