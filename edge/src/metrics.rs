//! `GET /metrics` on the edge: the request and writer metrics every
//! application has (`depot_wms::metrics`), the link and outbox, and the
//! devices. Devices are labelled by the names the configuration gives
//! them, so their series are as many as the devices configured.

use crate::devices::Devices;
use crate::devices::printers::PrinterStatus;
use crate::devices::scales::ScaleView;
use crate::devices::scanners::ScannerView;
use crate::disk::Probe;
use axum::Router;
use depot_hardware::printer::PrinterState;
use depot_protocol::Timestamp;
use depot_wms::Wms;
use depot_wms::metrics::{Metrics, Scrape, sync};

/// Serves the metrics on `router` and counts the requests it answers.
pub fn mount(router: Router, wms: &Wms, devices: Devices, probe: Probe) -> Router {
    let metrics = Metrics::new(wms);
    let wms = wms.clone();
    metrics.mount(router, move || {
        let (wms, devices, probe) = (wms.clone(), devices.clone(), probe.clone());
        async move {
            let mut scrape = Scrape::default();
            let now = depot_protocol::now();
            // What cannot be read is left out of this answer, not the rest.
            match wms.sync_snapshot().await {
                Ok(snapshot) => sync::edge(&mut scrape, &snapshot, now),
                Err(error) => tracing::warn!(%error, "metrics: cannot read the sync state"),
            }
            if let Some(storage) = probe.read_serving(&wms).await {
                depot_wms::disk::gauges(&mut scrape, &storage);
            }
            let scales = devices.scale_views();
            let scanners = devices.scanners().all();
            self::devices(&mut scrape, &devices.printers(), &scales, &scanners, now);
            scrape
        }
    })
}

/// A label set: (name, value) pairs.
type Labels<const N: usize> = [(&'static str, String); N];

const PRINTER_STATES: [&str; 5] = ["unknown", "ready", "busy", "faulted", "unreachable"];
const SCALE_STATES: [&str; 4] = ["connecting", "weight", "motion", "fault"];
const SCANNER_STATES: [&str; 2] = ["connected", "disconnected"];

fn printer_state(state: &PrinterState) -> &'static str {
    match state {
        PrinterState::Unknown => "unknown",
        PrinterState::Ready => "ready",
        PrinterState::Busy => "busy",
        PrinterState::Faulted { .. } => "faulted",
        PrinterState::Unreachable { .. } => "unreachable",
    }
}

/// One configured device as the gauges show it.
struct Row<'a> {
    kind: &'static str,
    name: &'a str,
    state: &'static str,
    /// Every state its kind has.
    states: &'static [&'static str],
    up: bool,
}

/// Every configured device.
fn rows<'a>(
    printers: &'a [PrinterStatus],
    scales: &'a [ScaleView],
    scanners: &'a [ScannerView],
) -> impl Iterator<Item = Row<'a>> {
    let printers = printers.iter().map(|p| {
        let state = printer_state(&p.device);
        Row {
            kind: "printer",
            name: &p.name,
            state,
            states: &PRINTER_STATES,
            up: matches!(state, "ready" | "busy"),
        }
    });
    let scales = scales.iter().map(|s| Row {
        kind: "scale",
        name: &s.id,
        state: s.state,
        states: &SCALE_STATES,
        up: matches!(s.state, "weight" | "motion"),
    });
    let scanners = scanners.iter().map(|s| Row {
        kind: "scanner",
        name: &s.name,
        state: if s.connected {
            "connected"
        } else {
            "disconnected"
        },
        states: &SCANNER_STATES,
        up: s.connected,
    });
    printers.chain(scales).chain(scanners)
}

/// The devices' gauges: up or not, the state set, scale reading ages, the
/// print queues.
fn devices(
    scrape: &mut Scrape,
    printers: &[PrinterStatus],
    scales: &[ScaleView],
    scanners: &[ScannerView],
    now: Timestamp,
) {
    let device = |kind: &str, name: &str| -> Labels<2> {
        [("kind", kind.to_owned()), ("device", name.to_owned())]
    };
    scrape.gauges(
        "depot_device_up",
        "1 while a configured device answers (a printer ready or busy, a scale weighing, a scanner connected), else 0",
        rows(printers, scales, scanners).map(|r| (device(r.kind, r.name), i64::from(r.up))),
    );
    scrape.gauges(
        "depot_device_state",
        "A configured device's state: 1 for the state it is in, 0 for its kind's others",
        rows(printers, scales, scanners).flat_map(|r| {
            r.states.iter().map(move |s| {
                let labels: Labels<3> = [
                    ("kind", r.kind.to_owned()),
                    ("device", r.name.to_owned()),
                    ("state", (*s).to_owned()),
                ];
                (labels, i64::from(*s == r.state))
            })
        }),
    );
    scrape.gauges(
        "depot_scale_reading_age_seconds",
        "Seconds since a scale's driver last heard a weight or motion from it (absent while it has none)",
        scales
            .iter()
            .filter(|s| matches!(s.state, "weight" | "motion"))
            .filter_map(|s| {
                let age = (now - s.at?).num_seconds().max(0);
                Some((device("scale", &s.id), age))
            }),
    );
    let printer = |p: &PrinterStatus| -> Labels<1> { [("printer", p.name.clone())] };
    scrape.gauges(
        "depot_print_queue_jobs",
        "Jobs handed to a printer and not printed yet",
        printers
            .iter()
            .map(|p| (printer(p), i64::try_from(p.queued).unwrap_or(i64::MAX))),
    );
    scrape.counters(
        "depot_print_jobs_failed",
        "Jobs a printer failed since the edge started",
        printers.iter().map(|p| (printer(p), p.failed)),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use depot_hardware::printer::status::Problem;
    use depot_wms::metrics::exposition::{Sample, parse, value};
    use std::time::SystemTime;

    fn printer(name: &str, device: PrinterState, queued: usize, failed: u64) -> PrinterStatus {
        PrinterStatus {
            name: name.into(),
            endpoint: "tcp://127.0.0.1:9100".into(),
            printer_id: Some(depot_protocol::PrinterId(1)),
            unbound: None,
            device,
            queued,
            failed,
        }
    }

    fn scale(id: &str, state: &'static str, at: Option<Timestamp>) -> ScaleView {
        ScaleView {
            id: id.into(),
            state,
            weight: None,
            unit: None,
            grams: None,
            stable: None,
            fault: None,
            at,
        }
    }

    fn scanner(name: &str, connected: bool) -> ScannerView {
        ScannerView {
            name: name.into(),
            kind: "usb",
            connected,
            device: None,
            reason: None,
        }
    }

    fn samples(scrape: Scrape) -> Vec<Sample> {
        let dir = tempfile::tempdir().expect("tempdir");
        let wms = Wms::open(&dir.path().join("m.db"), "test").expect("open");
        let text = Metrics::new(&wms).render(&scrape).expect("render");
        parse(&text).expect("parse")
    }

    #[test]
    fn devices_up_their_states_scale_ages_and_print_queues() {
        let now = depot_protocol::now();
        let mut scrape = Scrape::default();
        let printers = [
            printer("dock", PrinterState::Ready, 0, 0),
            printer(
                "pack",
                PrinterState::Unreachable {
                    since: SystemTime::now(),
                },
                3,
                1,
            ),
            printer(
                "spare",
                PrinterState::Faulted {
                    problems: vec![Problem::PaperOut],
                },
                0,
                0,
            ),
        ];
        let scales = [
            scale("s1", "weight", Some(now - chrono::Duration::seconds(5))),
            scale("s2", "fault", Some(now)),
        ];
        let scanners = [scanner("gun", false)];
        devices(&mut scrape, &printers, &scales, &scanners, now);
        let s = samples(scrape);
        let up = |kind: &str, device: &str| {
            value(&s, "depot_device_up", &[("kind", kind), ("device", device)])
        };
        assert_eq!(up("printer", "dock"), Some(1.0));
        assert_eq!(up("printer", "pack"), Some(0.0));
        assert_eq!(up("printer", "spare"), Some(0.0));
        assert_eq!(up("scale", "s1"), Some(1.0));
        assert_eq!(up("scale", "s2"), Some(0.0));
        assert_eq!(up("scanner", "gun"), Some(0.0));
        let states: Vec<(&str, f64)> = s
            .iter()
            .filter(|x| x.name == "depot_device_state" && x.label("device") == Some("pack"))
            .map(|x| (x.label("state").unwrap_or_default(), x.value))
            .collect();
        assert_eq!(states.len(), PRINTER_STATES.len(), "{states:?}");
        assert!(
            states
                .iter()
                .all(|(state, v)| *v == f64::from(u8::from(*state == "unreachable"))),
            "{states:?}"
        );
        let age = |id: &str| {
            value(
                &s,
                "depot_scale_reading_age_seconds",
                &[("kind", "scale"), ("device", id)],
            )
        };
        assert_eq!((age("s1"), age("s2")), (Some(5.0), None));
        let printer_value = |name: &str, p: &str| value(&s, name, &[("printer", p)]);
        assert_eq!(printer_value("depot_print_queue_jobs", "pack"), Some(3.0));
        assert_eq!(
            printer_value("depot_print_jobs_failed_total", "pack"),
            Some(1.0)
        );
        assert_eq!(printer_value("depot_print_queue_jobs", "dock"), Some(0.0));
    }
}
