//! Test plumbing: a link that can be cut, waiting for sync, event counts.
#![allow(dead_code)]

use depot_wms::Wms;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

/// A TCP proxy that can be cut and restored.
pub struct Link {
    pub addr: SocketAddr,
    up: Arc<AtomicBool>,
    pipes: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Link {
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

    pub fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        if let Ok(mut p) = self.pipes.lock() {
            for pipe in p.drain(..) {
                pipe.abort();
            }
        }
    }

    pub fn restore(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub async fn event_ids(wms: &Wms) -> HashMap<String, usize> {
    let mut ids = HashMap::new();
    for e in wms.events_since(0, u32::MAX).await.expect("events") {
        *ids.entry(e.id.to_string()).or_insert(0) += 1;
    }
    ids
}
