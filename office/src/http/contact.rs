//! `/v1/contact/...`: contact form submissions, and the departments and
//! forms a business configures for them (cloud only).

use crate::Office;
use crate::crm::Submitted;
use axum::Json;
use axum::extract::{DefaultBodyLimit, State};
use depot_protocol::crm::contact::{
    ContactForm, ContactSubmission, Department, DepartmentCreate, FormCreate, MAX_SUBMISSION_BYTES,
    Receipt,
};
use depot_protocol::{DataEnvelope, ErrorBody, ListEnvelope, Page};
use depot_wms::Wms;
use depot_wms::http::error::ApiError;
use depot_wms::http::extract::{ApiJson, ApiPath, ApiQuery, Tenant};
use depot_wms::http::idempotency::{ok, plain, respond};
use depot_wms::idempotency::{self, Answer};
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Rows (or messages) to skip (default 0).
    #[param(minimum = 0)]
    start: Option<i64>,
    /// Rows to return, 1 to 1000 (default 50).
    #[param(minimum = 1, maximum = 1000)]
    length: Option<i64>,
}

pub(super) fn page(q: &PageQuery) -> Result<Page, ApiError> {
    Page::parse(q.start, q.length).map_err(ApiError::invalid)
}

/// Sends a message to a department of the business: the storefront posts
/// what a visitor typed into form `form_id`. The submission opens a thread
/// assigned to the form's department, with the message as its first
/// (inbound) message, and its sender is kept as a buyer.
///
/// The answer is `{"status": "received", "thread_id": …}`. Limits: a body
/// of at most 32 KiB (413); name and subject up to 200 characters, the
/// message up to 5000, the form's own fields up to their `max_length`,
/// and at most the form's `max_links` links in all (422); at most the
/// form's `max_per_email_per_hour` submissions per email and
/// `max_per_hour` in all in any hour (429 with `Retry-After`, nothing
/// kept). A filled honeypot (`website`) is answered as received, without a
/// `thread_id`, and kept nowhere. A form of another business is 404.
#[utoipa::path(post, path = "/v1/contact/{business_id}/{form_id}", tag = "contact",
    params(("business_id" = i32, Path, description = "The business"),
        ("form_id" = i32, Path, description = "The contact form")),
    request_body = ContactSubmission,
    responses((status = 200, body = Receipt), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 422, body = ErrorBody), (status = 429, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn submit(
    State(office): State<Office>,
    t: Tenant,
    ApiPath((_, form_id)): ApiPath<(i64, i64)>,
    body: Result<ApiJson<ContactSubmission>, ApiError>,
) -> Result<Answer, ApiError> {
    // The extractor names the API's general limit; this route has its own.
    let ApiJson(submission) = body.map_err(|e| match e {
        ApiError::PayloadTooLarge { .. } => ApiError::PayloadTooLarge {
            limit: MAX_SUBMISSION_BYTES,
        },
        e => e,
    })?;
    // A submission over the form's limits applied nothing: its 429 is not
    // kept for the key, a retry later may go through.
    idempotency::expect(|s: &Submitted| match s {
        Submitted::Received(receipt) => Some(plain(receipt)),
        Submitted::Limited { .. } => None,
    });
    match office
        .submit_contact(t.business_id(), form_id, submission)
        .await?
    {
        Submitted::Received(receipt) => Ok(plain(&receipt)),
        Submitted::Limited { wait_secs } => Err(ApiError::RateLimited { wait_secs }),
    }
}

/// The submission route, with its own body ceiling.
pub fn submissions() -> OpenApiRouter<Wms> {
    OpenApiRouter::new()
        .routes(routes!(submit))
        .layer(DefaultBodyLimit::max(MAX_SUBMISSION_BYTES))
}

/// Creates a department; its `code` is the topic id (`filter_id`) of the
/// threads its forms open. A code already used is 409.
#[utoipa::path(post, path = "/v1/contact/{business_id}/departments", tag = "contact",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = DepartmentCreate,
    responses((status = 200, body = DataEnvelope<Department>), (status = 401, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn create_department(
    State(office): State<Office>,
    t: Tenant,
    ApiJson(req): ApiJson<DepartmentCreate>,
) -> Result<Answer, ApiError> {
    respond(ok::<Department>, office.create_department(t.0, req)).await
}

/// The business's departments, by code.
#[utoipa::path(get, path = "/v1/contact/{business_id}/departments", tag = "contact",
    params(("business_id" = i32, Path, description = "The business"), PageQuery),
    responses((status = 200, body = ListEnvelope<Department>), (status = 401, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn departments(
    State(office): State<Office>,
    t: Tenant,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Json<ListEnvelope<Department>>, ApiError> {
    Ok(Json(office.departments(t.business_id(), page(&q)?).await?))
}

/// Creates a contact form for one of the business's departments (422 if
/// there is no department with that code), with up to 10 fields of its own
/// and its limits: submissions per email per hour (default 5), per hour
/// in all (default 100), links per submission (default 2).
#[utoipa::path(post, path = "/v1/contact/{business_id}/forms", tag = "contact",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = FormCreate,
    responses((status = 200, body = DataEnvelope<ContactForm>), (status = 401, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn create_form(
    State(office): State<Office>,
    t: Tenant,
    ApiJson(req): ApiJson<FormCreate>,
) -> Result<Answer, ApiError> {
    respond(ok::<ContactForm>, office.create_form(t.0, req)).await
}

/// The business's contact forms, oldest first.
#[utoipa::path(get, path = "/v1/contact/{business_id}/forms", tag = "contact",
    params(("business_id" = i32, Path, description = "The business"), PageQuery),
    responses((status = 200, body = ListEnvelope<ContactForm>), (status = 401, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn forms(
    State(office): State<Office>,
    t: Tenant,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Json<ListEnvelope<ContactForm>>, ApiError> {
    Ok(Json(office.forms(t.business_id(), page(&q)?).await?))
}
