//! Extractors that answer bad input with the spec's error body: the key and
//! the tenant, JSON bodies, query strings and paths.

use super::error::ApiError;
use crate::Wms;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRef, FromRequest, FromRequestParts, Query, RawPathParams, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, FieldError};
use serde::de::DeserializeOwned;

pub const API_KEY_HEADER: &str = "x-api-key";

/// The caller, authenticated by `X-API-KEY`.
#[derive(Debug, Clone, Copy)]
pub struct Authed(pub Caller);

impl<S> FromRequestParts<S> for Authed
where
    S: Send + Sync,
    Wms: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        if let Some(caller) = parts.extensions.get::<Caller>() {
            return Ok(Self(*caller));
        }
        let key = parts
            .headers
            .get(API_KEY_HEADER)
            .ok_or_else(|| ApiError::unauthorized("missing X-API-KEY header"))?
            .to_str()
            .map_err(|_| ApiError::unauthorized("invalid API key"))?
            .trim();
        if key.is_empty() || key.len() > 256 {
            return Err(ApiError::unauthorized("invalid API key"));
        }
        let wms = Wms::from_ref(state);
        let caller = wms
            .authenticate(key)
            .await?
            .ok_or_else(|| ApiError::unauthorized("invalid API key"))?;
        parts.extensions.insert(caller);
        Ok(Self(caller))
    }
}

/// An authenticated caller acting on the `{business_id}` of the path, which
/// must be the key's own business: a key of another tenant gets 401 before
/// anything is read.
#[derive(Debug, Clone, Copy)]
pub struct Tenant(pub Caller);

impl Tenant {
    pub fn business_id(&self) -> BusinessId {
        self.0.business_id
    }
}

impl<S> FromRequestParts<S> for Tenant
where
    S: Send + Sync,
    Wms: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Authed(caller) = Authed::from_request_parts(parts, state).await?;
        let params = RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(|e| ApiError::bad_request(e.body_text()))?;
        let raw = params
            .iter()
            .find(|(name, _)| *name == "business_id")
            .map(|(_, v)| v.to_owned())
            .ok_or_else(|| ApiError::bad_request("business_id missing from path"))?;
        let business: i64 = raw
            .parse()
            .ok()
            .filter(|b| i32::try_from(*b).is_ok())
            .ok_or_else(|| {
                ApiError::bad_request(format!("business_id must be a 32-bit integer, got {raw:?}"))
            })?;
        if business != caller.business_id.0 {
            return Err(ApiError::unauthorized(
                "API key is not valid for this business",
            ));
        }
        Ok(Self(caller))
    }
}

/// A JSON body: 415 without a JSON content type, 413 over the body limit,
/// 400 for malformed JSON, 422 naming the field for a wrong type, a missing
/// field or an unknown enum value.
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let is_json = req
            .headers()
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|mime| {
                let mime = mime.trim().to_ascii_lowercase();
                mime == "application/json"
                    || (mime.starts_with("application/") && mime.ends_with("+json"))
            });
        if !is_json {
            return Err(ApiError::UnsupportedMediaType(
                "expected Content-Type: application/json".into(),
            ));
        }
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|e: BytesRejection| {
                if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::PayloadTooLarge {
                        limit: super::BODY_LIMIT,
                    }
                } else {
                    ApiError::bad_request(e.body_text())
                }
            })?;
        parse_json(&bytes).map(Self)
    }
}

/// Deserializes a JSON body, classifying failures as the extractor does.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        match inner.classify() {
            serde_json::error::Category::Data => {
                let message = strip_position(&inner.to_string());
                let name = field_name(&path, &message);
                ApiError::invalid(vec![FieldError::new(name, message)])
            }
            _ => ApiError::bad_request(format!("malformed JSON: {inner}")),
        }
    })?;
    de.end()
        .map_err(|e| ApiError::bad_request(format!("malformed JSON: {e}")))?;
    Ok(value)
}

/// serde's messages end with " at line L column C": useful for syntax
/// errors, noise for a field that is named anyway.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

/// The field a data error is about: the path, or for a missing field the
/// path plus the field serde names.
fn field_name(path: &str, message: &str) -> String {
    let missing = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next());
    match (path, missing) {
        (".", Some(field)) => field.to_owned(),
        (p, Some(field)) => format!("{p}.{field}"),
        (".", None) => "body".to_owned(),
        (p, None) => p.to_owned(),
    }
}

/// A query string; a value of the wrong type is a 400 naming it.
pub struct ApiQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiQuery<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(q)| Self(q))
            .map_err(|e| ApiError::bad_request(e.body_text()))
    }
}

/// Path parameters; an id that is not a number is a 400.
pub struct ApiPath<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiPath<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Send,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(p)| Self(p))
            .map_err(|e| ApiError::bad_request(e.body_text()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::response::IntoResponse;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Body {
        sku: String,
        qty: i64,
        inner: Option<Inner>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        n: u8,
    }

    fn status_and_field(bytes: &[u8]) -> (u16, Option<String>) {
        match parse_json::<Body>(bytes) {
            Ok(_) => (200, None),
            Err(e) => {
                let field = match &e {
                    ApiError::Wms(crate::WmsError::Invalid { errors, .. }) => {
                        errors.first().map(|e| e.name.clone())
                    }
                    _ => None,
                };
                (e.into_response().status().as_u16(), field)
            }
        }
    }

    #[test]
    fn classifies_body_errors() {
        assert_eq!(status_and_field(br#"{"sku":"a","qty":1}"#), (200, None));
        assert_eq!(status_and_field(br#"{"sku":"a","qty":1"#), (400, None));
        assert_eq!(status_and_field(br#"{"sku":"a","qty":1} x"#), (400, None));
        assert_eq!(status_and_field(b""), (400, None));
        assert_eq!(
            status_and_field(br#"{"sku":"a","qty":"1"}"#),
            (422, Some("qty".into()))
        );
        assert_eq!(status_and_field(br#"{"qty":1}"#), (422, Some("sku".into())));
        assert_eq!(
            status_and_field(br#"{"sku":"a","qty":1,"inner":{"n":300}}"#),
            (422, Some("inner.n".into()))
        );
        assert_eq!(
            status_and_field(br#"{"sku":"a","qty":1,"inner":{}}"#),
            (422, Some("inner.n".into()))
        );
        assert_eq!(status_and_field(br#""text""#), (422, Some("body".into())));
    }
}
