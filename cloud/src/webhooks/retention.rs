//! Finished deliveries do not pile up: those delivered or given up more
//! than `webhooks.keep_finished_days` ago are deleted with their attempts,
//! a batch per write so that the writer is never held for long, once soon
//! after start and then every hour.

use depot_office::Office;
use depot_wms::Wms;
use std::time::Duration;

/// Deliveries deleted per write transaction.
const BATCH: u32 = 1000;
/// Between two passes.
const EVERY: Duration = Duration::from_secs(3600);
/// Before the first pass: start-up has other work.
const FIRST: Duration = Duration::from_secs(60);

/// Deletes the deliveries finished before `before`, `batch` per write;
/// answers how many went.
pub async fn prune_before(
    wms: &Office,
    before: depot_protocol::Timestamp,
    batch: u32,
) -> depot_wms::Result<usize> {
    let mut gone = 0;
    loop {
        let n = wms.prune_webhook_deliveries(before, batch).await?;
        gone += n;
        if n < batch as usize {
            return Ok(gone);
        }
        // Other writers go between two batches.
        tokio::task::yield_now().await;
    }
}

/// Prunes every [`EVERY`] until the task is dropped.
pub async fn run(wms: Wms, keep_days: u32) {
    let keep = chrono::Duration::days(i64::from(keep_days));
    let office = Office::new(wms);
    tokio::time::sleep(FIRST).await;
    loop {
        match prune_before(&office, depot_protocol::now() - keep, BATCH).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(deleted = n, keep_days, "old webhook deliveries deleted"),
            Err(e) => tracing::error!(error = %e, "deleting old webhook deliveries"),
        }
        tokio::time::sleep(EVERY).await;
    }
}
