//! People: the login page, authorization code with PKCE, password guessing.

use super::*;

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
