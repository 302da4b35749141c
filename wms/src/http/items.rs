//! `/v1/items/...`: the catalog.

use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, ApiQuery, Tenant};
use super::idempotency::{ok, respond};
use crate::Wms;
use crate::catalog::ItemFilter;
use crate::idempotency::Answer;
use axum::Json;
use axum::extract::State;
use depot_protocol::catalog::{Item, ItemCreate, ItemEdit};
use depot_protocol::{DataEnvelope, ErrorBody, ItemId, ListEnvelope, Page};
use serde::Deserialize;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ItemQuery {
    /// Rows to skip (default 0).
    #[param(minimum = 0)]
    start: Option<i64>,
    /// Rows to return, 1 to 1000 (default 50).
    #[param(minimum = 1, maximum = 1000)]
    length: Option<i64>,
    /// The `cursor` of the last page's answer: the page after it
    /// (instead of `start`).
    cursor: Option<String>,
    /// Exact SKU.
    sku: Option<String>,
    /// Any code the item answers to: GTIN (any length form) or barcode.
    barcode: Option<String>,
    brand: Option<String>,
    category: Option<String>,
    /// Text contained in the name or the SKU.
    q: Option<String>,
}

fn nonblank(s: Option<String>) -> Option<String> {
    s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

/// Catalog items with barcodes, SKUs, brand, category, dimensions, weight,
/// prices, publication links and bin locations.
#[utoipa::path(get, path = "/v1/items/{business_id}/list", tag = "items",
    params(("business_id" = i32, Path, description = "The business"), ItemQuery),
    responses((status = 200, body = ListEnvelope<Item>), (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn list(
    State(wms): State<Wms>,
    t: Tenant,
    ApiQuery(q): ApiQuery<ItemQuery>,
) -> Result<Json<ListEnvelope<Item>>, ApiError> {
    let page = Page::parse_with_cursor(q.start, q.length, q.cursor).map_err(ApiError::invalid)?;
    let filter = ItemFilter {
        sku: nonblank(q.sku),
        barcode: nonblank(q.barcode),
        brand: nonblank(q.brand),
        category: nonblank(q.category),
        q: nonblank(q.q),
    };
    Ok(Json(
        wms.list_items(t.business_id(), filter, page).await?.into(),
    ))
}

/// Registers a SKU. SKU and every GTIN or barcode are unique per business
/// (409 naming the field otherwise); GTINs must carry a valid check digit.
#[utoipa::path(post, path = "/v1/items/{business_id}/create", tag = "items",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = ItemCreate,
    responses((status = 200, body = DataEnvelope<Item>), (status = 401, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn create(
    State(wms): State<Wms>,
    t: Tenant,
    ApiJson(req): ApiJson<ItemCreate>,
) -> Result<Answer, ApiError> {
    respond(ok::<Item>, wms.create_item(t.business_id(), req)).await
}

/// Updates SKU attributes, prices, publication links and bin locations.
/// Absent fields are kept; a list given replaces the stored one.
#[utoipa::path(put, path = "/v1/items/{business_id}/{item_id}/edit", tag = "items",
    params(("business_id" = i32, Path, description = "The business"), ("item_id" = i64, Path, description = "The item")),
    request_body = ItemEdit,
    responses((status = 200, body = DataEnvelope<Item>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn edit(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, item_id)): ApiPath<(i64, i64)>,
    ApiJson(req): ApiJson<ItemEdit>,
) -> Result<Answer, ApiError> {
    respond(
        ok::<Item>,
        wms.edit_item(t.business_id(), ItemId(item_id), req),
    )
    .await
}
