//! `GET /healthz` and `GET /readyz`, for load balancers, container
//! orchestrators and monitoring: no API key, nothing about any business.

use crate::Wms;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use depot_protocol::ErrorBody;
use serde::Serialize;
use std::time::Duration;

/// How long `/readyz` waits for the writer: longer than a busy group commit
/// takes, shorter than a probe's usual timeout.
const READY_WITHIN: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Health {
    /// Always `ok`.
    pub status: &'static str,
}

/// The process is up and serving HTTP.
#[utoipa::path(get, path = "/healthz", tag = "health",
    responses((status = 200, body = Health)))]
pub async fn healthz() -> Json<Health> {
    Json(Health { status: "ok" })
}

/// Ready for traffic: the schema is up to date and the one writer answers
/// a round trip within 2 seconds; otherwise 503 with the error body.
#[utoipa::path(get, path = "/readyz", tag = "health",
    responses((status = 200, body = Health), (status = 503, body = ErrorBody)))]
pub async fn readyz(State(wms): State<Wms>) -> Response {
    match wms.readiness(READY_WITHIN).await {
        Ok(()) => Json(Health { status: "ok" }).into_response(),
        Err(error) => {
            // The cause may name files or SQL: logged, not answered.
            tracing::warn!(%error, "not ready");
            let code = StatusCode::SERVICE_UNAVAILABLE;
            let body = ErrorBody::new(
                code.as_u16(),
                "not ready: the database does not answer in time or its schema is not up to date",
            );
            (code, Json(body)).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn json(r: Response) -> (StatusCode, serde_json::Value) {
        let status = r.status();
        let bytes = axum::body::to_bytes(r.into_body(), 1 << 16)
            .await
            .expect("body");
        (status, serde_json::from_slice(&bytes).expect("json"))
    }

    #[tokio::test]
    async fn ready_until_the_writer_hangs_and_healthy_throughout() {
        let dir = tempfile::tempdir().expect("tempdir");
        let wms = Wms::open(&dir.path().join("h.db"), "test").expect("open");
        let ok = (StatusCode::OK, serde_json::json!({"status": "ok"}));
        assert_eq!(json(healthz().await.into_response()).await, ok);
        assert_eq!(json(readyz(State(wms.clone())).await).await, ok);
        wms.hang_writer_for_tests().await;
        let (status, body) = json(readyz(State(wms.clone())).await).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!((&body["error"], &body["code"]), (&1.into(), &503.into()));
        assert!(
            body["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("not ready")),
            "{body}"
        );
        assert_eq!(json(healthz().await.into_response()).await, ok);
    }
}
