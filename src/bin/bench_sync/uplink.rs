//! The edges' way to the broker, as a warehouse's internet: while it is
//! down it takes the edges' connections and holds them, carrying nothing;
//! once it is up it carries each to the broker. So every edge, started
//! and connected before, reaches the broker at one moment, as when a
//! site's link comes back after an outage, and the edges' own start-up
//! (their daemons, their databases) is not part of what is timed.
//!
//! Over TLS it cannot stand in for the broker (the broker's name is
//! checked): the edges then go to the broker, and start with the timing.

use depot_edge::settings::Settings as EdgeSettings;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::copy_bidirectional_with_sizes;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::{Duration, Instant};

/// Bytes each direction reads at once: a batch of an edge is a few
/// hundred KB, and a larger buffer costs the bench fewer system calls.
const BUFFER: usize = 64 * 1024;

pub struct Uplink {
    addr: SocketAddr,
    up: watch::Sender<bool>,
    held: Arc<AtomicUsize>,
    accepting: JoinHandle<()>,
}

impl Uplink {
    /// An uplink to `broker` (host, port), down until [`Uplink::up`].
    pub async fn down(broker: (String, u16)) -> std::io::Result<Uplink> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (up, is_up) = watch::channel(false);
        let held = Arc::new(AtomicUsize::new(0));
        let counted = held.clone();
        let accepting = tokio::spawn(async move {
            while let Ok((edge, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::Relaxed);
                let (mut is_up, broker) = (is_up.clone(), broker.clone());
                tokio::spawn(async move {
                    if is_up.wait_for(|up| *up).await.is_err() {
                        return;
                    }
                    let _ = carry(edge, &broker).await;
                });
            }
        });
        Ok(Uplink {
            addr,
            up,
            held,
            accepting,
        })
    }

    /// An uplink, down, to the broker of edges with `settings`; `None`
    /// over TLS.
    pub async fn for_edges(settings: &EdgeSettings) -> std::io::Result<Option<Uplink>> {
        match settings.broker.connection() {
            Ok((url, _)) if !url.tls => Ok(Some(Uplink::down((url.host, url.port)).await?)),
            _ => Ok(None),
        }
    }

    /// `settings` with this uplink in the broker's place.
    pub fn route(&self, settings: &EdgeSettings) -> EdgeSettings {
        let mut routed = settings.clone();
        if let Ok((url, _)) = settings.broker.connection() {
            routed.broker.url = depot_mqtt::MqttUrl {
                host: self.addr.ip().to_string(),
                port: self.addr.port(),
                ..url
            }
            .to_string();
        }
        routed
    }

    /// Waits until `edges` connections are held, 4 s at most: well within
    /// an edge's wait for the broker's answer (5 s), after which it would
    /// connect again.
    pub async fn wait_for(&self, edges: usize) {
        let until = Instant::now() + Duration::from_secs(4);
        while self.held() < edges && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Connections taken so far.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    /// The link comes back: what is held, and what comes from now on,
    /// goes through.
    pub fn up(&self) {
        let _ = self.up.send(true);
    }
}

impl Drop for Uplink {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

/// One edge's connection to the broker, both ways, until either ends.
/// Without delay: MQTT's acknowledgements are small, and Nagle's algorithm
/// would hold each back for the one before it.
async fn carry(mut edge: TcpStream, broker: &(String, u16)) -> std::io::Result<()> {
    let mut to = TcpStream::connect((broker.0.as_str(), broker.1)).await?;
    edge.set_nodelay(true)?;
    to.set_nodelay(true)?;
    copy_bidirectional_with_sizes(&mut edge, &mut to, BUFFER, BUFFER).await?;
    Ok(())
}
