//! Rate limiting (GCRA, from `governor`).
//!
//! - Per API key on `/v1`: a key over its rate gets 429 with the spec's
//!   body, the seconds to wait, and `Retry-After`.
//! - [`Throttle`]: the other limits (OAuth sign-ins and token requests,
//!   translation jobs), keyed by what the caller sends, so bounded by
//!   forgetting every key whose bucket has refilled ([`Throttle::prune`],
//!   run every minute): whatever the number of distinct keys sent, memory
//!   comes back to where it was one window later.

use crate::settings::RateLimit;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use depot_wms::http::error::ApiError;
use depot_wms::http::extract::API_KEY_HEADER;
use governor::clock::{Clock, DefaultClock};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{DefaultKeyedRateLimiter, Quota};
use std::hash::Hash;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::{Arc, Weak};
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

/// Public tracking (`/v1/tracking/...`) takes no key: per client address,
/// a burst of 30 lookups and then one a second, which a recipient never
/// reaches and which makes walking tracking numbers (six random digits per
/// shipment) a matter of years.
pub const TRACKING_PER_MINUTE: u32 = 60;
pub const TRACKING_BURST: u32 = 30;

/// The per-address limit of the keyless routes.
pub type PublicThrottle = Throttle<IpAddr>;

pub fn public_throttle() -> Arc<PublicThrottle> {
    let t = Arc::new(Throttle::new(TRACKING_PER_MINUTE, TRACKING_BURST));
    prune_while_alive(Arc::downgrade(&t), Throttle::prune);
    t
}

pub async fn limit_public(
    State(throttle): State<Arc<PublicThrottle>>,
    req: Request,
    next: Next,
) -> Response {
    if req.uri().path().starts_with("/v1/tracking/") {
        let peer = req
            .extensions()
            .get::<axum::extract::ConnectInfo<SocketAddr>>()
            .map(|c| c.0);
        if let Err(wait_secs) = throttle.check(&client_of(peer)) {
            return ApiError::RateLimited { wait_secs }.into_response();
        }
    }
    next.run(req).await
}

/// How often limiters forget the buckets that have refilled.
pub const PRUNE_EVERY: Duration = Duration::from_secs(60);

/// Forgets buckets that have refilled, so keys seen once do not pile up.
pub async fn prune(limiter: Arc<Limiter>) {
    let mut tick = tokio::time::interval(PRUNE_EVERY);
    loop {
        tick.tick().await;
        limiter.retain_recent();
        limiter.shrink_to_fit();
    }
}

/// A keyed limit whose memory is bounded by pruning.
pub struct Throttle<K: Hash + Eq + Clone, C: Clock = DefaultClock> {
    limiter: governor::RateLimiter<K, DefaultKeyedStateStore<K>, C, NoOpMiddleware<C::Instant>>,
    clock: C,
}

impl<K: Hash + Eq + Clone> Throttle<K> {
    /// `burst` at once, then `per_minute`.
    pub fn new(per_minute: u32, burst: u32) -> Self {
        Self::with_clock(per_minute, burst, DefaultClock::default())
    }
}

impl<K: Hash + Eq + Clone, C: Clock + Clone> Throttle<K, C> {
    pub fn with_clock(per_minute: u32, burst: u32, clock: C) -> Self {
        let per_minute = NonZeroU32::new(per_minute).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN);
        let quota = Quota::per_minute(per_minute).allow_burst(burst);
        Self {
            limiter: governor::RateLimiter::new(
                quota,
                DefaultKeyedStateStore::default(),
                clock.clone(),
            ),
            clock,
        }
    }

    /// Takes one try for `key`; `Err` holds the whole seconds to wait.
    pub fn check(&self, key: &K) -> Result<(), u64> {
        self.limiter
            .check_key(key)
            .map_err(|not_until| wait_secs(not_until.wait_time_from(self.clock.now())).max(1))
    }

    /// Forgets the keys whose bucket has refilled.
    pub fn prune(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
    }

    /// Keys remembered now.
    pub fn len(&self) -> usize {
        self.limiter.len()
    }

    pub fn is_empty(&self) -> bool {
        self.limiter.is_empty()
    }
}

/// Runs `prune` on what `owner` points at every [`PRUNE_EVERY`], until
/// it is dropped (outside a runtime, nothing runs: nothing serves there).
pub fn prune_while_alive<T: Send + Sync + 'static>(owner: Weak<T>, prune: fn(&T)) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    runtime.spawn(async move {
        let mut tick = tokio::time::interval(PRUNE_EVERY);
        tick.tick().await;
        loop {
            tick.tick().await;
            let Some(owner) = owner.upgrade() else { return };
            prune(&owner);
        }
    });
}

/// The client a request comes from, as limits key it: its IPv4 address,
/// or the /64 of its IPv6 address (one host usually has a whole /64, and
/// would otherwise get a new bucket with every address it takes).
/// Unknown (a request not from a socket) is one client.
pub fn client_of(peer: Option<SocketAddr>) -> IpAddr {
    match peer.map(|p| p.ip()) {
        None => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        Some(IpAddr::V4(v4)) => IpAddr::V4(v4),
        Some(IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let net = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(net.into())
            }
        },
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
    fn clients_are_addresses_and_ipv6_nets() {
        let at = |s: &str| client_of(Some(s.parse().expect("addr")));
        assert_eq!(at("192.0.2.7:4000"), at("192.0.2.7:5000"));
        assert_ne!(at("192.0.2.7:4000"), at("192.0.2.8:4000"));
        assert_eq!(at("[2001:db8::1]:1"), at("[2001:db8::ffff:2]:1"));
        assert_ne!(at("[2001:db8::1]:1"), at("[2001:db8:0:1::1]:1"));
        assert_eq!(at("[::ffff:192.0.2.7]:1"), at("192.0.2.7:1"));
        assert_eq!(client_of(None), IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    }

    #[test]
    fn a_throttle_forgets_every_key_one_window_later() {
        let clock = governor::clock::FakeRelativeClock::default();
        let t: Throttle<String, _> = Throttle::with_clock(5, 10, clock.clone());
        for i in 0..100_000 {
            assert!(t.check(&format!("user-{i}")).is_ok());
        }
        for _ in 0..9 {
            assert!(t.check(&"user-0".to_owned()).is_ok());
        }
        assert_eq!(t.check(&"user-0".to_owned()), Err(12));
        assert_eq!(t.len(), 100_000);
        t.prune();
        assert_eq!(t.len(), 100_000, "nothing has refilled yet");
        // One try refills in 12 s; ten tries in 120 s.
        clock.advance(Duration::from_secs(30));
        t.prune();
        assert_eq!(t.len(), 1, "only the key that used its burst is left");
        clock.advance(Duration::from_secs(120));
        t.prune();
        assert!(t.is_empty());
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
