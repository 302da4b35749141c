//! `/v1/conflicts/...` (extension): what sync could not apply as sent, and
//! what it merged, so an operator can see why a node differs from what a
//! station did.

use super::error::ApiError;
use super::extract::{ApiQuery, Tenant};
use crate::Wms;
use crate::store::replica::{Conflict, ConflictFilter};
use axum::Json;
use axum::extract::State;
use depot_protocol::{ErrorBody, FieldError, ListEnvelope, Page};
use serde::Deserialize;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ConflictQuery {
    /// Rows to skip (default 0).
    #[param(minimum = 0)]
    start: Option<i64>,
    /// Rows to return, 1 to 1000 (default 50).
    #[param(minimum = 1, maximum = 1000)]
    length: Option<i64>,
    /// The `cursor` of the last page's answer: the page after it
    /// (instead of `start`).
    cursor: Option<String>,
    /// An event kind, e.g. `order.status_changed`.
    kind: Option<String>,
    /// `true`: only events that were not applied; `false`: only merges
    /// (applied, with what won said).
    #[param(value_type = Option<bool>)]
    rejected: Option<String>,
}

/// Conflicts recorded on this node while applying other nodes' events,
/// newest first: the event, where it came from, why, and what stands.
#[utoipa::path(get, path = "/v1/conflicts/{business_id}/list", tag = "conflicts",
    params(("business_id" = i32, Path, description = "The business"), ConflictQuery),
    responses((status = 200, body = ListEnvelope<Conflict>), (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn list(
    State(wms): State<Wms>,
    t: Tenant,
    ApiQuery(q): ApiQuery<ConflictQuery>,
) -> Result<Json<ListEnvelope<Conflict>>, ApiError> {
    let page = Page::parse_with_cursor(q.start, q.length, q.cursor).map_err(ApiError::invalid)?;
    // A blank value is refused, as for every boolean and number of the
    // query: the description says true or false.
    let rejected = match q.rejected.as_deref().map(str::trim) {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(other) => {
            return Err(ApiError::invalid(vec![FieldError::new(
                "rejected",
                format!("{other:?} is not true or false"),
            )]));
        }
    };
    let filter = ConflictFilter {
        kind: q
            .kind
            .map(|k| k.trim().to_owned())
            .filter(|k| !k.is_empty()),
        rejected,
    };
    Ok(Json(
        wms.conflict_page(t.business_id(), filter, page)
            .await?
            .into(),
    ))
}
