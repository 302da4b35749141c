//! What the integration tests of every crate share (a dev-dependency
//! only: no build of a binary ever links it).
//!
//! - [`wait`]: checking until something holds, never a fixed sleep;
//! - [`http`]: the one HTTP client the tests speak to a server with;
//! - [`seed`]: a business with warehouses and a key in an engine;
//! - [`cloud`]: a cloud served on a free port, seeded with two tenants;
//! - [`rig`]: a cloud an edge syncs with, through a broker and perhaps a
//!   [`link`] that can be cut;
//! - [`events`]: what the event log holds, for tests of sync;
//! - [`pg`]: a PostgreSQL database per test, when `DEPOT_TEST_PG_URL` names
//!   a server.

pub mod cloud;
pub mod events;
pub mod http;
pub mod link;
pub mod pg;
pub mod rig;
pub mod seed;
pub mod wait;

/// Prints the servers' logs into the test's output when `DEPOT_TEST_LOG`
/// says which (`DEPOT_TEST_LOG=warn`, `depot_wms=debug`): what a 500 was
/// is in the log, not the answer.
pub fn logs() {
    if let Ok(filter) = std::env::var("DEPOT_TEST_LOG") {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_test_writer()
            .try_init();
    }
}

/// A consistent copy of the live SQLite database at `from` into `to`
/// (its directory made), taken as the edge's backups are (`copy_live`: one
/// read transaction from the first page to the last).
pub async fn backup(from: &std::path::Path, to: &std::path::Path) {
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir).expect("backup dir");
    }
    let (from, to) = (from.to_owned(), to.to_owned());
    tokio::task::spawn_blocking(move || {
        depot_wms::database::copy_live(&from, &to, 1024, std::time::Duration::ZERO, |_, _| {})
    })
    .await
    .expect("backup task")
    .expect("backup");
}

pub use wait::{PATIENCE, eventually, eventually_seen, eventually_some, eventually_within};
