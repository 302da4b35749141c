//! Who may use the edge's own routes: a key of the business this box works
//! for. The warehouse routes check the business in their path; the edge's
//! routes have none, so the key's business is checked against the box's.

use crate::identity::Identity;
use axum::extract::{FromRef, FromRequestParts};
use axum::http::request::Parts;
use depot_protocol::tenant::Caller;
use depot_wms::Wms;
use depot_wms::http::error::ApiError;
use depot_wms::http::extract::Authed;

/// A caller whose key belongs to this edge's business; 401 otherwise.
#[derive(Debug, Clone, Copy)]
pub struct EdgeCaller(pub Caller);

impl<S> FromRequestParts<S> for EdgeCaller
where
    S: Send + Sync,
    Wms: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Authed(caller) = Authed::from_request_parts(parts, state).await?;
        let business = parts
            .extensions
            .get::<Identity>()
            .map(|identity| identity.business_id);
        if business != Some(caller.business_id.0) {
            return Err(ApiError::unauthorized(
                "API key is not valid for this edge's business",
            ));
        }
        Ok(Self(caller))
    }
}
