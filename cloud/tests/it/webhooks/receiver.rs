//! A webhook receiver on `127.0.0.1:0`: verifies every request's signature
//! as docs/webhooks.md tells receivers to, and records what it took. It can
//! be down (connections dropped as they come, requests on connections
//! already open answered 503) or failing (500).

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::Value;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::net::{TcpListener, TcpStream};

/// A delivery the receiver took (answered 2xx).
#[derive(Debug, Clone)]
pub struct Got {
    pub delivery_id: String,
    pub attempt: u32,
    pub body: Value,
}

#[derive(Default)]
struct Shared {
    secret: Mutex<String>,
    down: AtomicBool,
    failing: AtomicBool,
    got: Mutex<Vec<Got>>,
    /// Requests whose signature or headers were wrong.
    forged: AtomicUsize,
    /// Requests refused while down or failing.
    refused: AtomicUsize,
}

pub struct Receiver {
    pub url: String,
    shared: Arc<Shared>,
}

/// Drops connections while the receiver is down, as a stopped server's
/// port would refuse them.
struct Gate {
    inner: TcpListener,
    shared: Arc<Shared>,
}

impl axum::serve::Listener for Gate {
    type Io = TcpStream;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            if let Ok((io, addr)) = self.inner.accept().await {
                if self.shared.down.load(Ordering::SeqCst) {
                    drop(io);
                    continue;
                }
                return (io, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

async fn take(
    State(s): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, &'static str) {
    if s.down.load(Ordering::SeqCst) {
        s.refused.fetch_add(1, Ordering::SeqCst);
        return (StatusCode::SERVICE_UNAVAILABLE, "down for maintenance");
    }
    let secret = s.secret.lock().expect("lock").clone();
    let signed = header(&headers, "depot-signature").is_some_and(|sig| {
        depot_wms::http::tracking::verify(&secret, sig, &body, chrono::Utc::now().timestamp())
            .is_ok()
            && header(&headers, "depot-webhook-timestamp")
                .is_some_and(|t| sig.starts_with(&format!("t={t},")))
    });
    let id = header(&headers, "depot-webhook-id").map(str::to_owned);
    let attempt = header(&headers, "depot-webhook-attempt").and_then(|a| a.parse().ok());
    let json = serde_json::from_slice::<Value>(&body).ok();
    let (true, Some(delivery_id), Some(attempt), Some(body)) = (signed, id, attempt, json) else {
        s.forged.fetch_add(1, Ordering::SeqCst);
        return (StatusCode::BAD_REQUEST, "bad signature");
    };
    if s.failing.load(Ordering::SeqCst) {
        s.refused.fetch_add(1, Ordering::SeqCst);
        return (StatusCode::INTERNAL_SERVER_ERROR, "cannot take it now");
    }
    s.got.lock().expect("lock").push(Got {
        delivery_id,
        attempt,
        body,
    });
    (StatusCode::OK, "thanks")
}

impl Receiver {
    pub async fn start() -> Self {
        let shared = Arc::new(Shared::default());
        let inner = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/hook", inner.local_addr().expect("addr"));
        let app = Router::new()
            .route("/hook", post(take))
            .with_state(shared.clone());
        let gate = Gate {
            inner,
            shared: shared.clone(),
        };
        tokio::spawn(async move {
            let _ = axum::serve(gate, app).await;
        });
        Self { url, shared }
    }

    pub fn secret(&self) -> String {
        self.shared.secret.lock().expect("lock").clone()
    }

    pub fn set_secret(&self, secret: &str) {
        *self.shared.secret.lock().expect("lock") = secret.to_owned();
    }

    pub fn set_down(&self, down: bool) {
        self.shared.down.store(down, Ordering::SeqCst);
    }

    pub fn set_failing(&self, failing: bool) {
        self.shared.failing.store(failing, Ordering::SeqCst);
    }

    pub fn got(&self) -> Vec<Got> {
        self.shared.got.lock().expect("lock").clone()
    }

    pub fn forged(&self) -> usize {
        self.shared.forged.load(Ordering::SeqCst)
    }

    pub fn refused(&self) -> usize {
        self.shared.refused.load(Ordering::SeqCst)
    }
}
