//! The log of a process that runs the embedded broker: to stderr, filtered
//! by the configured directives, without rumqttd's false alarm.
//!
//! rumqttd 0.20 handles a client's DISCONNECT and then the close of its
//! connection as two disconnections, and logs the second at ERROR as
//! "no-connection id … is already gone". The cloud's own sync client
//! disconnects so at every stop, as may any client that leaves cleanly, so
//! every stop of a cloud ended on an error in its log, which teaches
//! people to overlook errors. That one event is dropped; rumqttd's other
//! errors are kept.

use std::fmt;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

/// Logs to stderr with `filter`, for the life of the process.
pub fn init(filter: EnvFilter) {
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .finish()
        .with(QuietDoubleDisconnect)
        .init();
}

/// Drops rumqttd's "already gone" error, and nothing else.
pub struct QuietDoubleDisconnect;

impl<S: Subscriber> Layer<S> for QuietDoubleDisconnect {
    fn event_enabled(&self, event: &Event<'_>, _: Context<'_, S>) -> bool {
        let meta = event.metadata();
        if *meta.level() != Level::ERROR || !meta.target().starts_with("rumqttd::router") {
            return true;
        }
        let mut message = Message(None);
        event.record(&mut message);
        !message
            .0
            .is_some_and(|m| m.starts_with("no-connection id ") && m.ends_with(" is already gone"))
    }
}

struct Message(Option<String>);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            self.0 = Some(format!("{value:?}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| std::io::Error::other("poisoned"))?
                .extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn drops_only_the_double_disconnect() {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish()
            .with(QuietDoubleDisconnect);
        tracing::subscriber::with_default(subscriber, || {
            tracing::error!(target: "rumqttd::router::routing", "no-connection id {} is already gone", 7);
            tracing::error!(target: "rumqttd::router::routing", "no-connection id {} is already gone, and more", 7);
            tracing::error!(target: "rumqttd::server::broker", error = "reset", "disconnected");
            tracing::warn!(target: "rumqttd::router::routing", "no-connection id {} is already gone", 8);
            tracing::error!(target: "depot_cloud::sync", "no-connection id {} is already gone", 9);
        });
        let text = String::from_utf8(captured.0.lock().expect("lock").clone()).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(!text.contains("id 7 is already gone\n"), "{text}");
        assert!(text.contains("already gone, and more"), "{text}");
        assert!(text.contains("disconnected"), "{text}");
        assert!(text.contains("id 8 is already gone"), "{text}");
        assert!(text.contains("id 9 is already gone"), "{text}");
    }
}
