//! A handler that panics (a bug) is answered 500 with the spec's error
//! body, as any other failure of the server is, instead of the connection
//! being dropped with no answer at all. The panic's text goes to the log,
//! never to the caller.
//!
//! What the request held is released as the panic unwinds (its
//! idempotency key's claim, its read connection); a write the panic came
//! from inside the writer is undone there and answered as failed
//! (`writer::group`).

use axum::body::Body;
use axum::http::{Response, StatusCode};
use axum::response::IntoResponse;
use depot_protocol::ErrorBody;
use std::any::Any;
use tower_http::catch_panic::CatchPanicLayer;

/// What turns a caught panic into an answer.
pub type Answer = fn(Box<dyn Any + Send + 'static>) -> Response<Body>;

/// The layer both daemons wrap their routes in, inside the trace layer
/// so that the 500 is logged as the server's fault.
pub fn layer() -> CatchPanicLayer<Answer> {
    CatchPanicLayer::custom(answer as Answer)
}

fn answer(panic: Box<dyn Any + Send + 'static>) -> Response<Body> {
    let what = crate::error::panic_text(panic.as_ref());
    tracing::error!(panic = what, "a request's handler panicked");
    let status = StatusCode::INTERNAL_SERVER_ERROR;
    let body = ErrorBody::new(status.as_u16(), "internal server error");
    (status, axum::Json(body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::http::Request;
    use axum::routing::get;
    use tower::ServiceExt;

    #[tokio::test]
    async fn a_panic_is_answered_500_with_the_error_body() {
        let app = Router::new()
            .route(
                "/broken",
                get(|| async {
                    let words: Vec<&str> = Vec::new();
                    // A bug of the kind that reaches production: an index
                    // past the end, on data nobody tried.
                    words[3].to_owned()
                }),
            )
            .route("/ok", get(|| async { "fine" }))
            .layer(layer());
        let req = Request::get("/broken")
            .body(Body::empty())
            .expect("request");
        let res = app.clone().oneshot(req).await.expect("answer");
        assert_eq!(res.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let bytes = axum::body::to_bytes(res.into_body(), 1 << 16)
            .await
            .expect("body");
        let body: serde_json::Value = serde_json::from_slice(&bytes).expect("json");
        assert_eq!(body["error"], 1);
        assert_eq!(body["code"], 500);
        assert_eq!(body["message"], "internal server error");
        // The panic's text is the log's, not the caller's.
        assert!(!String::from_utf8_lossy(&bytes).contains("index"), "{body}");
        let req = Request::get("/ok").body(Body::empty()).expect("request");
        let res = app.oneshot(req).await.expect("answer");
        assert_eq!(res.status(), StatusCode::OK);
    }
}
