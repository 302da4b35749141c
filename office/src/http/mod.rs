//! The office's part of `/v1`: buyers, contact forms, CRM threads and
//! pricing automation. Mounted by the cloud beside `depot_wms::http::routes`,
//! with the same state, extractors, error mapping and idempotency.

pub mod automation;
pub mod buyers;
pub mod contact;
pub mod crm;

use depot_wms::Wms;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The office's routes with their OpenAPI description.
pub fn routes() -> OpenApiRouter<Wms> {
    OpenApiRouter::new()
        .routes(routes!(buyers::find))
        .routes(routes!(contact::create_department, contact::departments))
        .routes(routes!(contact::create_form, contact::forms))
        .merge(contact::submissions())
        .routes(routes!(crm::threads))
        .routes(routes!(crm::post_message))
        .routes(routes!(crm::messages))
        .routes(routes!(automation::list))
        .routes(routes!(automation::create))
        .routes(routes!(automation::edit))
        .routes(routes!(automation::delete))
        .routes(routes!(automation::position))
        .routes(routes!(automation::execute))
        .routes(routes!(automation::changes))
}
