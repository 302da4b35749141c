//! The OpenAPI description of the release-notes API (`/api/openapi.json`):
//! its routes, the discovery documents, and how to get a token, with the
//! addresses this instance was configured with.

use super::{feeds, routes, translations};
use crate::oauth::{RELEASES_WRITE, metadata};
use depot_wms::http::contract::Documents;
use utoipa::OpenApi;
use utoipa::openapi::security::{
    AuthorizationCode, ClientCredentials, Flow, OAuth2, Scopes, SecurityScheme,
};
use utoipa::openapi::server::Server;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Depot release notes",
        version = "1.0.0",
        description = "Release notes of the Depot products (wms, app, signage): open to read as JSON, an HTML page or RSS and Atom feeds; publishing and translation sync need an OAuth 2.0 bearer token with scope releases:write, in the Authorization header only. Errors carry {error: 1, message, code, errors?}."
    ),
    paths(
        routes::list, routes::publish, feeds::rss, feeds::atom,
        translations::start, translations::status,
        metadata::protected_resource, metadata::authorization_server,
        metadata::openid_configuration, metadata::jwks
    ),
    tags(
        (name = "releases", description = "Release notes and their translations"),
        (name = "discovery", description = "Where and how to get a token (RFC 9728, RFC 8414, OpenID Connect discovery)")
    )
)]
struct ChangelogDoc;

/// The description, with this instance's addresses, completed as the
/// other APIs' are (the shared layers' answers, the extractors' rules).
pub fn document(base_url: &str, login_url: &str) -> Documents {
    let mut doc = ChangelogDoc::openapi();
    doc.servers = Some(vec![Server::new(base_url)]);
    let scopes = || Scopes::one(RELEASES_WRITE, "publish releases and run translation sync");
    let flows = [
        Flow::ClientCredentials(ClientCredentials::new(
            format!("{login_url}/oauth/token"),
            scopes(),
        )),
        Flow::AuthorizationCode(AuthorizationCode::new(
            format!("{login_url}/oauth/authorize"),
            format!("{login_url}/oauth/token"),
            scopes(),
        )),
    ];
    doc.components
        .get_or_insert_with(Default::default)
        .add_security_scheme("oauth2", SecurityScheme::OAuth2(OAuth2::new(flows)));
    // Writes are limited per client (translation sync, the token route).
    Documents::new(doc, true)
}
