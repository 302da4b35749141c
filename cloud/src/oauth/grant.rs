//! The token endpoint (RFC 6749 section 3.2): client credentials,
//! authorization code with PKCE (RFC 7636), and identity assertions
//! (RFC 7523 JWT bearer carrying an ID-JAG). Each grant ends in one
//! signed access token.

use super::register::ClientMetadata;
use super::secrets::{pkce_matches, random_token, same, sha256_hex, valid_verifier};
use super::token::{self, AccessClaims};
use super::{
    GRANT_CLIENT_CREDENTIALS, GRANT_CODE, GRANT_JWT_BEARER, OAuth, OAuthError, intersect, keys,
    now, parse_scope,
};
use axum::extract::rejection::FormRejection;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Form};
use base64::Engine;
use depot_office::oauth::ClientRow;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};

type Params = HashMap<String, String>;

/// Reads the form; a parameter given twice is an error (RFC 6749 3.2).
fn params(form: Result<Form<Vec<(String, String)>>, FormRejection>) -> Result<Params, OAuthError> {
    let Form(pairs) = form.map_err(|e| {
        OAuthError::invalid_request(format!(
            "the body must be application/x-www-form-urlencoded: {}",
            e.body_text()
        ))
    })?;
    let mut out = HashMap::with_capacity(pairs.len());
    for (k, v) in pairs {
        if out.contains_key(&k) {
            return Err(OAuthError::invalid_request(format!(
                "parameter {k} is repeated"
            )));
        }
        out.insert(k, v);
    }
    Ok(out)
}

fn required<'a>(p: &'a Params, name: &str) -> Result<&'a str, OAuthError> {
    p.get(name)
        .map(String::as_str)
        .filter(|v| !v.is_empty())
        .ok_or_else(|| OAuthError::invalid_request(format!("parameter {name} is missing")))
}

/// `client_id` and `client_secret` from HTTP Basic (form-urlencoded
/// inside, RFC 6749 2.3.1) or from the form, never both.
fn credentials(headers: &HeaderMap, p: &Params) -> Result<(String, Option<String>), OAuthError> {
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(s, _)| s.eq_ignore_ascii_case("basic"));
    if let Some((_, encoded)) = basic {
        if p.contains_key("client_secret") {
            return Err(OAuthError::invalid_request(
                "use one client authentication method, not two",
            ));
        }
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(encoded.trim())
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(|| OAuthError::invalid_client("malformed Basic credentials"))?;
        let (id, secret) = decoded
            .split_once(':')
            .ok_or_else(|| OAuthError::invalid_client("malformed Basic credentials"))?;
        return Ok((form_decode(id), Some(form_decode(secret))));
    }
    let id = p
        .get("client_id")
        .filter(|v| !v.is_empty())
        .ok_or_else(|| OAuthError::invalid_client("client authentication is required"))?;
    Ok((id.clone(), p.get("client_secret").cloned()))
}

/// Undoes form-urlencoding (`+` is a space, `%XX` a byte).
fn form_decode(s: &str) -> String {
    reqwest::Url::parse(&format!("http://x/?v={s}"))
        .ok()
        .and_then(|u| u.query_pairs().next().map(|(_, v)| v.into_owned()))
        .unwrap_or_default()
}

/// The registered client, authenticated the way it registered.
async fn authenticate(
    o: &OAuth,
    id: String,
    secret: Option<String>,
) -> Result<(ClientRow, ClientMetadata), OAuthError> {
    let unknown = || OAuthError::invalid_client("unknown client or wrong secret");
    if id.len() > 200 {
        return Err(unknown());
    }
    let client = o.wms().client(id).await?.ok_or_else(unknown)?;
    let metadata: ClientMetadata =
        serde_json::from_str(&client.metadata).map_err(OAuthError::internal)?;
    match (&client.secret_hash, secret) {
        (Some(hash), Some(s)) if same(hash, &sha256_hex(&s)) => {}
        (None, None) => {}
        _ => return Err(unknown()),
    }
    Ok((client, metadata))
}

fn may_use(metadata: &ClientMetadata, grant: &str) -> Result<(), OAuthError> {
    if metadata.grant_types.iter().any(|g| g == grant) {
        Ok(())
    } else {
        Err(OAuthError::new(
            axum::http::StatusCode::BAD_REQUEST,
            "unauthorized_client",
            format!("this client did not register the grant {grant}"),
        ))
    }
}

pub async fn token(
    State(o): State<OAuth>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    form: Result<Form<Vec<(String, String)>>, FormRejection>,
) -> Response {
    let client = crate::ratelimit::client_of(peer.map(|Extension(ConnectInfo(a))| a));
    match grant(&o, client, &headers, form).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

/// Too many token requests from one client: 429, the seconds to wait in
/// `Retry-After` and in words.
fn slow_down(wait_secs: u64) -> OAuthError {
    OAuthError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "slow_down",
        format!(
            "too many token requests from this client: try again after {}",
            depot_protocol::plural::counted(wait_secs, "second")
        ),
    )
    .retry_after(wait_secs)
}

async fn grant(
    o: &OAuth,
    from: IpAddr,
    headers: &HeaderMap,
    form: Result<Form<Vec<(String, String)>>, FormRejection>,
) -> Result<Response, OAuthError> {
    let p = params(form)?;
    let grant_type = required(&p, "grant_type")?.to_owned();
    let (id, secret) = credentials(headers, &p)?;
    // Before the client is looked up: a secret is not guessed at speed,
    // and another client (or address) is not slowed by this one.
    o.may_request_token(&id, from).map_err(slow_down)?;
    let (client, metadata) = authenticate(o, id, secret).await?;
    let (subject, scope) = match grant_type.as_str() {
        GRANT_CLIENT_CREDENTIALS => {
            may_use(&metadata, GRANT_CLIENT_CREDENTIALS)?;
            let wanted = parse_scope(p.get("scope").map_or("", String::as_str))
                .map_err(OAuthError::invalid_scope)?;
            let held: Vec<&str> = client
                .allowed_scope
                .split(' ')
                .filter(|s| !s.is_empty())
                .collect();
            let scope = if wanted.is_empty() {
                held.join(" ")
            } else if wanted.iter().all(|w| held.contains(w)) {
                wanted.join(" ")
            } else {
                return Err(OAuthError::invalid_scope(
                    "the client may not be granted that scope",
                ));
            };
            if scope.is_empty() {
                return Err(OAuthError::invalid_scope(
                    "the client holds no scope yet: a person must claim it first",
                ));
            }
            (client.client_id.clone(), scope)
        }
        GRANT_CODE => {
            may_use(&metadata, GRANT_CODE)?;
            let code = required(&p, "code")?;
            let verifier = required(&p, "code_verifier")?;
            let redirect_uri = required(&p, "redirect_uri")?;
            let row = o
                .wms()
                .take_code(sha256_hex(code), now())
                .await?
                .ok_or_else(|| OAuthError::invalid_grant("the code is unknown, used or expired"))?;
            if row.client_id != client.client_id || row.redirect_uri != redirect_uri {
                return Err(OAuthError::invalid_grant(
                    "the code was issued to another client or redirect URI",
                ));
            }
            if !valid_verifier(verifier) || !pkce_matches(verifier, &row.code_challenge) {
                return Err(OAuthError::invalid_grant(
                    "the code_verifier does not match",
                ));
            }
            (row.subject, row.scope)
        }
        GRANT_JWT_BEARER => {
            may_use(&metadata, GRANT_JWT_BEARER)?;
            let assertion = required(&p, "assertion")?;
            let (claims, issuer) = o
                .trust()
                .verify(assertion, &o.config().issuer)
                .await
                .map_err(OAuthError::invalid_grant)?;
            if claims.client_id.as_deref() != Some(client.client_id.as_str()) {
                return Err(OAuthError::invalid_grant(
                    "the assertion was issued to another client",
                ));
            }
            let asked = p
                .get("scope")
                .cloned()
                .or(claims.scope.clone())
                .unwrap_or_default();
            let wanted = parse_scope(&asked).map_err(OAuthError::invalid_scope)?;
            let scope = intersect(&wanted, &issuer.scopes.join(" "));
            if scope.is_empty() {
                return Err(OAuthError::invalid_scope(
                    "the issuer of this assertion may not grant that scope",
                ));
            }
            let fresh = o
                .wms()
                .record_assertion(claims.iss.clone(), claims.jti.clone(), claims.exp, now())
                .await?;
            if !fresh {
                return Err(OAuthError::invalid_grant("the assertion was already used"));
            }
            (format!("{}#{}", claims.iss, claims.sub), scope)
        }
        other => {
            return Err(OAuthError::new(
                axum::http::StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                format!("grant type {other:?} is not supported"),
            ));
        }
    };
    issue(o, subject, client.client_id, scope).await
}

async fn issue(
    o: &OAuth,
    sub: String,
    client_id: String,
    scope: String,
) -> Result<Response, OAuthError> {
    let c = o.config();
    let t = now();
    let ttl = keys::secs(c.token_ttl);
    let claims = AccessClaims {
        iss: c.issuer.clone(),
        sub,
        aud: c.issuer.clone(),
        client_id,
        scope: scope.clone(),
        iat: t,
        nbf: t,
        exp: t.saturating_add(ttl),
        jti: random_token().map_err(OAuthError::internal)?,
    };
    let ring = o.ring().await.map_err(OAuthError::internal)?;
    let access_token = token::sign(&ring, &claims).map_err(OAuthError::internal)?;
    Ok((
        [
            (header::CACHE_CONTROL, "no-store"),
            (header::PRAGMA, "no-cache"),
        ],
        axum::Json(serde_json::json!({
            "access_token": access_token,
            "token_type": "Bearer",
            "expires_in": ttl,
            "scope": scope,
        })),
    )
        .into_response())
}
