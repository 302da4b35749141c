//! Checking a person's user name and password, as OWASP's authentication
//! advice has it:
//!
//! - The same work whether the user exists or not: an unknown user's
//!   password is verified against a dummy Argon2 hash of the same cost, so
//!   the time of the answer does not tell which user names exist.
//! - Guessing is slowed per user name *and* client address together (ten
//!   tries at once, then five a minute): a stranger who knows a user name
//!   cannot lock its owner out from elsewhere. The limiter forgets a pair
//!   once its bucket has refilled, so user names sent by the hundred
//!   thousand cost memory for one window only.

use super::OAuth;
use super::OAuthError;
use super::secrets::verify_password;
use crate::ratelimit::Throttle;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};

/// An Argon2id hash of a random password no one knows, with the cost
/// `hash_password` uses (Argon2's defaults: 19 MiB, two passes, one lane;
/// a test keeps them equal): what an unknown user's password is checked
/// against.
const DUMMY_HASH: &str = "$argon2id$v=19$m=19456,t=2,p=1$2LU4G/JrdNTlJLOF87ioig$luJmtQestTHeT+quB2C785c3oSZV8QiMP+7K4/oQal0";

/// User names longer than this are not looked up (nor remembered whole).
pub const MAX_USERNAME: usize = 200;
const MAX_PASSWORD: usize = 1024;

/// Sign-in attempts at once, then per minute, per user name and client.
const BURST: u32 = 10;
const PER_MINUTE: u32 = 5;

/// Who may try to sign in, and the passwords' checks; `C` is the
/// limiter's clock (a fake one in tests).
pub struct SignIns<C: Clock + Clone = DefaultClock> {
    tries: Throttle<(String, IpAddr), C>,
    /// Argon2 verifications made, known users or not.
    verified: AtomicU64,
}

impl Default for SignIns {
    fn default() -> Self {
        Self::with_clock(DefaultClock::default())
    }
}

impl<C: Clock + Clone> SignIns<C> {
    pub fn with_clock(clock: C) -> Self {
        Self {
            tries: Throttle::with_clock(PER_MINUTE, BURST, clock),
            verified: AtomicU64::new(0),
        }
    }

    /// Takes one try for `username` from `client`; `Err` holds the seconds
    /// to wait.
    pub fn may_try(&self, username: &str, client: IpAddr) -> Result<(), u64> {
        let name: String = username.chars().take(MAX_USERNAME).collect();
        self.tries.check(&(name.to_lowercase(), client))
    }

    /// Whether `password` is the one `stored` hashes; with no stored hash
    /// (an unknown user), the same work is done and the answer is no.
    pub async fn verify(&self, stored: Option<String>, password: String) -> Result<bool, String> {
        let known = stored.is_some();
        let hash = stored.unwrap_or_else(|| DUMMY_HASH.to_owned());
        // Argon2 takes tens of milliseconds of CPU: off the async threads.
        let matches = tokio::task::spawn_blocking(move || verify_password(&password, &hash))
            .await
            .map_err(|e| e.to_string())?;
        self.verified.fetch_add(1, Ordering::Relaxed);
        Ok(known && matches)
    }

    /// Argon2 verifications made so far.
    pub fn verified(&self) -> u64 {
        self.verified.load(Ordering::Relaxed)
    }

    /// (user name, client) pairs remembered now.
    pub fn tracked(&self) -> usize {
        self.tries.len()
    }

    pub fn prune(&self) {
        self.tries.prune();
    }
}

/// Why a sign-in was not checked.
pub enum SignInError {
    TooMany { wait_secs: u64 },
    Failed(OAuthError),
}

impl From<OAuthError> for SignInError {
    fn from(e: OAuthError) -> Self {
        Self::Failed(e)
    }
}

impl IntoResponse for SignInError {
    fn into_response(self) -> Response {
        match self {
            Self::TooMany { wait_secs } => {
                let mut r = super::authorize::page(
                    StatusCode::TOO_MANY_REQUESTS,
                    "Too many attempts",
                    "<p class=\"error\">Too many sign-in attempts for this user. Try again in a minute.</p>",
                );
                if let Ok(v) = header::HeaderValue::from_str(&wait_secs.to_string()) {
                    r.headers_mut().insert(header::RETRY_AFTER, v);
                }
                r
            }
            Self::Failed(e) => e.into_response(),
        }
    }
}

/// The person's name and scopes when the user name and password in `p`
/// are right. Unknown users and wrong passwords look the same from
/// outside, in the answer and in its time.
pub async fn sign_in_user(
    o: &OAuth,
    p: &HashMap<String, String>,
    client: IpAddr,
) -> Result<Option<(String, String)>, SignInError> {
    let (Some(user), Some(password)) = (p.get("username"), p.get("password")) else {
        return Ok(None);
    };
    if user.len() > MAX_USERNAME || password.len() > MAX_PASSWORD {
        return Ok(None);
    }
    let sign_ins = o.sign_ins();
    sign_ins
        .may_try(user, client)
        .map_err(|wait_secs| SignInError::TooMany { wait_secs })?;
    let row = o.wms().user(user.clone()).await.map_err(OAuthError::from)?;
    let stored = row.as_ref().map(|r| r.password_hash.clone());
    let ok = sign_ins
        .verify(stored, password.clone())
        .await
        .map_err(OAuthError::internal)?;
    Ok(row.filter(|_| ok).map(|r| (r.username, r.scope)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use argon2::password_hash::PasswordHash;
    use std::net::Ipv4Addr;
    use std::time::{Duration, Instant};

    const HERE: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));
    const THERE: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 51, 100, 7));

    #[test]
    fn the_dummy_costs_what_a_real_hash_costs() {
        let real = super::super::secrets::hash_password("a password").expect("hash");
        let real = PasswordHash::new(&real).expect("parse");
        let dummy = PasswordHash::new(DUMMY_HASH).expect("parse");
        assert_eq!(dummy.algorithm, real.algorithm);
        assert_eq!(dummy.version, real.version);
        assert_eq!(
            dummy.params.iter().collect::<Vec<_>>(),
            real.params.iter().collect::<Vec<_>>()
        );
        assert_eq!(
            dummy.hash.map(|h| h.len()),
            real.hash.map(|h| h.len()),
            "the same output length"
        );
    }

    #[tokio::test]
    async fn an_unknown_user_costs_one_verification_too() {
        let s = SignIns::default();
        let stored = super::super::secrets::hash_password("right").expect("hash");
        assert!(
            s.verify(Some(stored.clone()), "right".into())
                .await
                .expect("v")
        );
        assert!(!s.verify(Some(stored), "wrong".into()).await.expect("v"));
        assert_eq!(s.verified(), 2);
        assert!(!s.verify(None, "anything".into()).await.expect("v"));
        assert_eq!(s.verified(), 3, "the dummy hash was verified");
    }

    #[test]
    fn a_stranger_elsewhere_cannot_lock_the_user_out() {
        let s = SignIns::default();
        for _ in 0..BURST {
            assert!(s.may_try("Ana", THERE).is_ok());
        }
        assert!(s.may_try("ana", THERE).is_err(), "the guesser is slowed");
        assert!(s.may_try("ANA", HERE).is_ok(), "the user is not");
        assert!(s.may_try("bob", THERE).is_ok());
    }

    #[test]
    fn a_hundred_thousand_user_names_are_forgotten_one_window_later() {
        let clock = governor::clock::FakeRelativeClock::default();
        let s = SignIns::with_clock(clock.clone());
        assert_eq!(s.tracked(), 0);
        for i in 0..100_000 {
            assert!(s.may_try(&format!("user-{i}"), THERE).is_ok());
        }
        // The one that used its whole burst stays longest.
        for _ in 1..BURST {
            assert!(s.may_try("user-0", THERE).is_ok());
        }
        assert_eq!(s.tracked(), 100_000);
        s.prune();
        assert_eq!(s.tracked(), 100_000, "within the window, all are kept");
        // The window: a full burst refills at five a minute.
        let window = Duration::from_secs(60 * u64::from(BURST) / u64::from(PER_MINUTE));
        clock.advance(window + Duration::from_secs(60));
        s.prune();
        assert_eq!(s.tracked(), 0, "memory is back where it was");
    }

    /// Known and unknown users side by side: prints the medians. Timing
    /// on a shared machine is too noisy to fail a build on; what the build
    /// checks is that both do the same work (the tests above).
    #[tokio::test]
    #[ignore = "a measurement: cargo test -p depot-cloud --lib login_timing -- --ignored --nocapture"]
    async fn login_timing() {
        let s = SignIns::default();
        let stored = super::super::secrets::hash_password("right").expect("hash");
        let (mut known, mut unknown) = (Vec::new(), Vec::new());
        for _ in 0..20 {
            let t = Instant::now();
            s.verify(Some(stored.clone()), "wrong".into())
                .await
                .expect("v");
            known.push(t.elapsed());
            let t = Instant::now();
            s.verify(None, "wrong".into()).await.expect("v");
            unknown.push(t.elapsed());
        }
        let median = |v: &mut Vec<Duration>| {
            v.sort_unstable();
            v[v.len() / 2]
        };
        let (k, u) = (median(&mut known), median(&mut unknown));
        let ratio = u.as_secs_f64() / k.as_secs_f64();
        eprintln!(
            "login timing, median of 20: known user {k:?}, unknown user {u:?}, ratio {ratio:.3}"
        );
        assert!((0.8..=1.2).contains(&ratio), "{ratio}");
    }
}
