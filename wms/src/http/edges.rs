//! `/v1/edges/...`: the business's edges and how far their sync is.

use super::error::ApiError;
use super::extract::Tenant;
use crate::Wms;
use crate::sync::EdgeRecord;
use axum::Json;
use axum::extract::State;
use depot_protocol::{ErrorBody, ListEnvelope};

/// The business's registered edges (extension): node number, version, last
/// seen, how far their log has been applied in the cloud (`up_cursor`), the
/// newest event each reported (`reported_head`) and so its `backlog`, and
/// whether it is `online` (its retained state, or a hello since).
#[utoipa::path(get, path = "/v1/edges/{business_id}/list", tag = "edges",
    params(("business_id" = i32, Path, description = "The business")),
    responses((status = 200, body = ListEnvelope<EdgeRecord>), (status = 401, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn list(
    State(wms): State<Wms>,
    t: Tenant,
) -> Result<Json<ListEnvelope<EdgeRecord>>, ApiError> {
    let rows = wms.edges(t.business_id()).await?;
    let n = rows.len() as u64;
    Ok(Json(ListEnvelope::new(rows, n, n)))
}
