//! Discovery, client credentials, key rotation, and every bad token.

use super::*;

#[tokio::test]
async fn discovery_documents_describe_the_server() {
    let app = spawn_cloud_configured(|_| {}).await;
    let get = |path: &'static str| {
        let c = app.http.clone();
        async move {
            let r = c.get(path).await;
            assert_eq!(r.status, 200, "{path}");
            r.body
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
    let app = spawn_cloud_configured(|_| {}).await;
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
        .http
        .raw("GET", "/api/releases")
        .header("accept", "application/json")
        .send()
        .await
        .text();
    assert!(listed.contains("1.4.0"), "{listed}");
}

#[tokio::test]
async fn every_bad_token_is_refused_with_a_bearer_challenge() {
    let app = spawn_cloud_configured(|_| {}).await;
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

    // The server's own token under another type, and with its signature's
    // other half (s' = n - s, which verifies just as well).
    let keys = app
        .office()
        .signing_keys(now(), || {
            Err(depot_wms::WmsError::Internal("no key".into()))
        })
        .await
        .expect("keys");
    let mut h = Header::new(Algorithm::ES256);
    h.kid = Some(keys[0].kid.clone());
    let plain_jwt = depot_cloud::oauth::ecdsa::to_low_s(
        &jsonwebtoken::encode(&h, &base, &EncodingKey::from_ec_der(&keys[0].pkcs8)).expect("sign"),
    )
    .expect("low-S");
    let high_s = high_s_of(&good);

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
        .http
        .raw("GET", "/.well-known/jwks.json")
        .send()
        .await
        .body;
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
        ("typ JWT", Some(format!("Bearer {plain_jwt}")), ""),
        ("high-S signature", Some(format!("Bearer {high_s}")), ""),
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
        .http
        .raw("POST", "/api/sync-translations")
        .header("authorization", format!("Bearer {no_scope}"))
        .send()
        .await;
    assert_eq!(sync.status, 403);
    let sync = app.http.raw("POST", "/api/sync-translations").send().await;
    assert_eq!(sync.status, 401);
    assert_eq!(
        app.wms.releases(100).await.expect("releases").len(),
        before,
        "nothing was published"
    );

    // Reads stay open.
    let r = app.http.raw("GET", "/api/releases").send().await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn a_key_rotated_elsewhere_is_picked_up_and_the_old_one_still_verifies() {
    let app = spawn_cloud_configured(|_| {}).await;
    let (id, secret) = claimed_client(&app, "ana", "releases:write").await;
    let (_, b) = token(
        &app,
        Some((&id, &secret)),
        &[("grant_type", "client_credentials")],
    )
    .await;
    let old = b["access_token"].as_str().expect("token").to_owned();
    let first = app
        .office()
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
        .office()
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
    let newer = sign_access_token(&next.kid, &next.pkcs8, &claims);

    let (s, body, _) = publish(
        &app,
        Some(&format!("Bearer {newer}")),
        "",
        &release("3.0.0"),
    )
    .await;
    assert!((200..300).contains(&s), "{s} {body}");
    let jwks: Value = app
        .http
        .raw("GET", "/.well-known/jwks.json")
        .send()
        .await
        .body;
    assert_eq!(jwks["keys"].as_array().expect("keys").len(), 2, "{jwks}");
    let (s, body, _) = publish(&app, Some(&format!("Bearer {old}")), "", &release("3.0.1")).await;
    assert!((200..300).contains(&s), "{s} {body}");
}

/// `token` with the other half of its signature: s replaced by n - s.
fn high_s_of(token: &str) -> String {
    let n = num_bigint::BigUint::parse_bytes(
        b"FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551",
        16,
    )
    .expect("n");
    let (signed, sig) = token.rsplit_once('.').expect("signature");
    let mut sig = B64.decode(sig).expect("b64");
    let flipped = (n - num_bigint::BigUint::from_bytes_be(&sig[32..])).to_bytes_be();
    sig[32..].fill(0);
    sig[64 - flipped.len()..].copy_from_slice(&flipped);
    let high = format!("{signed}.{}", B64.encode(sig));
    assert!(!depot_cloud::oauth::ecdsa::is_low_s(&high));
    high
}

#[tokio::test]
async fn token_requests_are_limited_per_client() {
    let app = spawn_cloud_configured(|_| {}).await;
    let (id, secret) = claimed_client(&app, "ana", "releases:write").await;
    let mut statuses = Vec::new();
    for _ in 0..25 {
        let (s, b) = token(
            &app,
            Some((&id, "not the secret")),
            &[("grant_type", "client_credentials")],
        )
        .await;
        statuses.push(s);
        if s == 429 {
            assert_eq!(b["error"], "slow_down", "{b}");
            assert!(
                b["error_description"]
                    .as_str()
                    .is_some_and(|d| d.contains("try again after")),
                "{b}"
            );
            break;
        }
    }
    // Twenty tries, counting the one `claimed_client` made, then slowed.
    assert_eq!(statuses.len(), 20, "{statuses:?}");
    assert!(statuses[..19].iter().all(|s| *s == 401), "{statuses:?}");
    let r = app
        .http
        .raw("POST", "/oauth/token")
        .basic_auth(&id, Some(&secret))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await;
    assert_eq!(r.status, 429, "the right secret waits too");
    let retry: u64 = r
        .headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(retry >= 1);
    // Another client is not slowed by this one.
    let (other, _) = claimed_client(&app, "bea", "releases:write").await;
    let (s, b) = token(
        &app,
        Some((&other, "wrong")),
        &[("grant_type", "client_credentials")],
    )
    .await;
    assert_eq!(s, 401, "{b}");
}
