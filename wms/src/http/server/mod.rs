//! The HTTP server both daemons run their application on: HTTP/1.1 through
//! hyper, in place of `axum::serve`, which has no header-read, body-read or
//! idle timeout and no bound on connections, so that stalled sockets could
//! hold every file the process may open and lock the stations out.
//!
//! - A caller has `header_read_timeout` to send its headers,
//!   `body_read_timeout` for the whole body (then 408), and a kept-alive
//!   connection `idle_timeout` between requests ([`watch`]).
//! - At most `max_connections` are served, fewer when the file limit is
//!   lower. When every place is taken, the newcomer takes the place of the
//!   connection that has waited longest without a request in progress, so
//!   idle and slow sockets never keep a station out; only when every
//!   connection has a request in progress is the newcomer answered 503 and
//!   closed. Those waiting for a place or being refused are bounded too
//!   ([`SPARE`]); beyond them, callers wait in the kernel's accept queue.
//! - Every request carries the caller's address as
//!   `ConnectInfo<SocketAddr>` (for limits keyed by client address).
//! - On shutdown, no connection is accepted, idle ones close and those with
//!   a request in progress finish it.
//!
//! See `docs/server-limits.md`.

mod body;
mod settings;
mod watch;

pub use body::BodyTimedOut;
pub use settings::HttpSettings;
pub use watch::Shed;

use crate::http::error::ApiError;
use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{HeaderValue, Request, Response, StatusCode, header};
use axum::response::IntoResponse;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower::ServiceExt;
use watch::{Tracked, Watch};

/// Files kept out of the connections' share of the file limit: the
/// database and its journal, devices, the broker link, logs, and the
/// [`SPARE`] sockets.
pub const RESERVED_FILES: u64 = 128;

/// Accepted sockets that may wait for a place, or be answered 503, at
/// once; beyond them no more are accepted until one is done.
pub const SPARE: usize = 32;

/// How long a newcomer waits for the place of the connection it evicted.
const PLACE_WITHIN: Duration = Duration::from_secs(1);

/// How long a refused caller has to send its headers before it is told.
const REFUSAL_WITHIN: Duration = Duration::from_secs(2);

/// After an error accepting (the file limit reached, say), how long to
/// wait before trying again rather than spinning.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

/// The connections served at most: the setting, within the file limit.
pub fn places(settings: &HttpSettings) -> usize {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
    within_file_limit(settings.max_connections, limit)
}

fn within_file_limit(wanted: usize, file_limit: Option<u64>) -> usize {
    let Some(limit) = file_limit else {
        return wanted;
    };
    let room = usize::try_from(limit.saturating_sub(RESERVED_FILES)).unwrap_or(usize::MAX);
    wanted.min(room).max(1)
}

/// The connections open now, by id, for eviction.
#[derive(Default)]
struct Open(Mutex<HashMap<u64, Arc<Watch>>>);

impl Open {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Watch>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Asks the connection that has waited longest without a request in
    /// progress to close. False when every one has a request in progress.
    fn evict_one(&self) -> bool {
        let open = self.lock();
        let oldest = open
            .values()
            .filter_map(|w| w.waiting_since().map(|since| (since, w)))
            .min_by_key(|(since, _)| *since);
        oldest.is_some_and(|(_, w)| w.evict())
    }
}

/// A connection's place: given back, and the connection forgotten, when
/// its socket closes (after an upgrade too).
struct Place {
    _permit: OwnedSemaphorePermit,
    id: u64,
    open: Arc<Open>,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.open.lock().remove(&self.id);
    }
}

struct Server {
    router: Router,
    settings: HttpSettings,
    places: Arc<Semaphore>,
    spare: Arc<Semaphore>,
    open: Arc<Open>,
    next_id: AtomicU64,
}

/// Serves `router` on `listener` until `shutdown` resolves, then lets the
/// requests in progress finish.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    settings: HttpSettings,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let places = places(&settings);
    if places < settings.max_connections {
        tracing::warn!(
            places,
            max_connections = settings.max_connections,
            "the file limit allows fewer connections than http.max_connections: raise it (LimitNOFILE)"
        );
    }
    let server = Arc::new(Server {
        router,
        settings,
        places: Arc::new(Semaphore::new(places)),
        spare: Arc::new(Semaphore::new(SPARE)),
        open: Arc::default(),
        next_id: AtomicU64::new(0),
    });
    // Every connection holds a receiver: `closed()` resolves once all of
    // them are done.
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        // Room for whatever comes next before it is accepted: while the
        // spare places are all taken (a flood of newcomers), callers wait
        // in the kernel's queue, where they hold none of our files, rather
        // than being accepted and dropped.
        let spare = tokio::select! {
            spare = server.spare.clone().acquire_owned() => match spare {
                Ok(spare) => spare,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) if is_the_callers(&e) => continue,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot accept a connection");
                    tokio::time::sleep(ACCEPT_RETRY).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let stopping = stopping.clone();
        if let Ok(place) = server.places.clone().try_acquire_owned() {
            drop(spare);
            tokio::spawn(connection(server.clone(), stream, peer, place, stopping));
        } else {
            tokio::spawn(newcomer(server.clone(), stream, peer, spare, stopping));
        }
    }
    drop(listener);
    drop(stopping);
    let _ = stop.send(true);
    stop.closed().await;
    Ok(())
}

/// Errors of one caller's connection, not of the listener.
fn is_the_callers(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(
        e.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    )
}

/// A caller that came when every place was taken: it takes the place of
/// the longest-waiting idle connection, or is refused.
async fn newcomer(
    server: Arc<Server>,
    stream: TcpStream,
    peer: SocketAddr,
    spare: OwnedSemaphorePermit,
    stopping: tokio::sync::watch::Receiver<bool>,
) {
    if server.open.evict_one() {
        let place = tokio::time::timeout(PLACE_WITHIN, server.places.clone().acquire_owned()).await;
        if let Ok(Ok(place)) = place {
            drop(spare);
            return connection(server, stream, peer, place, stopping).await;
        }
    }
    tracing::info!(%peer, "connection refused: every place has a request in progress");
    refuse(stream).await;
    drop(spare);
}

/// Answers the caller's first request 503 with the error body, then
/// closes. Reading the request first lets the caller read the answer
/// (closing on unread bytes would reset the connection).
async fn refuse(stream: TcpStream) {
    let svc = hyper::service::service_fn(|_: Request<Incoming>| async {
        let mut r = ApiError::Busy(
            "the server is serving as many connections as it may, each with a request in progress: try again in a moment".into(),
        )
        .into_response();
        r.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        Ok::<_, Infallible>(r)
    });
    let conn = hyper::server::conn::http1::Builder::new()
        .keep_alive(false)
        .header_read_timeout(None)
        .serve_connection(TokioIo::new(stream), svc);
    let _ = tokio::time::timeout(REFUSAL_WITHIN, conn).await;
}

/// Serves one connection until it closes, its caller is too slow or idle
/// too long, it is evicted, or the server stops.
async fn connection(
    server: Arc<Server>,
    stream: TcpStream,
    peer: SocketAddr,
    place: OwnedSemaphorePermit,
    mut stopping: tokio::sync::watch::Receiver<bool>,
) {
    let watch = Watch::new();
    let id = server.next_id.fetch_add(1, Ordering::Relaxed);
    server.open.lock().insert(id, watch.clone());
    let place = Place {
        _permit: place,
        id,
        open: server.open.clone(),
    };
    let io = TokioIo::new(Tracked::new(stream, watch.clone(), place));
    let svc = {
        let router = server.router.clone();
        let watch = watch.clone();
        let within = server.settings.body_read_timeout();
        hyper::service::service_fn(move |req: Request<Incoming>| {
            handle(router.clone(), watch.clone(), peer, within, req)
        })
    };
    let conn = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        .header_read_timeout(None)
        .serve_connection(io, svc)
        .with_upgrades();
    let mut conn = std::pin::pin!(conn);
    let (header, idle) = (
        server.settings.header_read_timeout(),
        server.settings.idle_timeout(),
    );
    let expired = watch.expired(header, idle);
    let mut expired = std::pin::pin!(expired);
    let mut stopped = false;
    loop {
        tokio::select! {
            served = conn.as_mut() => {
                if let Err(e) = served {
                    tracing::debug!(%peer, error = %e, "connection ended");
                }
                return;
            }
            shed = expired.as_mut() => {
                tracing::debug!(%peer, ?shed, "connection closed by the server");
                return;
            }
            changed = stopping.changed(), if !stopped => {
                stopped = true;
                if changed.is_ok() {
                    conn.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

/// One request: the caller's address on it, a deadline on its body, its
/// connection busy until the answer has been sent.
async fn handle(
    router: Router,
    watch: Arc<Watch>,
    peer: SocketAddr,
    within: Duration,
    req: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    watch.request_started();
    let done = Done(watch.clone());
    let timed_out = Arc::new(AtomicBool::new(false));
    let mut req = req.map(|b| Body::new(body::Deadline::new(b, within, timed_out.clone())));
    req.extensions_mut().insert(ConnectInfo(peer));
    let response = match router.oneshot(req).await {
        Ok(r) => r,
        Err(never) => match never {},
    };
    let response = if timed_out.load(Ordering::Relaxed) {
        tracing::info!(%peer, status = 408, "answered: the request body did not arrive in time");
        let mut r = ApiError::RequestTimeout(format!(
            "the request body did not arrive within {} seconds",
            within.as_secs()
        ))
        .into_response();
        r.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        r
    } else {
        response
    };
    if response.status() == StatusCode::SWITCHING_PROTOCOLS {
        // Upgraded (a websocket): no longer HTTP, never idle, the socket
        // keeps its place until it closes.
        watch.upgraded();
        return Ok(response);
    }
    // Done when hyper drops the body: sent, or given up.
    Ok(response.map(|b| Body::new(body::Until::new(b, done))))
}

/// Marks the request done when dropped.
pub(crate) struct Done(Arc<Watch>);

impl Drop for Done {
    fn drop(&mut self) {
        self.0.request_done();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_limit_caps_the_places() {
        assert_eq!(within_file_limit(1024, None), 1024);
        assert_eq!(within_file_limit(1024, Some(65_536)), 1024);
        assert_eq!(within_file_limit(1024, Some(1024)), 1024 - 128);
        assert_eq!(within_file_limit(1024, Some(100)), 1);
    }
}
