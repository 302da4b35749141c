//! `/v1/returns/...`: customer returns, authorised with an RMA number and
//! received at the warehouse by scan, each unit graded.

use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, ApiQuery, Tenant};
use super::idempotency::{ok, respond};
use crate::Wms;
use crate::idempotency::Answer;
use crate::returns::ReturnFilter;
use axum::Json;
use axum::extract::State;
use depot_protocol::returns::{
    Return, ReturnCreate, ReturnReceive, ReturnReceiveResult, ReturnStatus,
};
use depot_protocol::{
    DataEnvelope, ErrorBody, FieldError, ListEnvelope, OrderId, Page, ReturnId, WarehouseId,
};
use serde::Deserialize;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ReturnQuery {
    /// Rows to skip (default 0).
    #[param(minimum = 0)]
    start: Option<i64>,
    /// Rows to return, 1 to 1000 (default 50).
    #[param(minimum = 1, maximum = 1000)]
    length: Option<i64>,
    /// The `cursor` of the last page's answer: the page after it
    /// (instead of `start`).
    cursor: Option<String>,
    /// open, receiving, received or cancelled (default: all).
    #[param(value_type = Option<ReturnStatus>)]
    status: Option<String>,
    /// The returns of this order.
    order_id: Option<i64>,
    warehouse_id: Option<i64>,
}

/// Customer returns, newest first, each with its lines and how their
/// units were graded so far.
#[utoipa::path(get, path = "/v1/returns/{business_id}/list", tag = "returns",
    params(("business_id" = i32, Path, description = "The business"), ReturnQuery),
    responses((status = 200, body = ListEnvelope<Return>), (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn list(
    State(wms): State<Wms>,
    t: Tenant,
    ApiQuery(q): ApiQuery<ReturnQuery>,
) -> Result<Json<ListEnvelope<Return>>, ApiError> {
    let page = Page::parse_with_cursor(q.start, q.length, q.cursor).map_err(ApiError::invalid)?;
    let status = match q.status.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => Some(ReturnStatus::parse(s).ok_or_else(|| {
            ApiError::invalid(vec![FieldError::new(
                "status",
                format!("unknown status {s:?}: open, receiving, received or cancelled"),
            )])
        })?),
    };
    let filter = ReturnFilter {
        status,
        order_id: q.order_id.map(OrderId),
        warehouse_id: q.warehouse_id.map(WarehouseId),
    };
    Ok(Json(
        wms.customer_returns(t.business_id(), filter, page)
            .await?
            .into(),
    ))
}

/// One return, with its return label (ZPL) when the own fleet delivered
/// the order.
#[utoipa::path(get, path = "/v1/returns/{business_id}/{return_id}", tag = "returns",
    params(("business_id" = i32, Path, description = "The business"), ("return_id" = i64, Path, description = "The return")),
    responses((status = 200, body = DataEnvelope<Return>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn get(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
) -> Result<Json<DataEnvelope<Return>>, ApiError> {
    Ok(Json(DataEnvelope {
        data: wms.customer_return(t.business_id(), ReturnId(id)).await?,
    }))
}

/// Authorises a return of units of a dispatched or delivered order: per
/// order line the units and why. Answers the RMA number and, when the own
/// fleet delivered the order, the return label (ZPL) to send the customer.
/// A line's units may not exceed what it shipped less what other returns
/// hold of it (422 naming the line).
#[utoipa::path(post, path = "/v1/returns/{business_id}/create", tag = "returns",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = ReturnCreate,
    responses((status = 200, body = DataEnvelope<Return>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn create(
    State(wms): State<Wms>,
    t: Tenant,
    ApiJson(req): ApiJson<ReturnCreate>,
) -> Result<Answer, ApiError> {
    respond(ok::<Return>, wms.create_return(t.0, req)).await
}

/// Calls off a return none of whose units arrived: nothing is booked, and
/// its units may be returned again. Anything else is refused 409.
#[utoipa::path(post, path = "/v1/returns/{business_id}/{return_id}/cancel", tag = "returns",
    params(("business_id" = i32, Path, description = "The business"), ("return_id" = i64, Path, description = "The return")),
    responses((status = 200, body = DataEnvelope<Return>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn cancel(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
) -> Result<Answer, ApiError> {
    respond(ok::<Return>, wms.cancel_return(t.0, ReturnId(id))).await
}

/// A scan at the returns station: the unit and its grade. `restock` books
/// it `returned` into the warehouse's returns location and makes a putaway
/// task; `damaged` books it into quarantine; `scrap` books nothing. The
/// return is `received` once every unit is graded.
#[utoipa::path(post, path = "/v1/returns/{business_id}/{return_id}/receive", tag = "returns",
    params(("business_id" = i32, Path, description = "The business"), ("return_id" = i64, Path, description = "The return")),
    request_body = ReturnReceive,
    responses((status = 200, body = DataEnvelope<ReturnReceiveResult>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn receive(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
    ApiJson(req): ApiJson<ReturnReceive>,
) -> Result<Answer, ApiError> {
    respond(
        ok::<ReturnReceiveResult>,
        wms.receive_return(t.0, ReturnId(id), req),
    )
    .await
}
