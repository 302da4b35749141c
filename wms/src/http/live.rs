//! `/v1/events/{business_id}/stream` (extension): the event log as a
//! websocket, for warehouse screens and packing stations, on the edge and
//! in the cloud.
//!
//! - **Auth**: the `X-API-KEY` header, or for browsers (which cannot set
//!   headers on a websocket) `?ticket=`, a short-lived single-use ticket
//!   from `POST /v1/events/{business_id}/tickets`. Tickets are kept in
//!   the database (as their SHA-256), so on a cloud of several instances
//!   one issued by any opens a stream on any. A stream ends when its key
//!   is revoked.
//! - **Filters**: `kinds` (`order.status_changed,pick.*`), `warehouse_id`,
//!   `station` (see [`Subscription`]).
//! - **Resume**: `after=<seq>` sends what came after that event first,
//!   from the log, so a screen that blinked misses nothing; without it the
//!   stream starts at the head.
//! - **Frames**: text, `{"events": [Event, ...], "next": seq}`; `next` is
//!   the position to resume after.
//! - **Fan-out**: one reader of the log serves every stream (see `feed`);
//!   streams filter and forward, and one that falls behind reads the log
//!   itself, so none waits for another. A client that does not take a
//!   frame within [`SEND_TIMEOUT`] is closed with a reason.

mod feed;

use super::error::ApiError;
use super::extract::{ApiPath, ApiQuery, Tenant};
use crate::Wms;
use axum::Extension;
use axum::Json;
use axum::extract::State;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::response::{IntoResponse, Response};
use depot_protocol::event::Event;
use depot_protocol::subscription::Subscription;
use depot_protocol::tenant::Caller;
use depot_protocol::{DataEnvelope, ErrorBody, FieldError};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// How long a ticket may wait to be used.
pub const TICKET_TTL: Duration = Duration::from_secs(60);
/// The most tickets waiting at once, so issuing cannot fill the database.
pub const MAX_TICKETS: u32 = 10_000;
/// A client that takes no frame for this long is dropped.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(10);
/// Events read from the log at once when a stream catches up.
const PAGE: u32 = 1000;
/// How often a stream checks that its key still holds, and pings.
const RECHECK: Duration = Duration::from_secs(5);

/// What the routes share: the feed.
#[derive(Default)]
pub struct Live {
    feed: Arc<feed::Feed>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Ticket {
    /// Pass as `?ticket=` to the stream, once, within `expires_in` seconds.
    pub ticket: String,
    pub expires_in: u64,
}

/// A ticket for one websocket connection, for clients that cannot send the
/// key as a header (browsers).
#[utoipa::path(post, path = "/v1/events/{business_id}/tickets", tag = "events",
    params(("business_id" = i32, Path, description = "The business")),
    responses((status = 200, body = DataEnvelope<Ticket>), (status = 401, body = ErrorBody),
        (status = 429, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn ticket(
    State(wms): State<Wms>,
    t: Tenant,
) -> Result<Json<DataEnvelope<Ticket>>, ApiError> {
    let ticket = wms
        .issue_ticket(t.0, TICKET_TTL, MAX_TICKETS)
        .await?
        .ok_or(ApiError::RateLimited { wait_secs: 60 })?;
    Ok(Json(DataEnvelope {
        data: Ticket {
            ticket,
            expires_in: TICKET_TTL.as_secs(),
        },
    }))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StreamQuery {
    /// A ticket from `POST .../tickets`, instead of the `X-API-KEY` header.
    ticket: Option<String>,
    /// Resume after this log position: the `next` of the last frame seen.
    /// Absent: only what happens from now on.
    #[param(minimum = 0)]
    after: Option<i64>,
    /// Comma-separated kinds or families: `order.status_changed,pick.*`.
    kinds: Option<String>,
    /// Only events of this warehouse (and those that name none).
    warehouse_id: Option<i64>,
    /// Only events of this station (and those that name none).
    station: Option<String>,
}

/// The business's events as they are written, over a websocket. Answers
/// 101 to an upgrade; 401, 422 (filters), or 426 without an upgrade.
#[utoipa::path(get, path = "/v1/events/{business_id}/stream", tag = "events",
    params(("business_id" = i32, Path, description = "The business"), StreamQuery),
    responses((status = 101, description = "Frames of {events, next}"), (status = 401, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 426, description = "Not a websocket upgrade", body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn stream(
    State(wms): State<Wms>,
    Extension(live): Extension<Arc<Live>>,
    ApiPath(business): ApiPath<i64>,
    ApiQuery(q): ApiQuery<StreamQuery>,
    by_key: Result<Tenant, ApiError>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let caller = match q.ticket.as_deref() {
        Some(ticket) => wms
            .redeem_ticket(ticket)
            .await?
            .filter(|c| c.business_id.0 == business)
            .ok_or_else(|| {
                ApiError::unauthorized(
                    "the ticket is unknown, used, expired or of another business",
                )
            })?,
        None => by_key?.0,
    };
    let mut errors = Vec::new();
    if q.after.is_some_and(|a| a < 0) {
        errors.push(FieldError::new("after", "must be 0 or more"));
    }
    let sub = Subscription::parse(q.kinds.as_deref(), q.warehouse_id, q.station.as_deref())
        .unwrap_or_else(|e| {
            errors.extend(e);
            Subscription::default()
        });
    if !errors.is_empty() {
        return Err(ApiError::invalid(errors));
    }
    let upgrade = upgrade.map_err(|e| {
        ApiError::UpgradeRequired(format!("this is a websocket: {}", e.body_text()))
    })?;
    let after = match q.after {
        Some(a) => a,
        None => wms.events_head().await?,
    };
    Ok(upgrade
        .on_upgrade(move |socket| {
            let stream = Stream {
                socket,
                wms,
                caller,
                sub,
                after,
            };
            stream.follow(live.feed.clone())
        })
        .into_response())
}

/// Why a stream ends, as its close frame says.
fn close(code: u16, reason: &'static str) -> Message {
    Message::Close(Some(CloseFrame {
        code,
        reason: reason.into(),
    }))
}

/// `{"events": [...], "next": through}` from events encoded once.
fn frame<'a>(events: impl Iterator<Item = &'a str>, through: i64) -> String {
    let mut out = String::from("{\"events\":[");
    for (i, e) in events.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(e);
    }
    out.push_str("],\"next\":");
    out.push_str(&through.to_string());
    out.push('}');
    out
}

/// Why a stream stopped sending.
enum End {
    /// The client went, or will get no more (its close frame is sent).
    Done,
    /// It took no frame in time.
    Slow,
}

struct Stream {
    socket: WebSocket,
    wms: Wms,
    caller: Caller,
    sub: Subscription,
    /// The log position sent through.
    after: i64,
}

impl Stream {
    async fn send(&mut self, msg: Message) -> Result<(), End> {
        match tokio::time::timeout(SEND_TIMEOUT, self.socket.send(msg)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(End::Done),
            Err(_) => Err(End::Slow),
        }
    }

    /// Sends what `events` holds for this stream, and moves to `through`.
    async fn forward<'a>(
        &mut self,
        events: impl Iterator<Item = (&'a Event, &'a str)>,
        through: i64,
    ) -> Result<(), End> {
        let (business, after, sub) = (self.caller.business_id, self.after, &self.sub);
        let mine: Vec<&str> = events
            .filter(|(e, _)| e.seq > after && e.business_id == Some(business) && sub.matches(e))
            .map(|(_, json)| json)
            .collect();
        if through <= self.after {
            return Ok(());
        }
        self.after = through;
        if mine.is_empty() {
            return Ok(());
        }
        let text = frame(mine.into_iter(), through);
        self.send(Message::Text(text.into())).await
    }

    /// Reads the log from `after` to its end, as the feed would have sent it.
    async fn catch_up(&mut self) -> Result<(), End> {
        loop {
            let page = match self
                .wms
                .business_events(self.caller.business_id, self.after, None, PAGE)
                .await
            {
                Ok(p) => p,
                Err(e) => {
                    tracing::error!(error = %e, "reading events for a stream");
                    let _ = self.send(close(close_code::ERROR, "server error")).await;
                    return Err(End::Done);
                }
            };
            let Some(through) = page.last().map(|e| e.seq) else {
                return Ok(());
            };
            let full = page.len() as u32 == PAGE;
            let encoded: Vec<feed::Encoded> =
                page.into_iter().filter_map(feed::Encoded::new).collect();
            self.forward(encoded.iter().map(|e| (&e.event, &*e.json)), through)
                .await?;
            if !full {
                return Ok(());
            }
        }
    }

    /// Sends the log from `after` on, then what comes, until the client
    /// goes, falls too far behind, or its key is revoked.
    async fn follow(mut self, feed: Arc<feed::Feed>) {
        // Subscribed before reading the log, so nothing committed between
        // the two is missed (what both carry is sent once: by position).
        let mut batches = feed.subscribe(&self.wms).await;
        let mut recheck = tokio::time::interval(RECHECK);
        recheck.tick().await;
        let mut behind = true;
        let end = loop {
            if behind {
                if let Err(end) = self.catch_up().await {
                    break end;
                }
                behind = false;
            }
            let step = tokio::select! {
                batch = batches.recv() => match batch {
                    Ok(b) => self.forward(b.events.iter().map(|e| (&e.event, &*e.json)), b.through).await,
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        behind = true;
                        Ok(())
                    }
                    // The reader stops early only when the database does.
                    Err(broadcast::error::RecvError::Closed) => {
                        let _ = self.send(close(close_code::AWAY, "the service is stopping")).await;
                        Err(End::Done)
                    }
                },
                incoming = self.socket.recv() => match incoming {
                    // Pings are answered by the library; anything else a
                    // client sends is ignored; a close or an error ends it.
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => Err(End::Done),
                    Some(Ok(_)) => Ok(()),
                },
                _ = recheck.tick() => {
                    if matches!(self.wms.key_active(self.caller.key_id).await, Ok(true)) {
                        self.send(Message::Ping(Vec::new().into())).await
                    } else {
                        let _ = self.send(close(close_code::POLICY, "the API key was revoked")).await;
                        Err(End::Done)
                    }
                }
            };
            if let Err(end) = step {
                break end;
            }
        };
        if let End::Slow = end {
            tracing::info!(
                business = self.caller.business_id.0,
                "dropping a slow stream"
            );
            // The close frame may not get through either: one short try.
            let _ = tokio::time::timeout(
                Duration::from_millis(100),
                self.socket
                    .send(close(close_code::POLICY, "too slow: resume with after")),
            )
            .await;
        }
    }
}

/// The routes, with the feed they share.
pub fn routes() -> OpenApiRouter<Wms> {
    OpenApiRouter::new()
        .routes(routes!(ticket))
        .routes(routes!(stream))
        .layer(Extension(Arc::new(Live::default())))
}
