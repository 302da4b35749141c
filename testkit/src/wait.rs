//! Waiting for what another task or process makes true, without a fixed
//! sleep: a test checks until it holds ([`eventually`]). The bound only
//! ends a test that would otherwise hang; it is no timing assertion, so it
//! is generous (a busy CI machine writing a build beside the tests makes
//! every fsync slow).

use std::future::Future;
use std::time::Duration;

/// How long [`eventually`] waits before it fails the test.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// How often it checks: often enough that a test is not slowed by it.
const EVERY: Duration = Duration::from_millis(20);

/// Checks `condition` until it holds; fails the test, naming `what`, if it
/// has not after [`PATIENCE`].
pub async fn eventually<F, Fut>(what: &str, condition: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    eventually_within(PATIENCE, what, condition).await;
}

/// [`eventually`], with a bound of the caller's.
pub async fn eventually_within<F, Fut>(patience: Duration, what: &str, mut condition: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    poll(patience, what, || {
        let holds = condition();
        async move {
            if holds.await {
                Ok(())
            } else {
                Err(String::new())
            }
        }
    })
    .await;
}

/// Checks `found` until it finds something, and answers it; fails the
/// test, naming `what`, if it has found nothing after [`PATIENCE`].
pub async fn eventually_some<T, F, Fut>(what: &str, mut found: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    poll(PATIENCE, what, || {
        let found = found();
        async move { found.await.ok_or_else(String::new) }
    })
    .await
}

/// Looks with `look` until what it sees passes `holds`, and answers it;
/// fails the test, naming `what` and showing the last thing seen, if
/// nothing has after [`PATIENCE`].
pub async fn eventually_seen<T, F, Fut>(what: &str, look: F, holds: impl Fn(&T) -> bool) -> T
where
    T: std::fmt::Debug,
    F: FnMut() -> Fut,
    Fut: Future<Output = T>,
{
    seen_within(PATIENCE, what, look, holds).await
}

async fn seen_within<T, F, Fut>(
    patience: Duration,
    what: &str,
    mut look: F,
    holds: impl Fn(&T) -> bool,
) -> T
where
    T: std::fmt::Debug,
    F: FnMut() -> Fut,
    Fut: Future<Output = T>,
{
    poll(patience, what, || {
        let seen = look();
        let holds = &holds;
        async move {
            let seen = seen.await;
            if holds(&seen) {
                Ok(seen)
            } else {
                Err(format!("{seen:?}"))
            }
        }
    })
    .await
}

/// The one loop of the kit: every [`EVERY`] until `found` answers, for at
/// most `patience`. What it says when it does not (if anything) is shown
/// when the test fails.
async fn poll<T, F, Fut>(patience: Duration, what: &str, mut found: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let deadline = tokio::time::Instant::now() + patience;
    loop {
        let seen = match found().await {
            Ok(v) => return v,
            Err(seen) => seen,
        };
        if tokio::time::Instant::now() >= deadline {
            let seen = if seen.is_empty() {
                String::new()
            } else {
                format!("; last seen: {seen}")
            };
            panic!("timed out after {patience:?} waiting for {what}{seen}");
        }
        tokio::time::sleep(EVERY).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[tokio::test]
    async fn it_checks_until_the_condition_holds() {
        let n = AtomicU32::new(0);
        eventually("the third check", || async {
            n.fetch_add(1, Ordering::SeqCst) == 2
        })
        .await;
        assert_eq!(n.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn it_answers_what_it_found() {
        let n = AtomicU32::new(0);
        let found = eventually_some("a number past 2", || async {
            Some(n.fetch_add(1, Ordering::SeqCst)).filter(|&v| v > 2)
        })
        .await;
        assert_eq!(found, 3);
    }

    #[tokio::test]
    #[should_panic(expected = "waiting for an even number; last seen: 7")]
    async fn it_shows_what_it_saw_last() {
        let patience = Duration::from_millis(50);
        seen_within(patience, "an even number", || async { 7 }, |n| n % 2 == 0).await;
    }

    #[tokio::test]
    #[should_panic(expected = "waiting for what never comes")]
    async fn it_fails_the_test_when_patience_runs_out() {
        eventually_within(Duration::from_millis(50), "what never comes", || async {
            false
        })
        .await;
    }
}
