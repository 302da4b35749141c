//! `/v1/channels/...` (cloud): sales channels, what each may sell of each
//! item, and the change feed a connector polls.

use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, ApiQuery, Tenant};
use super::idempotency::{ok, respond};
use crate::Wms;
use crate::idempotency::Answer;
use axum::Json;
use axum::extract::State;
use depot_protocol::channel::{
    Availability, AvailabilityChanges, Channel, ChannelFields, MAX_CHANGES, parse_cursor,
};
use depot_protocol::{DataEnvelope, ErrorBody, FieldError, ListEnvelope, Page};
use serde::Deserialize;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Rows to skip (default 0).
    #[param(minimum = 0)]
    start: Option<i64>,
    /// Rows to return, 1 to 1000 (default 50).
    #[param(minimum = 1, maximum = 1000)]
    length: Option<i64>,
    /// The `cursor` of the last page's answer: the page after it
    /// (instead of `start`).
    cursor: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AvailabilityQuery {
    /// Rows to skip (default 0).
    #[param(minimum = 0)]
    start: Option<i64>,
    /// Rows to return, 1 to 1000 (default 50).
    #[param(minimum = 1, maximum = 1000)]
    length: Option<i64>,
    /// The `cursor` of the last page's answer: the page after it
    /// (instead of `start`).
    cursor: Option<String>,
    /// Only the item with this SKU.
    #[param(max_length = 64)]
    sku: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ChangesQuery {
    /// The `next` of the previous page (absent: from the beginning).
    #[param(max_length = 18, pattern = "^[0-9]*$")]
    after: Option<String>,
    /// Rows to return, 1 to 1000 (default 1000).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<i64>,
}

/// The business's sales channels, by code.
#[utoipa::path(get, path = "/v1/channels/{business_id}/list", tag = "channels",
    params(("business_id" = i32, Path, description = "The business"), PageQuery),
    responses((status = 200, body = ListEnvelope<Channel>), (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn list(
    State(wms): State<Wms>,
    t: Tenant,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Json<ListEnvelope<Channel>>, ApiError> {
    let page = Page::parse_with_cursor(q.start, q.length, q.cursor).map_err(ApiError::invalid)?;
    Ok(Json(wms.channels(t.business_id(), page).await?.into()))
}

/// One channel, by its code.
#[utoipa::path(get, path = "/v1/channels/{business_id}/{channel}", tag = "channels",
    params(("business_id" = i32, Path, description = "The business"), ("channel" = String, Path, description = "The channel's code")),
    responses((status = 200, body = DataEnvelope<Channel>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn get(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, code)): ApiPath<(i64, String)>,
) -> Result<Json<DataEnvelope<Channel>>, ApiError> {
    Ok(Json(DataEnvelope {
        data: wms.channel(t.business_id(), code).await?,
    }))
}

/// Makes a sales channel: its `code` (what its orders carry as
/// `channel`), the warehouses whose stock it may sell, what is held back
/// from it (`buffer_units` or `buffer_percent`) and the most of each item
/// it may take (`cap_units` or `cap_percent`). What it may sell of every
/// item is computed at once.
#[utoipa::path(post, path = "/v1/channels/{business_id}/create", tag = "channels",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = ChannelFields,
    responses((status = 200, body = DataEnvelope<Channel>), (status = 401, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn create(
    State(wms): State<Wms>,
    t: Tenant,
    ApiJson(fields): ApiJson<ChannelFields>,
) -> Result<Answer, ApiError> {
    let business = t.business_id();
    respond(ok::<Channel>, wms.create_channel(business, fields)).await
}

/// Edits a channel (every field; `code` may only repeat its own). What it
/// may sell is computed again, and every figure that changes is in the
/// change feed.
#[utoipa::path(put, path = "/v1/channels/{business_id}/{channel}/edit", tag = "channels",
    params(("business_id" = i32, Path, description = "The business"), ("channel" = String, Path, description = "The channel's code")),
    request_body = ChannelFields,
    responses((status = 200, body = DataEnvelope<Channel>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn edit(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, code)): ApiPath<(i64, String)>,
    ApiJson(fields): ApiJson<ChannelFields>,
) -> Result<Answer, ApiError> {
    let business = t.business_id();
    respond(ok::<Channel>, wms.edit_channel(business, code, fields)).await
}

/// What the channel may sell now of each item, by item: free stock
/// (on-hand less reservations) over its warehouses, less its buffer,
/// within its cap, never below 0.
#[utoipa::path(get, path = "/v1/channels/{business_id}/{channel}/availability", tag = "channels",
    params(("business_id" = i32, Path, description = "The business"), ("channel" = String, Path, description = "The channel's code"), AvailabilityQuery),
    responses((status = 200, body = ListEnvelope<Availability>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn availability(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, code)): ApiPath<(i64, String)>,
    ApiQuery(q): ApiQuery<AvailabilityQuery>,
) -> Result<Json<ListEnvelope<Availability>>, ApiError> {
    let page = Page::parse_with_cursor(q.start, q.length, q.cursor).map_err(ApiError::invalid)?;
    if q.sku.as_ref().is_some_and(|s| s.chars().count() > 64) {
        return Err(ApiError::invalid(vec![FieldError::new(
            "sku",
            "must be at most 64 characters",
        )]));
    }
    let sku = q.sku.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
    Ok(Json(
        wms.channel_availability(t.business_id(), code, sku, page)
            .await?
            .into(),
    ))
}

/// The change feed: the items whose figure changed after the cursor
/// `after`, each once with its figure now, oldest change first; pass
/// `next` as `after` to go on (the same `next` when nothing changed). A
/// connector polling it misses no change and reads each once per poll.
#[utoipa::path(get, path = "/v1/channels/{business_id}/{channel}/availability/changes", tag = "channels",
    params(("business_id" = i32, Path, description = "The business"), ("channel" = String, Path, description = "The channel's code"), ChangesQuery),
    responses((status = 200, body = AvailabilityChanges), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn changes(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, code)): ApiPath<(i64, String)>,
    ApiQuery(q): ApiQuery<ChangesQuery>,
) -> Result<Json<AvailabilityChanges>, ApiError> {
    if q.after.as_ref().is_some_and(|s| s.chars().count() > 18) {
        return Err(ApiError::invalid(vec![FieldError::new(
            "after",
            "must be at most 18 characters",
        )]));
    }
    let after = parse_cursor(q.after.as_deref()).map_err(|e| ApiError::invalid(vec![e]))?;
    let limit = match q.limit {
        None => MAX_CHANGES,
        Some(n) if (1..=i64::from(MAX_CHANGES)).contains(&n) => {
            u32::try_from(n).unwrap_or(MAX_CHANGES)
        }
        Some(_) => {
            return Err(ApiError::invalid(vec![FieldError::new(
                "limit",
                format!("must be between 1 and {MAX_CHANGES}"),
            )]));
        }
    };
    Ok(Json(
        wms.channel_changes(t.business_id(), code, after, limit)
            .await?,
    ))
}
