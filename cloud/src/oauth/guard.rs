//! The guard of the release-notes writes: a bearer token in the
//! `Authorization` header (RFC 6750 2.1) and nowhere else, verified, with
//! scope `releases:write`. Refusals carry the spec's error body and a
//! `WWW-Authenticate: Bearer` challenge that names the resource metadata
//! (RFC 9728 5.1), so a client can discover where to get a token.

use super::token;
use super::{OAuth, RELEASES_WRITE};
use crate::changelog::Publisher;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use depot_protocol::ErrorBody;

enum Refusal {
    /// No credentials at all: the challenge carries no error code.
    Missing,
    InvalidRequest(String),
    InvalidToken(String),
    InsufficientScope,
}

fn quoted(s: &str) -> String {
    s.replace(['"', '\\'], "'")
}

fn refuse(o: &OAuth, r: Refusal) -> Response {
    let meta = o.config().resource_metadata_url();
    let (status, challenge, message) = match r {
        Refusal::Missing => (
            StatusCode::UNAUTHORIZED,
            format!(r#"Bearer resource_metadata="{meta}", scope="{RELEASES_WRITE}""#),
            "an access token is required in the Authorization header".to_owned(),
        ),
        Refusal::InvalidRequest(d) => (
            StatusCode::UNAUTHORIZED,
            format!(
                r#"Bearer error="invalid_request", error_description="{}", resource_metadata="{meta}""#,
                quoted(&d)
            ),
            d,
        ),
        Refusal::InvalidToken(d) => (
            StatusCode::UNAUTHORIZED,
            format!(
                r#"Bearer error="invalid_token", error_description="{}", resource_metadata="{meta}""#,
                quoted(&d)
            ),
            d,
        ),
        Refusal::InsufficientScope => (
            StatusCode::FORBIDDEN,
            format!(
                r#"Bearer error="insufficient_scope", scope="{RELEASES_WRITE}", resource_metadata="{meta}""#
            ),
            format!("insufficient_scope: the token lacks scope {RELEASES_WRITE}"),
        ),
    };
    let mut resp = (status, axum::Json(ErrorBody::new(status.as_u16(), message))).into_response();
    if let Ok(v) = HeaderValue::from_str(&challenge) {
        resp.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    resp
}

/// Whether the query string carries an access token (RFC 6750 2.3), which
/// this resource refuses: URLs end up in logs and browser histories.
fn token_in_query(req: &Request) -> bool {
    req.uri().query().is_some_and(|q| {
        q.split('&')
            .any(|pair| pair.split('=').next().is_some_and(|k| k == "access_token"))
    })
}

/// Lets the request through only with a valid token holding
/// `releases:write`, naming the token's subject as the [`Publisher`].
pub async fn require_releases_write(
    State(o): State<OAuth>,
    mut req: Request,
    next: Next,
) -> Response {
    if token_in_query(&req) {
        return refuse(
            &o,
            Refusal::InvalidRequest(
                "access tokens are accepted only in the Authorization header".into(),
            ),
        );
    }
    let Some(value) = req.headers().get(header::AUTHORIZATION) else {
        return refuse(&o, Refusal::Missing);
    };
    let Some(token) = value
        .to_str()
        .ok()
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim())
        .filter(|t| !t.is_empty())
    else {
        return refuse(
            &o,
            Refusal::InvalidRequest("the Authorization header must be `Bearer <token>`".into()),
        );
    };
    let claims = {
        let ring = match o.ring().await {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(error = %e, "loading signing keys");
                return StatusCode::INTERNAL_SERVER_ERROR.into_response();
            }
        };
        let c = o.config();
        token::verify(&ring, token, &c.issuer, &c.issuer)
    };
    let claims = match claims {
        Ok(c) => c,
        // A key another instance made after our last load.
        Err(token::TokenError::UnknownKey) if o.reload_for_unknown_key().await => {
            let again = match o.ring().await {
                Ok(ring) => token::verify(&ring, token, &o.config().issuer, &o.config().issuer),
                Err(_) => Err(token::TokenError::UnknownKey),
            };
            match again {
                Ok(c) => c,
                Err(e) => return refuse(&o, Refusal::InvalidToken(e.to_string())),
            }
        }
        Err(e) => return refuse(&o, Refusal::InvalidToken(e.to_string())),
    };
    if !claims.has_scope(RELEASES_WRITE) {
        return refuse(&o, Refusal::InsufficientScope);
    }
    req.extensions_mut().insert(Publisher(claims.sub));
    next.run(req).await
}
