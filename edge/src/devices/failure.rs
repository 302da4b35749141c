//! What a device or a station refused, in one shape for both places it is
//! shown: the HTTP answer (the spec's error body, with its status) and the
//! `station.scanned` event a station screen reads. Engine errors keep the
//! status the warehouse routes give them, so a scan refused at a station
//! reads exactly as the same scan refused over HTTP.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use depot_hardware::scale::ScaleError;
use depot_protocol::{ErrorBody, FieldError};
use depot_wms::WmsError;
use depot_wms::http::error::ApiError;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    pub status: u16,
    pub message: String,
    pub errors: Vec<FieldError>,
}

impl Failure {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status: status.as_u16(),
            message: message.into(),
            errors: Vec::new(),
        }
    }

    pub fn with_errors(mut self, errors: Vec<FieldError>) -> Self {
        self.errors = errors;
        self
    }

    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, message)
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }
}

impl From<ApiError> for Failure {
    fn from(e: ApiError) -> Self {
        let errors = match &e {
            ApiError::Wms(
                WmsError::Conflict { errors, .. }
                | WmsError::Mismatch { errors, .. }
                | WmsError::Invalid { errors, .. },
            ) => errors.clone(),
            _ => Vec::new(),
        };
        let message = e.to_string();
        // The warehouse routes' mapping decides the status (and logs what
        // must not be shown).
        let status = e.into_response().status();
        let message = if status.is_server_error() {
            "internal error: see the edge's log".to_owned()
        } else {
            message
        };
        Self {
            status: status.as_u16(),
            message,
            errors,
        }
    }
}

impl From<WmsError> for Failure {
    fn from(e: WmsError) -> Self {
        ApiError::from(e).into()
    }
}

impl From<ScaleError> for Failure {
    fn from(e: ScaleError) -> Self {
        let status = match &e {
            // The scale behind the edge did not answer in time.
            ScaleError::Timeout { .. } | ScaleError::Silent(_) | ScaleError::NotStable(_) => {
                StatusCode::GATEWAY_TIMEOUT
            }
            // The scale works but will not do it now, or at all.
            ScaleError::Unsupported { .. }
            | ScaleError::Busy
            | ScaleError::Overload
            | ScaleError::Underload
            | ScaleError::OutsideZeroRange
            | ScaleError::NotExecutable { .. }
            | ScaleError::OutOfRange { .. } => StatusCode::CONFLICT,
            // Unreachable, or talking nonsense: nothing the caller can fix.
            _ => StatusCode::SERVICE_UNAVAILABLE,
        };
        Self::new(status, e.to_string())
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = ErrorBody::new(status.as_u16(), self.message).with_errors(self.errors);
        (status, axum::Json(body)).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn engine_errors_keep_the_routes_statuses() {
        let f = Failure::from(WmsError::NotFound("no item answers to \"X\"".into()));
        assert_eq!(
            (f.status, f.message.as_str()),
            (404, "no item answers to \"X\"")
        );
        let f = Failure::from(WmsError::invalid(vec![FieldError::new("code", "bad")]));
        assert_eq!(f.status, 422);
        assert_eq!(f.errors, [FieldError::new("code", "bad")]);
        let f = Failure::from(WmsError::Mismatch {
            message: "wrong lot".into(),
            errors: vec![],
        });
        assert_eq!(f.status, 412);
        let f = Failure::from(WmsError::Internal("disk on fire at /var/x".into()));
        assert_eq!(f.status, 500);
        assert!(!f.message.contains("/var/x"), "{}", f.message);
    }

    #[test]
    fn scale_errors_say_whose_fault_it_is() {
        let status = |e: ScaleError| Failure::from(e).status;
        assert_eq!(status(ScaleError::NotStable(Duration::from_secs(1))), 504);
        assert_eq!(status(ScaleError::Timeout { command: "SI" }), 504);
        let unsupported = ScaleError::Unsupported {
            operation: "tare",
            protocol: "CAS continuous",
        };
        assert_eq!(status(unsupported), 409);
        assert_eq!(status(ScaleError::Overload), 409);
        assert_eq!(status(ScaleError::Disconnected("gone".into())), 503);
    }
}
