//! The OAuth 2.0 authorization server of the release-notes API: discovery
//! documents (RFC 8414, RFC 9728, OIDC discovery), the JWKS, dynamic client
//! registration (RFC 7591) with a claim step for agents, the token endpoint
//! (client credentials, authorization code with PKCE, and identity
//! assertions from trusted issuers per the ID-JAG draft), a login page, and
//! the guard that protects the release-notes writes.
//!
//! The OAuth endpoints answer errors the way RFC 6749 says
//! (`{error: "<code>", error_description}`), which OAuth clients parse; the
//! protected routes answer the spec's error body with a
//! `WWW-Authenticate: Bearer` header naming the resource metadata.

pub mod admin;
pub mod authorize;
pub mod ecdsa;
pub mod grant;
pub mod guard;
pub mod keys;
pub mod metadata;
pub mod register;
pub mod secrets;
pub mod sign_in;
pub mod token;
pub mod trust;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use depot_office::Office;
use depot_wms::Wms;
use keys::KeyRing;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;
use tokio::sync::RwLock;

/// The one scope the release-notes writes need.
pub const RELEASES_WRITE: &str = "releases:write";
/// Every scope this server grants.
pub const SCOPES: &[&str] = &[RELEASES_WRITE];

pub const GRANT_CODE: &str = "authorization_code";
pub const GRANT_CLIENT_CREDENTIALS: &str = "client_credentials";
pub const GRANT_JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
pub const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// What the server is and how it behaves.
#[derive(Debug, Clone)]
pub struct OAuthConfig {
    /// The issuer, which is also the protected resource: `{changelog_url}`.
    pub issuer: String,
    /// Where the OAuth endpoints live: `{login_url}`.
    pub login_url: String,
    pub token_ttl: Duration,
    pub rotate_every: Duration,
    /// Whether anyone may register a client (it holds no scope until a
    /// person claims it).
    pub open_registration: bool,
    pub trusted_issuers: Vec<trust::TrustedIssuer>,
}

impl OAuthConfig {
    pub fn resource_metadata_url(&self) -> String {
        format!("{}/.well-known/oauth-protected-resource", self.issuer)
    }
}

struct Inner {
    wms: Office,
    config: OAuthConfig,
    ring: RwLock<KeyRing>,
    /// When the ring was last reloaded for a key id it did not know.
    reloaded_for_unknown: AtomicI64,
    /// Sign-in attempts per user name and client, so a password cannot be
    /// guessed at the speed of the network.
    sign_ins: sign_in::SignIns,
    /// Token requests per client id and client address.
    token_requests: crate::ratelimit::Throttle<(String, std::net::IpAddr)>,
    trust: trust::Trust,
}

/// Token requests at once, then per minute, per client id and address: a
/// client needs one token an hour; a secret cannot be guessed at speed.
const TOKEN_BURST: u32 = 20;
const TOKENS_PER_MINUTE: u32 = 10;

/// The server's state, cheap to clone.
#[derive(Clone)]
pub struct OAuth(Arc<Inner>);

impl OAuth {
    /// Loads the signing keys, generating the first one on a new database.
    pub async fn start(wms: Wms, config: OAuthConfig) -> anyhow::Result<Self> {
        let wms = Office::new(wms);
        let ring = KeyRing::load(&wms, now(), config.rotate_every, config.token_ttl).await?;
        let trust = trust::Trust::new(config.trusted_issuers.clone())?;
        let inner = Arc::new(Inner {
            wms,
            config,
            ring: RwLock::new(ring),
            reloaded_for_unknown: AtomicI64::new(0),
            sign_ins: sign_in::SignIns::default(),
            token_requests: crate::ratelimit::Throttle::new(TOKENS_PER_MINUTE, TOKEN_BURST),
            trust,
        });
        crate::ratelimit::prune_while_alive(Arc::downgrade(&inner), |i: &Inner| {
            i.sign_ins.prune();
            i.token_requests.prune();
        });
        Ok(Self(inner))
    }

    pub fn config(&self) -> &OAuthConfig {
        &self.0.config
    }

    pub fn wms(&self) -> &Office {
        &self.0.wms
    }

    /// The key ring, rotated first when its signing key has retired.
    pub async fn ring(&self) -> anyhow::Result<tokio::sync::RwLockReadGuard<'_, KeyRing>> {
        let t = now();
        if self.0.ring.read().await.refresh_at <= t {
            self.reload(t).await?;
        }
        Ok(self.0.ring.read().await)
    }

    /// Reloads the keys: another instance may have rotated them.
    pub async fn reload(&self, t: i64) -> anyhow::Result<()> {
        let c = &self.0.config;
        let fresh = KeyRing::load(&self.0.wms, t, c.rotate_every, c.token_ttl).await?;
        *self.0.ring.write().await = fresh;
        Ok(())
    }

    /// Reloads for a token whose key id is unknown (another instance may
    /// have rotated), at most every few seconds, so forged key ids cannot
    /// turn into a query each. True when it reloaded.
    pub async fn reload_for_unknown_key(&self) -> bool {
        let t = now();
        let last = self.0.reloaded_for_unknown.load(Ordering::Relaxed);
        if t - last < 5
            || self
                .0
                .reloaded_for_unknown
                .compare_exchange(last, t, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return false;
        }
        match self.reload(t).await {
            Ok(()) => true,
            Err(e) => {
                tracing::error!(error = %e, "reloading signing keys");
                false
            }
        }
    }

    /// Who may try to sign in, and the passwords' checks.
    pub fn sign_ins(&self) -> &sign_in::SignIns {
        &self.0.sign_ins
    }

    /// Takes one token request of `client_id` from `client`; `Err` holds
    /// the seconds to wait.
    pub fn may_request_token(&self, client_id: &str, client: std::net::IpAddr) -> Result<(), u64> {
        let id: String = client_id.chars().take(sign_in::MAX_USERNAME).collect();
        self.0.token_requests.check(&(id, client))
    }

    pub fn trust(&self) -> &trust::Trust {
        &self.0.trust
    }
}

pub fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// The discovery documents, the key set and the OAuth endpoints.
pub fn routes(oauth: OAuth) -> Router {
    Router::new()
        .route(
            "/.well-known/oauth-protected-resource",
            get(metadata::protected_resource),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(metadata::authorization_server),
        )
        .route(
            "/.well-known/openid-configuration",
            get(metadata::openid_configuration),
        )
        .route("/.well-known/jwks.json", get(metadata::jwks))
        .route("/oauth/register", post(register::register))
        .route("/oauth/token", post(grant::token))
        .route(
            "/oauth/authorize",
            get(authorize::show).post(authorize::sign_in),
        )
        .route(
            "/oauth/claim",
            get(authorize::show_claim).post(authorize::claim),
        )
        .layer(DefaultBodyLimit::max(MAX_OAUTH_BODY))
        .with_state(oauth)
}

/// OAuth requests are small forms and JSON documents.
pub const MAX_OAUTH_BODY: usize = 32 * 1024;

/// An RFC 6749 error answer.
#[derive(Debug)]
pub struct OAuthError {
    pub status: StatusCode,
    pub code: &'static str,
    pub description: String,
    /// Seconds to wait, sent as `Retry-After`.
    pub retry_after: Option<u64>,
}

impl OAuthError {
    pub fn new(status: StatusCode, code: &'static str, description: impl Into<String>) -> Self {
        Self {
            status,
            code,
            description: description.into(),
            retry_after: None,
        }
    }

    pub fn retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(secs);
        self
    }

    pub fn invalid_request(d: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request", d)
    }

    pub fn invalid_client(d: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "invalid_client", d)
    }

    pub fn invalid_grant(d: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_grant", d)
    }

    pub fn invalid_scope(d: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_scope", d)
    }

    /// A failure of ours: logged, shown only as `server_error`.
    pub fn internal(e: impl std::fmt::Display) -> Self {
        tracing::error!(error = %e, "oauth");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "the server failed; try again",
        )
    }
}

impl From<depot_wms::WmsError> for OAuthError {
    fn from(e: depot_wms::WmsError) -> Self {
        Self::internal(e)
    }
}

impl IntoResponse for OAuthError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({"error": self.code, "error_description": self.description});
        let mut r = (self.status, axum::Json(body)).into_response();
        let h = r.headers_mut();
        h.insert(
            header::CACHE_CONTROL,
            header::HeaderValue::from_static("no-store"),
        );
        if let Some(v) = self
            .retry_after
            .and_then(|s| header::HeaderValue::from_str(&s.to_string()).ok())
        {
            h.insert(header::RETRY_AFTER, v);
        }
        if self.status == StatusCode::UNAUTHORIZED {
            h.insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Basic realm=\"depot-oauth\""),
            );
        }
        r
    }
}

/// Splits a space-separated scope string into known, distinct scopes;
/// `Err` names the first unknown one.
pub fn parse_scope(raw: &str) -> Result<Vec<&'static str>, String> {
    let mut out: Vec<&'static str> = Vec::new();
    for s in raw.split(' ').filter(|s| !s.is_empty()) {
        let known = SCOPES
            .iter()
            .find(|k| **k == s)
            .ok_or_else(|| format!("unknown scope {s:?}"))?;
        if !out.contains(known) {
            out.push(known);
        }
    }
    Ok(out)
}

/// The scopes of `wanted` that `held` also lists, space-separated.
pub fn intersect(wanted: &[&str], held: &str) -> String {
    wanted
        .iter()
        .filter(|w| held.split(' ').any(|h| h == **w))
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_parse_and_intersect() {
        assert_eq!(parse_scope("").expect("empty"), Vec::<&str>::new());
        assert_eq!(
            parse_scope("  releases:write releases:write ").expect("dup"),
            [RELEASES_WRITE]
        );
        assert!(parse_scope("releases:write admin").is_err());
        assert_eq!(
            intersect(&[RELEASES_WRITE], "releases:write"),
            RELEASES_WRITE
        );
        assert_eq!(intersect(&[RELEASES_WRITE], "releases:writer"), "");
        assert_eq!(intersect(&[RELEASES_WRITE], ""), "");
    }
}
