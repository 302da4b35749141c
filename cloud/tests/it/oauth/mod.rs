//! The release-notes API's authorization server, end to end: discovery,
//! registration and claiming, the three grants, and every way a token is
//! refused at the protected routes.
//!
//! `tokens.rs`: discovery, client credentials, key rotation and every bad
//! token; `people.rs`: the login page, authorization code with PKCE and
//! password guessing; `assertions.rs`: identity assertions from a trusted
//! issuer and registration.

mod assertions;
use crate::common;
mod people;
mod tokens;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use common::{TestApp, spawn_app_configured};
use depot_cloud::oauth::token::AccessClaims;
use depot_cloud::oauth::trust::TrustedIssuer;
use depot_office::oauth::UserRow;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const PASSWORD: &str = "a long enough password";

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// A client that shows redirects instead of following them.
fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

async fn json_of(r: reqwest::Response) -> (u16, Value, reqwest::header::HeaderMap) {
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let text = r.text().await.expect("body");
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
        headers,
    )
}

async fn add_user(app: &TestApp, name: &str, scope: &str) {
    app.office()
        .save_user(UserRow {
            username: name.into(),
            password_hash: depot_cloud::oauth::secrets::hash_password(PASSWORD).expect("hash"),
            scope: scope.into(),
            created_at: now(),
        })
        .await
        .expect("user");
}

async fn register(app: &TestApp, body: Value) -> (u16, Value) {
    let r = app
        .client
        .post(format!("{}/oauth/register", app.base))
        .json(&body)
        .send()
        .await
        .expect("register");
    let (s, b, _) = json_of(r).await;
    (s, b)
}

async fn token(app: &TestApp, basic: Option<(&str, &str)>, form: &[(&str, &str)]) -> (u16, Value) {
    let mut req = app
        .client
        .post(format!("{}/oauth/token", app.base))
        .form(form);
    if let Some((id, secret)) = basic {
        req = req.basic_auth(id, Some(secret));
    }
    let (s, b, h) = json_of(req.send().await.expect("token")).await;
    if s == 200 {
        assert_eq!(h["cache-control"], "no-store");
    }
    (s, b)
}

/// A machine client, registered openly and claimed by a person holding
/// `scope`: its id and secret.
async fn claimed_client(app: &TestApp, person: &str, scope: &str) -> (String, String) {
    add_user(app, person, scope).await;
    let (s, reg) = register(
        app,
        json!({"client_name": "Release bot", "grant_types": ["client_credentials"], "scope": "releases:write"}),
    )
    .await;
    assert_eq!(s, 201, "{reg}");
    assert_eq!(reg["granted_scope"], "");
    let id = reg["client_id"].as_str().expect("id").to_owned();
    let secret = reg["client_secret"].as_str().expect("secret").to_owned();
    // Unclaimed, it may not get a token.
    let (s, b) = token(
        app,
        Some((&id, &secret)),
        &[("grant_type", "client_credentials")],
    )
    .await;
    assert_eq!(
        (s, b["error"].as_str()),
        (400, Some("invalid_scope")),
        "{b}"
    );

    let claim = reg["claim_token"].as_str().expect("claim token");
    let page = app
        .client
        .get(format!("{}/oauth/claim?claim_token={claim}", app.base))
        .send()
        .await
        .expect("claim page");
    assert_eq!(page.status(), 200);
    assert!(page.text().await.expect("html").contains("Release bot"));
    let claim_as = |password: &'static str| {
        app.client
            .post(format!("{}/oauth/claim", app.base))
            .form(&[
                ("claim_token", claim),
                ("username", person),
                ("password", password),
            ])
            .send()
    };
    assert_eq!(claim_as("nope").await.expect("claim").status(), 401);
    assert_eq!(claim_as(PASSWORD).await.expect("claim").status(), 200);
    assert_eq!(
        claim_as(PASSWORD).await.expect("claim").status(),
        404,
        "a claim token is spent once"
    );
    (id, secret)
}

/// Signs `claims` with the server's own current key: a token that only
/// its claims make wrong.
async fn forge_with_server_key(app: &TestApp, claims: &Value) -> String {
    let keys = app
        .office()
        .signing_keys(now(), || {
            Err(depot_wms::WmsError::Internal("no key".into()))
        })
        .await
        .expect("keys");
    let k = &keys[0];
    sign_access_token(&k.kid, &k.pkcs8, claims)
}

/// An access token as the server makes them (`typ: at+jwt`, a low-S
/// signature) under key `kid`.
fn sign_access_token(kid: &str, pkcs8: &[u8], claims: &Value) -> String {
    let mut h = Header::new(Algorithm::ES256);
    h.kid = Some(kid.to_owned());
    h.typ = Some("at+jwt".into());
    let token = jsonwebtoken::encode(&h, claims, &EncodingKey::from_ec_der(pkcs8)).expect("sign");
    depot_cloud::oauth::ecdsa::to_low_s(&token).expect("low-S")
}

fn claims_of(token: &str) -> AccessClaims {
    let payload = token.split('.').nth(1).expect("payload");
    serde_json::from_slice(&B64.decode(payload).expect("b64")).expect("claims")
}

/// A body the publish route accepts.
fn release(version: &str) -> Value {
    json!({
        "product": "wms",
        "version": version,
        "notes": {"en": {"title": format!("Depot {version}"), "body": "Faster picking."}}
    })
}

async fn publish(
    app: &TestApp,
    auth: Option<&str>,
    query: &str,
    body: &Value,
) -> (u16, Value, reqwest::header::HeaderMap) {
    let mut req = app
        .client
        .post(format!("{}/api/releases{query}", app.base))
        .json(body);
    if let Some(a) = auth {
        req = req.header("authorization", a);
    }
    json_of(req.send().await.expect("publish")).await
}

fn urlencode(s: &str) -> String {
    let mut u = reqwest::Url::parse("http://x/").expect("url");
    u.query_pairs_mut().append_pair("v", s);
    u.query().expect("query")[2..].to_owned()
}
