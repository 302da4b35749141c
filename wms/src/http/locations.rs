//! `/v1/locations/...`: the places stock is held in a warehouse.

use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, ApiQuery, Tenant};
use super::idempotency::{ok, respond};
use crate::Wms;
use crate::idempotency::Answer;
use crate::locations::LocationFilter;
use axum::Json;
use axum::extract::State;
use depot_protocol::location::{Location, LocationFields, LocationKind, MAX_ZONE};
use depot_protocol::{
    DataEnvelope, ErrorBody, FieldError, ListEnvelope, LocationId, Page, WarehouseId,
};
use serde::Deserialize;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LocationQuery {
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
    /// Only locations of this zone.
    #[param(max_length = 40)]
    zone: Option<String>,
    /// Only locations of this type.
    #[serde(rename = "type")]
    #[param(value_type = Option<LocationKind>)]
    kind: Option<String>,
    /// true: only locations holding stock; false: only empty ones.
    occupied: Option<bool>,
}

/// The business's locations in walking order (per warehouse: by
/// `sequence`, those without one after, by code), each with the units
/// and items it holds.
#[utoipa::path(get, path = "/v1/locations/{business_id}/list", tag = "locations",
    params(("business_id" = i32, Path, description = "The business"), LocationQuery),
    responses((status = 200, body = ListEnvelope<Location>), (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn list(
    State(wms): State<Wms>,
    t: Tenant,
    ApiQuery(q): ApiQuery<LocationQuery>,
) -> Result<Json<ListEnvelope<Location>>, ApiError> {
    let page = Page::parse_with_cursor(q.start, q.length, q.cursor).map_err(ApiError::invalid)?;
    // The length as sent, as the description states it; then blank is
    // absent.
    if q.zone
        .as_ref()
        .is_some_and(|z| z.chars().count() > MAX_ZONE)
    {
        return Err(ApiError::invalid(vec![FieldError::new(
            "zone",
            format!("must be at most {MAX_ZONE} characters"),
        )]));
    }
    let zone = q
        .zone
        .map(|z| z.trim().to_owned())
        .filter(|z| !z.is_empty());

    // Blank is absent, as for every query parameter's text.
    let kind = match q.kind.as_deref().map(str::trim).filter(|k| !k.is_empty()) {
        None => None,
        Some(k) => Some(LocationKind::parse(k).ok_or_else(|| {
            ApiError::invalid(vec![FieldError::new(
                "type",
                format!("unknown type {k:?}: dock, bulk, pick, staging, returns or quarantine"),
            )])
        })?),
    };
    let filter = LocationFilter {
        warehouse_id: q.warehouse_id.map(WarehouseId),
        zone,
        kind,
        occupied: q.occupied,
    };
    Ok(Json(
        wms.list_locations(t.business_id(), filter, page)
            .await?
            .into(),
    ))
}

/// Makes a location: a code unique in its warehouse (what its label says
/// and a scanner reads; it never changes), a type, and optionally a zone,
/// a place in the walking order and a capacity. An edge makes them too,
/// offline, and they reach the cloud by sync.
#[utoipa::path(post, path = "/v1/locations/{business_id}/create", tag = "locations",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = LocationFields,
    responses((status = 200, body = DataEnvelope<Location>), (status = 401, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn create(
    State(wms): State<Wms>,
    t: Tenant,
    ApiJson(req): ApiJson<LocationFields>,
) -> Result<Answer, ApiError> {
    respond(ok::<Location>, wms.create_location(t.business_id(), req)).await
}

/// Edits a location: absent fields are kept, `null` clears an optional one;
/// its warehouse and code stay what they are.
#[utoipa::path(put, path = "/v1/locations/{business_id}/{location_id}/edit", tag = "locations",
    params(("business_id" = i32, Path, description = "The business"), ("location_id" = i64, Path, description = "The location")),
    request_body = LocationFields,
    responses((status = 200, body = DataEnvelope<Location>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn edit(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
    ApiJson(req): ApiJson<LocationFields>,
) -> Result<Answer, ApiError> {
    respond(
        ok::<Location>,
        wms.edit_location(t.business_id(), LocationId(id), req),
    )
    .await
}

/// One location, with the units and items it holds.
#[utoipa::path(get, path = "/v1/locations/{business_id}/{location_id}", tag = "locations",
    params(("business_id" = i32, Path, description = "The business"), ("location_id" = i64, Path, description = "The location")),
    responses((status = 200, body = DataEnvelope<Location>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn get(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
) -> Result<Json<DataEnvelope<Location>>, ApiError> {
    Ok(Json(DataEnvelope {
        data: wms.location(t.business_id(), LocationId(id)).await?,
    }))
}
