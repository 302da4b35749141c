//! `Idempotency-Key` on every write (POST, PUT, PATCH, DELETE), as Stripe
//! and Shopify have it: a retry with the key of a request already answered
//! gets exactly the first answer (with `Idempotent-Replayed: true`) and
//! applies nothing; the key with another request gets 422. One layer,
//! mounted by the cloud's and the edge's applications, around every route
//! but `/oauth/*`.
//!
//! The layer reads a keyed request's body whole, fingerprints the request
//! (SHA-256 of method, path, query and body), scopes the key to the
//! caller's credential (`X-API-KEY`, or `Authorization`; the path on a
//! public route) and looks it up. An `X-API-KEY` that does not
//! authenticate makes the request run as one without a key (its route
//! answers 401), so that a revoked key replays nothing. A request not seen runs inside an
//! idempotency context ([`crate::idempotency`]): its writes record the key
//! in their own transactions, and its answer with them where the handler
//! builds it with [`respond`]; otherwise the layer stores the answer once
//! the handler has given it. A 5xx is never stored; another error is when
//! a write was applied, and not when nothing was (a retry runs again).

use super::error::ApiError;
use super::extract::API_KEY_HEADER;
use crate::idempotency::{self, Answer, Context, MAX_KEY};
use crate::{Wms, WmsError};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use depot_protocol::DataEnvelope;
use http_body_util::BodyExt;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// The request header (and, echoed, the answer's).
pub const HEADER: &str = "idempotency-key";
/// `true` on an answer replayed for a key used before.
pub const REPLAYED: &str = "idempotent-replayed";

/// The largest body any route takes (a document upload): a keyed request's
/// body is read whole up to this (413 beyond), and each route's own limit
/// still applies after.
pub const MAX_BODY: usize = depot_protocol::document::MAX_DOCUMENT_BYTES + 64 * 1024;

/// The layer's state: the engine, how long keys live, and the keys whose
/// request is under way in this process.
#[derive(Clone)]
pub struct Idempotency {
    wms: Wms,
    retention: chrono::Duration,
    in_flight: Arc<Mutex<HashSet<(String, String)>>>,
}

impl Idempotency {
    /// Keys live `retention_hours` (the `idempotency.retention_hours`
    /// setting of both daemons).
    pub fn new(wms: Wms, retention_hours: u32) -> Self {
        Self {
            wms,
            retention: chrono::Duration::hours(i64::from(retention_hours)),
            in_flight: Arc::default(),
        }
    }

    /// Marks the key as under way here; `None` if it already is.
    fn claim(&self, scope: &str, key: &str) -> Option<Claim> {
        let id = (scope.to_owned(), key.to_owned());
        let mut set = self.in_flight.lock().ok()?;
        set.insert(id.clone()).then(|| Claim {
            set: self.in_flight.clone(),
            id,
        })
    }
}

/// A key under way, released when the request ends (or is dropped, its
/// client gone).
struct Claim {
    set: Arc<Mutex<HashSet<(String, String)>>>,
    id: (String, String),
}

impl Drop for Claim {
    fn drop(&mut self) {
        if let Ok(mut set) = self.set.lock() {
            set.remove(&self.id);
        }
    }
}

/// The request's key: none, or 1 to 255 printable ASCII characters (400
/// otherwise, and for more than one).
pub fn key_of(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let mut values = headers.get_all(HEADER).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    let bytes = value.as_bytes();
    if values.next().is_some() {
        return Err(ApiError::bad_request(
            "give one Idempotency-Key header, not several",
        ));
    }
    if bytes.is_empty() || bytes.len() > MAX_KEY || !bytes.iter().all(|b| (0x20..=0x7e).contains(b))
    {
        return Err(ApiError::bad_request(format!(
            "Idempotency-Key must be 1 to {MAX_KEY} printable ASCII characters"
        )));
    }
    Ok(Some(String::from_utf8_lossy(bytes).into_owned()))
}

/// SHA-256 (hex) of `parts`, each length-prefixed: fingerprints and
/// scopes of keys made without a request (a station's scans).
pub fn sha256_hex(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        // Lengths first: no two requests hash the same parts alike.
        h.update((p.len() as u64).to_be_bytes());
        h.update(p);
    }
    hex::encode(h.finalize())
}

/// SHA-256 of the method, path, query and body.
pub fn fingerprint(method: &Method, uri: &axum::http::Uri, body: &[u8]) -> String {
    sha256_hex(&[
        method.as_str().as_bytes(),
        uri.path().as_bytes(),
        uri.query().unwrap_or("").as_bytes(),
        body,
    ])
}

/// Whose keys these are: SHA-256 of the credential the request carries, or
/// of its path on a public route.
pub fn scope(headers: &HeaderMap, path: &str) -> String {
    if let Some(v) = headers.get(API_KEY_HEADER) {
        let key = String::from_utf8_lossy(v.as_bytes());
        return sha256_hex(&[b"x-api-key", key.trim().as_bytes()]);
    }
    if let Some(v) = headers.get(header::AUTHORIZATION) {
        return sha256_hex(&[b"authorization", v.as_bytes()]);
    }
    sha256_hex(&[b"path", path.as_bytes()])
}

impl IntoResponse for Answer {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut r = (status, self.body).into_response();
        let h = r.headers_mut();
        for (name, value) in [
            (header::CONTENT_TYPE, self.content_type),
            (header::LOCATION, self.location),
        ] {
            if let Some(v) = value.and_then(|v| HeaderValue::from_str(&v).ok()) {
                h.insert(name, v);
            }
        }
        r
    }
}

/// The layer: see the module.
pub async fn layer(State(idem): State<Idempotency>, req: Request, next: Next) -> Response {
    let writes = matches!(
        *req.method(),
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    );
    if !writes || req.uri().path().starts_with("/oauth/") {
        return next.run(req).await;
    }
    let key = match key_of(req.headers()) {
        Ok(Some(key)) => key,
        Ok(None) => return next.run(req).await,
        Err(e) => return e.into_response(),
    };
    // An API key is checked first: a request it does not authenticate is
    // answered as without a key (its route refuses it), so a revoked key
    // replays nothing. The caller found is handed on to the route.
    let mut req = req;
    if let Some(v) = req.headers().get(API_KEY_HEADER) {
        let secret = String::from_utf8_lossy(v.as_bytes()).trim().to_owned();
        let caller = if secret.is_empty() || secret.len() > 256 {
            None
        } else {
            idem.wms.authenticate(&secret).await.ok().flatten()
        };
        match caller {
            Some(caller) => {
                req.extensions_mut().insert(caller);
            }
            None => return next.run(req).await,
        }
    }
    let mut response = keyed(&idem, &key, req, next).await;
    if let Ok(v) = HeaderValue::from_str(&key) {
        response.headers_mut().entry(HEADER).or_insert(v);
    }
    response
}

async fn keyed(idem: &Idempotency, key: &str, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let body = match http_body_util::Limited::new(body, MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            return ApiError::PayloadTooLarge { limit: MAX_BODY }.into_response();
        }
        Err(e) => {
            return ApiError::bad_request(format!("the request body could not be read: {e}"))
                .into_response();
        }
    };
    let path = parts.uri.path().to_owned();
    let ctx = Context::new(
        scope(&parts.headers, &path),
        key.to_owned(),
        fingerprint(&parts.method, &parts.uri, &body),
        parts.method.as_str().to_owned(),
        path,
        idem.retention,
    );
    // Claimed before the lookup: a duplicate that looked the key up while
    // the first was under way cannot run after the first has finished.
    let Some(_claim) = idem.claim(&ctx.scope, &ctx.key) else {
        return ApiError::from(idempotency::in_use()).into_response();
    };
    let found = idem
        .wms
        .idempotency_key(ctx.scope.clone(), ctx.key.clone(), ctx.not_before)
        .await;
    match found {
        Err(e) => return ApiError::from(e).into_response(),
        Ok(Some(s)) if s.fingerprint != ctx.fingerprint => {
            return ApiError::from(idempotency::reused()).into_response();
        }
        Ok(Some(s)) => {
            return match s.answer {
                Some(answer) => replay(answer),
                None => ApiError::from(idempotency::applied()).into_response(),
            };
        }
        Ok(None) => {}
    }
    let req = Request::from_parts(parts, Body::from(body));
    let response = ctx.clone().run(next.run(req)).await;
    finish(idem, &ctx, response).await
}

fn replay(answer: Answer) -> Response {
    let mut r = answer.into_response();
    r.headers_mut()
        .insert(REPLAYED, HeaderValue::from_static("true"));
    r
}

/// Stores the answer the handler gave, where no write stored it: after a
/// write that recorded the key (anything but a 5xx), or for a request that
/// wrote nothing (a 2xx only: another answer may change on a retry).
async fn finish(idem: &Idempotency, ctx: &Context, response: Response) -> Response {
    let status = response.status();
    let keep = if ctx.answered() {
        false
    } else if ctx.recorded() {
        !status.is_server_error()
    } else {
        status.is_success()
    };
    if !keep {
        return response;
    }
    let (parts, body) = response.into_parts();
    let bytes = match body.collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            tracing::error!(error = %e, "an answer could not be read to store it");
            return ApiError::Wms(WmsError::Internal(format!("answer body: {e}"))).into_response();
        }
    };
    let text = |name| {
        parts
            .headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
            .map(str::to_owned)
    };
    let answer = Answer {
        status: status.as_u16(),
        content_type: text(header::CONTENT_TYPE),
        location: text(header::LOCATION),
        body: bytes.to_vec(),
    };
    match idem.wms.store_idempotent_answer(ctx, answer).await {
        Ok(true) => {}
        Ok(false) => tracing::warn!(
            path = ctx.path,
            "another request holds this Idempotency-Key: this answer is not stored"
        ),
        // The answer is still given; a retry finds the key without it
        // (409) or, if no write recorded it, runs again.
        Err(e) => {
            tracing::error!(error = %e, path = ctx.path, "an answer could not be stored with its Idempotency-Key")
        }
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// 200 with `{"data": value}`: the answer of most writes.
pub fn ok<T: Serialize>(value: &T) -> Answer {
    Answer::json(200, &DataEnvelope { data: value })
}

/// 200 with `value` as it is.
pub fn plain<T: Serialize>(value: &T) -> Answer {
    Answer::json(200, value)
}

/// Runs `work`, an engine call whose write returns a `T`, and answers what
/// `build` makes of its value. Under a key, `build` also makes the answer
/// stored in the write's own transaction: the answer given and the one
/// replayed are made by one function, and both are there or neither.
pub async fn respond<T, B>(
    build: B,
    work: impl Future<Output = Result<T, WmsError>>,
) -> Result<Answer, ApiError>
where
    T: Send + 'static,
    B: Fn(&T) -> Answer + Clone + Send + Sync + 'static,
{
    let stored = build.clone();
    idempotency::expect(move |v: &T| Some(stored(v)));
    let value = work.await?;
    Ok(build(&value))
}

/// Describes the header and its answers on every write of `openapi` (but
/// `/oauth/*`): the optional `Idempotency-Key` parameter, 409 and 422, and
/// `Idempotent-Replayed` on success.
pub fn describe(openapi: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    use utoipa::openapi::{HeaderBuilder, Required};

    let parameter = ParameterBuilder::new()
        .name("Idempotency-Key")
        .parameter_in(ParameterIn::Header)
        .required(Required::False)
        .description(Some(
            "Makes the write safe to retry (1 to 255 printable ASCII characters; a fresh UUID is a \
             good key). A retry with the same key within the retention period (24 hours by default) \
             answers exactly the first answer, with `Idempotent-Replayed: true`, and applies \
             nothing; the same key with another method, path, query or body is a 422. Keys are \
             scoped to the credential (the path on a public route); the answer echoes the key.",
        ))
        .schema(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1))
                .max_length(Some(MAX_KEY))
                .pattern(Some("^[\\x20-\\x7E]+$")),
        ))
        .build();
    let error = super::contract::error;
    let conflict = "Idempotency-Key: another request with the key is under way or was applied first \
                    (errors[0].status `idempotency_key_in_use`: send it again for its answer), or its \
                    request was applied and its answer lost when the server stopped \
                    (`idempotency_key_applied`: not applied again)";
    let reused = "Idempotency-Key: the key was used for another request \
                  (errors[0].status `idempotency_key_reused`)";
    let replayed = HeaderBuilder::new()
        .schema(ObjectBuilder::new().schema_type(Type::String))
        .description(Some(
            "`true` when this is the stored answer of an earlier request with the same Idempotency-Key",
        ))
        .build();
    for (path, item) in openapi.paths.paths.iter_mut() {
        if path.starts_with("/oauth/") {
            continue;
        }
        for op in [
            &mut item.post,
            &mut item.put,
            &mut item.patch,
            &mut item.delete,
        ]
        .into_iter()
        .flatten()
        {
            let params = op.parameters.get_or_insert_with(Vec::new);
            params.retain(|p| !p.name.eq_ignore_ascii_case("Idempotency-Key"));
            params.push(parameter.clone());
            for (status, text) in [("409", conflict), ("422", reused)] {
                let responses = &mut op.responses.responses;
                match responses.get_mut(status) {
                    Some(utoipa::openapi::RefOr::T(r)) => {
                        r.description = if r.description.is_empty() {
                            text.to_owned()
                        } else {
                            format!("{}; or {text}", r.description)
                        };
                    }
                    Some(_) => {}
                    None => {
                        responses.insert(status.to_owned(), error(text).into());
                    }
                }
            }
            for (status, r) in op.responses.responses.iter_mut() {
                if let (true, utoipa::openapi::RefOr::T(r)) = (status.starts_with('2'), r) {
                    r.headers
                        .insert("Idempotent-Replayed".into(), replayed.clone());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&[u8]]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            if let Ok(v) = HeaderValue::from_bytes(v) {
                h.append(HEADER, v);
            }
        }
        h
    }

    #[test]
    fn keys_are_one_to_255_printable_ascii_characters() {
        assert!(matches!(key_of(&headers(&[])), Ok(None)));
        assert_eq!(
            key_of(&headers(&[b"0190f1c2-aaaa ~!"]))
                .ok()
                .flatten()
                .as_deref(),
            Some("0190f1c2-aaaa ~!")
        );
        let long = vec![b'k'; MAX_KEY];
        assert!(key_of(&headers(&[&long])).is_ok());
        let longer = vec![b'k'; MAX_KEY + 1];
        for bad in [&longer[..], "é".as_bytes(), b"tab\there"] {
            assert!(key_of(&headers(&[bad])).is_err(), "{bad:?}");
        }
        assert!(key_of(&headers(&[b"a", b"b"])).is_err(), "two keys");
    }

    #[test]
    fn a_fingerprint_tells_requests_apart() {
        let uri = |s: &str| s.parse::<axum::http::Uri>().expect("uri");
        let a = fingerprint(&Method::POST, &uri("/v1/x?y=1"), b"{}");
        assert_eq!(a, fingerprint(&Method::POST, &uri("/v1/x?y=1"), b"{}"));
        for other in [
            fingerprint(&Method::PUT, &uri("/v1/x?y=1"), b"{}"),
            fingerprint(&Method::POST, &uri("/v1/x?y=2"), b"{}"),
            fingerprint(&Method::POST, &uri("/v1/x"), b"{}"),
            fingerprint(&Method::POST, &uri("/v1/x?y=1"), b"{ }"),
        ] {
            assert_ne!(a, other);
        }
    }

    #[test]
    fn the_scope_is_the_credential_or_the_path() {
        let mut h = HeaderMap::new();
        let by_path = scope(&h, "/v1/webhooks/carriers/own");
        assert_ne!(by_path, scope(&h, "/v1/webhooks/carriers/other"));
        h.insert(API_KEY_HEADER, HeaderValue::from_static("dpk_a"));
        let a = scope(&h, "/v1/webhooks/carriers/own");
        assert_ne!(a, by_path);
        assert_eq!(a, scope(&h, "/v1/anything"));
        h.insert(API_KEY_HEADER, HeaderValue::from_static("dpk_b"));
        assert_ne!(a, scope(&h, "/v1/anything"));
    }
}
