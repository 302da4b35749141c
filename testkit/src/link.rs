//! A TCP link that can be cut and restored: a proxy on a free port in
//! front of a broker or a server, so that a test takes a connection away
//! (and gives it back) without stopping either end.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

/// A TCP proxy that can be cut and restored.
pub struct Link {
    /// Where to connect instead of the target.
    pub addr: SocketAddr,
    up: Arc<AtomicBool>,
    pipes: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Link {
    /// A link to `target`, up.
    pub async fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("addr");
        let up = Arc::new(AtomicBool::new(true));
        let pipes: Arc<Mutex<Vec<AbortHandle>>> = Arc::default();
        let (up2, pipes2) = (up.clone(), pipes.clone());
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if !up2.load(Ordering::SeqCst) {
                    continue; // dropped: the connection is refused
                }
                let pipe = tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                if let Ok(mut p) = pipes2.lock() {
                    p.push(pipe.abort_handle());
                }
            }
        });
        Self { addr, up, pipes }
    }

    /// Drops every connection through it and refuses new ones.
    pub fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        if let Ok(mut p) = self.pipes.lock() {
            for pipe in p.drain(..) {
                pipe.abort();
            }
        }
    }

    /// Lets connections through again.
    pub fn restore(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}
