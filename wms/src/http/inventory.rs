//! `/v1/inventory/...`: stock levels and adjustments.

use super::error::ApiError;
use super::extract::{ApiJson, ApiQuery, Tenant};
use super::idempotency::{ok, respond};
use crate::Wms;
use crate::idempotency::Answer;
use crate::ledger::{AdjustResult, StockFilter};
use axum::Json;
use axum::extract::State;
use depot_protocol::stock::{AdjustRequest, StockLevel};
use depot_protocol::{
    DataEnvelope, ErrorBody, FieldError, ItemId, ListEnvelope, Page, WarehouseId,
};
use serde::Deserialize;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StockQuery {
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
    item_id: Option<i64>,
    sku: Option<String>,
    /// true: only rows whose on-hand is below zero (discrepancies).
    negative: Option<bool>,
    /// Only items with stock at the location of this code (in any of the
    /// warehouses listed), each with that location's stock alone in `bins`.
    #[param(max_length = 32)]
    location: Option<String>,
}

/// Physical (on-hand) and available-to-promise stock per item and
/// warehouse, with where it is (`bins`: per location and lot).
#[utoipa::path(get, path = "/v1/inventory/{business_id}/items/list", tag = "inventory",
    params(("business_id" = i32, Path, description = "The business"), StockQuery),
    responses((status = 200, body = ListEnvelope<StockLevel>), (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn list(
    State(wms): State<Wms>,
    t: Tenant,
    ApiQuery(q): ApiQuery<StockQuery>,
) -> Result<Json<ListEnvelope<StockLevel>>, ApiError> {
    let page = Page::parse_with_cursor(q.start, q.length, q.cursor).map_err(ApiError::invalid)?;
    // The length as sent, as the description states it.
    let max = depot_protocol::catalog::MAX_LOCATION;
    if q.location.as_ref().is_some_and(|l| l.chars().count() > max) {
        return Err(ApiError::invalid(vec![FieldError::new(
            "location",
            format!("must be at most {max} characters"),
        )]));
    }
    let filter = StockFilter {
        warehouse_id: q.warehouse_id.map(WarehouseId),
        item_id: q.item_id.map(ItemId),
        sku: q.sku.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()),
        negative: q.negative.unwrap_or(false),
        location: q
            .location
            .map(|l| l.trim().to_owned())
            .filter(|l| !l.is_empty()),
    };
    Ok(Json(
        wms.list_stock(t.business_id(), filter, page).await?.into(),
    ))
}

/// A manual or cycle-count adjustment with an audit reason code. See the
/// request schema for which quantity field each reason takes. Stock that
/// goes below zero is recorded and flagged (`negative`), never refused.
#[utoipa::path(post, path = "/v1/inventory/{business_id}/adjust", tag = "inventory",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = AdjustRequest,
    responses((status = 200, body = DataEnvelope<AdjustResult>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn adjust(
    State(wms): State<Wms>,
    t: Tenant,
    ApiJson(req): ApiJson<AdjustRequest>,
) -> Result<Answer, ApiError> {
    respond(ok::<AdjustResult>, wms.adjust(t.0, req)).await
}
