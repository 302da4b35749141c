//! What the edge tells systemd (`Type=notify`): ready once it can serve the
//! floor, its sync state as the unit's status line, and the watchdog fed
//! while the writer and the runtime answer. The protocol itself is
//! `depot_wms::sd_notify`.

use crate::devices::Devices;
use crate::disk::{Probe, Storage, StorageState, human};
use depot_protocol::plural::counted;
use depot_wms::Wms;
use depot_wms::sd_notify::{self, Notifier};
use depot_wms::sync::SyncSnapshot;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

/// How long readiness waits for the first enumeration of the USB scanners.
/// A HID bus that hangs must not keep the API from the stations (nor make
/// systemd kill a box that serves fine without scanners).
const FIRST_SCAN_WITHIN: Duration = Duration::from_secs(10);
/// How often the sync state is read; a change is reported at once.
const STATUS_EVERY: Duration = Duration::from_secs(1);
/// An unchanged status is sent again this often, so a status line that got
/// lost (a full socket buffer drops it) does not stay stale.
const STATUS_AGAIN_AFTER: Duration = Duration::from_secs(5);

/// What stands in the way of sync, without the advice and rumqttc's own
/// words that follow it: a status line is read at a glance.
pub fn headline(why: &str) -> &str {
    let end = [" (", ": "]
        .iter()
        .filter_map(|sep| why.find(sep))
        .min()
        .unwrap_or(why.len());
    &why[..end]
}

/// The unit's status line: the link, the outbox, what needs someone.
pub fn status_line(
    listen: Option<SocketAddr>,
    sync: &SyncSnapshot,
    attention: usize,
    storage: Option<&Storage>,
) -> String {
    let mut line = match listen {
        Some(addr) => format!("serving on {addr}; "),
        None => String::new(),
    };
    line.push_str(if sync.connected {
        "cloud connected"
    } else {
        "cloud not connected"
    });
    if let Some(since) = &sync.connected_since {
        line.push_str(&format!(" since {since}"));
    }
    if let Some(why) = &sync.link_error {
        line.push_str(&format!(" ({})", headline(why)));
    }
    match (sync.depth, &sync.oldest_unacked_at) {
        (0, _) => line.push_str("; outbox empty"),
        (n, Some(oldest)) => {
            line.push_str(&format!(
                "; outbox {} (oldest {oldest})",
                counted(n, "event")
            ));
        }
        (n, None) => line.push_str(&format!("; outbox {}", counted(n, "event"))),
    }
    match &sync.recovery {
        Some(r) if r.stalled.is_some() => {
            line.push_str("; own events stalled: the cloud does not hand them back (upgrade it)");
        }
        Some(r) => line.push_str(&format!(
            "; taking own events back from the cloud (through {})",
            r.recovered
        )),
        None => {}
    }
    if sync.conflicts > 0 {
        line.push_str(&format!("; {}", counted(sync.conflicts, "conflict")));
    }
    if attention > 0 {
        let (devices, need) = (
            counted(attention, "device"),
            if attention == 1 { "needs" } else { "need" },
        );
        line.push_str(&format!("; {devices} {need} attention"));
    }
    match storage {
        Some(s) if s.state == StorageState::Full => {
            line.push_str("; DISK FULL: writes are refused until space is freed");
        }
        Some(s) if s.state == StorageState::Low => {
            line.push_str(&format!("; disk low: {} free", human(s.free_bytes)));
        }
        _ => {}
    }
    line
}

/// Tasks that keep systemd informed, started once the listener is bound
/// and the devices run; stopped with the server.
pub struct Informer {
    tasks: JoinSet<()>,
}

impl Informer {
    /// Sends `READY=1` once the first device scan is done, then the status
    /// line; feeds the watchdog when systemd asked for it.
    pub fn start(
        notifier: Notifier,
        wms: Wms,
        devices: Devices,
        probe: Probe,
        listen: Option<SocketAddr>,
    ) -> Self {
        let mut tasks = JoinSet::new();
        if !notifier.is_enabled() {
            return Self { tasks };
        }
        if let Some(period) = sd_notify::watchdog_from_env() {
            tasks.spawn(sd_notify::feed_watchdog(
                notifier.clone(),
                wms.clone(),
                period,
            ));
        }
        tasks.spawn(async move {
            if tokio::time::timeout(FIRST_SCAN_WITHIN, devices.first_scan())
                .await
                .is_err()
            {
                tracing::warn!("the USB scanners are not enumerated yet; ready without them");
            }
            let status = current(&wms, &devices, &probe, listen).await;
            notifier.ready(status.clone().unwrap_or_else(|| "serving".into()));
            let mut last = (status, Instant::now());
            let mut tick = tokio::time::interval(STATUS_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(now) = current(&wms, &devices, &probe, listen).await else {
                    continue;
                };
                if last.0.as_ref() != Some(&now) || last.1.elapsed() >= STATUS_AGAIN_AFTER {
                    notifier.status(now.clone());
                    last = (Some(now), Instant::now());
                }
            }
        });
        Self { tasks }
    }

    pub fn stop(mut self) {
        self.tasks.abort_all();
    }
}

async fn current(
    wms: &Wms,
    devices: &Devices,
    probe: &Probe,
    listen: Option<SocketAddr>,
) -> Option<String> {
    let storage = probe.read_serving(wms).await;
    match wms.sync_snapshot().await {
        Ok(sync) => Some(status_line(
            listen,
            &sync,
            devices.summary().attention.len(),
            storage.as_ref(),
        )),
        Err(error) => {
            tracing::warn!(%error, "cannot read the sync state for systemd");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(connected: bool, depth: i64) -> SyncSnapshot {
        SyncSnapshot {
            connected,
            connected_since: Some("2026-11-24T02:00:00Z".into()),
            link_error: None,
            head: 10 + depth,
            acked: 10,
            depth,
            oldest_unacked_at: (depth > 0).then(|| "2026-11-24T01:00:00Z".into()),
            last_ack_at: None,
            cloud_cursor: 0,
            conflicts: 0,
            resets: 0,
            last_reset_at: None,
            recovery: None,
            refused: Default::default(),
        }
    }

    #[tokio::test]
    async fn readiness_waits_for_the_first_enumeration_of_usb_scanners() {
        use crate::devices::config::ScannerDevice;
        use depot_hardware::scanner::registry::ScannerMatch;
        use depot_hardware::scanner::sim::SimBus;
        let dir = tempfile::tempdir().expect("tempdir");
        let wms = Wms::open_node(&dir.path().join("edge.db"), "edge:t", 1).expect("open");
        let mut settings = crate::settings::Settings {
            business_id: 1,
            edge_id: "t".into(),
            node: 1,
            ..Default::default()
        };
        let (devices, running) =
            crate::devices::start(&wms, &settings, SimBus::new()).expect("no devices");
        // Nothing to look for: at once.
        tokio::time::timeout(Duration::from_millis(100), devices.first_scan())
            .await
            .expect("ready without devices");
        running.stop().await;
        settings.devices.scanners = vec![ScannerDevice::Usb(ScannerMatch {
            name: "gun".into(),
            vendor_id: 0x0C2E,
            product_id: 0x0B61,
            serial: None,
            usb_path: None,
            mode: Default::default(),
        })];
        let (devices, running) =
            crate::devices::start(&wms, &settings, SimBus::new()).expect("a scanner");
        tokio::time::timeout(Duration::from_secs(5), devices.first_scan())
            .await
            .expect("the first enumeration");
        let bus = devices.scanners().usb_bus();
        assert!(bus.as_deref().is_some_and(|b| b != "starting"), "{bus:?}");
        running.stop().await;
    }

    #[test]
    fn the_status_line_warns_of_a_disk_running_out() {
        let mib = 1024 * 1024;
        let mut storage = Storage {
            path: "/var/lib/depot".into(),
            free_bytes: 3 * 1024 * mib,
            total_bytes: 8 * 1024 * mib,
            database_bytes: 600 * mib,
            low_below_bytes: 512 * mib,
            state: StorageState::Ok,
            full_since: None,
        };
        let s = snapshot(true, 0);
        let ok = status_line(None, &s, 0, Some(&storage));
        assert_eq!(ok, status_line(None, &s, 0, None));
        storage.free_bytes = 180 * mib;
        for (state, end) in [
            (StorageState::Low, "; outbox empty; disk low: 180 MiB free"),
            (
                StorageState::Full,
                "; outbox empty; DISK FULL: writes are refused until space is freed",
            ),
        ] {
            storage.state = state;
            let line = status_line(None, &s, 0, Some(&storage));
            assert!(line.ends_with(end), "{line}");
        }
    }

    #[test]
    fn the_status_line_says_link_outbox_and_trouble() {
        let addr = SocketAddr::from(([0, 0, 0, 0], 8081));
        assert_eq!(
            status_line(Some(addr), &snapshot(true, 0), 0, None),
            "serving on 0.0.0.0:8081; cloud connected since 2026-11-24T02:00:00Z; outbox empty"
        );
        let mut s = snapshot(false, 12);
        s.conflicts = 2;
        assert_eq!(
            status_line(None, &s, 1, None),
            "cloud not connected since 2026-11-24T02:00:00Z; outbox 12 events (oldest 2026-11-24T01:00:00Z); 2 conflicts; 1 device needs attention"
        );
        s.conflicts = 0;
        s.recovery = Some(depot_wms::database::Recovery {
            from: 7,
            recovered: 1000,
            shifted: true,
            shifted_past: 1000,
            stalled: None,
        });
        assert_eq!(
            status_line(None, &s, 0, None),
            "cloud not connected since 2026-11-24T02:00:00Z; outbox 12 events (oldest 2026-11-24T01:00:00Z); taking own events back from the cloud (through 1000)"
        );
        if let Some(r) = s.recovery.as_mut() {
            r.stalled = Some(depot_wms::recovery::STALLED.into());
        }
        assert_eq!(
            status_line(None, &s, 0, None),
            "cloud not connected since 2026-11-24T02:00:00Z; outbox 12 events (oldest 2026-11-24T01:00:00Z); own events stalled: the cloud does not hand them back (upgrade it)"
        );
        s.recovery = None;
        s.link_error = Some(
            "the broker refused the user name or password (the credentials in broker.url) (Connection refused, return code: `BadUserNamePassword`)".into(),
        );
        assert_eq!(
            status_line(None, &s, 0, None),
            "cloud not connected since 2026-11-24T02:00:00Z (the broker refused the user name or password); outbox 12 events (oldest 2026-11-24T01:00:00Z)"
        );
        s.link_error = Some("nothing listens at 127.0.0.1:1883: is the broker running, and is this its port? (I/O: Connection refused (os error 111))".into());
        assert!(
            status_line(None, &s, 0, None)
                .contains("since 2026-11-24T02:00:00Z (nothing listens at 127.0.0.1:1883);"),
            "{}",
            status_line(None, &s, 0, None)
        );
        s.connected = true;
        s.link_error = Some("connected to the broker, but the cloud has not answered this box's hello for 30 s: is depot-cloud running and connected to this broker, and do the broker's access rules let this box publish to depot/v1/1/edge/mad-1/up and subscribe to depot/v1/1/edge/mad-1/down?".into());
        assert!(
            status_line(None, &s, 0, None).starts_with("cloud connected since 2026-11-24T02:00:00Z (connected to the broker, but the cloud has not answered this box's hello for 30 s);"),
            "{}",
            status_line(None, &s, 0, None)
        );
    }
}
