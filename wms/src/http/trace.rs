//! The log line of every answer, at a level that says whose move it is:
//! ERROR only for the server's own faults, so that an ERROR always means
//! someone must look. tower-http's default logs every 5xx at ERROR,
//! including the outcomes the API documents for a caller or the floor to
//! act on: a 504 the caller asked for with a short `timeout_ms`, a 503
//! while a device is unreachable or every connection is busy.
//!
//! | answer | level |
//! |---|---|
//! | 1xx to 3xx | DEBUG |
//! | 4xx: the caller's request (bad input, no key, too many) | INFO |
//! | 503, 504: not now (not ready, a device away, a deadline the caller set) | WARN |
//! | any other 5xx: the server failed (500, 507 disk full) | ERROR |
//!
//! Each line is in a span with the method and the path (never the query,
//! which may carry search terms about people).

use axum::http::{Request, Response, StatusCode};
use std::time::Duration;
use tower_http::classify::{ServerErrorsAsFailures, SharedClassifier};
use tower_http::trace::{
    DefaultOnBodyChunk, DefaultOnEos, DefaultOnRequest, MakeSpan, OnResponse, TraceLayer,
};
use tracing::{Level, Span};

/// The layer both daemons log their answers with.
pub type Trace = TraceLayer<
    SharedClassifier<ServerErrorsAsFailures>,
    RequestSpan,
    DefaultOnRequest,
    Outcome,
    DefaultOnBodyChunk,
    DefaultOnEos,
    (),
>;

pub fn layer() -> Trace {
    TraceLayer::new_for_http()
        .make_span_with(RequestSpan)
        .on_response(Outcome)
        // The status is logged once, by `Outcome`, at its level.
        .on_failure(())
}

/// The level an answer with `status` is logged at.
pub fn level(status: StatusCode) -> Level {
    match status {
        StatusCode::SERVICE_UNAVAILABLE | StatusCode::GATEWAY_TIMEOUT => Level::WARN,
        s if s.is_server_error() => Level::ERROR,
        s if s.is_client_error() => Level::INFO,
        _ => Level::DEBUG,
    }
}

#[derive(Debug, Clone, Copy)]
pub struct RequestSpan;

impl<B> MakeSpan<B> for RequestSpan {
    fn make_span(&mut self, req: &Request<B>) -> Span {
        tracing::info_span!("request", method = %req.method(), path = %req.uri().path())
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Outcome;

impl<B> OnResponse<B> for Outcome {
    fn on_response(self, response: &Response<B>, latency: Duration, _: &Span) {
        let status = response.status().as_u16();
        let ms = latency.as_millis();
        match level(response.status()) {
            Level::ERROR => tracing::error!(status, ms, "answered: the server failed"),
            Level::WARN => tracing::warn!(status, ms, "answered: not now"),
            Level::INFO => tracing::info!(status, ms, "answered: refused the request"),
            _ => tracing::debug!(status, ms, "answered"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::body::Body;
    use axum::routing::get;
    use std::sync::{Arc, Mutex};
    use tower::ServiceExt;
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;

    #[test]
    fn only_server_faults_are_errors() {
        for (status, want) in [
            (200, Level::DEBUG),
            (304, Level::DEBUG),
            (400, Level::INFO),
            (401, Level::INFO),
            (404, Level::INFO),
            (408, Level::INFO),
            (422, Level::INFO),
            (429, Level::INFO),
            (503, Level::WARN),
            (504, Level::WARN),
            (500, Level::ERROR),
            (502, Level::ERROR),
            (507, Level::ERROR),
        ] {
            let status = StatusCode::from_u16(status).expect("status");
            assert_eq!(level(status), want, "{status}");
        }
    }

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| std::io::Error::other("poisoned"))?
                .extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_timeout_the_caller_asked_for_is_a_warning_not_an_error() {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::registry().with(
            tracing_subscriber::fmt::layer()
                .with_writer(move || writer.clone())
                .with_ansi(false)
                .with_filter(tracing_subscriber::filter::LevelFilter::INFO),
        );
        let _guard = tracing::subscriber::set_default(subscriber);
        let app = Router::new()
            .route("/ok", get(|| async { StatusCode::OK }))
            .route("/weight", get(|| async { StatusCode::GATEWAY_TIMEOUT }))
            .route("/missing", get(|| async { StatusCode::NOT_FOUND }))
            .route(
                "/broken",
                get(|| async { StatusCode::INTERNAL_SERVER_ERROR }),
            )
            .layer(layer());
        for path in ["/ok", "/weight?timeout_ms=50", "/missing", "/broken"] {
            let req = Request::get(path).body(Body::empty()).expect("request");
            app.clone().oneshot(req).await.expect("answer");
        }
        let text = String::from_utf8(captured.0.lock().expect("lock").clone()).expect("utf-8");
        let line = |path: &str| {
            text.lines()
                .find(|l| l.contains(&format!("path={path}")))
                .unwrap_or_else(|| panic!("no line for {path}:\n{text}"))
                .to_owned()
        };
        assert!(line("/weight").contains(" WARN "), "{text}");
        assert!(line("/missing").contains(" INFO "), "{text}");
        assert!(line("/broken").contains("ERROR"), "{text}");
        assert!(!text.contains("path=/ok"), "a success is DEBUG: {text}");
        assert!(!text.contains("timeout_ms"), "no query in the log: {text}");
        assert_eq!(text.matches("ERROR").count(), 1, "{text}");
    }
}
