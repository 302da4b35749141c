//! The edge's device routes: what is attached and in what state
//! (`/v1/edge/devices`), scales (weight, zero, tare) and stations (their
//! task, devices and last answer; setting the task; a scan typed at the
//! station; packing). Like the edge's other routes they act on this box's
//! own business, so it is not in the path; a key of another business gets
//! 401.

use super::Devices;
use super::failure::Failure;
use super::machine::{PackingView, Report, Task};
use super::printers::PrinterStatus;
use super::scales::ScaleView;
use super::scanners::ScannerView;
use super::stations::StationHandle;
use crate::caller::EdgeCaller;
use axum::{Extension, Json};
use depot_hardware::scanner::MAX_SCAN_BYTES;
use depot_protocol::{DataEnvelope, ErrorBody, FieldError, ListEnvelope};
use depot_wms::http::error::ApiError;
use depot_wms::http::extract::{ApiJson, ApiPath, ApiQuery};
use depot_wms::http::idempotency::ok;
use depot_wms::idempotency::Answer;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How long `stable=true` waits unless told, and at most.
const DEFAULT_WAIT_MS: u64 = 5000;
const MAX_WAIT_MS: u64 = 30_000;

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DevicesView {
    pub printers: Vec<PrinterStatus>,
    pub scales: Vec<ScaleView>,
    pub scanners: Vec<ScannerView>,
    /// The USB HID bus, when USB scanners are configured.
    pub usb_bus: Option<String>,
}

/// Every device attached to this box: printers (state, jobs queued on
/// them), scales (their weight or fault), scanners (connected or not).
#[utoipa::path(get, path = "/v1/edge/devices", tag = "edge",
    responses((status = 200, body = DataEnvelope<DevicesView>), (status = 401, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn devices(
    Extension(devices): Extension<Devices>,
    _: EdgeCaller,
) -> Result<Json<DataEnvelope<DevicesView>>, ApiError> {
    Ok(Json(DataEnvelope {
        data: DevicesView {
            printers: devices.printers(),
            scales: devices.scale_views(),
            scanners: devices.scanners().all(),
            usb_bus: devices.scanners().usb_bus(),
        },
    }))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WeightQuery {
    /// Wait for a stable weight newer than the request.
    stable: Option<bool>,
    /// How long to wait for it (1 to 30000 ms, default 5000).
    #[param(minimum = 1, maximum = 30000)]
    timeout_ms: Option<u64>,
}

fn scale<'a>(devices: &'a Devices, id: &str) -> Result<&'a super::scales::Scale, Failure> {
    devices
        .scale(id)
        .ok_or_else(|| Failure::not_found(format!("no scale {id:?} is configured at this edge")))
}

/// A scale's weight: what it shows now (or its fault), or with
/// `stable=true` the next stable weight. A weight that does not settle, or
/// a scale that does not answer, within `timeout_ms` is a 504; a scale
/// still overloaded then a 409; one unreachable a 503.
#[utoipa::path(get, path = "/v1/edge/scales/{scale_id}/weight", tag = "edge",
    params(("scale_id" = String, Path, description = "The scale's configured id"), WeightQuery),
    responses((status = 200, body = DataEnvelope<ScaleView>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody), (status = 504, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn weight(
    Extension(devices): Extension<Devices>,
    _: EdgeCaller,
    ApiPath(id): ApiPath<String>,
    ApiQuery(q): ApiQuery<WeightQuery>,
) -> Result<Json<DataEnvelope<ScaleView>>, Failure> {
    let scale = scale(&devices, &id)?;
    // Checked whether or not it is used: a request is refused for what it
    // says, not for what this answer happens to need.
    let wait = q.timeout_ms.unwrap_or(DEFAULT_WAIT_MS);
    if !(1..=MAX_WAIT_MS).contains(&wait) {
        return Err(
            Failure::invalid(format!("timeout_ms must be between 1 and {MAX_WAIT_MS}"))
                .with_errors(vec![FieldError::new(
                    "timeout_ms",
                    format!("must be between 1 and {MAX_WAIT_MS}"),
                )]),
        );
    }
    if !q.stable.unwrap_or(false) {
        return Ok(Json(DataEnvelope {
            data: ScaleView::of(&id, &scale.handle.state()),
        }));
    }
    let reading = scale
        .handle
        .weigh_stable(Duration::from_millis(wait))
        .await?;
    Ok(Json(DataEnvelope {
        data: ScaleView::reading(&id, &reading),
    }))
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ScaleCommand {
    pub id: String,
    /// zero or tare.
    pub command: &'static str,
    /// The tare the scale stored.
    pub tare: Option<ScaleView>,
}

/// Zeroes the scale (empty pan), where its protocol can: 409 where it
/// cannot or the scale refuses now.
#[utoipa::path(post, path = "/v1/edge/scales/{scale_id}/zero", tag = "edge",
    params(("scale_id" = String, Path, description = "The scale's configured id")),
    responses((status = 200, body = DataEnvelope<ScaleCommand>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 503, body = ErrorBody), (status = 504, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn zero(
    Extension(devices): Extension<Devices>,
    _: EdgeCaller,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<DataEnvelope<ScaleCommand>>, Failure> {
    scale(&devices, &id)?.handle.zero().await?;
    Ok(Json(DataEnvelope {
        data: ScaleCommand {
            id,
            command: "zero",
            tare: None,
        },
    }))
}

/// Tares with what is on the pan, where the scale's protocol can: 409
/// where it cannot or the scale refuses now.
#[utoipa::path(post, path = "/v1/edge/scales/{scale_id}/tare", tag = "edge",
    params(("scale_id" = String, Path, description = "The scale's configured id")),
    responses((status = 200, body = DataEnvelope<ScaleCommand>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 503, body = ErrorBody), (status = 504, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn tare(
    Extension(devices): Extension<Devices>,
    _: EdgeCaller,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<DataEnvelope<ScaleCommand>>, Failure> {
    let tare = scale(&devices, &id)?.handle.tare().await?;
    Ok(Json(DataEnvelope {
        data: ScaleCommand {
            command: "tare",
            tare: Some(ScaleView::reading(&id, &tare)),
            id,
        },
    }))
}

/// A station: its task and packing progress, its last answer, and the
/// state of its devices.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct StationView {
    pub name: String,
    pub task: Task,
    pub packing: Option<PackingView>,
    pub last: Option<Report>,
    pub scanners: Vec<ScannerView>,
    pub scale: Option<ScaleView>,
    pub printer: Option<PrinterStatus>,
}

fn view(devices: &Devices, station: &StationHandle) -> StationView {
    let state = station.state();
    let c = &station.config;
    StationView {
        name: c.name.clone(),
        task: state.task,
        packing: state.packing,
        last: state.last,
        scanners: c
            .scanners
            .iter()
            .filter_map(|s| devices.scanners().view(s))
            .collect(),
        scale: c
            .scale
            .as_ref()
            .and_then(|id| devices.scale(id))
            .map(|s| ScaleView::of(&s.id, &s.handle.state())),
        printer: c.printer.as_ref().and_then(|p| devices.printer(p)),
    }
}

/// The stations configured at this box.
#[utoipa::path(get, path = "/v1/edge/stations", tag = "edge",
    responses((status = 200, body = ListEnvelope<StationView>), (status = 401, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn stations(
    Extension(devices): Extension<Devices>,
    _: EdgeCaller,
) -> Result<Json<ListEnvelope<StationView>>, ApiError> {
    let rows: Vec<StationView> = devices
        .stations()
        .iter()
        .map(|s| view(&devices, s))
        .collect();
    let n = rows.len() as u64;
    Ok(Json(ListEnvelope::new(rows, n, n)))
}

fn station<'a>(devices: &'a Devices, name: &str) -> Result<&'a StationHandle, Failure> {
    devices.station(name).ok_or_else(|| {
        Failure::not_found(format!("no station {name:?} is configured at this edge"))
    })
}

/// The answer as the station screen gets it, or the refusal (the error
/// body with the report's status). Also the answer a station stores with
/// an `Idempotency-Key`, in the write that logs the report.
pub fn answer_of(report: &Report) -> Answer {
    if report.is_ok() {
        return ok(report);
    }
    let body =
        ErrorBody::new(report.status, report.message.clone()).with_errors(report.errors.clone());
    Answer::json(report.status, &body)
}

/// Sets what a station does with its scans: `{"task": "picking",
/// "wave_id": 3, "order_id": 12?}`, `{"task": "receiving", "inbound_id": 1,
/// "location": "DOCK-1"?}` (a location on record), `{"task": "packing",
/// "order_id": 12}` (the order must be confirmed or picking), `{"task":
/// "putaway", "task_id": 4}` (an open putaway task: scans come in pairs,
/// the goods then the location's label), `{"task": "counting", "count_id":
/// 5}` (an open count: a location's label, its goods one scan at a time,
/// the label again to close it), `{"task": "returns", "grade": "restock",
/// "return_id": 6?}` (the returns bench: a parcel's RMA label opens its
/// return, each unit scanned then is graded `restock`, `damaged` or
/// `scrap`) or `{"task": "idle"}`. Scans then
/// act as the key that set the task.
#[utoipa::path(put, path = "/v1/edge/stations/{station}/task", tag = "edge",
    params(("station" = String, Path, description = "The station's configured name")),
    request_body = Task,
    responses((status = 200, body = DataEnvelope<Report>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn set_task(
    Extension(devices): Extension<Devices>,
    EdgeCaller(caller): EdgeCaller,
    ApiPath(name): ApiPath<String>,
    ApiJson(task): ApiJson<Task>,
) -> Result<Answer, Failure> {
    Ok(answer_of(
        &station(&devices, &name)?.set_task(caller, task).await?,
    ))
}

/// Packs what the packing station has scanned (the whole order): weighs
/// it on the station's scale and checks the weight against the catalog's
/// (items plus packaging, within the station's tolerance: 422 saying
/// expected and measured otherwise), packs it as `pack-order` does, and
/// queues the shipping label on the station's printer.
#[utoipa::path(post, path = "/v1/edge/stations/{station}/pack", tag = "edge",
    params(("station" = String, Path, description = "The station's configured name")),
    responses((status = 200, body = DataEnvelope<Report>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody), (status = 503, body = ErrorBody),
        (status = 504, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn pack(
    Extension(devices): Extension<Devices>,
    EdgeCaller(caller): EdgeCaller,
    ApiPath(name): ApiPath<String>,
) -> Result<Answer, Failure> {
    Ok(answer_of(&station(&devices, &name)?.pack(caller).await?))
}

/// Gives the station's task up, so a station is never stuck on an order
/// it cannot pack (a pack that keeps failing, an order that needs someone
/// else): the station goes idle and says what becomes of what was done.
/// A packing's scans were never written, so the order stays packable here
/// or elsewhere; picks and receptions already made stay. A station without
/// a task answers 200 as well (nothing to release), so a release sent
/// twice reads the same.
#[utoipa::path(post, path = "/v1/edge/stations/{station}/release", tag = "edge",
    params(("station" = String, Path, description = "The station's configured name")),
    responses((status = 200, body = DataEnvelope<Report>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn release(
    Extension(devices): Extension<Devices>,
    EdgeCaller(caller): EdgeCaller,
    ApiPath(name): ApiPath<String>,
) -> Result<Answer, Failure> {
    Ok(answer_of(&station(&devices, &name)?.release(caller).await?))
}

/// What the station's scan event names as the scanner of a scan that came
/// through [`scan`].
pub const KEYBOARD: &str = "keyboard";

/// Body of `POST /v1/edge/stations/{station}/scan`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScanInput {
    /// The code as scanned or typed (at most 8192 bytes, as from a scanner).
    #[schema(format = "note", max_length = 2048)]
    pub code: String,
}

/// A scan typed at the station (its screen's input, a keyboard or a
/// keyboard-wedge scanner on the screen's computer): handled exactly as a
/// scan from the station's own scanners, in turn with them and acting as
/// the key that set the task, and logged the same way (`input.scanner` is
/// `keyboard`). Answers the station's answer, as the other station routes
/// do.
#[utoipa::path(post, path = "/v1/edge/stations/{station}/scan", tag = "edge",
    params(("station" = String, Path, description = "The station's configured name")),
    request_body = ScanInput,
    responses((status = 200, body = DataEnvelope<Report>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 412, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 503, body = ErrorBody), (status = 504, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn scan(
    Extension(devices): Extension<Devices>,
    _: EdgeCaller,
    ApiPath(name): ApiPath<String>,
    ApiJson(input): ApiJson<ScanInput>,
) -> Result<Answer, Failure> {
    let station = station(&devices, &name)?;
    let problem = if depot_protocol::validate::blank(&input.code) {
        Some("must not be empty".to_owned())
    } else if input.code.len() > MAX_SCAN_BYTES {
        Some(format!("must be at most {MAX_SCAN_BYTES} bytes"))
    } else {
        None
    };
    if let Some(problem) = problem {
        return Err(Failure::invalid(format!("code {problem}"))
            .with_errors(vec![FieldError::new("code", problem)]));
    }
    Ok(answer_of(
        &station
            .scan_and_answer(KEYBOARD.to_owned(), input.code)
            .await?,
    ))
}
