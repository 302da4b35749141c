//! Access tokens: RFC 9068 JWTs signed ES256 by the ring's newest key, and
//! their verification. Verification pins the algorithm to ES256 and the
//! key to one we published, so `alg: none`, an HMAC "signed" with the
//! public key, or a key the token carries itself are all refused; it
//! requires `typ: at+jwt` (RFC 9068 4), so that another JWT of ours (an ID
//! token, an assertion) is never taken for an access token, and a low-S
//! signature ([`super::ecdsa`]), so that a token has one form only.

use super::keys::KeyRing;
use jsonwebtoken::{Algorithm, Header, Validation, decode, decode_header, encode};
use serde::{Deserialize, Serialize};

/// The claims of an access token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessClaims {
    pub iss: String,
    pub sub: String,
    pub aud: String,
    pub client_id: String,
    /// Space-separated scopes.
    pub scope: String,
    pub iat: i64,
    pub nbf: i64,
    pub exp: i64,
    pub jti: String,
}

impl AccessClaims {
    pub fn has_scope(&self, wanted: &str) -> bool {
        self.scope.split(' ').any(|s| s == wanted)
    }
}

/// Why a token was refused; the text goes to the caller in
/// `error_description`, so it says what, never which key or secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("the token is not a well-formed JWT")]
    Malformed,
    #[error("the token must be signed with ES256")]
    Algorithm,
    #[error("the token was signed by a key this server does not publish")]
    UnknownKey,
    #[error("the token's signature does not verify")]
    Signature,
    #[error("the token's signature is not in low-S form")]
    HighS,
    #[error("the token is not an access token: its typ must be at+jwt")]
    Type,
    #[error("the token has expired")]
    Expired,
    #[error("the token is not valid yet")]
    NotYetValid,
    #[error("the token was issued by someone else")]
    Issuer,
    #[error("the token is meant for another audience")]
    Audience,
    #[error("the token lacks a required claim")]
    MissingClaim,
}

/// Tolerated clock difference between this server and its clients.
pub const LEEWAY_SECS: u64 = 30;

pub fn sign(ring: &KeyRing, claims: &AccessClaims) -> anyhow::Result<String> {
    let key = ring
        .signer()
        .ok_or_else(|| anyhow::anyhow!("no signing key"))?;
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(key.kid.clone());
    header.typ = Some(TYP.into());
    let token = encode(&header, claims, &key.encoding)?;
    super::ecdsa::to_low_s(&token).ok_or_else(|| anyhow::anyhow!("not an ES256 signature"))
}

/// The type of an access token (RFC 9068 2.1).
pub const TYP: &str = "at+jwt";

/// `at+jwt`, or its media type `application/at+jwt`, in any case (RFC 7515
/// 4.1.9 compares media types without regard to case).
fn is_access_token_type(typ: Option<&str>) -> bool {
    typ.is_some_and(|t| {
        let t = t.to_ascii_lowercase();
        t == TYP || t == "application/at+jwt"
    })
}

/// Checks signature, algorithm, key, issuer, audience and times.
pub fn verify(
    ring: &KeyRing,
    token: &str,
    issuer: &str,
    audience: &str,
) -> Result<AccessClaims, TokenError> {
    let header = decode_header(token).map_err(|_| TokenError::Malformed)?;
    if header.alg != Algorithm::ES256 {
        return Err(TokenError::Algorithm);
    }
    if !is_access_token_type(header.typ.as_deref()) {
        return Err(TokenError::Type);
    }
    let kid = header.kid.ok_or(TokenError::UnknownKey)?;
    let key = ring.by_kid(&kid).ok_or(TokenError::UnknownKey)?;
    if !super::ecdsa::is_low_s(token) {
        return Err(TokenError::HighS);
    }
    let mut v = Validation::new(Algorithm::ES256);
    v.leeway = LEEWAY_SECS;
    v.validate_nbf = true;
    v.set_issuer(&[issuer]);
    v.set_audience(&[audience]);
    v.set_required_spec_claims(&["exp", "nbf", "iss", "aud", "sub"]);
    decode::<AccessClaims>(token, &key.decoding, &v)
        .map(|d| d.claims)
        .map_err(|e| classify(e.kind()))
}

/// Maps the library's reasons onto ours.
pub fn classify(kind: &jsonwebtoken::errors::ErrorKind) -> TokenError {
    use jsonwebtoken::errors::ErrorKind as K;
    match kind {
        K::ExpiredSignature => TokenError::Expired,
        K::ImmatureSignature => TokenError::NotYetValid,
        K::InvalidIssuer => TokenError::Issuer,
        K::InvalidAudience => TokenError::Audience,
        K::InvalidSignature => TokenError::Signature,
        K::InvalidAlgorithm | K::InvalidAlgorithmName => TokenError::Algorithm,
        K::MissingRequiredClaim(_) => TokenError::MissingClaim,
        _ => TokenError::Malformed,
    }
}

#[cfg(test)]
mod tests {
    use super::super::keys::{self, KeyRing};
    use super::*;
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
    use std::time::Duration;

    const ISS: &str = "https://changelog.test";

    fn ring() -> KeyRing {
        let k =
            keys::generate(0, Duration::from_secs(3600), Duration::from_secs(600)).expect("key");
        KeyRing {
            keys: vec![keys::load(&k).expect("load")],
            refresh_at: k.retire_at,
        }
    }

    fn claims(now: i64) -> AccessClaims {
        AccessClaims {
            iss: ISS.into(),
            sub: "alice".into(),
            aud: ISS.into(),
            client_id: "c1".into(),
            scope: "releases:write".into(),
            iat: now,
            nbf: now,
            exp: now + 600,
            jti: "j1".into(),
        }
    }

    fn now() -> i64 {
        chrono::Utc::now().timestamp()
    }

    #[test]
    fn a_signed_token_verifies() {
        let r = ring();
        let t = sign(&r, &claims(now())).expect("sign");
        let c = verify(&r, &t, ISS, ISS).expect("verify");
        assert!(c.has_scope("releases:write"));
        assert!(!c.has_scope("releases"));
    }

    #[test]
    fn each_defect_has_its_reason() {
        let r = ring();
        let n = now();
        let cases: Vec<(AccessClaims, TokenError)> = vec![
            (
                AccessClaims {
                    exp: n - 3600,
                    iat: n - 7200,
                    nbf: n - 7200,
                    ..claims(n)
                },
                TokenError::Expired,
            ),
            (
                AccessClaims {
                    nbf: n + 3600,
                    ..claims(n)
                },
                TokenError::NotYetValid,
            ),
            (
                AccessClaims {
                    iss: "https://evil.test".into(),
                    ..claims(n)
                },
                TokenError::Issuer,
            ),
            (
                AccessClaims {
                    aud: "https://other.test".into(),
                    ..claims(n)
                },
                TokenError::Audience,
            ),
        ];
        for (c, want) in cases {
            let t = sign(&r, &c).expect("sign");
            assert_eq!(verify(&r, &t, ISS, ISS), Err(want));
        }
    }

    /// `token` with its signature's s replaced by n − s: a signature that
    /// verifies just as well.
    fn flip_s(token: &str) -> String {
        use num_bigint::BigUint;
        let (signed, sig) = token.rsplit_once('.').expect("sig");
        let mut sig = B64.decode(sig).expect("b64");
        let n = BigUint::parse_bytes(
            b"FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551",
            16,
        )
        .expect("n");
        let flipped = (n - BigUint::from_bytes_be(&sig[32..])).to_bytes_be();
        sig[32..].fill(0);
        sig[64 - flipped.len()..].copy_from_slice(&flipped);
        format!("{signed}.{}", B64.encode(sig))
    }

    #[test]
    fn only_low_s_signatures_are_issued_and_accepted() {
        let r = ring();
        for _ in 0..16 {
            let t = sign(&r, &claims(now())).expect("sign");
            assert!(super::super::ecdsa::is_low_s(&t));
            assert!(verify(&r, &t, ISS, ISS).is_ok());
            assert_eq!(verify(&r, &flip_s(&t), ISS, ISS), Err(TokenError::HighS));
        }
    }

    #[test]
    fn only_access_tokens_are_accepted() {
        let r = ring();
        let key = r.signer().expect("key");
        for (typ, ok) in [
            (Some("at+jwt"), true),
            (Some("AT+JWT"), true),
            (Some("application/at+jwt"), true),
            (Some("JWT"), false),
            (Some("id+jwt"), false),
            (None, false),
        ] {
            let mut h = Header::new(Algorithm::ES256);
            h.kid = Some(key.kid.clone());
            h.typ = typ.map(str::to_owned);
            let t = encode(&h, &claims(now()), &key.encoding).expect("encode");
            let t = super::super::ecdsa::to_low_s(&t).expect("low");
            let got = verify(&r, &t, ISS, ISS);
            assert_eq!(got.is_ok(), ok, "{typ:?}: {got:?}");
            if !ok {
                assert_eq!(got, Err(TokenError::Type), "{typ:?}");
            }
        }
    }

    #[test]
    fn a_token_of_another_ring_is_unknown_and_a_forged_kid_fails_the_signature() {
        let mine = ring();
        let theirs = ring();
        let t = sign(&theirs, &claims(now())).expect("sign");
        assert_eq!(verify(&mine, &t, ISS, ISS), Err(TokenError::UnknownKey));
        // Their signature under my key's id.
        let mut parts: Vec<String> = t.split('.').map(str::to_owned).collect();
        let mut header: serde_json::Value =
            serde_json::from_slice(&B64.decode(&parts[0]).expect("b64")).expect("json");
        header["kid"] = mine.keys[0].kid.clone().into();
        parts[0] = B64.encode(header.to_string());
        assert_eq!(
            verify(&mine, &parts.join("."), ISS, ISS),
            Err(TokenError::Signature)
        );
    }

    #[test]
    fn tampering_none_and_hmac_are_refused() {
        let r = ring();
        let t = sign(&r, &claims(now())).expect("sign");
        let parts: Vec<&str> = t.split('.').collect();
        let mut payload: serde_json::Value =
            serde_json::from_slice(&B64.decode(parts[1]).expect("b64")).expect("json");
        payload["scope"] = "releases:write admin".into();
        let tampered = format!(
            "{}.{}.{}",
            parts[0],
            B64.encode(payload.to_string()),
            parts[2]
        );
        assert_eq!(verify(&r, &tampered, ISS, ISS), Err(TokenError::Signature));

        let none_header = B64.encode(r#"{"alg":"none","typ":"JWT"}"#);
        let none = format!("{none_header}.{}.", parts[1]);
        assert_eq!(verify(&r, &none, ISS, ISS), Err(TokenError::Malformed));

        // HS256 with the public key's JSON as the shared secret.
        let secret = serde_json::to_vec(&r.keys[0].jwk).expect("jwk");
        let mut h = Header::new(Algorithm::HS256);
        h.kid = Some(r.keys[0].kid.clone());
        let forged = encode(
            &h,
            &claims(now()),
            &jsonwebtoken::EncodingKey::from_secret(&secret),
        )
        .expect("hs256");
        assert_eq!(verify(&r, &forged, ISS, ISS), Err(TokenError::Algorithm));

        assert_eq!(
            verify(&r, "not a jwt", ISS, ISS),
            Err(TokenError::Malformed)
        );
        assert_eq!(verify(&r, "", ISS, ISS), Err(TokenError::Malformed));
    }
}
