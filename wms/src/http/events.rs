//! `/v1/events/...` (extension): the node's event log, read forward from a
//! position. Station screens follow it to see what the floor and sync do,
//! conflicts included (`sync.conflict`).

use super::error::ApiError;
use super::extract::{ApiQuery, Tenant};
use crate::Wms;
use axum::Json;
use axum::extract::State;
use depot_protocol::event::Event;
use depot_protocol::{DataEnvelope, ErrorBody, FieldError};
use serde::{Deserialize, Serialize};

/// The most events one call answers.
pub const MAX_EVENTS: u32 = 1000;
/// The longest a call waits for an event to come.
pub const MAX_WAIT_MS: i64 = 30_000;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventQuery {
    /// Answer events after this log position (0, the default: from the
    /// start); pass the previous answer's `next` to follow the log.
    #[param(minimum = 0)]
    after: Option<i64>,
    /// Only events of this kind, e.g. `sync.conflict`.
    kind: Option<String>,
    /// At most this many (1 to 1000, default 100).
    #[param(minimum = 1, maximum = 1000)]
    length: Option<i64>,
    /// When nothing is there yet, wait up to this many milliseconds (0 to
    /// 30000, default 0) and answer as soon as an event comes: a long poll.
    #[param(minimum = 0, maximum = 30_000)]
    wait: Option<i64>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct EventPage {
    pub events: Vec<Event>,
    /// The position to ask after next time.
    pub next: i64,
    /// More events are waiting right now.
    pub more: bool,
}

/// The business's events after a position, oldest first.
#[utoipa::path(get, path = "/v1/events/{business_id}/list", tag = "events",
    params(("business_id" = i32, Path, description = "The business"), EventQuery),
    responses((status = 200, body = DataEnvelope<EventPage>), (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn list(
    State(wms): State<Wms>,
    t: Tenant,
    ApiQuery(q): ApiQuery<EventQuery>,
) -> Result<Json<DataEnvelope<EventPage>>, ApiError> {
    let mut errors = Vec::new();
    let after = q.after.unwrap_or(0);
    if after < 0 {
        errors.push(FieldError::new("after", "must be 0 or more"));
    }
    let length = q.length.unwrap_or(100);
    if !(1..=i64::from(MAX_EVENTS)).contains(&length) {
        errors.push(FieldError::new(
            "length",
            format!("must be between 1 and {MAX_EVENTS}"),
        ));
    }
    let wait = q.wait.unwrap_or(0);
    if !(0..=MAX_WAIT_MS).contains(&wait) {
        errors.push(FieldError::new(
            "wait",
            format!("must be between 0 and {MAX_WAIT_MS} (milliseconds)"),
        ));
    }
    if !errors.is_empty() {
        return Err(ApiError::invalid(errors));
    }
    let kind = q
        .kind
        .map(|k| k.trim().to_owned())
        .filter(|k| !k.is_empty());
    let limit = length as u32;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(wait as u64);
    // Subscribed before the first read, so a commit between the read and
    // the wait still wakes it.
    let mut commits = wms.events_changed();
    let events = loop {
        commits.borrow_and_update();
        let events = wms
            .business_events(t.business_id(), after, kind.clone(), limit)
            .await?;
        if !events.is_empty() {
            break events;
        }
        let _waiting = wms.long_poll();
        match tokio::time::timeout_at(deadline, commits.changed()).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) | Err(_) => break events,
        }
    };
    let next = events.last().map_or(after, |e| e.seq);
    let more = events.len() as u32 == limit;
    Ok(Json(DataEnvelope {
        data: EventPage { events, next, more },
    }))
}
