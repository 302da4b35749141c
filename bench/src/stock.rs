//! Stock for a workload: received in one warehouse, SKU by SKU.

use crate::load::{PARALLEL, load};
use crate::sku;
use depot_protocol::WarehouseId;
use depot_protocol::stock::{AdjustRequest, MovementReason};
use depot_protocol::tenant::Caller;
use depot_wms::Wms;

/// Receives `units(s)` units of each of the first `skus` SKUs in
/// `warehouse`, loading as `what`.
pub async fn receive(
    wms: &Wms,
    caller: Caller,
    warehouse: WarehouseId,
    what: &str,
    skus: usize,
    units: impl Fn(usize) -> i64,
) -> anyhow::Result<()> {
    load(what, skus, PARALLEL, |s| {
        let wms = wms.clone();
        let stock = AdjustRequest {
            warehouse_id: warehouse,
            item_id: None,
            sku: Some(sku(s as u64)),
            reason: MovementReason::Received,
            quantity: Some(units(s)),
            delta: None,
            counted: None,
            to_warehouse_id: None,
            to_location: None,
            location: None,
            reference: None,
            note: None,
        };
        async move {
            wms.adjust(caller, stock).await?;
            Ok(())
        }
    })
    .await?;
    Ok(())
}
