//! `/v1/counts/...`: cycle counts, made, counted by scan, approved.

use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, ApiQuery, Tenant};
use super::idempotency::{ok, respond};
use crate::Wms;
use crate::counts::CountFilter;
use crate::idempotency::Answer;
use axum::Json;
use axum::extract::State;
use depot_protocol::count::{
    Count, CountCreate, CountScan, CountScanResult, CountStatus, CountSummary,
};
use depot_protocol::{
    CountId, DataEnvelope, ErrorBody, FieldError, ListEnvelope, Page, WarehouseId,
};
use serde::Deserialize;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CountQuery {
    /// Rows to skip (default 0).
    #[param(minimum = 0)]
    start: Option<i64>,
    /// Rows to return, 1 to 1000 (default 50).
    #[param(minimum = 1, maximum = 1000)]
    length: Option<i64>,
    /// The `cursor` of the last page's answer: the page after it
    /// (instead of `start`).
    cursor: Option<String>,
    warehouse_id: Option<i64>,
    /// open, approved or cancelled (default: all).
    #[param(value_type = Option<CountStatus>)]
    status: Option<String>,
}

/// Cycle counts, newest first, each with how far it is.
#[utoipa::path(get, path = "/v1/counts/{business_id}/list", tag = "counts",
    params(("business_id" = i32, Path, description = "The business"), CountQuery),
    responses((status = 200, body = ListEnvelope<CountSummary>), (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn list(
    State(wms): State<Wms>,
    t: Tenant,
    ApiQuery(q): ApiQuery<CountQuery>,
) -> Result<Json<ListEnvelope<CountSummary>>, ApiError> {
    let page = Page::parse_with_cursor(q.start, q.length, q.cursor).map_err(ApiError::invalid)?;
    let status = match q.status.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => Some(CountStatus::parse(s).ok_or_else(|| {
            ApiError::invalid(vec![FieldError::new(
                "status",
                format!("unknown status {s:?}: open, approved or cancelled"),
            )])
        })?),
    };
    let filter = CountFilter {
        warehouse_id: q.warehouse_id.map(WarehouseId),
        status,
    };
    Ok(Json(
        wms.counts(t.business_id(), filter, page).await?.into(),
    ))
}

/// One count with its locations and lines. A blind count hides what the
/// books expect (`expected`, `variance`) on lines that are not final.
#[utoipa::path(get, path = "/v1/counts/{business_id}/{count_id}", tag = "counts",
    params(("business_id" = i32, Path, description = "The business"), ("count_id" = i64, Path, description = "The count")),
    responses((status = 200, body = DataEnvelope<Count>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn get(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
) -> Result<Json<DataEnvelope<Count>>, ApiError> {
    Ok(Json(DataEnvelope {
        data: wms.count(t.business_id(), CountId(id)).await?,
    }))
}

/// Makes a cycle count of a warehouse: by `locations`, by `zone`, by
/// `item_ids` (wherever they are held), or every location not counted in
/// `not_counted_days`. Each location holding stock gets a line per item
/// and lot; goods found elsewhere in it are added as they are scanned. A
/// location already in an open count is refused 409.
#[utoipa::path(post, path = "/v1/counts/{business_id}/create", tag = "counts",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = CountCreate,
    responses((status = 200, body = DataEnvelope<Count>), (status = 401, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn create(
    State(wms): State<Wms>,
    t: Tenant,
    ApiJson(req): ApiJson<CountCreate>,
) -> Result<Answer, ApiError> {
    respond(ok::<Count>, wms.create_count(t.0, req)).await
}

/// A count scan: the location and the goods with how many are there (the
/// whole figure: a later scan of the same goods replaces it), or the
/// location alone to close it. Closing counts what was not scanned as 0
/// and settles each line: final within the count's tolerance, else to be
/// recounted by another API key.
#[utoipa::path(post, path = "/v1/counts/{business_id}/{count_id}/scan", tag = "counts",
    params(("business_id" = i32, Path, description = "The business"), ("count_id" = i64, Path, description = "The count")),
    request_body = CountScan,
    responses((status = 200, body = DataEnvelope<CountScanResult>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn scan(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
    ApiJson(req): ApiJson<CountScan>,
) -> Result<Answer, ApiError> {
    respond(ok::<CountScanResult>, wms.count_scan(t.0, CountId(id), req)).await
}

/// Approves a count whose every location is done: each final line's
/// variance is booked as a `cycle_count` movement at its location and lot,
/// and its locations are recorded as counted today.
#[utoipa::path(post, path = "/v1/counts/{business_id}/{count_id}/approve", tag = "counts",
    params(("business_id" = i32, Path, description = "The business"), ("count_id" = i64, Path, description = "The count")),
    responses((status = 200, body = DataEnvelope<Count>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn approve(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
) -> Result<Answer, ApiError> {
    respond(ok::<Count>, wms.approve_count(t.0, CountId(id))).await
}

/// Calls off an open count: nothing is booked, and its locations may be
/// counted again.
#[utoipa::path(post, path = "/v1/counts/{business_id}/{count_id}/cancel", tag = "counts",
    params(("business_id" = i32, Path, description = "The business"), ("count_id" = i64, Path, description = "The count")),
    responses((status = 200, body = DataEnvelope<Count>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn cancel(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
) -> Result<Answer, ApiError> {
    respond(ok::<Count>, wms.cancel_count(t.0, CountId(id))).await
}
