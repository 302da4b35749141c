//! The release-notes API's authorization server, end to end: discovery,
//! registration and claiming, the three grants, and every way a token is
//! refused at the protected routes.

mod common;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use common::{TestApp, spawn_app_configured};
use depot_cloud::oauth::token::AccessClaims;
use depot_cloud::oauth::trust::TrustedIssuer;
use depot_wms::oauth::UserRow;
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
    app.wms
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
    let wrong = app
        .client
        .post(format!("{}/oauth/claim", app.base))
        .form(&[
            ("claim_token", claim),
            ("username", person),
            ("password", "nope"),
        ])
        .send()
        .await
        .expect("claim");
    assert_eq!(wrong.status(), 401);
    let ok = app
        .client
        .post(format!("{}/oauth/claim", app.base))
        .form(&[
            ("claim_token", claim),
            ("username", person),
            ("password", PASSWORD),
        ])
        .send()
        .await
        .expect("claim");
    assert_eq!(ok.status(), 200);
    let again = app
        .client
        .post(format!("{}/oauth/claim", app.base))
        .form(&[
            ("claim_token", claim),
            ("username", person),
            ("password", PASSWORD),
        ])
        .send()
        .await
        .expect("claim");
    assert_eq!(again.status(), 404, "a claim token is spent once");
    (id, secret)
}

/// Signs `claims` with the server's own current key: a token that only
/// its claims make wrong.
async fn forge_with_server_key(app: &TestApp, claims: &Value) -> String {
    let keys = app
        .wms
        .signing_keys(now(), || {
            Err(depot_wms::WmsError::Internal("no key".into()))
        })
        .await
        .expect("keys");
    let k = &keys[0];
    let mut h = Header::new(Algorithm::ES256);
    h.kid = Some(k.kid.clone());
    jsonwebtoken::encode(&h, claims, &EncodingKey::from_ec_der(&k.pkcs8)).expect("sign")
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

#[tokio::test]
async fn discovery_documents_describe_the_server() {
    let app = spawn_app_configured(|_| {}).await;
    let get = |path: &'static str| {
        let c = app.client.clone();
        let base = app.base.clone();
        async move {
            let r = c.get(format!("{base}{path}")).send().await.expect("get");
            assert_eq!(r.status(), 200, "{path}");
            r.json::<Value>().await.expect("json")
        }
    };
    let pr = get("/.well-known/oauth-protected-resource").await;
    let issuer = pr["resource"].as_str().expect("resource").to_owned();
    assert_eq!(pr["authorization_servers"], json!([issuer]));
    assert!(
        pr["scopes_supported"]
            .as_array()
            .expect("scopes")
            .contains(&json!("releases:write"))
    );
    assert_eq!(pr["bearer_methods_supported"], json!(["header"]));
    assert!(
        pr["resource_documentation"]
            .as_str()
            .expect("doc")
            .starts_with("http")
    );
    assert!(
        pr["public_access"]
            .as_str()
            .expect("public")
            .contains("no token")
    );

    let asm = get("/.well-known/oauth-authorization-server").await;
    assert_eq!(asm["issuer"], issuer.as_str());
    for field in [
        "authorization_endpoint",
        "token_endpoint",
        "registration_endpoint",
        "jwks_uri",
    ] {
        assert!(
            asm[field].as_str().is_some_and(|u| u.starts_with("http")),
            "{field}"
        );
    }
    assert!(
        asm["token_endpoint"]
            .as_str()
            .expect("t")
            .ends_with("/oauth/token")
    );
    assert_eq!(asm["code_challenge_methods_supported"], json!(["S256"]));
    assert!(
        asm["grant_types_supported"]
            .as_array()
            .expect("grants")
            .contains(&json!(JWT_BEARER))
    );
    assert_eq!(
        asm["identity_assertion"]["assertion_types_supported"],
        json!([ID_JAG])
    );
    assert!(
        asm["identity_assertion"]["claim_uri"]
            .as_str()
            .expect("claim")
            .ends_with("/oauth/claim")
    );

    let oidc = get("/.well-known/openid-configuration").await;
    assert_eq!(oidc["issuer"], issuer.as_str());
    assert_eq!(oidc["jwks_uri"], asm["jwks_uri"]);
    assert!(oidc["subject_types_supported"].is_array());

    let jwks = get("/.well-known/jwks.json").await;
    let keys = jwks["keys"].as_array().expect("keys");
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0]["kty"], "EC");
    assert_eq!(keys[0]["alg"], "ES256");
    assert!(
        keys[0].get("d").is_none(),
        "the private part must never be published"
    );
}

#[tokio::test]
async fn client_credentials_after_a_claim_publish_a_release() {
    let app = spawn_app_configured(|_| {}).await;
    let (id, secret) = claimed_client(&app, "ana", "releases:write").await;

    let (s, b) = token(
        &app,
        Some((&id, "wrong")),
        &[("grant_type", "client_credentials")],
    )
    .await;
    assert_eq!((s, b["error"].as_str()), (401, Some("invalid_client")));
    let (s, b) = token(&app, Some((&id, &secret)), &[("grant_type", "password")]).await;
    assert_eq!(
        (s, b["error"].as_str()),
        (400, Some("unsupported_grant_type"))
    );
    let (s, b) = token(
        &app,
        Some((&id, &secret)),
        &[("grant_type", "client_credentials"), ("scope", "admin")],
    )
    .await;
    assert_eq!((s, b["error"].as_str()), (400, Some("invalid_scope")));
    // client_secret_post works as well as Basic.
    let (s, b) = token(
        &app,
        None,
        &[
            ("grant_type", "client_credentials"),
            ("client_id", &id),
            ("client_secret", &secret),
        ],
    )
    .await;
    assert_eq!(s, 200, "{b}");

    let (s, b) = token(
        &app,
        Some((&id, &secret)),
        &[
            ("grant_type", "client_credentials"),
            ("scope", "releases:write"),
        ],
    )
    .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["token_type"], "Bearer");
    assert_eq!(b["scope"], "releases:write");
    let access = b["access_token"].as_str().expect("token");
    let c = claims_of(access);
    assert_eq!(c.sub, id);
    assert_eq!(c.client_id, id);
    assert!(c.exp > now() && c.exp <= now() + 3600);

    let (s, body, _) = publish(
        &app,
        Some(&format!("Bearer {access}")),
        "",
        &release("1.4.0"),
    )
    .await;
    assert!((200..300).contains(&s), "{s} {body}");
    let listed = app
        .client
        .get(format!("{}/api/releases", app.base))
        .header("accept", "application/json")
        .send()
        .await
        .expect("list")
        .text()
        .await
        .expect("text");
    assert!(listed.contains("1.4.0"), "{listed}");
}

#[tokio::test]
async fn every_bad_token_is_refused_with_a_bearer_challenge() {
    let app = spawn_app_configured(|_| {}).await;
    let (id, secret) = claimed_client(&app, "ana", "releases:write").await;
    let (_, b) = token(
        &app,
        Some((&id, &secret)),
        &[("grant_type", "client_credentials")],
    )
    .await;
    let good = b["access_token"].as_str().expect("token").to_owned();
    let c = claims_of(&good);
    let base = serde_json::to_value(&c).expect("claims");
    let with = |patch: Value| {
        let mut v = base.clone();
        for (k, val) in patch.as_object().expect("patch") {
            v[k] = val.clone();
        }
        v
    };
    let n = now();
    let expired = forge_with_server_key(
        &app,
        &with(json!({"iat": n - 7200, "nbf": n - 7200, "exp": n - 3600})),
    )
    .await;
    let early = forge_with_server_key(&app, &with(json!({"nbf": n + 3600}))).await;
    let wrong_iss =
        forge_with_server_key(&app, &with(json!({"iss": "https://evil.example"}))).await;
    let wrong_aud =
        forge_with_server_key(&app, &with(json!({"aud": "https://other.example"}))).await;
    let no_scope = forge_with_server_key(&app, &with(json!({"scope": ""}))).await;

    // A key of our making that the server never published.
    let rng = ring::rand::SystemRandom::new();
    let stranger =
        EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).expect("key");
    let mut h = Header::new(Algorithm::ES256);
    h.kid = Some("not-a-published-key".into());
    let unknown_key = jsonwebtoken::encode(&h, &base, &EncodingKey::from_ec_der(stranger.as_ref()))
        .expect("sign");
    // The same stranger key under the server's key id.
    let mut h = Header::new(Algorithm::ES256);
    h.kid = jsonwebtoken::decode_header(&good).expect("header").kid;
    let wrong_signature =
        jsonwebtoken::encode(&h, &base, &EncodingKey::from_ec_der(stranger.as_ref()))
            .expect("sign");

    let parts: Vec<&str> = good.split('.').collect();
    let none = format!(
        "{}.{}.",
        B64.encode(r#"{"alg":"none","typ":"JWT"}"#),
        parts[1]
    );
    let tampered = {
        let mut p = base.clone();
        p["sub"] = "someone-else".into();
        format!("{}.{}.{}", parts[0], B64.encode(p.to_string()), parts[2])
    };
    // HS256 "signed" with the published key, as a confused verifier would
    // take it: the JWK document and the raw public point.
    let jwks: Value = app
        .client
        .get(format!("{}/.well-known/jwks.json", app.base))
        .send()
        .await
        .expect("jwks")
        .json()
        .await
        .expect("json");
    let jwk = &jwks["keys"][0];
    let mut point = vec![4u8];
    point.extend(B64.decode(jwk["x"].as_str().expect("x")).expect("x"));
    point.extend(B64.decode(jwk["y"].as_str().expect("y")).expect("y"));
    let mut hs = Header::new(Algorithm::HS256);
    hs.kid = jwk["kid"].as_str().map(str::to_owned);
    let hs_jwk = jsonwebtoken::encode(
        &hs,
        &base,
        &EncodingKey::from_secret(jwk.to_string().as_bytes()),
    )
    .expect("hs");
    let hs_point = jsonwebtoken::encode(&hs, &base, &EncodingKey::from_secret(&point)).expect("hs");

    let metadata = "/.well-known/oauth-protected-resource";
    let cases: Vec<(&str, Option<String>, &str)> = vec![
        ("no header", None, ""),
        (
            "basic scheme",
            Some(format!("Basic {}", B64.encode("a:b"))),
            "",
        ),
        ("empty bearer", Some("Bearer ".into()), ""),
        ("expired", Some(format!("Bearer {expired}")), ""),
        ("not yet valid", Some(format!("Bearer {early}")), ""),
        ("wrong issuer", Some(format!("Bearer {wrong_iss}")), ""),
        ("wrong audience", Some(format!("Bearer {wrong_aud}")), ""),
        ("unknown key", Some(format!("Bearer {unknown_key}")), ""),
        (
            "wrong signature",
            Some(format!("Bearer {wrong_signature}")),
            "",
        ),
        ("alg none", Some(format!("Bearer {none}")), ""),
        ("tampered payload", Some(format!("Bearer {tampered}")), ""),
        ("HS256 with the JWK", Some(format!("Bearer {hs_jwk}")), ""),
        (
            "HS256 with the public point",
            Some(format!("Bearer {hs_point}")),
            "",
        ),
        ("garbage", Some("Bearer not.a.jwt".into()), ""),
        ("token in the query", None, "?access_token=GOOD"),
        (
            "token in the query beside the header",
            Some(format!("Bearer {good}")),
            "?access_token=GOOD",
        ),
    ];
    let before = app.wms.releases(100).await.expect("releases").len();
    for (label, auth, query) in cases {
        let query = query.replace("GOOD", &good);
        let (s, body, headers) = publish(&app, auth.as_deref(), &query, &release("2.0.0")).await;
        assert_eq!(s, 401, "{label}: {body}");
        assert_eq!(body["error"], 1, "{label}: {body}");
        assert_eq!(body["code"], 401, "{label}");
        let challenge = headers["www-authenticate"].to_str().expect("challenge");
        assert!(challenge.starts_with("Bearer "), "{label}: {challenge}");
        assert!(challenge.contains(metadata), "{label}: {challenge}");
        if label != "no header" {
            assert!(challenge.contains("error="), "{label}: {challenge}");
        }
    }
    // A token only in the body is no token.
    let mut body = release("2.0.0");
    body["access_token"] = good.clone().into();
    let (s, _, _) = publish(&app, None, "", &body).await;
    assert_eq!(s, 401);

    let (s, body, headers) = publish(
        &app,
        Some(&format!("Bearer {no_scope}")),
        "",
        &release("2.0.0"),
    )
    .await;
    assert_eq!(s, 403, "{body}");
    assert_eq!(body["error"], 1);
    let challenge = headers["www-authenticate"].to_str().expect("challenge");
    assert!(
        challenge.contains(r#"error="insufficient_scope""#),
        "{challenge}"
    );
    assert!(challenge.contains(metadata), "{challenge}");

    let sync = app
        .client
        .post(format!("{}/api/sync-translations", app.base))
        .header("authorization", format!("Bearer {no_scope}"))
        .send()
        .await
        .expect("sync");
    assert_eq!(sync.status(), 403);
    let sync = app
        .client
        .post(format!("{}/api/sync-translations", app.base))
        .send()
        .await
        .expect("sync");
    assert_eq!(sync.status(), 401);
    assert_eq!(
        app.wms.releases(100).await.expect("releases").len(),
        before,
        "nothing was published"
    );

    // Reads stay open.
    let r = app
        .client
        .get(format!("{}/api/releases", app.base))
        .send()
        .await
        .expect("read");
    assert_eq!(r.status(), 200);
}

fn pkce() -> (String, String) {
    let verifier = depot_cloud::oauth::secrets::random_token().expect("verifier");
    let challenge = B64.encode(Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

#[tokio::test]
async fn authorization_code_with_pkce_for_a_person() {
    let app = spawn_app_configured(|_| {}).await;
    add_user(&app, "ana", "releases:write").await;
    add_user(&app, "bob", "").await;
    let cb = "http://127.0.0.1:9/callback";
    let (s, reg) = register(
        &app,
        json!({"client_name": "<b>Notes</b> app", "redirect_uris": [cb], "token_endpoint_auth_method": "none", "scope": "releases:write"}),
    )
    .await;
    assert_eq!(s, 201, "{reg}");
    let id = reg["client_id"].as_str().expect("id").to_owned();
    assert!(reg.get("client_secret").is_none());
    let web = browser();
    let authorize = |challenge: &str, redirect: &str| {
        format!(
            "{}/oauth/authorize?response_type=code&client_id={id}&redirect_uri={}&scope=releases%3Awrite&state=xyz&code_challenge={challenge}&code_challenge_method=S256",
            app.base,
            urlencode(redirect)
        )
    };

    // The login page, with the client's name escaped.
    let (_, challenge) = pkce();
    let page = web
        .get(authorize(&challenge, cb))
        .send()
        .await
        .expect("page");
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    let html = page.text().await.expect("html");
    assert!(
        html.contains("&lt;b&gt;Notes&lt;/b&gt; app") && !html.contains("<b>Notes"),
        "{html}"
    );

    // A redirect URI the client did not register is not redirected to.
    let r = web
        .get(authorize(&challenge, "https://evil.example/cb"))
        .send()
        .await
        .expect("evil");
    assert_eq!(r.status(), 400);
    // Without PKCE the client hears about it at its redirect URI.
    let r = web
        .get(format!(
            "{}/oauth/authorize?response_type=code&client_id={id}&redirect_uri={}&state=s1",
            app.base,
            urlencode(cb)
        ))
        .send()
        .await
        .expect("no pkce");
    assert_eq!(r.status(), 303);
    let loc = r.headers()["location"].to_str().expect("loc").to_owned();
    assert!(
        loc.starts_with(cb) && loc.contains("error=invalid_request") && loc.contains("state=s1"),
        "{loc}"
    );

    let sign_in = |challenge: String, user: &'static str, password: &'static str| {
        let web = web.clone();
        let url = format!("{}/oauth/authorize", app.base);
        let id = id.clone();
        async move {
            web.post(url)
                .form(&[
                    ("response_type", "code"),
                    ("client_id", id.as_str()),
                    ("redirect_uri", cb),
                    ("scope", "releases:write"),
                    ("state", "xyz"),
                    ("code_challenge", challenge.as_str()),
                    ("code_challenge_method", "S256"),
                    ("username", user),
                    ("password", password),
                ])
                .send()
                .await
                .expect("sign in")
        }
    };
    let code_of = |r: &reqwest::Response| -> String {
        assert_eq!(r.status(), 303);
        let loc = reqwest::Url::parse(r.headers()["location"].to_str().expect("loc")).expect("url");
        let q: std::collections::HashMap<_, _> = loc.query_pairs().into_owned().collect();
        assert_eq!(q["state"], "xyz");
        assert!(q.contains_key("iss"));
        q["code"].clone()
    };

    let (_, challenge) = pkce();
    assert_eq!(
        sign_in(challenge.clone(), "ana", "wrong").await.status(),
        401
    );
    // Bob holds no scope the client asked for.
    let r = sign_in(challenge.clone(), "bob", PASSWORD).await;
    assert!(
        r.headers()["location"]
            .to_str()
            .expect("loc")
            .contains("error=access_denied")
    );

    // A code exchanged with the wrong verifier is burnt.
    let code = code_of(&sign_in(challenge, "ana", PASSWORD).await);
    let (other_verifier, _) = pkce();
    let (s, b) = token(
        &app,
        None,
        &[
            ("grant_type", "authorization_code"),
            ("client_id", &id),
            ("code", &code),
            ("redirect_uri", cb),
            ("code_verifier", &other_verifier),
        ],
    )
    .await;
    assert_eq!((s, b["error"].as_str()), (400, Some("invalid_grant")));

    let (verifier, challenge) = pkce();
    let code = code_of(&sign_in(challenge, "ana", PASSWORD).await);
    let exchange = [
        ("grant_type", "authorization_code"),
        ("client_id", id.as_str()),
        ("code", code.as_str()),
        ("redirect_uri", cb),
        ("code_verifier", verifier.as_str()),
    ];
    let (s, b) = token(&app, None, &exchange).await;
    assert_eq!(s, 200, "{b}");
    let c = claims_of(b["access_token"].as_str().expect("token"));
    assert_eq!(c.sub, "ana");
    assert_eq!(c.scope, "releases:write");
    // A code is good once.
    let (s, b) = token(&app, None, &exchange).await;
    assert_eq!((s, b["error"].as_str()), (400, Some("invalid_grant")));
    // Parameters given twice are refused.
    let (s, _) = token(
        &app,
        None,
        &[
            ("grant_type", "authorization_code"),
            ("grant_type", "client_credentials"),
            ("client_id", &id),
        ],
    )
    .await;
    assert_eq!(s, 400);
}

fn urlencode(s: &str) -> String {
    let mut u = reqwest::Url::parse("http://x/").expect("url");
    u.query_pairs_mut().append_pair("v", s);
    u.query().expect("query")[2..].to_owned()
}

/// A tiny identity provider: its key, and a server publishing its JWKS.
struct Provider {
    issuer: String,
    kid: String,
    pkcs8: Vec<u8>,
    jwks_uri: String,
}

async fn provider() -> Provider {
    let rng = ring::rand::SystemRandom::new();
    let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).expect("key");
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, doc.as_ref(), &rng)
        .expect("pair");
    let point = pair.public_key().as_ref().to_vec();
    let kid = "idp-key-1".to_owned();
    let jwks = json!({"keys": [{
        "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": kid,
        "x": B64.encode(&point[1..33]), "y": B64.encode(&point[33..]),
    }]});
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let router = axum::Router::new().route(
        "/jwks",
        axum::routing::get(move || {
            let jwks = jwks.clone();
            async move { axum::Json(jwks) }
        }),
    );
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Provider {
        issuer: format!("http://{addr}"),
        kid,
        pkcs8: doc.as_ref().to_vec(),
        jwks_uri: format!("http://{addr}/jwks"),
    }
}

impl Provider {
    fn assert(&self, claims: Value) -> String {
        let mut h = Header::new(Algorithm::ES256);
        h.kid = Some(self.kid.clone());
        h.typ = Some("oauth-id-jag+jwt".into());
        jsonwebtoken::encode(&h, &claims, &EncodingKey::from_ec_der(&self.pkcs8))
            .expect("assertion")
    }
}

#[tokio::test]
async fn identity_assertions_from_a_trusted_issuer() {
    let idp = provider().await;
    let trusted = TrustedIssuer {
        issuer: idp.issuer.clone(),
        jwks_uri: idp.jwks_uri.clone(),
        scopes: vec!["releases:write".into()],
    };
    let app = spawn_app_configured(move |s| s.oauth.trusted_issuers = vec![trusted]).await;
    let audience: Value = app
        .client
        .get(format!(
            "{}/.well-known/oauth-authorization-server",
            app.base
        ))
        .send()
        .await
        .expect("meta")
        .json()
        .await
        .expect("json");
    let aud = audience["issuer"].as_str().expect("issuer").to_owned();
    let n = now();
    let base = |client_id: Option<&str>, jti: &str| {
        let mut c = json!({"iss": idp.issuer, "sub": "user-42", "aud": aud, "iat": n, "exp": n + 300, "jti": jti, "scope": "releases:write"});
        if let Some(id) = client_id {
            c["client_id"] = id.into();
        }
        c
    };

    // Registration with an assertion: claimed at once for that identity.
    let (s, reg) = register(
        &app,
        json!({
            "client_name": "Agent", "grant_types": [JWT_BEARER], "scope": "releases:write",
            "identity_type": "identity_assertion", "assertion_type": ID_JAG,
            "assertion": idp.assert(base(None, "reg-1")),
        }),
    )
    .await;
    assert_eq!(s, 201, "{reg}");
    assert_eq!(reg["granted_scope"], "releases:write");
    assert!(reg.get("claim_token").is_none());
    let id = reg["client_id"].as_str().expect("id").to_owned();
    let secret = reg["client_secret"].as_str().expect("secret").to_owned();

    let exchange = |assertion: String| {
        let id = id.clone();
        let secret = secret.clone();
        let app = &app;
        async move {
            token(
                app,
                Some((&id, &secret)),
                &[("grant_type", JWT_BEARER), ("assertion", &assertion)],
            )
            .await
        }
    };
    let good = idp.assert(base(Some(&id), "tok-1"));
    let (s, b) = exchange(good.clone()).await;
    assert_eq!(s, 200, "{b}");
    let c = claims_of(b["access_token"].as_str().expect("token"));
    assert_eq!(c.sub, format!("{}#user-42", idp.issuer));
    assert_eq!(c.scope, "releases:write");
    let (s, b) = exchange(good).await;
    assert_eq!(
        (s, b["error"].as_str()),
        (400, Some("invalid_grant")),
        "a replay"
    );

    let mut other_aud = base(Some(&id), "tok-2");
    other_aud["aud"] = "https://someone-else.example".into();
    let mut other_client = base(Some("another-client"), "tok-3");
    other_client["client_id"] = "another-client".into();
    let mut expired = base(Some(&id), "tok-4");
    expired["exp"] = (n - 600).into();
    expired["iat"] = (n - 900).into();
    let mut untrusted = base(Some(&id), "tok-5");
    untrusted["iss"] = "https://untrusted.example".into();
    for (label, claims) in [
        ("audience", other_aud),
        ("client", other_client),
        ("expired", expired),
        ("issuer", untrusted),
    ] {
        let (s, b) = exchange(idp.assert(claims)).await;
        assert_eq!(
            (s, b["error"].as_str()),
            (400, Some("invalid_grant")),
            "{label}: {b}"
        );
    }
    // Without the ID-JAG type the same claims are not an identity assertion.
    let mut h = Header::new(Algorithm::ES256);
    h.kid = Some(idp.kid.clone());
    let plain = jsonwebtoken::encode(
        &h,
        &base(Some(&id), "tok-6"),
        &EncodingKey::from_ec_der(&idp.pkcs8),
    )
    .expect("jwt");
    let (s, _) = exchange(plain).await;
    assert_eq!(s, 400);
}

#[tokio::test]
async fn registration_refuses_bad_metadata_and_can_be_closed() {
    let app = spawn_app_configured(|_| {}).await;
    for (body, code) in [
        (
            json!({"redirect_uris": ["http://example.com/cb"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": ["https://example.com/cb"], "grant_types": ["implicit"]}),
            "invalid_client_metadata",
        ),
        (
            json!({"grant_types": ["client_credentials"], "scope": "everything"}),
            "invalid_client_metadata",
        ),
        (json!("not an object"), "invalid_client_metadata"),
    ] {
        let (s, b) = register(&app, body.clone()).await;
        assert_eq!((s, b["error"].as_str()), (400, Some(code)), "{body}: {b}");
    }
    let r = app
        .client
        .post(format!("{}/oauth/register", app.base))
        .body(vec![b'{'; 64 * 1024])
        .send()
        .await
        .expect("big");
    assert_eq!(r.status(), 413);

    let closed = spawn_app_configured(|s| s.oauth.open_registration = false).await;
    let (s, b) = register(&closed, json!({"grant_types": ["client_credentials"]})).await;
    assert_eq!((s, b["error"].as_str()), (403, Some("access_denied")));
}

#[tokio::test]
async fn a_key_rotated_elsewhere_is_picked_up_and_the_old_one_still_verifies() {
    let app = spawn_app_configured(|_| {}).await;
    let (id, secret) = claimed_client(&app, "ana", "releases:write").await;
    let (_, b) = token(
        &app,
        Some((&id, &secret)),
        &[("grant_type", "client_credentials")],
    )
    .await;
    let old = b["access_token"].as_str().expect("token").to_owned();
    let first = app
        .wms
        .signing_keys(now(), || {
            Err(depot_wms::WmsError::Internal("no key".into()))
        })
        .await
        .expect("keys")
        .remove(0);
    // Another instance sharing the database, past the first key's
    // retirement, mints the next key.
    let later = first.retire_at + 1;
    let keys = app
        .wms
        .signing_keys(later, move || {
            depot_cloud::oauth::keys::generate(
                later,
                std::time::Duration::from_secs(30 * 86_400),
                std::time::Duration::from_secs(3600),
            )
        })
        .await
        .expect("rotate");
    assert_eq!(keys.len(), 2, "the retired key stays published");
    let next = keys.iter().find(|k| k.kid != first.kid).expect("new key");
    // A token that instance signed with its new key.
    let mut claims = serde_json::to_value(claims_of(&old)).expect("claims");
    claims["jti"] = "from-the-other-instance".into();
    let mut h = Header::new(Algorithm::ES256);
    h.kid = Some(next.kid.clone());
    let newer =
        jsonwebtoken::encode(&h, &claims, &EncodingKey::from_ec_der(&next.pkcs8)).expect("sign");

    let (s, body, _) = publish(
        &app,
        Some(&format!("Bearer {newer}")),
        "",
        &release("3.0.0"),
    )
    .await;
    assert!((200..300).contains(&s), "{s} {body}");
    let jwks: Value = app
        .client
        .get(format!("{}/.well-known/jwks.json", app.base))
        .send()
        .await
        .expect("jwks")
        .json()
        .await
        .expect("json");
    assert_eq!(jwks["keys"].as_array().expect("keys").len(), 2, "{jwks}");
    let (s, body, _) = publish(&app, Some(&format!("Bearer {old}")), "", &release("3.0.1")).await;
    assert!((200..300).contains(&s), "{s} {body}");
}

#[tokio::test]
async fn password_guessing_is_slowed_down() {
    let app = spawn_app_configured(|_| {}).await;
    add_user(&app, "ana", "releases:write").await;
    let (_, reg) = register(
        &app,
        json!({"grant_types": ["client_credentials"], "scope": "releases:write"}),
    )
    .await;
    let claim = reg["claim_token"].as_str().expect("claim").to_owned();
    let mut statuses = Vec::new();
    for i in 0..12 {
        let r = app
            .client
            .post(format!("{}/oauth/claim", app.base))
            .form(&[
                ("claim_token", claim.as_str()),
                ("username", "ANA"),
                ("password", &format!("guess {i}")),
            ])
            .send()
            .await
            .expect("claim");
        statuses.push(r.status().as_u16());
    }
    assert!(statuses[..10].iter().all(|s| *s == 401), "{statuses:?}");
    assert_eq!(statuses[10..], [429, 429]);
}
