//! The log of a process that runs the embedded broker: to stderr, filtered
//! by the configured directives, without rumqttd's false alarm.
//!
//! rumqttd 0.20 logs a client that leaves cleanly (DISCONNECT, then the
//! close) at ERROR, in one of two ways depending on which of its tasks sees
//! the end first: the router, as "no-connection id … is already gone", or
//! the connection's task, as "router-drop" with `Recv(Disconnected)`. The
//! cloud's own sync client leaves so at every stop, as does the edge's
//! doctor after its check, so every stop of a cloud ended on an error in
//! its log, which teaches people to overlook errors. Those two events are
//! dropped, and so is a third: "disconnected" with a connection reset by
//! the peer, which a client that closes its socket the moment it has sent
//! DISCONNECT can cause, as can a box whose power or network went. rumqttd
//! itself logs a peer's abort at INFO; a reset is the same news, and the
//! cloud's own view of each edge (online, offline, last seen) tells it
//! better. rumqttd's other errors are kept. A router that really died
//! still shows: its thread's panic is printed, and the cloud's own link to
//! the broker goes down (`/metrics`, the systemd status line).

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

/// Drops rumqttd's errors for a client that left, and nothing else.
pub struct QuietDoubleDisconnect;

impl<S: Subscriber> Layer<S> for QuietDoubleDisconnect {
    fn event_enabled(&self, event: &Event<'_>, _: Context<'_, S>) -> bool {
        let meta = event.metadata();
        let target = meta.target();
        if *meta.level() != Level::ERROR || !target.starts_with("rumqttd::") {
            return true;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        let message = fields.message.as_deref().unwrap_or_default();
        let already_gone = target.starts_with("rumqttd::router")
            && message.starts_with("no-connection id ")
            && message.ends_with(" is already gone");
        let router_drop = target.starts_with("rumqttd::server")
            && message == "router-drop"
            && fields.error.as_deref() == Some("Recv(Disconnected)");
        let reset = target.starts_with("rumqttd::server")
            && message == "disconnected"
            && fields
                .error
                .as_deref()
                .is_some_and(|e| e.contains("ConnectionReset"));
        !(already_gone || router_drop || reset)
    }
}

#[derive(Default)]
struct Fields {
    message: Option<String>,
    error: Option<String>,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        match field.name() {
            "message" => self.message = Some(format!("{value:?}")),
            "error" => self.error = Some(format!("{value:?}")),
            _ => {}
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
            // rumqttd logs its link's error with `error = ?e`.
            let gone = format_args!("Recv(Disconnected)");
            tracing::error!(target: "rumqttd::server::broker", error = ?gone, "router-drop");
            let late = format_args!("RecvTimeout(Timeout)");
            tracing::error!(target: "rumqttd::server::broker", error = ?late, "router-drop");
            tracing::error!(target: "rumqttd::server::broker", "router-drop");
            tracing::info!(target: "rumqttd::server::broker", error = ?gone, "router-drop");
            let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
            tracing::error!(target: "rumqttd::server::broker", error = ?reset, "disconnected");
            let refused = std::io::Error::from(std::io::ErrorKind::InvalidData);
            tracing::error!(target: "rumqttd::server::broker", error = ?refused, "disconnected");
        });
        let text = String::from_utf8(captured.0.lock().expect("lock").clone()).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 8, "{text}");
        assert!(!text.contains("ConnectionReset"), "{text}");
        assert!(text.contains("InvalidData"), "{text}");
        assert!(!text.contains("id 7 is already gone\n"), "{text}");
        assert!(text.contains("already gone, and more"), "{text}");
        assert!(text.contains("disconnected"), "{text}");
        assert!(text.contains("id 8 is already gone"), "{text}");
        assert!(text.contains("id 9 is already gone"), "{text}");
        let drops: Vec<&&str> = lines.iter().filter(|l| l.contains("router-drop")).collect();
        assert_eq!(drops.len(), 3, "{text}");
        assert!(
            drops.iter().any(|l| l.contains("Timeout"))
                && drops.iter().any(|l| l.contains("INFO"))
                && !drops
                    .iter()
                    .any(|l| l.contains("ERROR") && l.contains("Disconnected")),
            "{text}"
        );
    }
}
