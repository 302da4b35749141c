//! The warehouse part of `/v1`: one implementation, mounted by the cloud
//! (and by the edge), described as OpenAPI from the same code.

pub mod business;
pub mod error;
pub mod extract;
pub mod inventory;
pub mod items;
pub mod orders;

use crate::Wms;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The largest request body accepted (a 500-line order fits many times).
pub const BODY_LIMIT: usize = 1024 * 1024;

#[derive(OpenApi)]
#[openapi(
    info(title = "Depot API", version = "1.0.0b",
        description = "Omnichannel commerce, warehouse and fulfilment API. Every request carries X-API-KEY; \
                       errors answer {error: 1, code, message, errors?}."),
    modifiers(&ApiKeyAuth),
    tags((name = "business"), (name = "items"), (name = "inventory"), (name = "orders"))
)]
pub struct ApiDoc;

struct ApiKeyAuth;

impl Modify for ApiKeyAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "api_key",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new("X-API-KEY"))),
        );
    }
}

/// The routes with their OpenAPI description.
pub fn routes() -> OpenApiRouter<Wms> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(business::my))
        .routes(routes!(business::my_warehouses))
        .routes(routes!(business::get))
        .routes(routes!(business::warehouses))
        .routes(routes!(items::list))
        .routes(routes!(items::create))
        .routes(routes!(items::edit))
        .routes(routes!(inventory::list))
        .routes(routes!(inventory::adjust))
        .routes(routes!(orders::list))
        .routes(routes!(orders::create))
        .routes(routes!(orders::get))
        .routes(routes!(orders::set_status))
}
