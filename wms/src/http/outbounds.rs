//! `/v1/outbounds/...`: dispatch runs.

use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, ApiQuery, Tenant};
use super::idempotency::{ok, respond};
use crate::Wms;
use crate::idempotency::Answer;
use crate::shipping::RunFilter;
use axum::Json;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use depot_protocol::shipping::{DispatchRun, LoadRequest, LoadResult, RunStatus};
use depot_protocol::{
    DataEnvelope, DispatchRunId, ErrorBody, FieldError, ListEnvelope, Page, WarehouseId,
};
use serde::Deserialize;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RunQuery {
    #[param(minimum = 0)]
    start: Option<i64>,
    #[param(minimum = 1, maximum = 1000)]
    length: Option<i64>,
    /// The `cursor` of the last page's answer: the page after it
    /// (instead of `start`).
    cursor: Option<String>,
    /// open (packed shipments waiting for the carrier) or closed.
    #[param(value_type = Option<RunStatus>)]
    status: Option<String>,
    carrier: Option<String>,
    warehouse_id: Option<i64>,
}

/// Dispatch runs: packed shipments grouped by carrier and warehouse, with
/// package counts and weights.
#[utoipa::path(get, path = "/v1/outbounds/{business_id}/dispatch-runs", tag = "outbounds",
    params(("business_id" = i32, Path, description = "The business"), RunQuery),
    responses((status = 200, body = ListEnvelope<DispatchRun>), (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn list(
    State(wms): State<Wms>,
    t: Tenant,
    ApiQuery(q): ApiQuery<RunQuery>,
) -> Result<Json<ListEnvelope<DispatchRun>>, ApiError> {
    let page = Page::parse_with_cursor(q.start, q.length, q.cursor).map_err(ApiError::invalid)?;
    let status = match q.status.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => Some(RunStatus::parse(s).ok_or_else(|| {
            ApiError::invalid(vec![FieldError::new(
                "status",
                format!("unknown status {s:?}"),
            )])
        })?),
    };
    let filter = RunFilter {
        status,
        carrier: q
            .carrier
            .map(|s| s.trim().to_lowercase())
            .filter(|s| !s.is_empty()),
        warehouse_id: q.warehouse_id.map(WarehouseId),
    };
    Ok(Json(
        wms.dispatch_runs(t.business_id(), filter, page)
            .await?
            .into(),
    ))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CloseQuery {
    /// Close even with packages not scanned onto the vehicle once loading
    /// has begun (they are listed in the 409 otherwise).
    force: Option<bool>,
}

/// Closes a run (extension): its orders become `dispatched`, their goods
/// are booked out as `shipped` movements, and the manifest is produced.
/// Once any package of the run was loaded (scanned onto the vehicle), the
/// run closes only with every package loaded, or with `force=true`: a 409
/// names each package still on the dock.
#[utoipa::path(post, path = "/v1/outbounds/{business_id}/dispatch-runs/{run_id}/close", tag = "outbounds",
    params(("business_id" = i32, Path, description = "The business"), ("run_id" = i64, Path, description = "The run"), CloseQuery),
    responses((status = 200, body = DataEnvelope<DispatchRun>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn close(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
    ApiQuery(q): ApiQuery<CloseQuery>,
) -> Result<Answer, ApiError> {
    let force = q.force.unwrap_or(false);
    respond(
        ok::<DispatchRun>,
        wms.close_dispatch_run(t.0, DispatchRunId(id), force),
    )
    .await
}

/// Loads a package (extension): scanning its SSCC or piece number at the
/// dock marks it as on the run's vehicle. A package of another run is
/// refused with 409 (keep it off this vehicle); scanning one twice changes
/// nothing (`already_loaded`).
#[utoipa::path(post, path = "/v1/outbounds/{business_id}/dispatch-runs/{run_id}/load", tag = "outbounds",
    params(("business_id" = i32, Path, description = "The business"), ("run_id" = i64, Path, description = "The run")),
    request_body = LoadRequest,
    responses((status = 200, body = DataEnvelope<LoadResult>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn load(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
    ApiJson(req): ApiJson<LoadRequest>,
) -> Result<Answer, ApiError> {
    respond(
        ok::<LoadResult>,
        wms.load_package(t.0, DispatchRunId(id), req),
    )
    .await
}

/// The manifest of a closed run, as PDF (extension).
#[utoipa::path(get, path = "/v1/outbounds/{business_id}/dispatch-runs/{run_id}/manifest", tag = "outbounds",
    params(("business_id" = i32, Path, description = "The business"), ("run_id" = i64, Path, description = "The run")),
    responses((status = 200, description = "The manifest", content_type = "application/pdf", body = Vec<u8>),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn manifest(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
) -> Result<Response, ApiError> {
    let pdf = wms.manifest(t.business_id(), DispatchRunId(id)).await?;
    Ok(([(header::CONTENT_TYPE, "application/pdf")], pdf).into_response())
}
