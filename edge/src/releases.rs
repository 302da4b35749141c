//! `GET /v1/edge/releases`: the releases the cloud published (synced down
//! like everything else, translations included), the version this box
//! runs, and whether a newer release of the warehouse system (product
//! `wms`, which is what the box runs) is out, for the technician at the box.

use crate::caller::EdgeCaller;
use crate::identity::Identity;
use axum::extract::State;
use axum::{Extension, Json};
use depot_protocol::release::{self, Product, Release};
use depot_protocol::{DataEnvelope, ErrorBody};
use depot_wms::Wms;
use depot_wms::http::error::ApiError;
use serde::Serialize;
use std::cmp::Ordering;

/// The most releases the route lists.
const LIMIT: u32 = 100;

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct EdgeReleases {
    /// The version of `depot-edge` running here.
    pub running: String,
    /// The newest published version of the warehouse system, if any.
    pub latest: Option<String>,
    /// A published version of it is newer than the one running.
    pub update_available: bool,
    /// Every product's, newest first, with their notes in every locale.
    pub releases: Vec<Release>,
}

/// What the cloud published, beside what this box runs.
#[utoipa::path(get, path = "/v1/edge/releases", tag = "edge",
    responses((status = 200, body = DataEnvelope<EdgeReleases>), (status = 401, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn releases(
    State(wms): State<Wms>,
    Extension(identity): Extension<Identity>,
    _: EdgeCaller,
) -> Result<Json<DataEnvelope<EdgeReleases>>, ApiError> {
    let releases = wms.releases(LIMIT).await?;
    let latest = releases
        .iter()
        .filter(|r| r.product == Product::Wms)
        .map(|r| r.version.as_str())
        .max_by(|a, b| release::compare(a, b).unwrap_or(Ordering::Equal))
        .map(str::to_owned);
    let update_available = latest
        .as_deref()
        .is_some_and(|l| release::compare(l, &identity.version) == Some(Ordering::Greater));
    Ok(Json(DataEnvelope {
        data: EdgeReleases {
            running: identity.version,
            latest,
            update_available,
            releases,
        },
    }))
}
