//! The pages people use: sign in to authorize a client (authorization
//! code with PKCE, S256 only), and claim an agent's client registration.
//! Errors before the redirect URI is known to be the client's are shown
//! here, never redirected (RFC 6749 4.1.2.1).

use super::register::ClientMetadata;
use super::secrets::{random_token, sha256_hex};
use super::sign_in::sign_in_user;
use super::{GRANT_CODE, ID_JAG, OAuth, OAuthError, intersect, now, parse_scope};
use crate::html::escape;
use axum::extract::{ConnectInfo, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::{Extension, Form};
use depot_office::oauth::{ClientRow, CodeRow};
use std::collections::HashMap;
use std::net::SocketAddr;

/// How long a code may wait for its token request.
const CODE_TTL_SECS: i64 = 60;

type Params = HashMap<String, String>;

/// A page that cannot be framed (clickjacking) or cached.
pub(super) fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{t}</title><style>body{{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}}\
         label{{display:block;margin:.8rem 0}}input{{width:100%;padding:.5rem;font-size:1rem}}\
         button{{padding:.6rem 1.2rem;font-size:1rem}}.error{{color:#b00020}}</style></head>\
         <body><h1>{t}</h1>{body}</body></html>",
        t = escape(title)
    );
    (
        status,
        [
            (header::CACHE_CONTROL, "no-store"),
            (header::X_FRAME_OPTIONS, "DENY"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
            ),
        ],
        Html(html),
    )
        .into_response()
}

fn hidden(p: &Params, names: &[&str]) -> String {
    names
        .iter()
        .filter_map(|n| p.get(*n).map(|v| (n, v)))
        .map(|(n, v)| {
            format!(
                "<input type=\"hidden\" name=\"{n}\" value=\"{}\">",
                escape(v)
            )
        })
        .collect()
}

const AUTHORIZE_FIELDS: &[&str] = &[
    "client_id",
    "redirect_uri",
    "response_type",
    "scope",
    "state",
    "code_challenge",
    "code_challenge_method",
];

/// A request checked far enough that errors may go back to the client.
struct Checked {
    client: ClientRow,
    name: String,
    redirect_uri: String,
    scope: Vec<&'static str>,
    challenge: String,
}

enum Refused {
    /// Shown on the page: the redirect URI is not trustworthy.
    Page(StatusCode, String),
    /// Sent back to the client's redirect URI.
    Redirect(String, &'static str, String),
    Internal(OAuthError),
}

fn redirect_error(o: &OAuth, p: &Params, uri: &str, code: &str, description: &str) -> Response {
    let mut pairs = vec![("error", code), ("error_description", description)];
    if let Some(s) = p.get("state") {
        pairs.push(("state", s));
    }
    pairs.push(("iss", &o.config().issuer));
    back_to(uri, &pairs)
}

fn back_to(uri: &str, pairs: &[(&str, &str)]) -> Response {
    match reqwest::Url::parse(uri) {
        Ok(mut u) => {
            u.query_pairs_mut().extend_pairs(pairs);
            Redirect::to(u.as_str()).into_response()
        }
        Err(_) => page(
            StatusCode::BAD_REQUEST,
            "Cannot sign in",
            "<p class=\"error\">The redirect URI is not valid.</p>",
        ),
    }
}

async fn check(o: &OAuth, p: &Params) -> Result<Checked, Refused> {
    let page_err = |m: &str| Refused::Page(StatusCode::BAD_REQUEST, m.to_owned());
    let id = p
        .get("client_id")
        .filter(|v| !v.is_empty() && v.len() <= 200)
        .ok_or_else(|| page_err("The request names no client."))?;
    let client = o
        .wms()
        .client(id.clone())
        .await
        .map_err(|e| Refused::Internal(e.into()))?
        .ok_or_else(|| page_err("The client is not registered here."))?;
    let meta: ClientMetadata = serde_json::from_str(&client.metadata)
        .map_err(|e| Refused::Internal(OAuthError::internal(e)))?;
    let redirect_uri = match (p.get("redirect_uri"), meta.redirect_uris.as_slice()) {
        (Some(u), registered) if registered.contains(u) => u.clone(),
        (None, [only]) => only.clone(),
        _ => {
            return Err(page_err(
                "The redirect URI is not one the client registered.",
            ));
        }
    };
    let back =
        |code: &'static str, d: &str| Refused::Redirect(redirect_uri.clone(), code, d.to_owned());
    if p.get("response_type").map(String::as_str) != Some("code") {
        return Err(back(
            "unsupported_response_type",
            "response_type must be code",
        ));
    }
    if !meta.grant_types.iter().any(|g| g == GRANT_CODE) {
        return Err(back(
            "unauthorized_client",
            "the client did not register the authorization_code grant",
        ));
    }
    let challenge = p
        .get("code_challenge")
        .filter(|c| c.len() == 43)
        .ok_or_else(|| {
            back(
                "invalid_request",
                "a PKCE code_challenge (S256) is required",
            )
        })?;
    if p.get("code_challenge_method").map(String::as_str) != Some("S256") {
        return Err(back(
            "invalid_request",
            "code_challenge_method must be S256",
        ));
    }
    let scope = parse_scope(p.get("scope").map_or("", String::as_str))
        .map_err(|e| back("invalid_scope", &e))?;
    Ok(Checked {
        name: meta.client_name.unwrap_or_else(|| client.client_id.clone()),
        client,
        redirect_uri,
        scope,
        challenge: challenge.clone(),
    })
}

fn refused(o: &OAuth, p: &Params, r: Refused) -> Response {
    match r {
        Refused::Page(status, m) => page(
            status,
            "Cannot sign in",
            &format!("<p class=\"error\">{}</p>", escape(&m)),
        ),
        Refused::Redirect(uri, code, d) => redirect_error(o, p, &uri, code, &d),
        Refused::Internal(e) => e.into_response(),
    }
}

fn login_form(
    action: &str,
    p: &Params,
    fields: &[&str],
    intro: &str,
    error: Option<&str>,
) -> String {
    let error = error.map_or(String::new(), |e| {
        format!("<p class=\"error\">{}</p>", escape(e))
    });
    format!(
        "<p>{intro}</p>{error}<form method=\"post\" action=\"{action}\">{}\
         <label>User name <input name=\"username\" autocomplete=\"username\" required></label>\
         <label>Password <input name=\"password\" type=\"password\" autocomplete=\"current-password\" required></label>\
         <button type=\"submit\">Sign in and allow</button></form>",
        hidden(p, fields)
    )
}

fn authorize_intro(c: &Checked) -> String {
    let scope = if c.scope.is_empty() {
        "no particular scope".to_owned()
    } else {
        c.scope.join(", ")
    };
    format!(
        "<strong>{}</strong> asks to act for you with: {}.",
        escape(&c.name),
        escape(&scope)
    )
}

pub async fn show(State(o): State<OAuth>, Query(p): Query<Params>) -> Response {
    match check(&o, &p).await {
        Ok(c) => page(
            StatusCode::OK,
            "Sign in",
            &login_form(
                "/oauth/authorize",
                &p,
                AUTHORIZE_FIELDS,
                &authorize_intro(&c),
                None,
            ),
        ),
        Err(r) => refused(&o, &p, r),
    }
}

/// The caller's socket address, where the server put it.
type Peer = Option<Extension<ConnectInfo<SocketAddr>>>;

fn client_address(peer: Peer) -> std::net::IpAddr {
    crate::ratelimit::client_of(peer.map(|Extension(ConnectInfo(a))| a))
}

pub async fn sign_in(
    State(o): State<OAuth>,
    peer: Peer,
    form: Result<Form<Params>, axum::extract::rejection::FormRejection>,
) -> Response {
    let Ok(Form(p)) = form else {
        return page(
            StatusCode::BAD_REQUEST,
            "Cannot sign in",
            "<p class=\"error\">The form could not be read.</p>",
        );
    };
    let c = match check(&o, &p).await {
        Ok(c) => c,
        Err(r) => return refused(&o, &p, r),
    };
    let (subject, held) = match sign_in_user(&o, &p, client_address(peer)).await {
        Ok(Some(u)) => u,
        Ok(None) => {
            return page(
                StatusCode::UNAUTHORIZED,
                "Sign in",
                &login_form(
                    "/oauth/authorize",
                    &p,
                    AUTHORIZE_FIELDS,
                    &authorize_intro(&c),
                    Some("Wrong user name or password."),
                ),
            );
        }
        Err(e) => return e.into_response(),
    };
    let granted = intersect(&c.scope, &held);
    if !c.scope.is_empty() && granted.is_empty() {
        return redirect_error(
            &o,
            &p,
            &c.redirect_uri,
            "access_denied",
            "the user holds none of the requested scopes",
        );
    }
    let code = match random_token() {
        Ok(t) => t,
        Err(e) => return OAuthError::internal(e).into_response(),
    };
    let saved = o
        .wms()
        .save_code(CodeRow {
            code_hash: sha256_hex(&code),
            client_id: c.client.client_id.clone(),
            redirect_uri: c.redirect_uri.clone(),
            code_challenge: c.challenge.clone(),
            scope: granted,
            subject,
            expires_at: now() + CODE_TTL_SECS,
        })
        .await;
    if let Err(e) = saved {
        return OAuthError::from(e).into_response();
    }
    let mut pairs = vec![("code", code.as_str())];
    if let Some(s) = p.get("state") {
        pairs.push(("state", s));
    }
    pairs.push(("iss", &o.config().issuer));
    back_to(&c.redirect_uri, &pairs)
}

async fn unclaimed(
    o: &OAuth,
    token: Option<&String>,
) -> Result<Option<(ClientRow, ClientMetadata)>, OAuthError> {
    let Some(token) = token.filter(|t| !t.is_empty() && t.len() <= 200) else {
        return Ok(None);
    };
    let Some(client) = o.wms().client_by_claim(sha256_hex(token)).await? else {
        return Ok(None);
    };
    let meta = serde_json::from_str(&client.metadata).map_err(OAuthError::internal)?;
    Ok(Some((client, meta)))
}

fn claim_intro(meta: &ClientMetadata, client: &ClientRow) -> String {
    format!(
        "Claim the agent <strong>{}</strong>: once you sign in, it may use {} on your behalf.",
        escape(meta.client_name.as_deref().unwrap_or(&client.client_id)),
        escape(if meta.scope.is_empty() {
            "no scope"
        } else {
            &meta.scope
        })
    )
}

fn no_claim() -> Response {
    page(
        StatusCode::NOT_FOUND,
        "Cannot claim",
        "<p class=\"error\">This claim link is unknown or was already used.</p>",
    )
}

pub async fn show_claim(State(o): State<OAuth>, Query(p): Query<Params>) -> Response {
    match unclaimed(&o, p.get("claim_token")).await {
        Ok(Some((client, meta))) => page(
            StatusCode::OK,
            "Claim an agent",
            &login_form(
                "/oauth/claim",
                &p,
                &["claim_token"],
                &claim_intro(&meta, &client),
                None,
            ),
        ),
        Ok(None) => no_claim(),
        Err(e) => e.into_response(),
    }
}

/// Claims a client: a person signs in on the page, or an agent presents
/// an identity assertion (answered in JSON).
pub async fn claim(
    State(o): State<OAuth>,
    peer: Peer,
    form: Result<Form<Params>, axum::extract::rejection::FormRejection>,
) -> Response {
    let Ok(Form(p)) = form else {
        return OAuthError::invalid_request("the body must be application/x-www-form-urlencoded")
            .into_response();
    };
    let (client, meta) = match unclaimed(&o, p.get("claim_token")).await {
        Ok(Some(c)) => c,
        Ok(None) if p.contains_key("assertion") => {
            return OAuthError::invalid_grant("the claim token is unknown or was already used")
                .into_response();
        }
        Ok(None) => return no_claim(),
        Err(e) => return e.into_response(),
    };
    let wanted = match parse_scope(&meta.scope) {
        Ok(w) => w,
        Err(e) => return OAuthError::internal(e).into_response(),
    };
    let claim_hash = client.claim_hash.clone().unwrap_or_default();
    if let Some(assertion) = p.get("assertion") {
        if p.get("assertion_type").map(String::as_str) != Some(ID_JAG) {
            return OAuthError::invalid_request(format!("assertion_type must be {ID_JAG}"))
                .into_response();
        }
        let (claims, issuer) = match o.trust().verify(assertion, &o.config().issuer).await {
            Ok(v) => v,
            Err(e) => return OAuthError::invalid_grant(e).into_response(),
        };
        if claims.client_id.as_deref() != Some(client.client_id.as_str()) {
            return OAuthError::invalid_grant("the assertion was issued to another client")
                .into_response();
        }
        let scope = intersect(&wanted, &issuer.scopes.join(" "));
        let owner = format!("{}#{}", claims.iss, claims.sub);
        return match o.wms().claim_client(claim_hash, owner, scope.clone()).await {
            Ok(true) => axum::Json(
                serde_json::json!({"client_id": client.client_id, "granted_scope": scope}),
            )
            .into_response(),
            Ok(false) => {
                OAuthError::invalid_grant("the client was claimed meanwhile").into_response()
            }
            Err(e) => OAuthError::from(e).into_response(),
        };
    }
    let (owner, held) = match sign_in_user(&o, &p, client_address(peer)).await {
        Ok(Some(u)) => u,
        Ok(None) => {
            return page(
                StatusCode::UNAUTHORIZED,
                "Claim an agent",
                &login_form(
                    "/oauth/claim",
                    &p,
                    &["claim_token"],
                    &claim_intro(&meta, &client),
                    Some("Wrong user name or password."),
                ),
            );
        }
        Err(e) => return e.into_response(),
    };
    let scope = intersect(&wanted, &held);
    match o.wms().claim_client(claim_hash, owner, scope.clone()).await {
        Ok(true) => page(
            StatusCode::OK,
            "Agent claimed",
            &format!(
                "<p>The agent <strong>{}</strong> is yours. It may now use: {}.</p>",
                escape(meta.client_name.as_deref().unwrap_or(&client.client_id)),
                escape(if scope.is_empty() {
                    "no scope (you hold none of those it asked for)"
                } else {
                    &scope
                })
            ),
        ),
        Ok(false) => no_claim(),
        Err(e) => OAuthError::from(e).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escaping() {
        assert_eq!(
            escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }
}
