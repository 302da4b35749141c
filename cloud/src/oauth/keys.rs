//! Signing keys: ES256 (P-256) pairs generated with ring on first start,
//! stored by the engine, rotated with overlap. A key signs for
//! `rotate_every`; it stays in the JWKS until the last token it signed has
//! expired, so a rotation never invalidates a token in flight.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use depot_office::Office;
use depot_office::oauth::SigningKey;
use depot_wms::WmsError;
use jsonwebtoken::{DecodingKey, EncodingKey};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::time::Duration;

/// A public key as RFC 7517 publishes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Jwk {
    pub kty: &'static str,
    pub crv: &'static str,
    pub x: String,
    pub y: String,
    pub kid: String,
    #[serde(rename = "use")]
    pub use_: &'static str,
    pub alg: &'static str,
}

/// A key ready to use.
pub struct LoadedKey {
    pub kid: String,
    pub retire_at: i64,
    pub encoding: EncodingKey,
    pub decoding: DecodingKey,
    pub jwk: Jwk,
}

/// The affine coordinates of the key's public point, base64url.
fn coordinates(pkcs8: &[u8]) -> Result<(String, String), String> {
    let pair = EcdsaKeyPair::from_pkcs8(
        &ECDSA_P256_SHA256_FIXED_SIGNING,
        pkcs8,
        &SystemRandom::new(),
    )
    .map_err(|e| format!("a stored signing key does not parse: {e}"))?;
    // An uncompressed SEC1 point: 0x04, then X and Y, 32 bytes each.
    let point = pair.public_key().as_ref();
    if point.len() != 65 || point[0] != 4 {
        return Err("a stored signing key has an unexpected public point".into());
    }
    Ok((B64.encode(&point[1..33]), B64.encode(&point[33..])))
}

/// RFC 7638 thumbprint: the key's id is derived from the key itself.
fn thumbprint(x: &str, y: &str) -> String {
    let canonical = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
    B64.encode(Sha256::digest(canonical.as_bytes()))
}

/// Generates a new key that signs from `now` for `rotate_every`.
pub fn generate(
    now: i64,
    rotate_every: Duration,
    token_ttl: Duration,
) -> Result<SigningKey, WmsError> {
    let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
        .map_err(|e| WmsError::Internal(format!("generating a signing key: {e}")))?;
    let pkcs8 = doc.as_ref().to_vec();
    let (x, y) = coordinates(&pkcs8).map_err(WmsError::Internal)?;
    let retire_at = now.saturating_add(secs(rotate_every));
    Ok(SigningKey {
        kid: thumbprint(&x, &y),
        pkcs8,
        created_at: now,
        retire_at,
        // A minute of slack for clocks and tokens issued in the last second.
        expire_at: retire_at.saturating_add(secs(token_ttl)).saturating_add(60),
    })
}

pub fn secs(d: Duration) -> i64 {
    i64::try_from(d.as_secs()).unwrap_or(i64::MAX)
}

pub fn load(k: &SigningKey) -> Result<LoadedKey, String> {
    let (x, y) = coordinates(&k.pkcs8)?;
    let decoding = DecodingKey::from_ec_components(&x, &y)
        .map_err(|e| format!("public key of {}: {e}", k.kid))?;
    Ok(LoadedKey {
        kid: k.kid.clone(),
        retire_at: k.retire_at,
        encoding: EncodingKey::from_ec_der(&k.pkcs8),
        decoding,
        jwk: Jwk {
            kty: "EC",
            crv: "P-256",
            x,
            y,
            kid: k.kid.clone(),
            use_: "sig",
            alg: "ES256",
        },
    })
}

/// The published keys, newest first; the first signs.
pub struct KeyRing {
    pub keys: Vec<LoadedKey>,
    /// When the signing key retires and the ring must be reloaded.
    pub refresh_at: i64,
}

impl KeyRing {
    /// Loads the stored keys, creating a signing key when none may sign.
    pub async fn load(
        wms: &Office,
        now: i64,
        rotate_every: Duration,
        token_ttl: Duration,
    ) -> anyhow::Result<Self> {
        let stored = wms
            .signing_keys(now, move || generate(now, rotate_every, token_ttl))
            .await?;
        let mut keys = Vec::with_capacity(stored.len());
        for k in &stored {
            match load(k) {
                Ok(k) => keys.push(k),
                // One bad row must not take the whole service down; the
                // others still verify, and a fresh key is made below.
                Err(e) => tracing::error!(kid = %k.kid, error = %e, "skipping a signing key"),
            }
        }
        let refresh_at = keys
            .iter()
            .filter(|k| k.retire_at > now)
            .map(|k| k.retire_at)
            .max()
            .ok_or_else(|| anyhow::anyhow!("no usable signing key"))?;
        keys.sort_by_key(|k| std::cmp::Reverse(k.retire_at));
        Ok(Self { keys, refresh_at })
    }

    pub fn signer(&self) -> Option<&LoadedKey> {
        self.keys.first()
    }

    pub fn by_kid(&self, kid: &str) -> Option<&LoadedKey> {
        self.keys.iter().find(|k| k.kid == kid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_key_loads_and_publishes_its_thumbprint() {
        let k = generate(
            1_000,
            Duration::from_secs(86_400),
            Duration::from_secs(3_600),
        )
        .expect("key");
        assert_eq!(k.retire_at, 1_000 + 86_400);
        assert_eq!(k.expire_at, k.retire_at + 3_600 + 60);
        let loaded = load(&k).expect("load");
        assert_eq!(loaded.jwk.kid, k.kid);
        assert_eq!(thumbprint(&loaded.jwk.x, &loaded.jwk.y), k.kid);
        assert_eq!(B64.decode(&loaded.jwk.x).expect("x").len(), 32);
    }

    #[test]
    fn two_keys_differ() {
        let a = generate(0, Duration::from_secs(10), Duration::from_secs(10)).expect("a");
        let b = generate(0, Duration::from_secs(10), Duration::from_secs(10)).expect("b");
        assert_ne!(a.kid, b.kid);
    }

    #[test]
    fn garbage_is_not_a_key() {
        let k = SigningKey {
            kid: "x".into(),
            pkcs8: vec![1, 2, 3],
            created_at: 0,
            retire_at: 1,
            expire_at: 2,
        };
        assert!(load(&k).is_err());
    }
}
