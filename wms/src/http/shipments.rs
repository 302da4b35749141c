//! `/v1/shipments/...`: the shipment list and carrier labels.

use super::error::ApiError;
use super::extract::{ApiJson, ApiQuery, Tenant};
use crate::Wms;
use crate::shipping::ShipmentFilter;
use axum::Json;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use depot_protocol::shipping::{LabelRequest, Shipment, ShipmentStatus};
use depot_protocol::validate::Check;
use depot_protocol::{ErrorBody, ListEnvelope, Page};
use serde::Deserialize;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ShipmentQuery {
    #[param(minimum = 0)]
    start: Option<i64>,
    #[param(minimum = 1, maximum = 1000)]
    length: Option<i64>,
    /// The `cursor` of the last page's answer: the page after it
    /// (instead of `start`).
    cursor: Option<String>,
    /// packed, dispatched or delivered.
    #[param(value_type = Option<ShipmentStatus>)]
    status: Option<String>,
    carrier: Option<String>,
    /// Dispatched on this day (YYYY-MM-DD, UTC).
    #[param(value_type = Option<chrono::NaiveDate>)]
    dispatch_date: Option<String>,
}

/// Outgoing shipments by status, carrier and dispatch date, newest first.
#[utoipa::path(get, path = "/v1/shipments/{business_id}/list", tag = "shipments",
    params(("business_id" = i32, Path, description = "The business"), ShipmentQuery),
    responses((status = 200, body = ListEnvelope<Shipment>), (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn list(
    State(wms): State<Wms>,
    t: Tenant,
    ApiQuery(q): ApiQuery<ShipmentQuery>,
) -> Result<Json<ListEnvelope<Shipment>>, ApiError> {
    let mut c = Check::new();
    let page = Page::parse_with_cursor(q.start, q.length, q.cursor).unwrap_or_else(|e| {
        c.extend("", e);
        Page::default()
    });
    let status = q
        .status
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .and_then(|s| {
            let parsed = ShipmentStatus::parse(s);
            if parsed.is_none() {
                c.fail("status", format!("unknown status {s:?}"));
            }
            parsed
        });
    let day = q
        .dispatch_date
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .and_then(|s| {
            let parsed = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").ok();
            if parsed.is_none() {
                c.fail("dispatch_date", "must be a YYYY-MM-DD date");
            }
            parsed
        });
    c.finish(()).map_err(ApiError::invalid)?;
    let from = day
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc());
    let to = day
        .and_then(|d| d.succ_opt())
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc());
    let filter = ShipmentFilter {
        status,
        carrier: q
            .carrier
            .map(|s| s.trim().to_lowercase())
            .filter(|s| !s.is_empty()),
        from,
        to,
    };
    Ok(Json(
        wms.list_shipments(t.business_id(), filter, page)
            .await?
            .into(),
    ))
}

/// A 4×6 in carrier label: ZPL (every package, one label each, unless
/// `package` picks one) or PDF (one package). The body is the label itself.
#[utoipa::path(post, path = "/v1/shipments/{business_id}/generate-label", tag = "shipments",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = LabelRequest,
    responses((status = 200, description = "The label: PDF, or ZPL (UTF-8)", content(
            (Vec<u8> = "application/pdf"), (Vec<u8> = "application/zpl"))),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn generate_label(
    State(wms): State<Wms>,
    t: Tenant,
    ApiJson(req): ApiJson<LabelRequest>,
) -> Result<Response, ApiError> {
    let label = wms
        .label(t.business_id(), req.shipment_id, req.format, req.package)
        .await?;
    Ok(([(header::CONTENT_TYPE, label.content_type)], label.bytes).into_response())
}
