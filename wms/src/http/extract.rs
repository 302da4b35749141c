//! Extractors that answer bad input with the spec's error body: the key and
//! the tenant, JSON bodies, query strings and paths.

use super::error::ApiError;
use super::words;
use crate::Wms;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRef, FromRequest, FromRequestParts, RawPathParams, Request};
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
            .filter(|b| *b >= 1)
            .ok_or_else(|| ApiError::bad_request(words::not_an_id("business_id", &raw)))?;
        if business != caller.business_id.0 {
            return Err(ApiError::unauthorized(
                "API key is not valid for this business",
            ));
        }
        Ok(Self(caller))
    }
}

/// A JSON body: 415 unless it is `application/json` (UTF-8, the only
/// charset JSON has) and uncompressed, 413 over the body limit, 400 for
/// malformed JSON, 422 naming the field for a wrong type, a missing field,
/// an unknown enum value or a field the route does not take.
pub struct ApiJson<T>(pub T);

/// Why a request's headers say its body is not JSON we read, if they do.
fn not_json(headers: &axum::http::HeaderMap) -> Option<String> {
    use axum::http::header::{CONTENT_ENCODING, CONTENT_TYPE};
    if let Some(enc) = headers.get(CONTENT_ENCODING) {
        let enc = enc.to_str().unwrap_or("?").trim().to_ascii_lowercase();
        if enc != "identity" {
            return Some(format!(
                "Content-Encoding {enc} is not accepted: send the JSON body uncompressed"
            ));
        }
    }
    let Some(ct) = headers.get(CONTENT_TYPE) else {
        return Some("expected Content-Type: application/json".into());
    };
    let ct = ct.to_str().unwrap_or("").to_ascii_lowercase();
    let mut parts = ct.split(';').map(str::trim);
    let mime = parts.next().unwrap_or("");
    if mime != "application/json" {
        return Some(format!(
            "expected Content-Type: application/json, not {mime:?}"
        ));
    }
    for param in parts.filter(|p| !p.is_empty()) {
        let (name, value) = param.split_once('=').unwrap_or((param, ""));
        if name.trim() == "charset" && value.trim().trim_matches('"') != "utf-8" {
            return Some(format!(
                "JSON is UTF-8: charset {} is not accepted",
                value.trim()
            ));
        }
    }
    None
}

impl<S, T> FromRequest<S> for ApiJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if let Some(why) = not_json(req.headers()) {
            return Err(ApiError::UnsupportedMediaType(why));
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

/// A path as serde_ignored writes it (`lines.0.sku`), as errors name
/// fields (`lines[0].sku`).
fn field_path(ignored: &str) -> String {
    let mut out = String::new();
    for seg in ignored.split('.').filter(|s| !s.is_empty() && *s != "?") {
        if seg.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(seg);
        }
    }
    out
}

/// Deserializes a JSON body, classifying failures as the extractor does:
/// a field the type does not take is refused, named, like a wrong one.
///
/// JSON has one kind of number: `3.0` is the whole number 3 (JSON Schema's
/// `integer` says so too), so a body refused only for a whole number
/// written with a fraction is read again with those numbers as integers.
/// The common body is read once.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    match parse_exact(bytes) {
        Err(first) => {
            let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(bytes) else {
                return Err(first);
            };
            if !whole_numbers(&mut value) {
                return Err(first);
            }
            let again = serde_json::to_vec(&value).map_err(|_| first)?;
            parse_exact(&again)
        }
        ok => ok,
    }
}

/// Writes every whole number `value` holds with a fraction (`3.0`) as an
/// integer; whether it changed any.
fn whole_numbers(value: &mut serde_json::Value) -> bool {
    use serde_json::Value;
    match value {
        Value::Number(n) => match n.as_f64() {
            // Up to 2^53, every whole number is a double and a double is
            // read exactly from its digits: the integer is the one sent.
            // Past it, digits may have been rounded away, and an id must
            // not change on the way in: those stay refused.
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0 => {
                *n = serde_json::Number::from(f as i64);
                true
            }
            _ => false,
        },
        Value::Array(items) => items.iter_mut().fold(false, |c, v| whole_numbers(v) | c),
        Value::Object(map) => map.values_mut().fold(false, |c, v| whole_numbers(v) | c),
        _ => false,
    }
}

fn parse_exact<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let mut unknown = Vec::new();
    let mut note = |path: serde_ignored::Path<'_>| unknown.push(field_path(&path.to_string()));
    let value =
        serde_path_to_error::deserialize(serde_ignored::Deserializer::new(&mut de, &mut note))
            .map_err(|e| {
                let path = e.path().to_string();
                let inner = e.into_inner();
                match inner.classify() {
                    serde_json::error::Category::Data => {
                        let message = strip_position(&inner.to_string());
                        let name = field_name(&path, &message);
                        let said = words::data_error(&message);
                        // "sku is required" names the field already.
                        let said = said
                            .strip_prefix(&format!("{} ", name.rsplit('.').next().unwrap_or("")))
                            .map_or(said.clone(), str::to_owned);
                        ApiError::invalid(vec![FieldError::new(name, said)])
                    }
                    _ => ApiError::bad_request(format!("malformed JSON: {inner}")),
                }
            })?;
    de.end()
        .map_err(|e| ApiError::bad_request(format!("malformed JSON: {e}")))?;
    if !unknown.is_empty() {
        return Err(ApiError::invalid(
            unknown
                .into_iter()
                .map(|f| FieldError::new(f, "is not a field of this request: remove it"))
                .collect(),
        ));
    }
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

/// A query string; a value of the wrong type is a 400 naming it and the
/// rule it breaks.
pub struct ApiQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiQuery<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or("");
        parse_query(query).map(Self)
    }
}

/// Reads a query string into `T`, saying what is wrong in words. A value
/// of nothing but whitespace is read as empty: a text parameter takes it
/// as absent, a number refuses it, whatever the whitespace is.
pub fn parse_query<T: DeserializeOwned>(query: &str) -> Result<T, ApiError> {
    let blank = |v: &str| !v.is_empty() && v.trim().is_empty();
    let normal;
    let query = if form_urlencoded::parse(query.as_bytes()).any(|(_, v)| blank(&v)) {
        normal = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(
                form_urlencoded::parse(query.as_bytes())
                    .map(|(k, v)| (k, if blank(&v) { "".into() } else { v })),
            )
            .finish();
        normal.as_str()
    } else {
        query
    };
    let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
    serde_path_to_error::deserialize(de).map_err(|e| {
        let field = e.path().to_string();
        let value = form_urlencoded::parse(query.as_bytes())
            .find(|(k, _)| *k == field)
            .map(|(_, v)| v.into_owned());
        let said = words::data_error(&e.into_inner().to_string());
        ApiError::bad_request(match value {
            _ if field == "." => format!("the query string: {said}"),
            // The rule names what was given already ("…, not \"x\"").
            Some(v) if !said.contains(", not ") => {
                format!("query parameter {field} {said}, not {v:?}")
            }
            _ => format!("query parameter {field} {said}"),
        })
    })
}

/// Path parameters; an id that is not a whole number (or too large for
/// one) is a 400 saying what it must be.
pub struct ApiPath<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiPath<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Send,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        use axum::extract::path::ErrorKind;
        use axum::extract::rejection::PathRejection;
        let e = match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(p)) => return Ok(Self(p)),
            Err(e) => e,
        };
        // Only an integer fails to parse here (text takes anything): the
        // number is not one, or too large. The names are read only then.
        let params = RawPathParams::from_request_parts(parts, state).await.ok();
        let name = |i: usize| {
            params
                .as_ref()
                .and_then(|p| p.iter().nth(i).map(|(n, _)| n.to_owned()))
                .unwrap_or_else(|| "a path part".to_owned())
        };
        let said = match &e {
            PathRejection::FailedToDeserializePathParams(d) => match d.kind() {
                ErrorKind::ParseErrorAtKey { key, value, .. } => words::not_an_id(key, value),
                ErrorKind::ParseErrorAtIndex { index, value, .. } => {
                    words::not_an_id(&name(*index), value)
                }
                ErrorKind::ParseError { value, .. } => words::not_an_id(&name(0), value),
                _ => "the path is not valid here".to_owned(),
            },
            _ => "the path is not valid here".to_owned(),
        };
        Err(ApiError::bad_request(said))
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

    #[derive(Debug, serde::Deserialize)]
    struct Listing {
        status: Option<String>,
        start: Option<i64>,
    }

    #[test]
    fn a_blank_query_value_is_read_as_empty_whatever_its_whitespace() {
        let q = parse_query::<Listing>("status=%0B%20&start=3").expect("query");
        assert_eq!((q.status.as_deref(), q.start), (Some(""), Some(3)));
        let q = parse_query::<Listing>("status=%20open%20").expect("query");
        assert_eq!(q.status.as_deref(), Some(" open "));
        // A number refuses it, as it refuses an empty one.
        assert!(parse_query::<Listing>("start=%09").is_err());
        assert!(parse_query::<Listing>("start=").is_err());
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

    #[test]
    fn a_whole_number_with_a_fraction_is_a_whole_number() {
        assert_eq!(status_and_field(br#"{"sku":"a","qty":3.0}"#), (200, None));
        assert_eq!(
            status_and_field(br#"{"sku":"a","qty":1e3,"inner":{"n":2.0}}"#),
            (200, None)
        );
        let body: Body = parse_json(br#"{"sku":"a","qty":-4.0}"#).expect("parses");
        assert_eq!(body.qty, -4);
        // Not whole, or whole but out of range: refused as before.
        assert_eq!(
            status_and_field(br#"{"sku":"a","qty":3.5}"#),
            (422, Some("qty".into()))
        );
        assert_eq!(
            status_and_field(br#"{"sku":"a","qty":1,"inner":{"n":300.0}}"#),
            (422, Some("inner.n".into()))
        );
        assert_eq!(
            status_and_field(br#"{"sku":"a","qty":1e300}"#),
            (422, Some("qty".into()))
        );
        // A body refused for another reason is refused for it.
        assert_eq!(
            status_and_field(br#"{"sku":1.0,"qty":1}"#),
            (422, Some("sku".into()))
        );
    }

    #[test]
    fn whole_numbers_up_to_two_to_the_53_are_read_exactly_and_no_further() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Ids {
            id: i64,
        }
        // What a fuzzer sent for an order id: JSON Schema's integer.
        let ids: Ids = parse_json(br#"{"id":9007199254740990.0}"#).expect("a whole number");
        assert_eq!(ids.id, 9_007_199_254_740_990);
        let ids: Ids = parse_json(br#"{"id":-9007199254740992.0}"#).expect("2^53 itself");
        assert_eq!(ids.id, -9_007_199_254_740_992);
        // Past 2^53 the digits may not be the ones sent: refused, not
        // rounded to another record's id.
        assert!(parse_json::<Ids>(br#"{"id":9007199254740993.0}"#).is_err());
    }
}
