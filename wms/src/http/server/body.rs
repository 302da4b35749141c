//! A request body with a deadline for the whole of it, counted from the
//! moment its headers are in. A per-chunk timeout would let a caller send
//! a byte just before each one runs out and hold the connection for ever.

use axum::body::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Sleep;

/// The body did not arrive in time.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {0:?}")]
pub struct BodyTimedOut(pub Duration);

/// `B`, failing with [`BodyTimedOut`] once `within` has passed, and saying
/// so through `timed_out` (the handler may answer anything on that error;
/// the server answers 408 instead).
pub struct Deadline<B> {
    inner: B,
    deadline: Pin<Box<Sleep>>,
    within: Duration,
    timed_out: Arc<AtomicBool>,
}

impl<B> Deadline<B> {
    pub fn new(inner: B, within: Duration, timed_out: Arc<AtomicBool>) -> Self {
        Self {
            inner,
            deadline: Box::pin(tokio::time::sleep(within)),
            within,
            timed_out,
        }
    }
}

impl<B> Body for Deadline<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<axum::BoxError>,
{
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        if this.deadline.as_mut().poll(cx).is_ready() {
            this.timed_out.store(true, Ordering::Relaxed);
            return Poll::Ready(Some(Err(BodyTimedOut(this.within).into())));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// An answer's body that holds `T` until it is dropped (sent, or given
/// up), with its length still known to hyper.
pub struct Until<T> {
    inner: axum::body::Body,
    _held: T,
}

impl<T> Until<T> {
    pub fn new(inner: axum::body::Body, held: T) -> Self {
        Self { inner, _held: held }
    }
}

impl<T: Unpin> Body for Until<T> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    /// A caller that sends the start of a body, then nothing.
    struct Stalls {
        sent: bool,
    }

    impl Body for Stalls {
        type Data = Bytes;
        type Error = std::io::Error;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
            if self.sent {
                return Poll::Pending;
            }
            self.sent = true;
            Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"{\"a\"")))))
        }
    }

    #[tokio::test]
    async fn a_body_that_stalls_fails_at_its_deadline() {
        let flag = Arc::new(AtomicBool::new(false));
        let within = Duration::from_millis(200);
        let started = tokio::time::Instant::now();
        let mut body = Deadline::new(Stalls { sent: false }, within, flag.clone());
        let first = body.frame().await.expect("a frame").expect("data");
        assert_eq!(first.into_data().ok(), Some(Bytes::from_static(b"{\"a\"")));
        assert!(!flag.load(Ordering::Relaxed));
        let e = body.frame().await.expect("an end").expect_err("timed out");
        assert!(e.is::<BodyTimedOut>(), "{e}");
        assert!(started.elapsed() >= within, "{:?}", started.elapsed());
        assert!(flag.load(Ordering::Relaxed));
    }
}
