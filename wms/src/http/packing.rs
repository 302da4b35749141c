//! `/v1/packing/...`: pack-order.

use super::error::ApiError;
use super::extract::{ApiJson, Tenant};
use super::idempotency::{ok, respond};
use crate::Wms;
use crate::idempotency::Answer;
use axum::extract::State;
use depot_protocol::shipping::{PackRequest, PackResult};
use depot_protocol::{DataEnvelope, ErrorBody};

/// Validates the packed items against the order (nothing missing, nothing
/// extra: 422 naming each difference, and nothing changes), records the
/// packages, moves the order to `packed`, creates its shipment in the
/// carrier's open dispatch run, and returns the packing slip as ZPL and PDF.
#[utoipa::path(post, path = "/v1/packing/{business_id}/pack-order", tag = "packing",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = PackRequest,
    responses((status = 200, body = DataEnvelope<PackResult>), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn pack_order(
    State(wms): State<Wms>,
    t: Tenant,
    ApiJson(req): ApiJson<PackRequest>,
) -> Result<Answer, ApiError> {
    respond(ok::<PackResult>, wms.pack_order(t.0, req)).await
}
