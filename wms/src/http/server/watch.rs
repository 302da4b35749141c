//! What one connection is doing, and since when: the clock its timeouts
//! run on. A connection is
//!
//! - `Head` from its opening, or from the first byte of a next request,
//!   until the request's headers are in (the header-read timeout);
//! - `Busy` while a request is handled and its answer sent (no connection
//!   timeout: the body has its own, and a long poll may wait);
//! - `Idle` after an answer, until the next request's first byte (the
//!   keep-alive idle timeout).
//!
//! hyper's own header-read timeout is not used: it runs from the moment
//! hyper waits for a head, idle or not, so a kept-alive connection would be
//! closed after the header timeout and never live to its idle one.

use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Head,
    Busy,
    Idle,
}

/// Why a connection was closed by the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shed {
    /// Its headers did not arrive in time.
    Header,
    /// It waited too long for its next request.
    Idle,
    /// A new caller took its place while every place was taken.
    Evicted,
}

#[derive(Debug)]
struct State {
    phase: Phase,
    since: Instant,
    /// Requests handled now (one, on HTTP/1.1; an upgraded connection
    /// stays busy for good).
    busy: u32,
    evicted: bool,
    /// No longer HTTP (a websocket): busy until it closes.
    upgraded: bool,
}

/// One connection's phase, shared by its socket, its service and its
/// watchdog.
#[derive(Debug)]
pub struct Watch {
    state: Mutex<State>,
    changed: Notify,
}

impl Watch {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State {
                phase: Phase::Head,
                since: Instant::now(),
                busy: 0,
                evicted: false,
                upgraded: false,
            }),
            changed: Notify::new(),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // The state is a few plain fields, valid after any panic.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Bytes arrived: an idle connection starts a request.
    fn read_some(&self) {
        let mut s = self.state();
        if s.phase == Phase::Idle {
            s.phase = Phase::Head;
            s.since = Instant::now();
            drop(s);
            self.changed.notify_one();
        }
    }

    /// A request's headers are in and it is being handled.
    pub fn request_started(&self) {
        let mut s = self.state();
        s.busy = s.busy.saturating_add(1);
        s.phase = Phase::Busy;
        drop(s);
        self.changed.notify_one();
    }

    /// The connection was upgraded: it stays busy for good.
    pub fn upgraded(&self) {
        self.state().upgraded = true;
    }

    /// A request's answer was sent (or given up).
    pub fn request_done(&self) {
        let mut s = self.state();
        if s.upgraded {
            return;
        }
        s.busy = s.busy.saturating_sub(1);
        if s.busy == 0 {
            s.phase = Phase::Idle;
            s.since = Instant::now();
        }
        drop(s);
        self.changed.notify_one();
    }

    /// Since when the connection has waited without a request in
    /// progress, if it has.
    pub fn waiting_since(&self) -> Option<Instant> {
        let s = self.state();
        (s.phase != Phase::Busy && !s.evicted).then_some(s.since)
    }

    /// Asks the connection to close for a newcomer, unless a request is in
    /// progress there now. True when it will close.
    pub fn evict(&self) -> bool {
        let mut s = self.state();
        if s.phase == Phase::Busy || s.evicted {
            return false;
        }
        s.evicted = true;
        drop(s);
        self.changed.notify_one();
        true
    }

    /// Resolves when the connection must be closed, and why.
    pub async fn expired(&self, header: std::time::Duration, idle: std::time::Duration) -> Shed {
        loop {
            let deadline = {
                let s = self.state();
                if s.evicted {
                    return Shed::Evicted;
                }
                match s.phase {
                    Phase::Head => Some((s.since + header, Shed::Header)),
                    Phase::Idle => Some((s.since + idle, Shed::Idle)),
                    Phase::Busy => None,
                }
            };
            match deadline {
                Some((at, why)) if at <= Instant::now() => return why,
                Some((at, _)) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(at) => {}
                        () = self.changed.notified() => {}
                    }
                }
                None => self.changed.notified().await,
            }
        }
    }
}

/// A socket that tells its connection's [`Watch`] when bytes arrive, and
/// holds `held` (its place among the connections served) until it closes,
/// upgraded or not.
pub struct Tracked<T, H> {
    io: T,
    watch: Arc<Watch>,
    _held: H,
}

impl<T, H> Tracked<T, H> {
    pub fn new(io: T, watch: Arc<Watch>, held: H) -> Self {
        Self {
            io,
            watch,
            _held: held,
        }
    }
}

impl<T: AsyncRead + Unpin, H: Unpin> AsyncRead for Tracked<T, H> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.io).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.watch.read_some();
        }
        polled
    }
}

impl<T: AsyncWrite + Unpin, H: Unpin> AsyncWrite for Tracked<T, H> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const HEADER: Duration = Duration::from_millis(100);
    const IDLE: Duration = Duration::from_millis(300);

    /// Waits for the watch to expire: why, and after how long.
    async fn expiry(w: &Watch) -> (Shed, Duration) {
        let started = Instant::now();
        let why = w.expired(HEADER, IDLE).await;
        (why, started.elapsed())
    }

    #[tokio::test]
    async fn each_phase_has_its_timeout() {
        let (why, took) = expiry(&Watch::new()).await;
        assert_eq!(why, Shed::Header);
        assert!(took >= HEADER && took < IDLE, "{took:?}");

        let w = Watch::new();
        w.request_started();
        let busy = tokio::time::timeout(IDLE * 2, w.expired(HEADER, IDLE)).await;
        assert!(busy.is_err(), "a busy connection has no timeout");
        assert!(!w.evict(), "nor is it evicted");
        w.request_done();
        let (why, took) = expiry(&w).await;
        assert_eq!(why, Shed::Idle);
        assert!(took >= IDLE - Duration::from_millis(5), "{took:?}");

        // A next request's first byte starts its header timeout.
        let w = Watch::new();
        w.request_started();
        w.request_done();
        tokio::time::sleep(IDLE / 2).await;
        w.read_some();
        let (why, took) = expiry(&w).await;
        assert_eq!(why, Shed::Header);
        assert!(took >= HEADER - Duration::from_millis(5), "{took:?}");

        let w = Watch::new();
        assert!(w.waiting_since().is_some());
        assert!(w.evict());
        assert_eq!(w.waiting_since(), None, "evicted once");
        assert!(!w.evict());
        assert_eq!(expiry(&w).await.0, Shed::Evicted);

        let w = Watch::new();
        w.request_started();
        w.upgraded();
        w.request_done();
        assert_eq!(w.waiting_since(), None, "an upgraded connection stays busy");
    }
}
