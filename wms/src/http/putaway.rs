//! `/v1/putaway/...`: received goods on their way from the dock to where
//! they are kept.

use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, ApiQuery, Tenant};
use super::idempotency::{ok, respond};
use crate::Wms;
use crate::idempotency::Answer;
use crate::putaway::PutawayFilter;
use axum::Json;
use axum::extract::State;
use depot_protocol::putaway::{PutawayResult, PutawayScan, PutawayStatus, PutawayTask};
use depot_protocol::{
    DataEnvelope, ErrorBody, FieldError, ListEnvelope, Page, PutawayTaskId, WarehouseId,
};
use serde::Deserialize;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PutawayQuery {
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
    /// open (the default) or done.
    #[param(value_type = Option<PutawayStatus>)]
    status: Option<String>,
}

/// Putaway tasks, the goods that waited longest first: what was received
/// at a dock or staging location, where the rules suggest it goes, and
/// how much of it is put away.
#[utoipa::path(get, path = "/v1/putaway/{business_id}/tasks/list", tag = "putaway",
    params(("business_id" = i32, Path, description = "The business"), PutawayQuery),
    responses((status = 200, body = ListEnvelope<PutawayTask>), (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn list(
    State(wms): State<Wms>,
    t: Tenant,
    ApiQuery(q): ApiQuery<PutawayQuery>,
) -> Result<Json<ListEnvelope<PutawayTask>>, ApiError> {
    let page = Page::parse_with_cursor(q.start, q.length, q.cursor).map_err(ApiError::invalid)?;
    let status = match q.status.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => PutawayStatus::Open,
        Some(s) => PutawayStatus::parse(s).ok_or_else(|| {
            ApiError::invalid(vec![FieldError::new(
                "status",
                format!("unknown status {s:?}: open or done"),
            )])
        })?,
    };
    let filter = PutawayFilter {
        warehouse_id: q.warehouse_id.map(WarehouseId),
        status: Some(status),
    };
    Ok(Json(
        wms.putaway_tasks(t.business_id(), filter, page)
            .await?
            .into(),
    ))
}

/// One putaway task.
#[utoipa::path(get, path = "/v1/putaway/{business_id}/tasks/{task_id}", tag = "putaway",
    params(("business_id" = i32, Path, description = "The business"), ("task_id" = i64, Path, description = "The task")),
    responses((status = 200, body = DataEnvelope<PutawayTask>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn get(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
) -> Result<Json<DataEnvelope<PutawayTask>>, ApiError> {
    Ok(Json(DataEnvelope {
        data: wms.putaway_task(t.business_id(), PutawayTaskId(id)).await?,
    }))
}

/// A putaway scan: the goods (item code, GTIN or GS1 element string) and
/// the location they were put at. Another location than the suggested one
/// is accepted if it takes them (and the answer says so); a location of
/// the wrong type, without room, or holding another lot of the item is
/// refused 422 naming `location`, and nothing moves. The units move from
/// the dock to the location as two `transfer` movements.
#[utoipa::path(post, path = "/v1/putaway/{business_id}/scan", tag = "putaway",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = PutawayScan,
    responses((status = 200, body = DataEnvelope<PutawayResult>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn scan(
    State(wms): State<Wms>,
    t: Tenant,
    ApiJson(req): ApiJson<PutawayScan>,
) -> Result<Answer, ApiError> {
    respond(ok::<PutawayResult>, wms.putaway_scan(t.0, req)).await
}
