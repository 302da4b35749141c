//! `/v1/crm/...`: the threads contact forms open, their messages, and the
//! replies and notes agents post (cloud only).

use super::contact::{PageQuery, page};
use crate::Office;
use axum::Json;
use axum::extract::State;
use depot_protocol::crm::{
    MessagePost, MessagesPage, Thread, ThreadFilter, ThreadMessages, ThreadScope, ThreadStatus,
    scope,
};
use depot_protocol::validate::Check;
use depot_protocol::{ErrorBody, ListEnvelope, Page};
use depot_wms::http::error::ApiError;
use depot_wms::http::extract::{ApiJson, ApiPath, ApiQuery, Tenant};
use depot_wms::http::idempotency::{plain, respond};
use depot_wms::idempotency::Answer;
use serde::Deserialize;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ThreadQuery {
    /// Only threads from this source: `contact_form`, or a sales channel.
    #[param(format = "crm-code")]
    integration_id: Option<String>,
    /// Only threads of this topic: a department's code.
    #[param(format = "crm-code")]
    filter_id: Option<String>,
    /// `open` or `closed`.
    #[param(value_type = Option<ThreadStatus>)]
    status: Option<String>,
    /// Rows to skip (default 0).
    #[param(minimum = 0)]
    start: Option<i64>,
    /// Rows to return, 1 to 1000 (default 50).
    #[param(minimum = 1, maximum = 1000)]
    length: Option<i64>,
    /// The `cursor` of the last page's answer: the page after it
    /// (instead of `start`).
    cursor: Option<String>,
}

/// Threads, the most recently active first.
#[utoipa::path(get, path = "/v1/crm/{business_id}/threads/list", tag = "crm",
    params(("business_id" = i32, Path, description = "The business"), ThreadQuery),
    responses((status = 200, body = ListEnvelope<Thread>), (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn threads(
    State(office): State<Office>,
    t: Tenant,
    ApiQuery(q): ApiQuery<ThreadQuery>,
) -> Result<Json<ListEnvelope<Thread>>, ApiError> {
    let mut c = Check::new();
    let page =
        Page::parse_with_cursor(q.start, q.length, q.cursor.clone()).unwrap_or_else(|errors| {
            c.extend("", errors);
            Page::default()
        });
    let (integration_id, department) =
        scope(&mut c, q.integration_id.as_deref(), q.filter_id.as_deref());
    let status = q
        .status
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .and_then(|s| {
            let parsed = ThreadStatus::parse(s);
            if parsed.is_none() {
                c.fail("status", "must be open or closed");
            }
            parsed
        });
    let filter = c
        .finish(ThreadFilter {
            integration_id,
            department,
            status,
        })
        .map_err(ApiError::invalid)?;
    Ok(Json(office.threads(t.business_id(), filter, page).await?))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ScopeQuery {
    /// When given, the thread must come from this source (else 404).
    #[param(format = "crm-code")]
    integration_id: Option<String>,
    /// When given, the thread must be of this topic, a department's code
    /// (else 404).
    #[param(format = "crm-code")]
    filter_id: Option<String>,
}

/// Posts a message to a thread: a reply to the buyer (`outbound`, the
/// default) or a note for colleagues (`internal`), optionally setting the
/// thread's status. Answers the thread as it now stands and the message.
#[utoipa::path(post, path = "/v1/crm/{business_id}/threads/{thread_id}/message", tag = "crm",
    params(("business_id" = i32, Path, description = "The business"),
        ("thread_id" = i32, Path, description = "The thread"), ScopeQuery),
    request_body = MessagePost,
    responses((status = 200, body = ThreadMessages), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn post_message(
    State(office): State<Office>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
    ApiQuery(q): ApiQuery<ScopeQuery>,
    ApiJson(req): ApiJson<MessagePost>,
) -> Result<Answer, ApiError> {
    let mut c = Check::new();
    let (integration_id, department) =
        scope(&mut c, q.integration_id.as_deref(), q.filter_id.as_deref());
    match (c.finish(()), req.parse()) {
        (Ok(()), Ok(m)) => {
            let scope = ThreadScope {
                integration_id,
                department,
            };
            respond(
                plain::<ThreadMessages>,
                office.post_message(t.0, id, scope, m),
            )
            .await
        }
        (q, m) => Err(ApiError::invalid(
            q.err().into_iter().chain(m.err()).flatten().collect(),
        )),
    }
}

/// A thread's messages, oldest first, with the thread:
/// `{thread: [Thread], messages: [Message], recordsTotal, recordsFiltered}`.
#[utoipa::path(get, path = "/v1/crm/{business_id}/threads/messages/{thread_id}", tag = "crm",
    params(("business_id" = i32, Path, description = "The business"),
        ("thread_id" = i32, Path, description = "The thread"), PageQuery),
    responses((status = 200, body = MessagesPage), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn messages(
    State(office): State<Office>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Json<MessagesPage>, ApiError> {
    Ok(Json(
        office
            .thread_messages(t.business_id(), id, page(&q)?)
            .await?,
    ))
}
