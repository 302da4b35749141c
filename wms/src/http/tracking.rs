//! Public tracking and carrier webhooks: the two routes without an API key.
//! The webhook authenticates with an HMAC-SHA256 signature instead.

use super::error::ApiError;
use super::extract::{ApiPath, parse_json};
use super::idempotency::{ok, respond};
use crate::Wms;
use crate::idempotency::Answer;
use crate::shipping::EventOutcome;
use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use depot_protocol::shipping::{CarrierEvent, Tracking};
use depot_protocol::{DataEnvelope, ErrorBody};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::collections::HashMap;
use std::sync::Arc;

pub const SIGNATURE_HEADER: &str = "x-depot-signature";
/// Signatures older (or newer) than this are refused: a captured request
/// cannot be replayed later.
pub const TOLERANCE_SECS: i64 = 300;

/// Webhook secrets per carrier code, provided by the service's settings.
#[derive(Debug, Clone, Default)]
pub struct CarrierSecrets(pub Arc<HashMap<String, String>>);

/// Public tracking: milestones in order, the estimated delivery date, and
/// the destination city. Nothing private: no name, no street.
#[utoipa::path(get, path = "/v1/tracking/{tracking_number}", tag = "tracking",
    params(("tracking_number" = String, Path, description = "As printed on the label")),
    responses((status = 200, body = DataEnvelope<Tracking>), (status = 404, body = ErrorBody)))]
pub async fn track(
    State(wms): State<Wms>,
    ApiPath(number): ApiPath<String>,
) -> Result<Json<DataEnvelope<Tracking>>, ApiError> {
    let number = number.trim().to_ascii_uppercase();
    Ok(Json(DataEnvelope {
        data: wms.tracking(number).await?,
    }))
}

/// The signature a carrier sends: `t=<unix seconds>,v1=<hex HMAC-SHA256 of
/// "<t>.<body>">` with the carrier's secret.
pub fn sign(secret: &str, timestamp: i64, body: &[u8]) -> String {
    sign_with(&[secret], timestamp, body)
}

/// [`sign`] with several secrets, a `v1=` each in the order given: what a
/// webhook sends while a rotated secret still signs beside the new one.
pub fn sign_with(secrets: &[&str], timestamp: i64, body: &[u8]) -> String {
    let mut header = format!("t={timestamp}");
    for secret in secrets {
        header.push_str(",v1=");
        header.push_str(&hex::encode(
            mac(secret, timestamp, body).finalize().into_bytes(),
        ));
    }
    header
}

fn mac(secret: &str, timestamp: i64, body: &[u8]) -> Hmac<Sha256> {
    // HMAC takes keys of any length: this cannot fail.
    let mut m =
        <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes()).unwrap_or_else(|_| unreachable!());
    m.update(timestamp.to_string().as_bytes());
    m.update(b".");
    m.update(body);
    m
}

/// Checks a signature header in constant time. A header may carry several
/// `v1=` (one per secret while a rotated one still signs): any match is
/// enough.
pub fn verify(secret: &str, header: &str, body: &[u8], now: i64) -> Result<(), &'static str> {
    let mut t = None;
    let mut v1 = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", v)) => t = v.parse::<i64>().ok(),
            Some(("v1", v)) => v1.extend(hex::decode(v).ok()),
            _ => {}
        }
    }
    let Some(t) = t.filter(|_| !v1.is_empty()) else {
        return Err("malformed signature header");
    };
    if (now - t).abs() > TOLERANCE_SECS {
        return Err("signature timestamp is outside the allowed window");
    }
    v1.iter()
        .any(|v| mac(secret, t, body).verify_slice(v).is_ok())
        .then_some(())
        .ok_or("signature does not match")
}

/// A carrier's milestone notification, signed with its secret in
/// `X-Depot-Signature`. Repeated events (same `event_id`) are acknowledged
/// and ignored; `delivered` moves a dispatched order to `delivered`.
#[utoipa::path(post, path = "/v1/webhooks/carriers/{carrier}", tag = "tracking",
    params(("carrier" = String, Path, description = "Carrier code"),
        ("X-Depot-Signature" = String, Header, description = "t=<unix>,v1=<hex HMAC-SHA256 of \"<t>.<body>\">")),
    request_body = CarrierEvent,
    responses((status = 200, body = DataEnvelope<EventOutcome>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub async fn carrier_webhook(
    State(wms): State<Wms>,
    secrets: Option<axum::Extension<CarrierSecrets>>,
    ApiPath(carrier): ApiPath<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Answer, ApiError> {
    let secret = secrets
        .as_ref()
        .and_then(|s| s.0.0.get(&carrier).cloned())
        .ok_or_else(|| {
            ApiError::unauthorized(format!(
                "no webhook secret is configured for carrier {carrier}"
            ))
        })?;
    let header = headers
        .get(SIGNATURE_HEADER)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| ApiError::unauthorized("missing X-Depot-Signature header"))?;
    verify(&secret, header, &body, chrono::Utc::now().timestamp())
        .map_err(ApiError::unauthorized)?;
    let event: CarrierEvent = parse_json(&body)?;
    respond(ok::<EventOutcome>, wms.carrier_event(&carrier, event)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_verify_and_tampering_fails() {
        let body = br#"{"event_id":"e1"}"#;
        let h = sign("s3cret", 1_000_000, body);
        assert_eq!(verify("s3cret", &h, body, 1_000_010), Ok(()));
        assert!(verify("other", &h, body, 1_000_010).is_err());
        assert!(verify("s3cret", &h, br#"{"event_id":"e2"}"#, 1_000_010).is_err());
        assert!(verify("s3cret", &h, body, 1_000_000 + TOLERANCE_SECS + 1).is_err());
        assert!(verify("s3cret", "v1=00", body, 1_000_000).is_err());
        assert!(verify("s3cret", "garbage", body, 1_000_000).is_err());
    }

    #[test]
    fn a_header_signed_by_two_secrets_verifies_with_either_and_no_other() {
        let body = br#"{"id":"e1"}"#;
        let h = sign_with(&["new-secret", "old-secret"], 1_000_000, body);
        assert_eq!(verify("new-secret", &h, body, 1_000_000), Ok(()));
        assert_eq!(verify("old-secret", &h, body, 1_000_000), Ok(()));
        assert_eq!(
            verify("third", &h, body, 1_000_000),
            Err("signature does not match")
        );
        // A v1 that is not hex is skipped, not taken as a match or a failure.
        let odd = format!("{h},v1=zz");
        assert_eq!(verify("old-secret", &odd, body, 1_000_000), Ok(()));
        assert_eq!(
            verify("old-secret", "t=1000000,v1=zz", body, 1_000_000),
            Err("malformed signature header")
        );
    }
}
