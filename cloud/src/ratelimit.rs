//! Per-key rate limiting (GCRA, from `governor`): a key over its rate gets
//! 429 with the spec's body, the seconds to wait, and `Retry-After`.

use crate::settings::RateLimit;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use depot_wms::http::error::ApiError;
use depot_wms::http::extract::API_KEY_HEADER;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

/// Buckets are keyed by the key's hash, so no secret is held in memory and
/// an unknown key cannot be used to probe for valid ones.
pub type Limiter = DefaultKeyedRateLimiter<[u8; 32]>;

pub fn limiter(cfg: RateLimit) -> Arc<Limiter> {
    let per_second = NonZeroU32::new(cfg.per_second).unwrap_or(NonZeroU32::MIN);
    let burst = NonZeroU32::new(cfg.burst).unwrap_or(NonZeroU32::MIN);
    Arc::new(Limiter::keyed(
        Quota::per_second(per_second).allow_burst(burst),
    ))
}

/// Seconds to announce: whole seconds, never 0 (a client told "0" would
/// retry at once and be refused again).
fn wait_secs(wait: Duration) -> u64 {
    wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
}

/// Probes and metrics: answered whatever key the request carries, and
/// never counted against it, so a load balancer or Prometheus that sends a
/// key (or shares one with a busy client) never reads a 429 as "down".
const NEVER_LIMITED: [&str; 3] = ["/healthz", "/readyz", depot_wms::metrics::PATH];

pub async fn limit(State(limiter): State<Arc<Limiter>>, req: Request, next: Next) -> Response {
    if NEVER_LIMITED.contains(&req.uri().path()) {
        return next.run(req).await;
    }
    if let Some(key) = req
        .headers()
        .get(API_KEY_HEADER)
        .and_then(|v| v.to_str().ok())
    {
        let hash = depot_wms::tenants::hash_key(key.trim());
        if let Err(not_until) = limiter.check_key(&hash) {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            return ApiError::RateLimited {
                wait_secs: wait_secs(wait).max(1),
            }
            .into_response();
        }
    }
    next.run(req).await
}

/// Forgets buckets that have refilled, so keys seen once do not pile up.
pub async fn prune(limiter: Arc<Limiter>) {
    let mut tick = tokio::time::interval(Duration::from_secs(60));
    loop {
        tick.tick().await;
        limiter.retain_recent();
        limiter.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_round_up() {
        assert_eq!(wait_secs(Duration::from_millis(1)), 1);
        assert_eq!(wait_secs(Duration::from_secs(2)), 2);
        assert_eq!(wait_secs(Duration::from_millis(2500)), 3);
    }

    #[test]
    fn burst_then_refusal_per_key() {
        let l = limiter(RateLimit {
            per_second: 1,
            burst: 3,
        });
        let a = [1u8; 32];
        let b = [2u8; 32];
        for _ in 0..3 {
            assert!(l.check_key(&a).is_ok());
        }
        assert!(l.check_key(&a).is_err());
        assert!(l.check_key(&b).is_ok(), "another key has its own bucket");
    }
}
