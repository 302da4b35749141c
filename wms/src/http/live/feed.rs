//! One reader of the event log for all the live streams of a database: each
//! commit's new events are read once, encoded once, and handed to every
//! stream as a shared batch. Streams only filter and forward, so two
//! hundred screens cost about what one does, and a stream that falls
//! behind the channel reads the log itself until it has caught up.
//!
//! The reader runs while there are streams; the first stream starts it and
//! it stops when it finds none left.

use crate::Wms;
use depot_protocol::event::Event;
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

/// Batches a stream may be behind before it reads the log itself.
const CAPACITY: usize = 256;
/// Events the reader takes from the log at once.
const PAGE: u32 = 1000;

/// An event and its JSON, encoded once for every stream.
pub struct Encoded {
    pub event: Event,
    pub json: Box<str>,
}

impl Encoded {
    pub fn new(event: Event) -> Option<Self> {
        match serde_json::to_string(&event) {
            Ok(json) => Some(Self {
                event,
                json: json.into_boxed_str(),
            }),
            Err(e) => {
                tracing::error!(error = %e, seq = event.seq, "encoding an event for streams");
                None
            }
        }
    }
}

/// What one read of the log found: events of every business (key events
/// left out), and the log position it read through.
pub struct Batch {
    pub events: Vec<Encoded>,
    pub through: i64,
}

/// Whether streams may see an event: key events carry key hashes.
pub fn public(e: &Event) -> bool {
    !e.kind.starts_with("key.")
}

#[derive(Default)]
pub struct Feed {
    sender: Mutex<Option<broadcast::Sender<Arc<Batch>>>>,
}

impl Feed {
    /// A receiver of every batch read from now on, starting the reader if
    /// none runs.
    ///
    /// A new reader starts at the head of the log as it is *before* this
    /// returns, so before the stream reads its past: what commits later is
    /// the reader's to send. Read inside the spawned task instead, the head
    /// could pass an event committed after the stream had read its past,
    /// and neither would send it.
    pub async fn subscribe(self: &Arc<Self>, wms: &Wms) -> broadcast::Receiver<Arc<Batch>> {
        if let Some(tx) = self
            .sender
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            return tx.subscribe();
        }
        let head = wms.events_head().await;
        let mut sender = self.sender.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(tx) = sender.as_ref() {
            return tx.subscribe();
        }
        let (tx, rx) = broadcast::channel(CAPACITY);
        *sender = Some(tx.clone());
        tokio::spawn(read(self.clone(), wms.clone(), tx, head));
        rx
    }

    /// Forgets the reader if no stream listens: true when it should stop.
    /// Under the lock, so a stream subscribing meanwhile keeps it.
    fn unused(&self, tx: &broadcast::Sender<Arc<Batch>>) -> bool {
        let mut sender = self.sender.lock().unwrap_or_else(|p| p.into_inner());
        if tx.receiver_count() > 0 {
            return false;
        }
        *sender = None;
        true
    }

    fn stop(&self) {
        *self.sender.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

async fn read(
    feed: Arc<Feed>,
    wms: Wms,
    tx: broadcast::Sender<Arc<Batch>>,
    head: crate::Result<i64>,
) {
    let mut commits = wms.events_changed();
    commits.borrow_and_update();
    // Streams read what came before they subscribed from the log: the
    // reader starts at the head as it was then (and reads at once what
    // committed since).
    let mut after = match head {
        Ok(head) => head,
        Err(e) => {
            tracing::error!(error = %e, "the live feed cannot read the log");
            feed.stop();
            return;
        }
    };
    loop {
        loop {
            let page = match wms.events_since(after, PAGE).await {
                Ok(p) => p,
                Err(e) => {
                    tracing::error!(error = %e, "the live feed cannot read the log");
                    feed.stop();
                    return;
                }
            };
            let Some(last) = page.last() else { break };
            after = last.seq;
            let full = page.len() as u32 == PAGE;
            let events = page
                .into_iter()
                .filter(public)
                .filter_map(Encoded::new)
                .collect();
            // Sending fails only without receivers, which `unused` sees.
            let _ = tx.send(Arc::new(Batch {
                events,
                through: after,
            }));
            if !full {
                break;
            }
        }
        if feed.unused(&tx) {
            return;
        }
        if commits.changed().await.is_err() {
            feed.stop();
            return;
        }
    }
}
