//! The one place where errors become HTTP answers: a status and the spec's
//! error body, always.

use crate::WmsError;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use depot_protocol::plural::counted;
use depot_protocol::{ErrorBody, FieldError};

/// Everything a request can fail with: the engine's errors plus those that
/// only exist at the HTTP edge.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error(transparent)]
    Wms(#[from] WmsError),
    #[error("request body is larger than {limit} bytes")]
    PayloadTooLarge { limit: usize },
    #[error("{0}")]
    UnsupportedMediaType(String),
    #[error("{0}")]
    MethodNotAllowed(String),
    #[error("no route for {0}")]
    NoRoute(String),
    #[error("rate limit exceeded: try again after {}", counted(*wait_secs, "second"))]
    RateLimited { wait_secs: u64 },
    #[error("{0}")]
    UpgradeRequired(String),
    /// The caller did not send its request in time (408).
    #[error("{0}")]
    RequestTimeout(String),
    /// The server cannot take the request now, and says when to come back
    /// (503, `Retry-After: 1`).
    #[error("{0}")]
    Busy(String),
}

impl ApiError {
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::Wms(WmsError::BadRequest(message.into()))
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::Wms(WmsError::Unauthorized(message.into()))
    }

    pub fn invalid(errors: Vec<FieldError>) -> Self {
        Self::Wms(WmsError::invalid(errors))
    }
}

fn body(status: StatusCode, message: String, errors: Vec<FieldError>) -> Response {
    let body = ErrorBody::new(status.as_u16(), message).with_errors(errors);
    (status, axum::Json(body)).into_response()
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let message = self.to_string();
        match self {
            ApiError::Wms(e) => match e {
                WmsError::BadRequest(_) => body(StatusCode::BAD_REQUEST, message, vec![]),
                WmsError::Unauthorized(_) => body(StatusCode::UNAUTHORIZED, message, vec![]),
                WmsError::NotFound(_) => body(StatusCode::NOT_FOUND, message, vec![]),
                WmsError::Conflict { errors, .. } => body(StatusCode::CONFLICT, message, errors),
                WmsError::Invalid { errors, .. } => {
                    body(StatusCode::UNPROCESSABLE_ENTITY, message, errors)
                }
                WmsError::Mismatch { errors, .. } => {
                    body(StatusCode::PRECONDITION_FAILED, message, errors)
                }
                // Told as it is: a full disk is the one failure of the
                // server a station or a client can act on (call someone,
                // send again later). Nothing of the request was kept.
                WmsError::Full => {
                    tracing::error!("request refused: the disk is full");
                    body(StatusCode::INSUFFICIENT_STORAGE, message, vec![])
                }
                WmsError::Storage(_) | WmsError::Internal(_) => {
                    tracing::error!(error = %e, "request failed");
                    body(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "internal server error".into(),
                        vec![],
                    )
                }
            },
            ApiError::PayloadTooLarge { .. } => {
                body(StatusCode::PAYLOAD_TOO_LARGE, message, vec![])
            }
            ApiError::UnsupportedMediaType(_) => {
                body(StatusCode::UNSUPPORTED_MEDIA_TYPE, message, vec![])
            }
            ApiError::MethodNotAllowed(_) => body(StatusCode::METHOD_NOT_ALLOWED, message, vec![]),
            ApiError::NoRoute(_) => body(StatusCode::NOT_FOUND, message, vec![]),
            ApiError::UpgradeRequired(_) => {
                let mut r = body(StatusCode::UPGRADE_REQUIRED, message, vec![]);
                r.headers_mut()
                    .insert(header::UPGRADE, HeaderValue::from_static("websocket"));
                r
            }
            ApiError::RequestTimeout(_) => body(StatusCode::REQUEST_TIMEOUT, message, vec![]),
            ApiError::Busy(_) => {
                let mut r = body(StatusCode::SERVICE_UNAVAILABLE, message, vec![]);
                r.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                r
            }
            ApiError::RateLimited { wait_secs } => {
                let mut r = body(StatusCode::TOO_MANY_REQUESTS, message, vec![]);
                if let Ok(v) = HeaderValue::from_str(&wait_secs.to_string()) {
                    r.headers_mut().insert(header::RETRY_AFTER, v);
                }
                r
            }
        }
    }
}

impl IntoResponse for WmsError {
    fn into_response(self) -> Response {
        ApiError::from(self).into_response()
    }
}
