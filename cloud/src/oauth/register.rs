//! Dynamic client registration (RFC 7591). Anyone may register (unless the
//! operator turned it off), but a new client holds no scope: a person
//! claims it at `/oauth/claim` with the claim token it receives, or it
//! registers with an identity assertion from a trusted provider, which
//! claims it at once for that identity.

use super::secrets::{random_token, sha256_hex};
use super::{
    GRANT_CLIENT_CREDENTIALS, GRANT_CODE, GRANT_JWT_BEARER, ID_JAG, OAuth, OAuthError, intersect,
    now, parse_scope,
};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use depot_office::oauth::ClientRow;
use serde::{Deserialize, Serialize};

/// The metadata a client registers with (the fields this server uses).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ClientMetadata {
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_name: Option<String>,
    #[serde(default)]
    pub grant_types: Vec<String>,
    #[serde(default)]
    pub response_types: Vec<String>,
    #[serde(default)]
    pub token_endpoint_auth_method: String,
    /// The scopes it asks for, space-separated.
    #[serde(default)]
    pub scope: String,
}

#[derive(Debug, Deserialize)]
pub struct Registration {
    #[serde(flatten)]
    pub metadata: ClientMetadata,
    /// `identity_assertion` to register on behalf of a user.
    #[serde(default)]
    pub identity_type: Option<String>,
    #[serde(default)]
    pub assertion_type: Option<String>,
    #[serde(default)]
    pub assertion: Option<String>,
}

fn bad_metadata(d: impl Into<String>) -> OAuthError {
    OAuthError::new(StatusCode::BAD_REQUEST, "invalid_client_metadata", d)
}

/// HTTPS, or plain HTTP to this machine (RFC 8252 7.3); no fragment.
fn redirect_ok(uri: &str) -> bool {
    let Ok(u) = reqwest::Url::parse(uri) else {
        return false;
    };
    let loopback = matches!(u.host_str(), Some("127.0.0.1" | "[::1]" | "localhost"));
    u.fragment().is_none()
        && uri.len() <= 2000
        && (u.scheme() == "https" || (u.scheme() == "http" && loopback))
}

/// Fills defaults and checks the metadata is coherent.
pub fn check(mut m: ClientMetadata) -> Result<ClientMetadata, OAuthError> {
    if m.grant_types.is_empty() {
        m.grant_types = vec![GRANT_CODE.into()];
    }
    m.grant_types.dedup();
    for g in &m.grant_types {
        if ![GRANT_CODE, GRANT_CLIENT_CREDENTIALS, GRANT_JWT_BEARER].contains(&g.as_str()) {
            return Err(bad_metadata(format!("grant type {g:?} is not supported")));
        }
    }
    let code = m.grant_types.iter().any(|g| g == GRANT_CODE);
    if m.token_endpoint_auth_method.is_empty() {
        m.token_endpoint_auth_method = "client_secret_basic".into();
    }
    match m.token_endpoint_auth_method.as_str() {
        "client_secret_basic" | "client_secret_post" => {}
        // A public client can only prove itself through PKCE.
        "none" if m.grant_types.iter().all(|g| g == GRANT_CODE) => {}
        "none" => {
            return Err(bad_metadata(
                "a client without a secret may use only the authorization_code grant",
            ));
        }
        other => {
            return Err(bad_metadata(format!(
                "token_endpoint_auth_method {other:?} is not supported"
            )));
        }
    }
    if code {
        if m.redirect_uris.is_empty() {
            return Err(OAuthError::new(
                StatusCode::BAD_REQUEST,
                "invalid_redirect_uri",
                "the authorization_code grant needs at least one redirect URI",
            ));
        }
        if m.response_types.is_empty() {
            m.response_types = vec!["code".into()];
        }
    }
    if m.response_types.iter().any(|r| r != "code") {
        return Err(bad_metadata("only the response type `code` is supported"));
    }
    if m.redirect_uris.len() > 10 {
        return Err(OAuthError::new(
            StatusCode::BAD_REQUEST,
            "invalid_redirect_uri",
            "at most 10 redirect URIs",
        ));
    }
    if let Some(bad) = m.redirect_uris.iter().find(|u| !redirect_ok(u)) {
        return Err(OAuthError::new(
            StatusCode::BAD_REQUEST,
            "invalid_redirect_uri",
            format!("{bad:?} must be an https URL, or http to localhost, without a fragment"),
        ));
    }
    if let Some(name) = &m.client_name {
        if name.trim().is_empty() || name.chars().count() > 200 {
            return Err(bad_metadata("client_name must be 1 to 200 characters"));
        }
    }
    let scopes = parse_scope(&m.scope).map_err(bad_metadata)?;
    m.scope = scopes.join(" ");
    Ok(m)
}

pub async fn register(State(o): State<OAuth>, body: axum::body::Bytes) -> Response {
    match register_inner(&o, &body).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

async fn register_inner(o: &OAuth, body: &[u8]) -> Result<Response, OAuthError> {
    let reg: Registration = serde_json::from_slice(body)
        .map_err(|e| bad_metadata(format!("the body must be client metadata as JSON: {e}")))?;
    let metadata = check(reg.metadata)?;
    let requested = parse_scope(&metadata.scope).map_err(bad_metadata)?;

    // With an identity assertion the client is claimed at once for that
    // identity; otherwise it waits for a person.
    let mut owner = None;
    let mut allowed = String::new();
    match reg.identity_type.as_deref() {
        None => {
            if !o.config().open_registration {
                return Err(OAuthError::new(
                    StatusCode::FORBIDDEN,
                    "access_denied",
                    "registration needs an identity assertion from a trusted issuer",
                ));
            }
        }
        Some("identity_assertion") => {
            if reg.assertion_type.as_deref() != Some(ID_JAG) {
                return Err(bad_metadata(format!("assertion_type must be {ID_JAG}")));
            }
            let assertion = reg
                .assertion
                .as_deref()
                .ok_or_else(|| bad_metadata("identity_assertion needs an `assertion`"))?;
            let (claims, issuer) = o
                .trust()
                .verify(assertion, &o.config().issuer)
                .await
                .map_err(|e| OAuthError::new(StatusCode::BAD_REQUEST, "invalid_grant", e))?;
            let fresh = o
                .wms()
                .record_assertion(claims.iss.clone(), claims.jti.clone(), claims.exp, now())
                .await?;
            if !fresh {
                return Err(OAuthError::invalid_grant("the assertion was already used"));
            }
            owner = Some(format!("{}#{}", claims.iss, claims.sub));
            allowed = intersect(&requested, &issuer.scopes.join(" "));
        }
        Some(other) => {
            return Err(bad_metadata(format!(
                "identity_type {other:?} is not supported"
            )));
        }
    }

    let client_id = random_token().map_err(OAuthError::internal)?;
    let secret = if metadata.token_endpoint_auth_method == "none" {
        None
    } else {
        Some(random_token().map_err(OAuthError::internal)?)
    };
    let claim = if owner.is_none() {
        Some(random_token().map_err(OAuthError::internal)?)
    } else {
        None
    };
    let issued = now();
    o.wms()
        .register_client(ClientRow {
            client_id: client_id.clone(),
            secret_hash: secret.as_deref().map(sha256_hex),
            metadata: serde_json::to_string(&metadata).map_err(OAuthError::internal)?,
            allowed_scope: allowed.clone(),
            owner,
            claim_hash: claim.as_deref().map(sha256_hex),
            created_at: issued,
        })
        .await?;
    let mut doc = serde_json::to_value(&metadata).map_err(OAuthError::internal)?;
    if let Some(m) = doc.as_object_mut() {
        m.insert("client_id".into(), client_id.into());
        m.insert("client_id_issued_at".into(), issued.into());
        if let Some(s) = secret {
            m.insert("client_secret".into(), s.into());
            m.insert("client_secret_expires_at".into(), 0.into());
        }
        m.insert("granted_scope".into(), allowed.into());
        if let Some(c) = claim {
            m.insert(
                "claim_uri".into(),
                format!("{}/oauth/claim?claim_token={c}", o.config().login_url).into(),
            );
            m.insert("claim_token".into(), c.into());
        }
    }
    Ok((
        StatusCode::CREATED,
        [(axum::http::header::CACHE_CONTROL, "no-store")],
        Json(doc),
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(v: serde_json::Value) -> ClientMetadata {
        serde_json::from_value(v).expect("metadata")
    }

    #[test]
    fn defaults_and_refusals() {
        let m = check(meta(
            serde_json::json!({"redirect_uris": ["https://app.test/cb"]}),
        ))
        .expect("ok");
        assert_eq!(m.grant_types, [GRANT_CODE]);
        assert_eq!(m.response_types, ["code"]);
        assert_eq!(m.token_endpoint_auth_method, "client_secret_basic");

        let cc = check(meta(serde_json::json!({"grant_types": [GRANT_CLIENT_CREDENTIALS], "scope": "releases:write"})))
            .expect("cc");
        assert!(cc.redirect_uris.is_empty());

        let refused = [
            serde_json::json!({}),
            serde_json::json!({"redirect_uris": ["http://app.test/cb"]}),
            serde_json::json!({"redirect_uris": ["https://app.test/cb#frag"]}),
            serde_json::json!({"redirect_uris": ["not a url"]}),
            serde_json::json!({"redirect_uris": ["https://a.test"], "grant_types": ["password"]}),
            serde_json::json!({"redirect_uris": ["https://a.test"], "response_types": ["token"]}),
            serde_json::json!({"redirect_uris": ["https://a.test"], "scope": "admin"}),
            serde_json::json!({"grant_types": [GRANT_CLIENT_CREDENTIALS], "token_endpoint_auth_method": "none"}),
            serde_json::json!({"grant_types": [GRANT_CLIENT_CREDENTIALS], "token_endpoint_auth_method": "private_key_jwt"}),
            serde_json::json!({"redirect_uris": ["https://a.test"], "client_name": " "}),
        ];
        for r in refused {
            assert!(check(meta(r.clone())).is_err(), "{r} was accepted");
        }
        assert!(check(meta(serde_json::json!({"redirect_uris": ["http://127.0.0.1:8123/cb"], "token_endpoint_auth_method": "none"}))).is_ok());
    }
}
