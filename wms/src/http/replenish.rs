//! `/v1/replenishment/...`: pick locations' levels, and the tasks that
//! refill them from reserve.

use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, ApiQuery, Tenant};
use super::idempotency::{ok, respond};
use crate::Wms;
use crate::idempotency::Answer;
use crate::replenish::ReplenishFilter;
use axum::Json;
use axum::extract::State;
use depot_protocol::replenish::{
    LevelSet, ReplenishLevel, ReplenishResult, ReplenishScan, ReplenishStatus, ReplenishTask,
};
use depot_protocol::{
    DataEnvelope, ErrorBody, FieldError, ListEnvelope, Page, ReplenishTaskId, WarehouseId,
};
use serde::Deserialize;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TaskQuery {
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
    #[param(value_type = Option<ReplenishStatus>)]
    status: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LevelQuery {
    warehouse_id: Option<i64>,
}

/// Replenishment tasks, the oldest first: stock to move from a reserve
/// location to a pick location below its min.
#[utoipa::path(get, path = "/v1/replenishment/{business_id}/tasks/list", tag = "replenishment",
    params(("business_id" = i32, Path, description = "The business"), TaskQuery),
    responses((status = 200, body = ListEnvelope<ReplenishTask>), (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn list(
    State(wms): State<Wms>,
    t: Tenant,
    ApiQuery(q): ApiQuery<TaskQuery>,
) -> Result<Json<ListEnvelope<ReplenishTask>>, ApiError> {
    let page = Page::parse_with_cursor(q.start, q.length, q.cursor).map_err(ApiError::invalid)?;
    let status = match q.status.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => ReplenishStatus::Open,
        Some(s) => ReplenishStatus::parse(s).ok_or_else(|| {
            ApiError::invalid(vec![FieldError::new(
                "status",
                format!("unknown status {s:?}: open or done"),
            )])
        })?,
    };
    let filter = ReplenishFilter {
        warehouse_id: q.warehouse_id.map(WarehouseId),
        status: Some(status),
    };
    Ok(Json(
        wms.replenish_tasks(t.business_id(), filter, page)
            .await?
            .into(),
    ))
}

/// One replenishment task.
#[utoipa::path(get, path = "/v1/replenishment/{business_id}/tasks/{task_id}", tag = "replenishment",
    params(("business_id" = i32, Path, description = "The business"), ("task_id" = i64, Path, description = "The task")),
    responses((status = 200, body = DataEnvelope<ReplenishTask>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn get(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
) -> Result<Json<DataEnvelope<ReplenishTask>>, ApiError> {
    Ok(Json(DataEnvelope {
        data: wms
            .replenish_task(t.business_id(), ReplenishTaskId(id))
            .await?,
    }))
}

/// The pick locations' levels, by warehouse and location.
#[utoipa::path(get, path = "/v1/replenishment/{business_id}/levels", tag = "replenishment",
    params(("business_id" = i32, Path, description = "The business"), LevelQuery),
    responses((status = 200, body = DataEnvelope<Vec<ReplenishLevel>>), (status = 401, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn levels(
    State(wms): State<Wms>,
    t: Tenant,
    ApiQuery(q): ApiQuery<LevelQuery>,
) -> Result<Json<DataEnvelope<Vec<ReplenishLevel>>>, ApiError> {
    Ok(Json(DataEnvelope {
        data: wms
            .replenish_levels(t.business_id(), q.warehouse_id.map(WarehouseId))
            .await?,
    }))
}

/// Sets a pick location's min and max of an item. When what leaves the
/// location takes it below its min (or it is below it already), a task
/// refills it to its max from reserve, the lot that expires first first.
#[utoipa::path(put, path = "/v1/replenishment/{business_id}/levels", tag = "replenishment",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = LevelSet,
    responses((status = 200, body = DataEnvelope<ReplenishLevel>), (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn set_level(
    State(wms): State<Wms>,
    t: Tenant,
    ApiJson(req): ApiJson<LevelSet>,
) -> Result<Answer, ApiError> {
    respond(
        ok::<ReplenishLevel>,
        wms.set_replenish_level(t.business_id(), req),
    )
    .await
}

/// A replenishment scan: the goods (item code, GTIN or GS1 element string;
/// a lot in it must be the task's) and the label of the pick location they
/// were put at. The units move from the reserve location to the pick
/// location as two `transfer` movements.
#[utoipa::path(post, path = "/v1/replenishment/{business_id}/scan", tag = "replenishment",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = ReplenishScan,
    responses((status = 200, body = DataEnvelope<ReplenishResult>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn scan(
    State(wms): State<Wms>,
    t: Tenant,
    ApiJson(req): ApiJson<ReplenishScan>,
) -> Result<Answer, ApiError> {
    respond(ok::<ReplenishResult>, wms.replenish_scan(t.0, req)).await
}
