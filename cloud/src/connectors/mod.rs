//! Channels' connectors (cloud only, `docs/connectors.md`): what links a
//! sales channel to the platform it sells on. `platform.rs` is what a
//! connector asks of a platform, `oscar.rs` one platform (django-oscar),
//! `runner.rs` what runs them, `settings.rs` the `[connectors]` settings;
//! here, the routes that set and show a channel's connector
//! (`/v1/channels/{business_id}/{channel}/connector`).
//!
//! | status | a set that |
//! |---|---|
//! | 404 | names a channel that does not exist |
//! | 422 | has a bad field (a URL the service may not reach among them), or leaves the connector without its token |

pub mod oscar;
pub mod platform;
pub mod runner;
pub mod settings;

use axum::extract::State;
use axum::{Extension, Json};
use depot_protocol::connector::{Connector, ConnectorFields};
use depot_protocol::{DataEnvelope, ErrorBody};
use depot_wms::Wms;
use depot_wms::http::error::ApiError;
use depot_wms::http::extract::{ApiJson, ApiPath, Tenant};
use depot_wms::http::idempotency::{ok, respond};
use depot_wms::idempotency::Answer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// What the routes need besides the engine.
#[derive(Clone, Copy, Default)]
pub struct Context {
    /// See [`settings::ConnectorSettings::allow_private_targets`].
    pub allow_private: bool,
}

pub fn routes() -> OpenApiRouter<Wms> {
    OpenApiRouter::new().routes(routes!(connector, set_connector))
}

/// A channel's connector: its settings (secrets only as whether they are
/// set), its cursors, and how it is doing.
#[utoipa::path(get, path = "/v1/channels/{business_id}/{channel}/connector", tag = "channels",
    params(("business_id" = i32, Path, description = "The business"), ("channel" = String, Path, description = "The channel's code")),
    responses((status = 200, body = DataEnvelope<Connector>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn connector(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, code)): ApiPath<(i64, String)>,
) -> Result<Json<DataEnvelope<Connector>>, ApiError> {
    Ok(Json(DataEnvelope {
        data: wms.connector(t.business_id(), code).await?,
    }))
}

/// Sets a channel's connector to the platform it sells on, whole (a token
/// or password left out keeps the one set). It runs at once: the
/// platform's orders come in as the channel's, every item's figure is
/// pushed, and from then on what changes and what is dispatched.
#[utoipa::path(put, path = "/v1/channels/{business_id}/{channel}/connector", tag = "channels",
    params(("business_id" = i32, Path, description = "The business"), ("channel" = String, Path, description = "The channel's code")),
    request_body = ConnectorFields,
    responses((status = 200, body = DataEnvelope<Connector>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn set_connector(
    State(wms): State<Wms>,
    Extension(ctx): Extension<Context>,
    t: Tenant,
    ApiPath((_, code)): ApiPath<(i64, String)>,
    ApiJson(fields): ApiJson<ConnectorFields>,
) -> Result<Answer, ApiError> {
    let s = fields
        .parse(|u| crate::webhooks::target::check_url(u, ctx.allow_private))
        .map_err(ApiError::invalid)?;
    respond(ok::<Connector>, wms.set_connector(t.business_id(), code, s)).await
}
