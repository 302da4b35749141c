//! `/v1/automation/{business_id}/items/pricing/rules/...` (cloud only):
//! pricing rules and the jobs that apply them to item prices.
//!
//! As the spec has it, a write whose fields are in error answers 201 with
//! `{fieldErrors: [{name, status}]}` and writes nothing: a value out of
//! range, an unknown field, a field of the wrong type (`"position_id": "3"`)
//! or a `rule_id` in the path that is not a positive 32-bit integer (an
//! edit's values are judged as the rule would be left, so with no rule to
//! edit only the body's types are named beside `rule_id`). A body
//! that cannot be read at all keeps the usual answers: 415 without a JSON
//! content type, 413 over 1 MiB, 400 for malformed JSON. A rule id that does
//! not exist in the business, in the path or in a body, answers 404 with the
//! error body (another business's rule is not found either); 401 and 429 as
//! on every route.

use crate::Office;
use crate::pricing::JobOutcome;
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use depot_protocol::pricing::{
    JobRequest, JobSpec, MoveRequest, PriceChange, PricingRule, RuleInput, RulePosition,
    RuleRecord, RuleRequest, RuleRun,
};
use depot_protocol::{DataEnvelope, ErrorBody, FieldError, FieldErrors};
use depot_wms::WmsError;
use depot_wms::http::error::ApiError;
use depot_wms::http::extract::{ApiJson, ApiPath, Tenant};
use depot_wms::http::idempotency::{ok, respond};
use depot_wms::idempotency::{self, Answer};
use serde::Serialize;
use serde_json::Value;

/// The job key may come as this header instead of `job_id`.
pub const IDEMPOTENCY_KEY: &str = "idempotency-key";
/// Set to `true` on the answer to a job key used before.
pub const REPLAYED: &str = "idempotent-replayed";

fn field_errors(errors: Vec<FieldError>) -> Response {
    let body = FieldErrors {
        field_errors: errors,
    };
    (StatusCode::CREATED, Json(body)).into_response()
}

/// `{data}` with 200, or the field errors with 201.
fn answer<T: Serialize>(r: Result<T, WmsError>) -> Result<Response, ApiError> {
    match r {
        Ok(data) => Ok(Json(DataEnvelope { data }).into_response()),
        Err(WmsError::Invalid { errors, .. }) => Ok(field_errors(errors)),
        Err(e) => Err(e.into()),
    }
}

/// `answer` for a write: its answer built by `build`, with the key's
/// answer in the write's transaction (see `http::idempotency`).
async fn written<T: Send + 'static>(
    build: fn(&T) -> Answer,
    work: impl Future<Output = Result<T, WmsError>>,
) -> Result<Response, ApiError> {
    match respond(build, work).await {
        Ok(a) => Ok(a.into_response()),
        Err(ApiError::Wms(WmsError::Invalid { errors, .. })) => Ok(field_errors(errors)),
        Err(e) => Err(e),
    }
}

/// `{data: [rule]}`.
fn one_rule(rule: &PricingRule) -> Answer {
    ok(&[rule.record()])
}

/// `{data: [runs]}`.
fn job_runs(outcome: &JobOutcome) -> Answer {
    ok(&outcome.runs)
}

fn rule_id(raw: &str) -> Result<i64, Vec<FieldError>> {
    raw.parse::<i32>()
        .ok()
        .filter(|id| *id > 0)
        .map(i64::from)
        .ok_or_else(|| {
            vec![FieldError::new(
                "rule_id",
                "must be a positive 32-bit integer",
            )]
        })
}

/// The business's pricing rules, in the order a job applies them
/// (`position_id` 1 first).
#[utoipa::path(get, path = "/v1/automation/{business_id}/items/pricing/rules/list", tag = "automation",
    params(("business_id" = i32, Path, description = "The business")),
    responses((status = 200, body = DataEnvelope<Vec<RuleRecord>>), (status = 401, body = ErrorBody),
        (status = 429, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn list(State(office): State<Office>, t: Tenant) -> Result<Response, ApiError> {
    let rules = office.pricing_rules(t.business_id()).await;
    answer(rules.map(|r| r.iter().map(|r| r.record()).collect::<Vec<_>>()))
}

/// Creates a pricing rule: it reads an item's price in the origin price
/// list, changes it by its action (`origin_action_id` with
/// `origin_action_value`, or `type` with `value`) and writes it to the
/// target list, for the items its conditions select. Inserted at
/// `position_id` (default: last; the rules after it move down). `status`
/// 1 (default) is active, 0 inactive. A business has at most 500 rules
/// (409 beyond). Answers the rule.
#[utoipa::path(post, path = "/v1/automation/{business_id}/items/pricing/rules/create", tag = "automation",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = RuleInput,
    responses((status = 200, body = DataEnvelope<Vec<RuleRecord>>),
        (status = 201, description = "Fields in error; nothing written", body = FieldErrors),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody), (status = 429, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn create(
    State(office): State<Office>,
    t: Tenant,
    ApiJson(body): ApiJson<Value>,
) -> Result<Response, ApiError> {
    let req = match RuleRequest::from_json(&body) {
        Ok(r) => r,
        Err(errors) => return Ok(field_errors(errors)),
    };
    written(one_rule, office.create_pricing_rule(t.business_id(), req)).await
}

/// Changes the fields given (absent or null ones are kept; the rule is
/// checked as it would be left). A `position_id` moves the rule there.
/// Answers the rule.
#[utoipa::path(put, path = "/v1/automation/{business_id}/items/pricing/rules/{rule_id}/edit", tag = "automation",
    params(("business_id" = i32, Path, description = "The business"), ("rule_id" = i32, Path, description = "The rule")),
    request_body = RuleInput,
    responses((status = 200, body = DataEnvelope<Vec<RuleRecord>>),
        (status = 201, description = "Fields in error; nothing written", body = FieldErrors),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody), (status = 429, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn edit(
    State(office): State<Office>,
    t: Tenant,
    ApiPath((_, raw_id)): ApiPath<(String, String)>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Response, ApiError> {
    let id = rule_id(&raw_id);
    let req = RuleRequest::from_json(&body);
    let (id, req) = match (id, req) {
        (Ok(id), Ok(req)) => (id, req),
        (id, req) => {
            let body = req.map_or_else(|e| e, RuleRequest::into_type_errors);
            let errors = id.err().into_iter().flatten().chain(body).collect();
            return Ok(field_errors(errors));
        }
    };
    written(one_rule, office.edit_pricing_rule(t.business_id(), id, req)).await
}

/// Deletes a rule; the rules after it move up one position. Answers the
/// rule as it was.
#[utoipa::path(delete, path = "/v1/automation/{business_id}/items/pricing/rules/{rule_id}/delete", tag = "automation",
    params(("business_id" = i32, Path, description = "The business"), ("rule_id" = i32, Path, description = "The rule")),
    responses((status = 200, body = DataEnvelope<Vec<RuleRecord>>),
        (status = 201, description = "rule_id is not a positive 32-bit integer", body = FieldErrors),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn delete(
    State(office): State<Office>,
    t: Tenant,
    ApiPath((_, raw_id)): ApiPath<(String, String)>,
) -> Result<Response, ApiError> {
    let id = match rule_id(&raw_id) {
        Ok(id) => id,
        Err(errors) => return Ok(field_errors(errors)),
    };
    written(one_rule, office.delete_pricing_rule(t.business_id(), id)).await
}

/// Moves rules: `{"id": 12, "position_id": 3}`, or several moves applied
/// in order, all or none: `{"positions": [{"id": 12, "position_id": 1},
/// {"id": 7, "position_id": 2}]}`. A `position_id` goes from 1 to the
/// number of rules; the other rules shift so positions stay 1..n. Answers
/// `{id, position_id}` for every rule whose position changed, in position
/// order (empty when none did).
#[utoipa::path(put, path = "/v1/automation/{business_id}/items/pricing/rules/position", tag = "automation",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = MoveRequest,
    responses((status = 200, body = DataEnvelope<Vec<RulePosition>>),
        (status = 201, description = "Fields in error; nothing written", body = FieldErrors),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody), (status = 429, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn position(
    State(office): State<Office>,
    t: Tenant,
    ApiJson(body): ApiJson<Value>,
) -> Result<Response, ApiError> {
    let moves = match MoveRequest::parse(&body) {
        Ok(m) => m,
        Err(errors) => return Ok(field_errors(errors)),
    };
    written(
        ok::<Vec<RulePosition>>,
        office.move_pricing_rules(t.business_id(), moves),
    )
    .await
}

/// Applies rules to the business's item prices now: the rule named by
/// `rule_id` (active or not), or every active rule in position order, each
/// reading the prices the ones before it left; `origin_price_list_id` and
/// `target_price_list_id` narrow the choice. For each item the rule
/// selects (conditions on its catalog fields and its origin price), the
/// origin price changed by the action, in integer cents rounded half away
/// from zero, is written to the target list in the origin's currency.
/// All of it in one transaction; every change is audited and each changed
/// item is logged as `item.updated`, which brings the price to the edges.
///
/// The job key (`job_id`, or the `Idempotency-Key` header) makes a retry
/// safe: a key used before changes nothing and answers the first answer
/// again, with `Idempotent-Replayed: true` (409 if the body differs). The
/// answer's `Idempotency-Key` header carries the key, made up when none was
/// given. Answers each rule applied, as it was, with `job_id`,
/// `items_matched`, `items_changed` and `items_skipped`.
#[utoipa::path(post, path = "/v1/automation/{business_id}/items/pricing/rules/jobs/execute", tag = "automation",
    params(("business_id" = i32, Path, description = "The business"),
        ("Idempotency-Key" = Option<String>, Header, description = "The job key, instead of job_id")),
    request_body = JobRequest,
    responses((status = 200, body = DataEnvelope<Vec<RuleRun>>),
        (status = 201, description = "Fields in error; nothing done", body = FieldErrors),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 429, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn execute(
    State(office): State<Office>,
    t: Tenant,
    headers: HeaderMap,
    ApiJson(body): ApiJson<Value>,
) -> Result<Response, ApiError> {
    let header = headers
        .get(IDEMPOTENCY_KEY)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let spec = match JobSpec::parse(&body, header.as_deref()) {
        Ok(s) => s,
        Err(errors) => return Ok(field_errors(errors)),
    };
    idempotency::expect(|o: &JobOutcome| Some(job_runs(o)));
    let outcome = match office.execute_pricing_job(t.business_id(), spec).await {
        Ok(o) => o,
        Err(e) => return answer::<()>(Err(e)),
    };
    let mut response = job_runs(&outcome).into_response();
    let h = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&outcome.job_id) {
        h.insert(IDEMPOTENCY_KEY, v);
    }
    if outcome.replayed {
        h.insert(REPLAYED, HeaderValue::from_static("true"));
    }
    Ok(response)
}

/// The audit of a job: every price it changed, with what it was before
/// (`old_amount` null: the item had no price in that list), in the order
/// the job changed them. 404 for a key the business never ran (a job that
/// failed left none).
#[utoipa::path(get, path = "/v1/automation/{business_id}/items/pricing/rules/jobs/{job_id}/changes", tag = "automation",
    params(("business_id" = i32, Path, description = "The business"),
        ("job_id" = String, Path, description = "The job's key, as its answer gave it")),
    responses((status = 200, body = DataEnvelope<Vec<PriceChange>>), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn changes(
    State(office): State<Office>,
    t: Tenant,
    ApiPath((_, job_id)): ApiPath<(String, String)>,
) -> Result<Json<DataEnvelope<Vec<PriceChange>>>, ApiError> {
    let data = office.pricing_changes(t.business_id(), job_id).await?;
    Ok(Json(DataEnvelope { data }))
}
