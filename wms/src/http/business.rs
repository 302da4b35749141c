//! `/v1/business/...`: the caller's business and its warehouses.

use super::error::ApiError;
use super::extract::{ApiQuery, Authed, Tenant};
use crate::Wms;
use axum::Json;
use axum::extract::State;
use depot_protocol::tenant::{Business, Warehouse};
use depot_protocol::{BusinessId, DataEnvelope, ErrorBody, FieldError, ListEnvelope};
use serde::Deserialize;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WarehouseQuery {
    #[param(minimum = 0, maximum = 1)]
    /// 1: only warehouses where buyers may pick up; 0: only the others.
    is_visible_sales: Option<i32>,
}

fn warehouse_list(list: Vec<Warehouse>) -> Json<ListEnvelope<Warehouse>> {
    let n = list.len() as u64;
    Json(ListEnvelope::new(list, n, n))
}

/// The business's configuration.
#[utoipa::path(get, path = "/v1/business/{business_id}", tag = "business",
    params(("business_id" = i32, Path, description = "The business")),
    responses((status = 200, body = DataEnvelope<Business>), (status = 401, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn get(
    State(wms): State<Wms>,
    t: Tenant,
) -> Result<Json<DataEnvelope<Business>>, ApiError> {
    Ok(Json(DataEnvelope {
        data: wms.business(t.business_id()).await?,
    }))
}

/// The business ids the key may act on (a key belongs to one business).
#[utoipa::path(get, path = "/v1/business/my", tag = "business",
    responses((status = 200, body = DataEnvelope<Vec<BusinessId>>), (status = 401, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn my(Authed(caller): Authed) -> Json<DataEnvelope<Vec<BusinessId>>> {
    Json(DataEnvelope {
        data: vec![caller.business_id],
    })
}

/// The warehouses available to the caller.
#[utoipa::path(get, path = "/v1/business/my/warehouses", tag = "business",
    responses((status = 200, body = ListEnvelope<Warehouse>), (status = 401, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn my_warehouses(
    State(wms): State<Wms>,
    Authed(caller): Authed,
) -> Result<Json<ListEnvelope<Warehouse>>, ApiError> {
    Ok(warehouse_list(
        wms.warehouses(caller.business_id, None).await?,
    ))
}

/// The business's warehouses, optionally filtered by the pick-up flag.
#[utoipa::path(get, path = "/v1/business/{business_id}/warehouses", tag = "business",
    params(("business_id" = i32, Path, description = "The business"), WarehouseQuery),
    responses((status = 200, body = ListEnvelope<Warehouse>), (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn warehouses(
    State(wms): State<Wms>,
    t: Tenant,
    ApiQuery(q): ApiQuery<WarehouseQuery>,
) -> Result<Json<ListEnvelope<Warehouse>>, ApiError> {
    let visible = match q.is_visible_sales {
        None => None,
        Some(0) => Some(false),
        Some(1) => Some(true),
        Some(_) => {
            return Err(ApiError::invalid(vec![FieldError::new(
                "is_visible_sales",
                "must be 0 or 1",
            )]));
        }
    };
    Ok(warehouse_list(
        wms.warehouses(t.business_id(), visible).await?,
    ))
}
