//! `/v1/webhooks/{business_id}/...` (cloud only): a business's outbound
//! webhook subscriptions, their deliveries and attempts; the dispatcher that
//! sends them is in [`dispatch`]. See `docs/webhooks.md`.
//!
//! Bad fields answer 422 with every field named (`errors: [{name,
//! status}]`), as the other create routes do; a subscription or delivery
//! that does not exist in the business (another business's included) is
//! 404; 401 and 429 as on every route.

pub mod dispatch;
pub mod retention;
pub mod settings;
pub mod target;

use axum::extract::State;
use axum::{Extension, Json};
use depot_office::Office;
use depot_protocol::webhook::{Attempt, Delivery, DeliveryStatus, Webhook, WebhookInput};
use depot_protocol::{DataEnvelope, ErrorBody, FieldError, ListEnvelope, Page};
use depot_wms::http::error::ApiError;
use depot_wms::http::extract::{ApiJson, ApiPath, ApiQuery, Tenant};
use depot_wms::http::idempotency::{ok, respond};
use depot_wms::idempotency::Answer;
use depot_wms::{Wms, WmsError};
use ring::rand::SecureRandom;
use serde::Deserialize;
use std::sync::Arc;
use tokio::sync::Notify;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Wakes the dispatcher when something it waits for changed outside the
/// event log (a retry, a subscription turned on).
#[derive(Clone, Default)]
pub struct Wake(pub Arc<Notify>);

impl Wake {
    pub fn wake(&self) {
        self.0.notify_one();
    }
}

/// What the routes need besides the engine.
#[derive(Clone, Default)]
pub struct Context {
    pub wake: Wake,
    /// See [`settings::WebhookSettings::allow_private_targets`].
    pub allow_private: bool,
}

pub fn routes() -> OpenApiRouter<Wms> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(create))
        .routes(routes!(get))
        .routes(routes!(edit))
        .routes(routes!(delete))
        .routes(routes!(rotate_secret))
        .routes(routes!(deliveries))
        .routes(routes!(attempts))
        .routes(routes!(retry))
}

/// A new signing secret: 32 random bytes.
fn new_secret() -> Result<String, ApiError> {
    let mut b = [0u8; 32];
    ring::rand::SystemRandom::new()
        .fill(&mut b)
        .map_err(|_| WmsError::Internal("no randomness for a webhook secret".into()))?;
    Ok(format!("whsec_{}", hex::encode(b)))
}

fn checked(
    input: WebhookInput,
    create: bool,
    ctx: &Context,
) -> Result<depot_protocol::webhook::Changes, ApiError> {
    input
        .check(create, |u| target::check_url(u, ctx.allow_private))
        .map_err(ApiError::invalid)
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Rows to skip (default 0).
    #[param(minimum = 0)]
    start: Option<i64>,
    /// Rows to return, 1 to 1000 (default 50).
    #[param(minimum = 1, maximum = 1000)]
    length: Option<i64>,
}

/// The business's webhook subscriptions, oldest first (secrets are not
/// shown).
#[utoipa::path(get, path = "/v1/webhooks/{business_id}/list", tag = "webhooks",
    params(("business_id" = i32, Path, description = "The business"), PageQuery),
    responses((status = 200, body = ListEnvelope<Webhook>), (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn list(
    State(wms): State<Office>,
    t: Tenant,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Json<ListEnvelope<Webhook>>, ApiError> {
    let page = Page::parse(q.start, q.length).map_err(ApiError::invalid)?;
    let (list, total) = wms.webhooks(t.business_id(), page).await?;
    Ok(Json(ListEnvelope::new(list, total, total)))
}

/// Subscribes a URL to event types. The answer carries the signing secret
/// (made by the service unless given): the only time it is shown. The
/// subscription receives events logged from now on. At most 25 per
/// business (409 beyond).
#[utoipa::path(post, path = "/v1/webhooks/{business_id}/create", tag = "webhooks",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = WebhookInput,
    responses((status = 200, body = DataEnvelope<Webhook>), (status = 401, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn create(
    State(wms): State<Office>,
    Extension(ctx): Extension<Context>,
    t: Tenant,
    ApiJson(input): ApiJson<WebhookInput>,
) -> Result<Answer, ApiError> {
    let mut c = checked(input, true, &ctx)?;
    let secret = match c.secret.take() {
        Some(s) => s,
        None => new_secret()?,
    };
    let answer = respond(
        ok::<Webhook>,
        wms.create_webhook(t.business_id(), c, secret),
    )
    .await?;
    ctx.wake.wake();
    Ok(answer)
}

/// One subscription (its secret is not shown).
#[utoipa::path(get, path = "/v1/webhooks/{business_id}/{webhook_id}", tag = "webhooks",
    params(("business_id" = i32, Path, description = "The business"), ("webhook_id" = i64, Path, description = "The subscription")),
    responses((status = 200, body = DataEnvelope<Webhook>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn get(
    State(wms): State<Office>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
) -> Result<Json<DataEnvelope<Webhook>>, ApiError> {
    Ok(Json(DataEnvelope {
        data: wms.webhook(t.business_id(), id).await?,
    }))
}

/// Changes the URL, event types, description or active flag (absent
/// fields are kept). New types apply to events logged from now on;
/// deliveries already made keep going.
#[utoipa::path(put, path = "/v1/webhooks/{business_id}/{webhook_id}/edit", tag = "webhooks",
    params(("business_id" = i32, Path, description = "The business"), ("webhook_id" = i64, Path, description = "The subscription")),
    request_body = WebhookInput,
    responses((status = 200, body = DataEnvelope<Webhook>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn edit(
    State(wms): State<Office>,
    Extension(ctx): Extension<Context>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
    ApiJson(input): ApiJson<WebhookInput>,
) -> Result<Answer, ApiError> {
    let c = checked(input, false, &ctx)?;
    let answer = respond(ok::<Webhook>, wms.edit_webhook(t.business_id(), id, c)).await?;
    ctx.wake.wake();
    Ok(answer)
}

/// Deletes a subscription, with its deliveries and their attempts;
/// answers what it was.
#[utoipa::path(delete, path = "/v1/webhooks/{business_id}/{webhook_id}/delete", tag = "webhooks",
    params(("business_id" = i32, Path, description = "The business"), ("webhook_id" = i64, Path, description = "The subscription")),
    responses((status = 200, body = DataEnvelope<Webhook>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn delete(
    State(wms): State<Office>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
) -> Result<Answer, ApiError> {
    respond(ok::<Webhook>, wms.delete_webhook(t.business_id(), id)).await
}

/// Hours a replaced secret keeps signing unless the rotation says
/// otherwise: a day, for a receiver to be given the new one.
const KEEP_PREVIOUS_HOURS: i64 = 24;
/// At most a week: past that the old secret would be a second, forgotten
/// key.
const MAX_KEEP_PREVIOUS_HOURS: i64 = 168;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RotateQuery {
    /// Hours the replaced secret keeps signing beside the new one, 0 to
    /// 168 (default 24); 0 stops it at once.
    #[param(value_type = Option<i64>, minimum = 0, maximum = 168)]
    keep_previous_hours: Option<String>,
}

/// Replaces the signing secret with a new one, which the answer shows
/// (once). Attempts from now on are signed with it and, for
/// `keep_previous_hours`, with the one it replaced as well (a second `v1=`
/// in `Depot-Signature`), so receivers verifying with either take them.
#[utoipa::path(post, path = "/v1/webhooks/{business_id}/{webhook_id}/rotate-secret", tag = "webhooks",
    params(("business_id" = i32, Path, description = "The business"), ("webhook_id" = i64, Path, description = "The subscription"),
        RotateQuery),
    responses((status = 200, body = DataEnvelope<Webhook>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn rotate_secret(
    State(wms): State<Office>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
    ApiQuery(q): ApiQuery<RotateQuery>,
) -> Result<Answer, ApiError> {
    // Blank is refused, as every whole-number parameter refuses it.
    let hours = match q.keep_previous_hours.as_deref().map(str::trim) {
        None => KEEP_PREVIOUS_HOURS,
        Some(h) => h
            .parse::<i64>()
            .ok()
            .filter(|h| (0..=MAX_KEEP_PREVIOUS_HOURS).contains(h))
            .ok_or_else(|| {
                ApiError::invalid(vec![FieldError::new(
                    "keep_previous_hours",
                    format!("must be a whole number of hours from 0 to {MAX_KEEP_PREVIOUS_HOURS}"),
                )])
            })?,
    };
    let secret = new_secret()?;
    respond(
        ok::<Webhook>,
        wms.rotate_webhook_secret(t.business_id(), id, secret, chrono::Duration::hours(hours)),
    )
    .await
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeliveryQuery {
    /// Rows to skip (default 0).
    #[param(minimum = 0)]
    start: Option<i64>,
    /// Rows to return, 1 to 1000 (default 50).
    #[param(minimum = 1, maximum = 1000)]
    length: Option<i64>,
    /// `pending`, `delivered` or `failed`.
    #[param(value_type = Option<DeliveryStatus>)]
    status: Option<String>,
}

/// A subscription's deliveries, newest event first: status, attempts so
/// far, when the next is due, the last answer's status or error.
#[utoipa::path(get, path = "/v1/webhooks/{business_id}/{webhook_id}/deliveries", tag = "webhooks",
    params(("business_id" = i32, Path, description = "The business"), ("webhook_id" = i64, Path, description = "The subscription"),
        DeliveryQuery),
    responses((status = 200, body = ListEnvelope<Delivery>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn deliveries(
    State(wms): State<Office>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
    ApiQuery(q): ApiQuery<DeliveryQuery>,
) -> Result<Json<ListEnvelope<Delivery>>, ApiError> {
    let mut errors = Vec::new();
    let page = Page::parse(q.start, q.length).unwrap_or_else(|e| {
        errors.extend(e);
        Page {
            start: 0,
            length: 1,
            cursor: None,
        }
    });
    let status = match q.status.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => {
            let parsed = DeliveryStatus::parse(s);
            if parsed.is_none() {
                errors.push(FieldError::new(
                    "status",
                    "must be pending, delivered or failed",
                ));
            }
            parsed
        }
    };
    if !errors.is_empty() {
        return Err(ApiError::invalid(errors));
    }
    let (list, total, filtered) = wms
        .webhook_deliveries(t.business_id(), id, status, page)
        .await?;
    Ok(Json(ListEnvelope::new(list, total, filtered)))
}

/// Every attempt of a delivery, first first: when, how long, the status
/// or the error, and the start of the receiver's answer.
#[utoipa::path(get, path = "/v1/webhooks/{business_id}/{webhook_id}/deliveries/{delivery_id}/attempts", tag = "webhooks",
    params(("business_id" = i32, Path, description = "The business"), ("webhook_id" = i64, Path, description = "The subscription"),
        ("delivery_id" = String, Path, description = "The delivery (its Depot-Webhook-Id)")),
    responses((status = 200, body = DataEnvelope<Vec<Attempt>>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn attempts(
    State(wms): State<Office>,
    t: Tenant,
    ApiPath((_, id, delivery)): ApiPath<(i64, i64, String)>,
) -> Result<Json<DataEnvelope<Vec<Attempt>>>, ApiError> {
    Ok(Json(DataEnvelope {
        data: wms.webhook_attempts(t.business_id(), id, delivery).await?,
    }))
}

/// Sends a failed (or delivered) delivery again, now, with a new retry
/// period; it keeps its id. 409 if it is pending. It goes out in its
/// place: before the subscription's later pending deliveries.
#[utoipa::path(post, path = "/v1/webhooks/{business_id}/{webhook_id}/deliveries/{delivery_id}/retry", tag = "webhooks",
    params(("business_id" = i32, Path, description = "The business"), ("webhook_id" = i64, Path, description = "The subscription"),
        ("delivery_id" = String, Path, description = "The delivery (its Depot-Webhook-Id)")),
    responses((status = 200, body = DataEnvelope<Delivery>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn retry(
    State(wms): State<Office>,
    Extension(ctx): Extension<Context>,
    t: Tenant,
    ApiPath((_, id, delivery)): ApiPath<(i64, i64, String)>,
) -> Result<Answer, ApiError> {
    let now_ms = chrono::Utc::now().timestamp_millis();
    let answer = respond(
        ok::<Delivery>,
        wms.retry_webhook_delivery(t.business_id(), id, delivery, now_ms),
    )
    .await?;
    ctx.wake.wake();
    Ok(answer)
}
