//! The warehouse part of `/v1`: one implementation, mounted by the cloud
//! (and by the edge), described as OpenAPI from the same code. The tags of
//! the office's routes (`depot-office`) are declared here too, so that one
//! description lists every tag in one order.

pub mod business;
pub mod channels;
pub mod conflicts;
pub mod contract;
pub mod counts;
pub mod documents;
pub mod edges;
pub mod error;
pub mod events;
pub mod extract;
pub mod health;
pub mod idempotency;
pub mod inbound;
pub mod inventory;
pub mod items;
pub mod live;
pub mod locations;
pub mod orders;
pub mod outbounds;
pub mod packing;
pub mod panics;
pub mod picking;
pub mod printers;
pub mod putaway;
pub mod replenish;
pub mod returns;
pub mod server;
pub mod shipments;
pub mod trace;
pub mod tracking;
pub mod words;

use crate::Wms;
use axum::extract::DefaultBodyLimit;
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
                       errors answer {error: 1, code, message, errors?}. Every write takes an optional \
                       Idempotency-Key header: a retry with it answers the first answer and applies nothing. \
                       The event types of /v1/events/{business_id}/stream and /list are described at /v1/asyncapi.json."),
    modifiers(&ApiKeyAuth),
    tags((name = "business"), (name = "items"), (name = "inventory"), (name = "locations"), (name = "orders"), (name = "inbounds"), (name = "putaway"), (name = "counts"), (name = "replenishment"), (name = "returns"), (name = "channels"),
        (name = "picking"), (name = "packing"), (name = "shipments"), (name = "tracking"), (name = "outbounds"),
        (name = "printers"), (name = "documents"), (name = "edges"), (name = "conflicts"), (name = "events"),
        (name = "buyers"), (name = "contact"), (name = "crm"), (name = "automation"), (name = "health"))
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

/// The event catalogue as an AsyncAPI document: the event types of the
/// live streams, for clients and code generators. Public, as the OpenAPI
/// description is.
async fn asyncapi() -> axum::Json<serde_json::Value> {
    axum::Json(depot_protocol::catalogue::asyncapi::document(env!(
        "CARGO_PKG_VERSION"
    )))
}

/// The answer for a path no route serves: 404 with the error body.
pub async fn no_route(method: axum::http::Method, uri: axum::http::Uri) -> error::ApiError {
    error::ApiError::NoRoute(format!("{method} {}", uri.path()))
}

/// The answer for a method a path does not take: 405 with the error body.
pub async fn wrong_method(method: axum::http::Method, uri: axum::http::Uri) -> error::ApiError {
    error::ApiError::MethodNotAllowed(format!("{method} is not allowed on {}", uri.path()))
}

/// The cloud's warehouse routes with their OpenAPI description (the
/// office's, `depot_office::http::routes`, are mounted beside them).
pub fn routes() -> OpenApiRouter<Wms> {
    edge_routes()
        .routes(routes!(items::create))
        .routes(routes!(items::edit))
        .routes(routes!(orders::create))
        .routes(routes!(inbound::create))
        .routes(routes!(tracking::carrier_webhook))
        .routes(routes!(printers::create))
        .routes(routes!(printers::edit))
        .routes(routes!(edges::list))
        .routes(routes!(channels::create))
        .routes(routes!(channels::edit))
        .merge(uploads())
}

/// What an edge serves: the warehouse floor's routes. What only the cloud
/// may create (items, orders, inbound orders, printers, documents) is
/// read-only here, so nothing made at the edge has to be refused later;
/// locations are made on the floor too.
pub fn edge_routes() -> OpenApiRouter<Wms> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .route("/v1/asyncapi.json", axum::routing::get(asyncapi))
        .routes(routes!(health::healthz))
        .routes(routes!(health::readyz))
        .routes(routes!(business::my))
        .routes(routes!(business::my_warehouses))
        .routes(routes!(business::get))
        .routes(routes!(business::warehouses))
        .routes(routes!(items::list))
        .routes(routes!(inventory::list))
        .routes(routes!(inventory::adjust))
        .routes(routes!(locations::list))
        .routes(routes!(locations::create))
        .routes(routes!(locations::edit))
        .routes(routes!(locations::get))
        .routes(routes!(orders::list))
        .routes(routes!(orders::get))
        .routes(routes!(orders::set_status))
        .routes(routes!(orders::set_address))
        .routes(routes!(inbound::list))
        .routes(routes!(inbound::reception))
        .routes(routes!(putaway::list))
        .routes(routes!(putaway::get))
        .routes(routes!(putaway::scan))
        .routes(routes!(counts::list))
        .routes(routes!(counts::create))
        .routes(routes!(counts::get))
        .routes(routes!(counts::scan))
        .routes(routes!(counts::approve))
        .routes(routes!(counts::cancel))
        .routes(routes!(replenish::list))
        .routes(routes!(replenish::get))
        .routes(routes!(replenish::levels, replenish::set_level))
        .routes(routes!(replenish::scan))
        .routes(routes!(returns::list))
        .routes(routes!(returns::get))
        .routes(routes!(returns::create))
        .routes(routes!(returns::receive))
        .routes(routes!(returns::cancel))
        .routes(routes!(channels::list))
        .routes(routes!(channels::get))
        .routes(routes!(channels::availability))
        .routes(routes!(channels::changes))
        .routes(routes!(picking::list))
        .routes(routes!(picking::get))
        .routes(routes!(picking::create))
        .routes(routes!(picking::scan))
        .routes(routes!(packing::pack_order))
        .routes(routes!(shipments::list))
        .routes(routes!(shipments::generate_label))
        .routes(routes!(tracking::track))
        .routes(routes!(outbounds::list))
        .routes(routes!(outbounds::close))
        .routes(routes!(outbounds::load))
        .routes(routes!(outbounds::manifest))
        .routes(routes!(printers::list))
        .routes(routes!(documents::list_categories))
        .routes(routes!(documents::list))
        .routes(routes!(documents::download))
        .routes(routes!(conflicts::list))
        .routes(routes!(events::list))
        .merge(live::routes())
        .merge(print_jobs())
}

/// Print jobs take more than the JSON body limit: their own ceiling (the
/// innermost limit wins).
fn print_jobs() -> OpenApiRouter<Wms> {
    OpenApiRouter::new()
        .routes(routes!(printers::submit, printers::jobs))
        .layer(DefaultBodyLimit::max(
            depot_protocol::printing::MAX_JOB_BYTES,
        ))
}

/// Document uploads, with a ceiling of their own.
fn uploads() -> OpenApiRouter<Wms> {
    OpenApiRouter::new()
        .routes(routes!(documents::upload))
        .layer(DefaultBodyLimit::max(
            depot_protocol::document::MAX_DOCUMENT_BYTES + 64 * 1024,
        ))
}
