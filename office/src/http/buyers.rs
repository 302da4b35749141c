//! `/v1/buyers/...`: finding the business's buyers (cloud only).

use crate::Office;
use axum::Json;
use axum::extract::State;
use depot_protocol::crm::buyers::{BuyerResults, parse_search};
use depot_protocol::{ErrorBody, Page};
use depot_wms::http::error::ApiError;
use depot_wms::http::extract::{ApiPath, ApiQuery, Tenant};
use serde::Deserialize;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FindQuery {
    /// What to look for (required). `by_id`: a buyer id. `by_name`: the
    /// start of the name or of one of its words, 2 to 100 characters. Both
    /// ignore case and accents (`munoz` finds Muñoz, `strasse` Straße).
    /// `by_wildcard`: a pattern over the whole name (or the name from one
    /// of its words on), email or phone (digits, `+` first when
    /// international), where `*` is any run of characters and `?` one
    /// character, everything else literal; it needs at least 3 literal
    /// characters at its start or its end (`ana*`, `*@example.com`), holds
    /// at most 8 wildcards and 100 characters.
    #[param(required = true, pattern = r"\S")]
    key_id: Option<String>,
    /// The topic to narrow to: `orders` (buyers who ordered), `crm`
    /// (buyers who wrote through a contact form) or `channel:<name>`
    /// (buyers seen on that sales channel, or `channel:contact_form`).
    filter_id: Option<String>,
    /// Rows to skip (default 0).
    #[param(minimum = 0)]
    start: Option<i64>,
    /// Rows to return, 1 to 1000 (default 50).
    #[param(minimum = 1, maximum = 1000)]
    length: Option<i64>,
}

/// Finds buyers: everyone who placed an order (by the order's buyer) or
/// wrote through a contact form, one per person, known by email, else by
/// phone, else by name. Answers them by name, `recordsTotal` counting the
/// business's buyers and `recordsFiltered` those found. A bad `key_type`,
/// a missing or unusable `key_id` or an unknown `filter_id` is 422 naming
/// each.
#[utoipa::path(get, path = "/v1/buyers/{business_id}/find/{key_type}", tag = "buyers",
    params(("business_id" = i32, Path, description = "The business"),
        ("key_type" = inline(depot_protocol::crm::buyers::KeyType), Path, description = "by_name, by_id or by_wildcard"), FindQuery),
    responses((status = 200, body = BuyerResults), (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn find(
    State(office): State<Office>,
    t: Tenant,
    ApiPath((_, key_type)): ApiPath<(i64, String)>,
    ApiQuery(q): ApiQuery<FindQuery>,
) -> Result<Json<BuyerResults>, ApiError> {
    let search = parse_search(&key_type, q.key_id.as_deref(), q.filter_id.as_deref());
    let (search, page) = match (search, Page::parse(q.start, q.length)) {
        (Ok(s), Ok(p)) => (s, p),
        (s, p) => {
            let errors = s.err().into_iter().chain(p.err()).flatten().collect();
            return Err(ApiError::invalid(errors));
        }
    };
    Ok(Json(
        office.find_buyers(t.business_id(), search, page).await?,
    ))
}
