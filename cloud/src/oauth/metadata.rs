//! Discovery: RFC 9728 protected-resource metadata, RFC 8414
//! authorization-server metadata (also served in OpenID Connect discovery
//! form), and the key set.

use super::{
    GRANT_CLIENT_CREDENTIALS, GRANT_CODE, GRANT_JWT_BEARER, ID_JAG, OAuth, OAuthError, SCOPES,
};
use axum::Json;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use serde_json::{Value, json};

/// Discovery documents change rarely; caches may keep them a while.
const CACHE: &str = "public, max-age=300";

/// RFC 9728 protected-resource metadata of the release-notes API.
#[utoipa::path(get, path = "/.well-known/oauth-protected-resource", tag = "discovery",
    responses((status = 200, description = "resource, authorization_servers, scopes_supported, bearer_methods_supported, resource_documentation, public_access", body = Object)))]
pub async fn protected_resource(State(o): State<OAuth>) -> impl IntoResponse {
    let c = o.config();
    (
        [(header::CACHE_CONTROL, CACHE)],
        Json(json!({
            "resource": c.issuer,
            "authorization_servers": [c.issuer],
            "scopes_supported": SCOPES,
            "bearer_methods_supported": ["header"],
            "resource_signing_alg_values_supported": ["ES256"],
            "resource_documentation": format!("{}/api/releases", c.issuer),
            "resource_name": "Depot release notes",
            "public_access": "Reading release notes (GET /api/releases, the web page and the RSS and Atom feeds) needs no token; publishing and translation sync need a bearer token with scope releases:write.",
        })),
    )
}

fn server_metadata(o: &OAuth) -> Value {
    let c = o.config();
    let login = &c.login_url;
    json!({
        "issuer": c.issuer,
        "authorization_endpoint": format!("{login}/oauth/authorize"),
        "token_endpoint": format!("{login}/oauth/token"),
        "registration_endpoint": format!("{login}/oauth/register"),
        "jwks_uri": format!("{}/.well-known/jwks.json", c.issuer),
        "scopes_supported": SCOPES,
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": [GRANT_CODE, GRANT_CLIENT_CREDENTIALS, GRANT_JWT_BEARER],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": true,
        "service_documentation": format!("{}/api/releases", c.issuer),
        "identity_assertion": {
            "identity_types_supported": ["identity_assertion"],
            "assertion_types_supported": [ID_JAG],
            "credential_types_supported": ["jwt"],
            "registration_uri": format!("{login}/oauth/register"),
            "claim_uri": format!("{login}/oauth/claim"),
            "trusted_issuers": o.trust().issuers(),
        },
    })
}

/// RFC 8414 authorization-server metadata.
#[utoipa::path(get, path = "/.well-known/oauth-authorization-server", tag = "discovery",
    responses((status = 200, description = "The endpoints, grants, scopes and identity-assertion support", body = Object)))]
pub async fn authorization_server(State(o): State<OAuth>) -> impl IntoResponse {
    ([(header::CACHE_CONTROL, CACHE)], Json(server_metadata(&o)))
}

/// The same metadata with the fields OpenID Connect discovery requires.
/// No ID tokens are issued; the subject and signing fields describe the
/// access tokens.
#[utoipa::path(get, path = "/.well-known/openid-configuration", tag = "discovery",
    responses((status = 200, description = "The authorization-server metadata in OpenID Connect discovery form", body = Object)))]
pub async fn openid_configuration(State(o): State<OAuth>) -> impl IntoResponse {
    let mut doc = server_metadata(&o);
    if let Some(m) = doc.as_object_mut() {
        m.insert("subject_types_supported".into(), json!(["public"]));
        m.insert(
            "id_token_signing_alg_values_supported".into(),
            json!(["ES256"]),
        );
    }
    ([(header::CACHE_CONTROL, CACHE)], Json(doc))
}

/// Every published key: the signing one and those whose tokens may still
/// be in use.
#[utoipa::path(get, path = "/.well-known/jwks.json", tag = "discovery",
    responses((status = 200, description = "A JWK set of ES256 public keys", body = Object)))]
pub async fn jwks(State(o): State<OAuth>) -> Result<impl IntoResponse, OAuthError> {
    let ring = o.ring().await.map_err(OAuthError::internal)?;
    let keys: Vec<_> = ring.keys.iter().map(|k| &k.jwk).collect();
    Ok((
        [(header::CACHE_CONTROL, "public, max-age=60")],
        Json(json!({ "keys": keys })),
    ))
}
