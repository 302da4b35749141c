//! `/v1/orders/...`: ingestion, search, detail and status changes.

use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, ApiQuery, Tenant};
use super::idempotency::{ok, plain, respond};
use crate::Wms;
use crate::idempotency::Answer;
use crate::orders::OrderFilter;
use axum::Json;
use axum::extract::State;
use axum::response::IntoResponse;
use chrono::{NaiveDate, Utc};
use depot_protocol::order::{Order, OrderStatus};
use depot_protocol::order_request::{AddressChange, OrderCreate, StatusRequest};
use depot_protocol::validate::Check;
use depot_protocol::{
    DataEnvelope, ErrorBody, ListEnvelope, OrderId, Page, Timestamp, WarehouseId,
};
use serde::{Deserialize, Serialize};

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OrderQuery {
    /// Rows to skip (default 0).
    #[param(minimum = 0)]
    start: Option<i64>,
    /// Rows to return, 1 to 1000 (default 50).
    #[param(minimum = 1, maximum = 1000)]
    length: Option<i64>,
    /// The `cursor` of the last page's answer: the page after it
    /// (instead of `start`).
    cursor: Option<String>,
    /// One of pending, confirmed, picking, packed, dispatched, delivered, cancelled.
    #[param(value_type = Option<OrderStatus>)]
    status: Option<String>,
    /// Created at or after: RFC 3339 timestamp or YYYY-MM-DD.
    #[param(format = "date-or-time")]
    date_from: Option<String>,
    /// Created before (a timestamp) or on (a YYYY-MM-DD date).
    #[param(format = "date-or-time")]
    date_to: Option<String>,
    channel: Option<String>,
    /// The buyer's email, or the buyer's name (case-insensitive).
    customer: Option<String>,
    warehouse_id: Option<i64>,
}

/// Parses a bound of a date range; a bare date as an upper bound means
/// "through the end of that day".
fn parse_bound(c: &mut Check, name: &str, raw: Option<&str>, upper: bool) -> Option<Timestamp> {
    let raw = raw.map(str::trim).filter(|s| !s.is_empty())?;
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(raw) {
        return Some(t.with_timezone(&Utc));
    }
    match NaiveDate::parse_from_str(raw, "%Y-%m-%d") {
        Ok(d) => {
            let d = if upper { d.succ_opt().unwrap_or(d) } else { d };
            d.and_hms_opt(0, 0, 0).map(|t| t.and_utc())
        }
        Err(_) => {
            c.fail(name, "must be an RFC 3339 timestamp or a YYYY-MM-DD date");
            None
        }
    }
}

fn nonblank(s: Option<String>) -> Option<String> {
    s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

/// Orders, newest first, searched by status, date range, channel, customer.
#[utoipa::path(get, path = "/v1/orders/{business_id}/list", tag = "orders",
    params(("business_id" = i32, Path, description = "The business"), OrderQuery),
    responses((status = 200, body = ListEnvelope<Order>), (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn list(
    State(wms): State<Wms>,
    t: Tenant,
    ApiQuery(q): ApiQuery<OrderQuery>,
) -> Result<axum::response::Response, ApiError> {
    let mut c = Check::new();
    let page = Page::parse_with_cursor(q.start, q.length, q.cursor).unwrap_or_else(|errors| {
        c.extend("", errors);
        Page::default()
    });
    let status = nonblank(q.status).and_then(|s| {
        let parsed = OrderStatus::parse(&s);
        if parsed.is_none() {
            c.fail("status", format!("unknown status {s:?}"));
        }
        parsed
    });
    let from = parse_bound(&mut c, "date_from", q.date_from.as_deref(), false);
    let to = parse_bound(&mut c, "date_to", q.date_to.as_deref(), true);
    let filter = OrderFilter {
        status,
        channel: nonblank(q.channel),
        customer: nonblank(q.customer),
        warehouse_id: q.warehouse_id.map(WarehouseId),
        from,
        to,
    };
    c.finish(()).map_err(ApiError::invalid)?;
    // Each order as written when it last changed (`crate::rendered`).
    let listed = wms.list_orders_json(t.business_id(), filter, page).await?;
    Ok((
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        listed.envelope_json(),
    )
        .into_response())
}

/// Order detail: lines, buyer, shipping address, payments and status history.
#[utoipa::path(get, path = "/v1/orders/{business_id}/{order_id}", tag = "orders",
    params(("business_id" = i32, Path, description = "The business"), ("order_id" = i64, Path, description = "The order")),
    responses((status = 200, body = DataEnvelope<Order>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn get(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
) -> Result<Json<DataEnvelope<Order>>, ApiError> {
    Ok(Json(DataEnvelope {
        data: wms.order(t.business_id(), OrderId(id)).await?,
    }))
}

/// The answer to an ingestion: the order, and whether this request created
/// it (false when the channel's reference was already ingested).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Ingested {
    pub data: Order,
    pub created: bool,
}

/// Ingests an external order into fulfilment, as `pending`. Idempotent on
/// (`channel`, `external_ref`): the same order posted again answers the
/// stored one with `created: false`.
#[utoipa::path(post, path = "/v1/orders/{business_id}/create", tag = "orders",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = OrderCreate,
    responses((status = 200, body = Ingested), (status = 401, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn create(
    State(wms): State<Wms>,
    t: Tenant,
    ApiJson(req): ApiJson<OrderCreate>,
) -> Result<Answer, ApiError> {
    respond(ingested, wms.create_order(t.0, req)).await
}

/// The answer to an ingested order: the order, and whether this call
/// created it.
fn ingested((order, created): &(Order, bool)) -> Answer {
    plain(&Ingested {
        data: order.clone(),
        created: *created,
    })
}

/// Changes the order's status. Orders move one step at a time along
/// pending → confirmed → picking → packed → dispatched → delivered and can be
/// cancelled before dispatch; anything else is 409 naming both states.
/// Confirming reserves stock (409 if not available), cancelling releases
/// it, dispatching books the goods out.
#[utoipa::path(put, path = "/v1/orders/{business_id}/{order_id}/status", tag = "orders",
    params(("business_id" = i32, Path, description = "The business"), ("order_id" = i64, Path, description = "The order")),
    request_body = StatusRequest,
    responses((status = 200, body = DataEnvelope<Order>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn set_status(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
    ApiJson(req): ApiJson<StatusRequest>,
) -> Result<Answer, ApiError> {
    let (status, note) = req.parse().map_err(ApiError::invalid)?;
    respond(
        ok::<Order>,
        wms.set_order_status(t.0, OrderId(id), status, note),
    )
    .await
}

/// Corrects an order's shipping address, whole, before it is packed (409
/// after: the label was printed with the address it had). The answer is
/// the order with its `address_issues` as they now stand; an order whose
/// address still has issues is stored as sent, and stays unconfirmable
/// until they are gone. Synced to the edges as `order.address_changed`.
#[utoipa::path(put, path = "/v1/orders/{business_id}/{order_id}/address", tag = "orders",
    params(("business_id" = i32, Path, description = "The business"), ("order_id" = i64, Path, description = "The order")),
    request_body = AddressChange,
    responses((status = 200, body = DataEnvelope<Order>), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 415, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn set_address(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
    ApiJson(req): ApiJson<AddressChange>,
) -> Result<Answer, ApiError> {
    respond(ok::<Order>, wms.change_order_address(t.0, OrderId(id), req)).await
}
