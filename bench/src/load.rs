//! Loading a data set: many engine calls in flight at once, with progress.

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use std::future::Future;
use std::time::Instant;
use tokio::task::JoinSet;

/// Engine calls in flight while loading: enough to keep the group-commit
/// writer's batches full without queueing the whole data set at once.
pub const PARALLEL: usize = 64;

/// A progress bar for `n` steps of `what`, on stderr.
pub fn progress_bar(what: &str, n: usize) -> ProgressBar {
    let bar = ProgressBar::new(n as u64).with_message(what.to_owned());
    bar.set_style(
        ProgressStyle::with_template("  {msg} [{bar:40}] {pos}/{len} ({per_sec}, {eta} left)")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// Runs `f(0..n)` with `parallel` calls in flight, with a progress bar.
/// Results come back in completion order.
pub async fn load<T, F, Fut>(what: &str, n: usize, parallel: usize, f: F) -> anyhow::Result<Vec<T>>
where
    T: Send + 'static,
    F: Fn(usize) -> Fut,
    Fut: Future<Output = anyhow::Result<T>> + Send + 'static,
{
    let started = Instant::now();
    let bar = progress_bar(what, n);
    let mut set = JoinSet::new();
    let mut out = Vec::with_capacity(n);
    let mut next = 0;
    while out.len() < n {
        while next < n && set.len() < parallel.max(1) {
            set.spawn(f(next));
            next += 1;
        }
        let Some(done) = set.join_next().await else {
            break;
        };
        out.push(done.context("load task panicked")??);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let secs = started.elapsed().as_secs_f64();
    eprintln!("  {what}: {n} in {secs:.1} s ({:.0}/s)", n as f64 / secs);
    Ok(out)
}
