//! The release-notes API's authorization server, end to end: discovery,
//! registration and claiming, the three grants, and every way a token is
//! refused at the protected routes.
//!
//! `tokens.rs`: discovery, client credentials, key rotation and every bad
//! token; `people.rs`: the login page, authorization code with PKCE and
//! password guessing; `assertions.rs`: identity assertions from a trusted
//! issuer and registration.

mod assertions;
mod people;
mod tokens;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use depot_cloud::oauth::token::AccessClaims;
use depot_cloud::oauth::trust::TrustedIssuer;
use depot_office::oauth::UserRow;
use depot_testkit::cloud::{TestCloud, spawn_cloud_configured};
use depot_testkit::http::{Client, Res};
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

/// A client of `app` that shows redirects instead of following them.
fn browser(app: &TestCloud) -> Client {
    Client::built(
        &app.base,
        reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()),
    )
}

async fn add_user(app: &TestCloud, name: &str, scope: &str) {
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

async fn register(app: &TestCloud, body: Value) -> (u16, Value) {
    let r = app
        .http
        .raw("POST", "/oauth/register")
        .json(&body)
        .send()
        .await;
    (r.status, r.body)
}

async fn token(
    app: &TestCloud,
    basic: Option<(&str, &str)>,
    form: &[(&str, &str)],
) -> (u16, Value) {
    let mut req = app.http.raw("POST", "/oauth/token").form(form);
    if let Some((id, secret)) = basic {
        req = req.basic_auth(id, Some(secret));
    }
    let r = req.send().await;
    if r.status == 200 {
        assert_eq!(r.headers["cache-control"], "no-store");
    }
    (r.status, r.body)
}

/// A machine client, registered openly and claimed by a person holding
/// `scope`: its id and secret.
async fn claimed_client(app: &TestCloud, person: &str, scope: &str) -> (String, String) {
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
        .http
        .raw("GET", &format!("/oauth/claim?claim_token={claim}"))
        .send()
        .await;
    assert_eq!(page.status, 200);
    assert!(page.text().contains("Release bot"));
    let claim_as = |password: &'static str| {
        app.http
            .raw("POST", "/oauth/claim")
            .form(&[
                ("claim_token", claim),
                ("username", person),
                ("password", password),
            ])
            .send()
    };
    assert_eq!(claim_as("nope").await.status, 401);
    assert_eq!(claim_as(PASSWORD).await.status, 200);
    assert_eq!(
        claim_as(PASSWORD).await.status,
        404,
        "a claim token is spent once"
    );
    (id, secret)
}

/// Signs `claims` with the server's own current key: a token that only
/// its claims make wrong.
async fn forge_with_server_key(app: &TestCloud, claims: &Value) -> String {
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
    app: &TestCloud,
    auth: Option<&str>,
    query: &str,
    body: &Value,
) -> (u16, Value, reqwest::header::HeaderMap) {
    let mut req = app
        .http
        .raw("POST", &format!("/api/releases{query}"))
        .json(body);
    if let Some(a) = auth {
        req = req.header("authorization", a);
    }
    let r = req.send().await;
    (r.status, r.body, r.headers)
}

fn urlencode(s: &str) -> String {
    let mut u = reqwest::Url::parse("http://x/").expect("url");
    u.query_pairs_mut().append_pair("v", s);
    u.query().expect("query")[2..].to_owned()
}
