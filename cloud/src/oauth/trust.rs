//! Trusted identity providers and their identity assertions (ID-JAG,
//! draft-ietf-oauth-identity-assertion-authz-grant): a JWT of type
//! `oauth-id-jag+jwt` a provider signs to say "this user lets this client
//! act for them here". Their keys are fetched from their JWKS and cached;
//! an unknown key id triggers at most one refetch per interval, so a
//! flood of forged tokens cannot turn into a flood of fetches.

use super::token::classify;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// A provider whose assertions this server accepts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrustedIssuer {
    /// Its `iss`, exactly.
    pub issuer: String,
    /// Where it publishes the keys its assertions are signed with (JWKS).
    pub jwks_uri: String,
    /// The most its assertions may grant.
    #[serde(default)]
    pub scopes: Vec<String>,
}

/// The claims of an identity assertion this server reads.
#[derive(Debug, Clone, Deserialize)]
pub struct Assertion {
    pub iss: String,
    pub sub: String,
    /// The client the assertion lets act; absent when it is presented to
    /// register that client.
    #[serde(default)]
    pub client_id: Option<String>,
    pub jti: String,
    pub exp: i64,
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub email: Option<String>,
}

struct Cached {
    keys: JwkSet,
    fetched: Instant,
}

pub struct Trust {
    issuers: Vec<TrustedIssuer>,
    http: reqwest::Client,
    cache: Mutex<HashMap<String, Cached>>,
}

/// Keys are kept this long before they are fetched again.
const KEYS_TTL: Duration = Duration::from_secs(600);
/// The least time between two fetches of one provider's keys.
const REFETCH_AFTER: Duration = Duration::from_secs(30);
/// A key set larger than this is refused.
const MAX_JWKS_BYTES: usize = 64 * 1024;

const ASYMMETRIC: &[Algorithm] = &[
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::EdDSA,
];

impl Trust {
    pub fn new(issuers: Vec<TrustedIssuer>) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Self {
            issuers,
            http,
            cache: Mutex::new(HashMap::new()),
        })
    }

    pub fn issuers(&self) -> Vec<&str> {
        self.issuers.iter().map(|i| i.issuer.as_str()).collect()
    }

    async fn fetch(&self, issuer: &TrustedIssuer) -> Result<JwkSet, String> {
        let resp = self
            .http
            .get(&issuer.jwks_uri)
            .send()
            .await
            .map_err(|e| format!("fetching the keys of {}: {e}", issuer.issuer))?;
        if !resp.status().is_success() {
            return Err(format!(
                "the keys of {} answered {}",
                issuer.issuer,
                resp.status()
            ));
        }
        let body = resp
            .bytes()
            .await
            .map_err(|e| format!("reading the keys of {}: {e}", issuer.issuer))?;
        if body.len() > MAX_JWKS_BYTES {
            return Err(format!("the key set of {} is too large", issuer.issuer));
        }
        serde_json::from_slice(&body).map_err(|e| format!("the key set of {}: {e}", issuer.issuer))
    }

    /// The provider's key `kid`, from the cache or a (rate-limited) fetch.
    async fn key(&self, issuer: &TrustedIssuer, kid: &str) -> Result<DecodingKey, String> {
        let mut cache = self.cache.lock().await;
        let stale = cache.get(&issuer.issuer).is_none_or(|c| {
            c.fetched.elapsed() > KEYS_TTL
                || (c.keys.find(kid).is_none() && c.fetched.elapsed() > REFETCH_AFTER)
        });
        if stale {
            match self.fetch(issuer).await {
                Ok(keys) => {
                    cache.insert(
                        issuer.issuer.clone(),
                        Cached {
                            keys,
                            fetched: Instant::now(),
                        },
                    );
                }
                // Keep serving the keys we have while the provider is down.
                Err(e) => tracing::warn!(error = %e, "identity provider keys"),
            }
        }
        let jwk = cache
            .get(&issuer.issuer)
            .and_then(|c| c.keys.find(kid))
            .ok_or_else(|| format!("{} publishes no key {kid:?}", issuer.issuer))?;
        DecodingKey::from_jwk(jwk).map_err(|e| format!("key {kid:?}: {e}"))
    }

    /// Verifies an identity assertion meant for this server (`audience`
    /// is its issuer). Returns the claims and the provider.
    pub async fn verify(
        &self,
        assertion: &str,
        audience: &str,
    ) -> Result<(Assertion, &TrustedIssuer), String> {
        let header =
            decode_header(assertion).map_err(|_| "the assertion is not a JWT".to_owned())?;
        if !header
            .typ
            .as_deref()
            .is_some_and(|t| t.eq_ignore_ascii_case("oauth-id-jag+jwt"))
        {
            return Err("the assertion's typ must be oauth-id-jag+jwt".into());
        }
        if !ASYMMETRIC.contains(&header.alg) {
            return Err("the assertion must be signed with an asymmetric algorithm".into());
        }
        let kid = header.kid.ok_or("the assertion names no key (kid)")?;
        let unverified = unverified_issuer(assertion).ok_or("the assertion has no issuer")?;
        let issuer = self
            .issuers
            .iter()
            .find(|i| i.issuer == unverified)
            .ok_or_else(|| format!("{unverified:?} is not a trusted issuer"))?;
        let key = self.key(issuer, &kid).await?;
        let mut v = Validation::new(header.alg);
        v.leeway = super::token::LEEWAY_SECS;
        v.set_issuer(&[&issuer.issuer]);
        v.set_audience(&[audience]);
        v.set_required_spec_claims(&["exp", "iss", "aud", "sub", "iat"]);
        let claims = decode::<Assertion>(assertion, &key, &v)
            .map_err(|e| format!("the assertion was refused: {}", classify(e.kind())))?
            .claims;
        Ok((claims, issuer))
    }
}

/// The `iss` of a JWT before its signature is checked: only to pick which
/// provider's keys check it.
fn unverified_issuer(jwt: &str) -> Option<String> {
    use base64::Engine;
    let payload = jwt.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    v.get("iss")?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn refusals_before_any_fetch() {
        let t = Trust::new(vec![TrustedIssuer {
            issuer: "https://idp.test".into(),
            jwks_uri: "http://127.0.0.1:9/jwks".into(),
            scopes: vec![],
        }])
        .expect("trust");
        assert!(t.verify("nope", "aud").await.is_err());
        // HS256 with the right typ is still refused: providers sign with
        // their private keys.
        let mut h = jsonwebtoken::Header::new(Algorithm::HS256);
        h.typ = Some("oauth-id-jag+jwt".into());
        h.kid = Some("k".into());
        let hs = jsonwebtoken::encode(
            &h,
            &serde_json::json!({"iss": "https://idp.test"}),
            &jsonwebtoken::EncodingKey::from_secret(b"s"),
        )
        .expect("hs");
        let e = t.verify(&hs, "aud").await.expect_err("hs256");
        assert!(e.contains("asymmetric"), "{e}");
        let mut h = jsonwebtoken::Header::new(Algorithm::HS256);
        h.typ = Some("JWT".into());
        let plain = jsonwebtoken::encode(
            &h,
            &serde_json::json!({}),
            &jsonwebtoken::EncodingKey::from_secret(b"s"),
        )
        .expect("jwt");
        assert!(
            t.verify(&plain, "aud")
                .await
                .expect_err("typ")
                .contains("typ")
        );
    }
}
