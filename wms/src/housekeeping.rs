//! What both daemons do every hour or so, whatever the traffic: expired
//! idempotency keys deleted, the planner's statistics refreshed.

use crate::Wms;

/// Deletes the idempotency keys older than `retention` and refreshes the
/// planner's statistics ([`Wms::optimize`]) every `every` (the first pass
/// after `first`), until the task is dropped.
pub async fn every(
    wms: Wms,
    retention: chrono::Duration,
    first: std::time::Duration,
    every: std::time::Duration,
) {
    tokio::time::sleep(first).await;
    loop {
        match wms
            .prune_idempotency_keys(depot_protocol::now() - retention, 1000)
            .await
        {
            Ok(0) => {}
            Ok(n) => tracing::info!(deleted = n, "expired idempotency keys deleted"),
            Err(e) => tracing::error!(error = %e, "deleting expired idempotency keys"),
        }
        if let Err(e) = wms.optimize().await {
            tracing::warn!(error = %e, "refreshing the planner's statistics");
        }
        tokio::time::sleep(every).await;
    }
}
