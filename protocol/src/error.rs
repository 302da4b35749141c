//! The spec's error bodies.

use serde::{Deserialize, Serialize};

/// One field violation: `name` is the field (a JSON path such as
/// `lines[2].quantity`), `status` says what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FieldError {
    pub name: String,
    pub status: String,
}

impl FieldError {
    pub fn new(name: impl Into<String>, status: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            status: status.into(),
        }
    }
}

/// `{error: 1, message, code?, errors?}`: every 4xx and 429 carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// Always 1.
    pub error: u8,
    pub message: String,
    /// Equals the HTTP status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
    /// Granular field violations, when the request had any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<FieldError>>,
}

impl ErrorBody {
    pub fn new(code: u16, message: impl Into<String>) -> Self {
        Self {
            error: 1,
            message: message.into(),
            code: Some(code),
            errors: None,
        }
    }

    pub fn with_errors(mut self, errors: Vec<FieldError>) -> Self {
        if !errors.is_empty() {
            self.errors = Some(errors);
        }
        self
    }
}

/// `{fieldErrors: [{name, status}]}`, the automation endpoints' answer when
/// fields are in error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FieldErrors {
    #[serde(rename = "fieldErrors")]
    pub field_errors: Vec<FieldError>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_body_has_the_spec_shape() {
        let body = ErrorBody::new(401, "missing X-API-KEY header");
        let json = serde_json::to_value(&body).unwrap_or_default();
        assert_eq!(
            json,
            serde_json::json!({"error": 1, "code": 401, "message": "missing X-API-KEY header"})
        );
    }

    #[test]
    fn field_errors_use_camel_case_key() {
        let body = FieldErrors {
            field_errors: vec![FieldError::new("status", "must be 0 or 1")],
        };
        let json = serde_json::to_value(&body).unwrap_or_default();
        assert_eq!(
            json,
            serde_json::json!({"fieldErrors": [{"name": "status", "status": "must be 0 or 1"}]})
        );
    }

    #[test]
    fn empty_errors_are_omitted() {
        let body = ErrorBody::new(422, "x").with_errors(vec![]);
        assert!(body.errors.is_none());
    }
}
