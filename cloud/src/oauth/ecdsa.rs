//! Low-S ECDSA signatures for the access tokens.
//!
//! For every P-256 signature (r, s), (r, n − s) verifies too: anyone can
//! turn a token into a second, different token that verifies, without the
//! key. Accepting only s ≤ n/2 leaves one valid form per signature, so a
//! token is its one string (what a cache, a log or a revocation list
//! keys on). ring signs with either half at random, so what we sign is
//! brought to the low half before it is sent.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use num_bigint::BigUint;
use std::sync::LazyLock;

/// The order of the P-256 group (FIPS 186-4, D.1.2.3).
static ORDER: LazyLock<BigUint> = LazyLock::new(|| {
    BigUint::parse_bytes(
        b"FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551",
        16,
    )
    .unwrap_or_default()
});

/// A JWS P-256 signature: r and s, 32 bytes each (RFC 7518 3.4).
const SIGNATURE_LEN: usize = 64;
const HALF: usize = SIGNATURE_LEN / 2;

/// Whether the signature of a compact JWS (`header.payload.signature`) is
/// an ES256 signature in low-S form.
pub fn is_low_s(token: &str) -> bool {
    signature(token).is_some_and(|sig| BigUint::from_bytes_be(&sig[HALF..]) <= half_order())
}

/// The compact JWS with its ES256 signature in low-S form.
pub fn to_low_s(token: &str) -> Option<String> {
    let (signed, _) = token.rsplit_once('.')?;
    let mut sig = signature(token)?;
    let s = BigUint::from_bytes_be(&sig[HALF..]);
    if s > half_order() {
        let low = (&*ORDER - s).to_bytes_be();
        // Left-padded back to 32 bytes.
        let padded = HALF.checked_sub(low.len())?;
        sig[HALF..].fill(0);
        sig[HALF + padded..].copy_from_slice(&low);
    }
    Some(format!("{signed}.{}", B64.encode(sig)))
}

fn half_order() -> BigUint {
    &*ORDER >> 1
}

fn signature(token: &str) -> Option<[u8; SIGNATURE_LEN]> {
    let (_, sig) = token.rsplit_once('.')?;
    B64.decode(sig).ok()?.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::rand::SystemRandom;
    use ring::signature::{
        ECDSA_P256_SHA256_FIXED, ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair,
        UnparsedPublicKey,
    };

    #[test]
    fn either_half_verifies_and_only_the_low_one_is_kept() {
        let rng = SystemRandom::new();
        let doc =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).expect("key");
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, doc.as_ref(), &rng)
            .expect("pair");
        let public = UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, pair.public_key().as_ref());
        let (mut low, mut high) = (0, 0);
        for i in 0..64 {
            let signed = format!("aGVhZGVy.{i}");
            let sig = pair.sign(&rng, signed.as_bytes()).expect("sign");
            let token = format!("{signed}.{}", B64.encode(sig.as_ref()));
            if is_low_s(&token) {
                low += 1;
            } else {
                high += 1;
            }
            let fixed = to_low_s(&token).expect("normalised");
            assert!(is_low_s(&fixed));
            assert_eq!(
                to_low_s(&fixed).as_deref(),
                Some(fixed.as_str()),
                "low stays low"
            );
            let fixed_sig = B64
                .decode(fixed.rsplit_once('.').expect("sig").1)
                .expect("b64");
            assert!(public.verify(signed.as_bytes(), &fixed_sig).is_ok());
            // The other half verifies as well: why only one is accepted.
            let mut other = fixed_sig.clone();
            let s = BigUint::from_bytes_be(&other[HALF..]);
            let flipped = (&*ORDER - s).to_bytes_be();
            other[HALF..].fill(0);
            other[SIGNATURE_LEN - flipped.len()..].copy_from_slice(&flipped);
            assert!(public.verify(signed.as_bytes(), &other).is_ok());
            let other_token = format!("{signed}.{}", B64.encode(&other));
            assert!(!is_low_s(&other_token));
        }
        assert!(
            low > 0 && high > 0,
            "ring signs with either half: {low}/{high}"
        );
    }

    #[test]
    fn not_a_signature_is_not_low_s() {
        assert!(!is_low_s("a.b"));
        assert!(!is_low_s("a.b.c"));
        assert!(to_low_s("a.b.c").is_none());
        assert_eq!(ORDER.bits(), 256);
    }
}
