//! `/v1/picking/...`: waves and pick scans.

use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, ApiQuery, Tenant};
use super::idempotency::{ok, respond};
use crate::Wms;
use crate::idempotency::Answer;
use crate::picking::WaveFilter;
use axum::Json;
use axum::extract::State;
use depot_protocol::picking::{ScanRequest, ScanResult, Wave, WaveCreate, WaveStatus};
use depot_protocol::{DataEnvelope, ErrorBody, FieldError, ListEnvelope, Page, WarehouseId};
use serde::Deserialize;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WaveQuery {
    #[param(minimum = 0)]
    start: Option<i64>,
    #[param(minimum = 1, maximum = 1000)]
    length: Option<i64>,
    /// The `cursor` of the last page's answer: the page after it
    /// (instead of `start`).
    cursor: Option<String>,
    /// open (default) or completed.
    #[param(value_type = Option<WaveStatus>)]
    status: Option<String>,
    warehouse_id: Option<i64>,
}

/// Active picking waves (or completed ones) with their pick lists in walking
/// order.
#[utoipa::path(get, path = "/v1/picking/{business_id}/waves/list", tag = "picking",
    params(("business_id" = i32, Path, description = "The business"), WaveQuery),
    responses((status = 200, body = ListEnvelope<Wave>), (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn list(
    State(wms): State<Wms>,
    t: Tenant,
    ApiQuery(q): ApiQuery<WaveQuery>,
) -> Result<Json<ListEnvelope<Wave>>, ApiError> {
    let page = Page::parse_with_cursor(q.start, q.length, q.cursor).map_err(ApiError::invalid)?;
    let status = match q.status.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => WaveStatus::Open,
        Some(s) => WaveStatus::parse(s).ok_or_else(|| {
            ApiError::invalid(vec![FieldError::new(
                "status",
                format!("unknown status {s:?}"),
            )])
        })?,
    };
    let filter = WaveFilter {
        status: Some(status),
        warehouse_id: q.warehouse_id.map(WarehouseId),
    };
    Ok(Json(
        wms.list_waves(t.business_id(), filter, page).await?.into(),
    ))
}

/// One wave, open or completed, with its pick lists in walking order
/// (extension): what a picking station follows.
#[utoipa::path(get, path = "/v1/picking/{business_id}/waves/{wave_id}", tag = "picking",
    params(("business_id" = i32, Path, description = "The business"), ("wave_id" = i64, Path, description = "The wave")),
    responses((status = 200, body = DataEnvelope<Wave>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn get(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
) -> Result<Json<DataEnvelope<Wave>>, ApiError> {
    Ok(Json(DataEnvelope {
        data: wms
            .wave(t.business_id(), depot_protocol::WaveId(id))
            .await?,
    }))
}

/// Creates a wave from the oldest confirmed orders of a warehouse not yet
/// waved, within the limits (extension).
#[utoipa::path(post, path = "/v1/picking/{business_id}/waves/create", tag = "picking",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = WaveCreate,
    responses((status = 200, body = DataEnvelope<Wave>), (status = 401, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn create(
    State(wms): State<Wms>,
    t: Tenant,
    ApiJson(req): ApiJson<WaveCreate>,
) -> Result<Answer, ApiError> {
    respond(ok::<Wave>, wms.create_wave(t.business_id(), req)).await
}

/// Validates one picking scan against the wave's open lines. A good scan
/// answers what is left. A bad one is refused with a status per cause:
/// 422 unreadable scan or item not on the pick list, 404 unknown barcode,
/// 409 over-pick, 412 wrong lot or expiry. The first scan of an order moves
/// it to `picking`.
#[utoipa::path(post, path = "/v1/picking/{business_id}/item/scan", tag = "picking",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = ScanRequest,
    responses((status = 200, body = DataEnvelope<ScanResult>), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 412, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn scan(
    State(wms): State<Wms>,
    t: Tenant,
    ApiJson(req): ApiJson<ScanRequest>,
) -> Result<Answer, ApiError> {
    respond(ok::<ScanResult>, wms.pick_scan(t.0, req)).await
}
