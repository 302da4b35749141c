//! `/v1/printers/...`: registered printers and print jobs.

use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, Tenant};
use super::idempotency::{ok, respond};
use crate::Wms;
use crate::idempotency::Answer;
use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use depot_protocol::printing::{MAX_JOB_BYTES, PrintJob, Printer, PrinterFields};
use depot_protocol::{DataEnvelope, ErrorBody, ListEnvelope, PrinterId};

/// Registered printers: kind (ZPL or PDF), connection, station and status.
#[utoipa::path(get, path = "/v1/printers/{business_id}/list", tag = "printers",
    params(("business_id" = i32, Path, description = "The business")),
    responses((status = 200, body = ListEnvelope<Printer>), (status = 401, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn list(
    State(wms): State<Wms>,
    t: Tenant,
) -> Result<Json<ListEnvelope<Printer>>, ApiError> {
    let rows = wms.printers(t.business_id()).await?;
    let n = rows.len() as u64;
    Ok(Json(ListEnvelope::new(rows, n, n)))
}

/// Registers a printer (extension). `connection` is `tcp://host:9100`,
/// `serial:///dev/ttyUSB0?baud=9600`, `device:///dev/usb/lp0` or
/// `edge://<edge id>`.
#[utoipa::path(post, path = "/v1/printers/{business_id}/create", tag = "printers",
    params(("business_id" = i32, Path, description = "The business")),
    request_body = PrinterFields,
    responses((status = 200, body = DataEnvelope<Printer>), (status = 401, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn create(
    State(wms): State<Wms>,
    t: Tenant,
    ApiJson(req): ApiJson<PrinterFields>,
) -> Result<Answer, ApiError> {
    respond(ok::<Printer>, wms.create_printer(t.business_id(), req)).await
}

/// Updates a printer (extension); absent fields are kept.
#[utoipa::path(put, path = "/v1/printers/{business_id}/{printer_id}/edit", tag = "printers",
    params(("business_id" = i32, Path, description = "The business"), ("printer_id" = i64, Path, description = "The printer")),
    request_body = PrinterFields,
    responses((status = 200, body = DataEnvelope<Printer>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn edit(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
    ApiJson(req): ApiJson<PrinterFields>,
) -> Result<Answer, ApiError> {
    respond(
        ok::<Printer>,
        wms.edit_printer(t.business_id(), PrinterId(id), req),
    )
    .await
}

/// Sends a raw ZPL or PDF job to a printer: the body is the job itself
/// (at most 4 MiB). It is stored and queued; its status moves to sent,
/// printed or failed as the device side reports.
#[utoipa::path(post, path = "/v1/printers/jobs/{business_id}/{printer_id}", tag = "printers",
    params(("business_id" = i32, Path, description = "The business"), ("printer_id" = i64, Path, description = "The printer")),
    request_body(content = Vec<u8>, content_type = "application/octet-stream", description = "Raw ZPL or PDF"),
    responses((status = 200, body = DataEnvelope<PrintJob>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn submit(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Answer, ApiError> {
    let body = body.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::PayloadTooLarge {
                limit: MAX_JOB_BYTES,
            }
        } else {
            ApiError::bad_request(e.body_text())
        }
    })?;
    respond(
        ok::<PrintJob>,
        wms.submit_job(t.0, PrinterId(id), body.to_vec()),
    )
    .await
}

/// The newest jobs of a printer with their status (extension).
#[utoipa::path(get, path = "/v1/printers/jobs/{business_id}/{printer_id}", tag = "printers",
    params(("business_id" = i32, Path, description = "The business"), ("printer_id" = i64, Path, description = "The printer")),
    responses((status = 200, body = ListEnvelope<PrintJob>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn jobs(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, id)): ApiPath<(i64, i64)>,
) -> Result<Json<ListEnvelope<PrintJob>>, ApiError> {
    let rows = wms.print_jobs(t.business_id(), PrinterId(id)).await?;
    let n = rows.len() as u64;
    Ok(Json(ListEnvelope::new(rows, n, n)))
}
