//! `/v1/inbounds/...`: purchase orders and receiving.

use super::error::ApiError;
use super::extract::{ApiJson, ApiQuery, Tenant};
use super::idempotency::{ok, respond};
use crate::Wms;
use crate::idempotency::Answer;
use crate::inbound::InboundFilter;
use axum::Json;
use axum::extract::State;
use depot_protocol::inbound::{
    InboundCreate, InboundOrder, InboundStatus, ReceptionRequest, ReceptionResult,
};
use depot_protocol::{DataEnvelope, ErrorBody, FieldError, ListEnvelope, Page, WarehouseId};
use serde::Deserialize;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct InboundQuery {
    #[param(minimum = 0)]
    start: Option<i64>,
    #[param(minimum = 1, maximum = 1000)]
    length: Option<i64>,
    /// The `cursor` of the last page's answer: the page after it
    /// (instead of `start`).
    cursor: Option<String>,
    /// open, partially_received, received, or all. Without it, those
    /// awaiting receipt (open and partially_received) are listed.
    #[param(value_type = Option<InboundStatus>)]
    status: Option<String>,
    warehouse_id: Option<i64>,
    supplier: Option<String>,
}

/// Purchase orders awaiting receipt (or in the given status), newest first.
#[utoipa::path(get, path = "/v1/inbounds/{business_id}/orders/list", tag = "inbounds",
    params(("business_id" = i32, Path, description = "The business"), InboundQuery),
    responses((status = 200, body = ListEnvelope<InboundOrder>), (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn list(
    State(wms): State<Wms>,
    t: Tenant,
    ApiQuery(q): ApiQuery<InboundQuery>,
) -> Result<Json<ListEnvelope<InboundOrder>>, ApiError> {
    let page = Page::parse_with_cursor(q.start, q.length, q.cursor).map_err(ApiError::invalid)?;
    let raw = q.status.as_deref().map(str::trim).filter(|s| !s.is_empty());
    let status = match raw {
        None | Some("all") => None,
        Some(s) => Some(InboundStatus::parse(s).ok_or_else(|| {
            ApiError::invalid(vec![FieldError::new(
                "status",
                format!("unknown status {s:?}"),
            )])
        })?),
    };
    let filter = InboundFilter {
        status,
        awaiting: raw.is_none(),
        warehouse_id: q.warehouse_id.map(WarehouseId),
        supplier: q
            .supplier
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty()),
    };
    Ok(Json(
        wms.list_inbounds(t.business_id(), filter, page)
            .await?
            .into(),
    ))
}

/// Creates a purchase order with its expected lines (extension).
#[utoipa::path(post, path = "/v1/inbounds/{business_id}/orders/create", tag = "inbounds",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = InboundCreate,
    responses((status = 200, body = DataEnvelope<InboundOrder>), (status = 401, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn create(
    State(wms): State<Wms>,
    t: Tenant,
    ApiJson(req): ApiJson<InboundCreate>,
) -> Result<Answer, ApiError> {
    respond(ok::<InboundOrder>, wms.create_inbound(t.business_id(), req)).await
}

/// Blind, scan-based receiving with quality inspection. Each line is a scan
/// (barcode, GTIN, SKU or GS1 string with lot/expiry/count) with the units
/// counted; accepted units become `received` movements into `location`,
/// rejected ones are recorded with their reason. Receptions accumulate; the
/// answer reports over- and under-receipt against the order.
#[utoipa::path(post, path = "/v1/inbounds/{business_id}/reception", tag = "inbounds",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = ReceptionRequest,
    responses((status = 200, body = DataEnvelope<ReceptionResult>), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn reception(
    State(wms): State<Wms>,
    t: Tenant,
    ApiJson(req): ApiJson<ReceptionRequest>,
) -> Result<Answer, ApiError> {
    respond(ok::<ReceptionResult>, wms.receive(t.0, req)).await
}
