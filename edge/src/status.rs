//! `GET /v1/edge/status`: is the box connected, how much is waiting for the
//! cloud and since when, how far the cloud's changes are applied, conflicts.

use crate::caller::EdgeCaller;
use crate::devices::{Devices, DevicesSummary};
use crate::disk::{Probe, Storage};
use crate::identity::Identity;
use axum::extract::State;
use axum::{Extension, Json};
use depot_protocol::{DataEnvelope, ErrorBody};
use depot_wms::Wms;
use depot_wms::http::error::ApiError;
use depot_wms::sync::SyncSnapshot;
use serde::Serialize;

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct EdgeStatus {
    #[serde(flatten)]
    pub identity: Identity,
    #[serde(flatten)]
    pub sync: SyncSnapshot,
    /// How many devices and stations run here, and which need attention.
    pub devices: DevicesSummary,
    /// Room left on the data directory's disk; null when it cannot be read.
    pub storage: Option<Storage>,
}

/// The edge's sync state: link, outbox depth and the age of its oldest
/// event, last acknowledgement, cloud cursor, conflicts; a summary of its
/// devices (`/v1/edge/devices` has them in full); the room left on its
/// disk.
#[utoipa::path(get, path = "/v1/edge/status", tag = "edge",
    responses((status = 200, body = DataEnvelope<EdgeStatus>), (status = 401, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn status(
    State(wms): State<Wms>,
    Extension(identity): Extension<Identity>,
    Extension(devices): Extension<Devices>,
    Extension(probe): Extension<Probe>,
    _: EdgeCaller,
) -> Result<Json<DataEnvelope<EdgeStatus>>, ApiError> {
    let sync = wms.sync_snapshot().await?;
    let storage = probe.read_serving(&wms).await;
    Ok(Json(DataEnvelope {
        data: EdgeStatus {
            identity,
            sync,
            devices: devices.summary(),
            storage,
        },
    }))
}
