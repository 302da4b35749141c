//! Identity assertions (ID-JAG) from a trusted issuer, and registration.

use super::*;

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
    let app = spawn_cloud_configured(move |s| s.oauth.trusted_issuers = vec![trusted]).await;
    let audience: Value = app
        .http
        .raw("GET", "/.well-known/oauth-authorization-server")
        .send()
        .await
        .body;
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
    let app = spawn_cloud_configured(|_| {}).await;
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
        .http
        .raw("POST", "/oauth/register")
        .body(vec![b'{'; 64 * 1024])
        .send()
        .await;
    assert_eq!(r.status, 413);

    let closed = spawn_cloud_configured(|s| s.oauth.open_registration = false).await;
    let (s, b) = register(&closed, json!({"grant_types": ["client_credentials"]})).await;
    assert_eq!((s, b["error"].as_str()), (403, Some("access_denied")));
}
