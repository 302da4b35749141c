//! The devices' own events against the simulators: `printer.state_changed`
//! when a printer runs out of paper and is loaded again (and the cloud's
//! record follows it), once for a printer that cannot be reached, a bounded
//! handful for a flapping one; the printer record's status and last_seen
//! true within seconds of a cold start whose record arrives after the
//! device is ready (`printer.seen`), and of every change, at the edge and
//! in the cloud; `scale.weighed` once per load put on a scale. Every
//! payload is checked against the event catalogue.

use crate::common;
use common::RunningEdge;
use common::devices::{Api, LIMIT, cloud_printer, offline_settings, printer_device};
use depot_edge::devices::config::{PrinterDevice, ScaleDevice, ScaleProtocol, StationConfig};
use depot_edge::devices::pacing;
use depot_hardware::printer::Endpoint;
use depot_hardware::printer::sim::Simulator;
use depot_hardware::scale::modbus::{RegisterMap, StatusBit, Table, Width, WordOrder};
use depot_hardware::scale::sim::ModbusScaleSim;
use depot_hardware::scale::{Unit, Weight};
use depot_hardware::scanner::sim::SimBus;
use depot_testkit::{eventually, rig::Rig};
use depot_wms::Wms;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The payloads of `kind` in `wms`'s log, each checked against the
/// catalogue.
async fn logged(wms: &Wms, kind: &str) -> Vec<Value> {
    let entry = depot_protocol::catalogue::lookup(kind).expect("catalogued");
    let all = wms.events_since(0, 100_000).await.expect("events");
    all.into_iter()
        .filter(|e| e.kind == kind)
        .map(|e| {
            if let Err(problems) = depot_protocol::catalogue::schema::check(entry, &e.payload) {
                panic!(
                    "{kind} payload {} is not catalogued: {problems:?}",
                    e.payload
                );
            }
            e.payload
        })
        .collect()
}

/// (previous, state, problems) of each `printer.state_changed`.
async fn transitions(wms: &Wms) -> Vec<(String, String, Vec<String>)> {
    logged(wms, "printer.state_changed")
        .await
        .iter()
        .map(|p| {
            let problems = p["problems"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            (
                p["previous"].as_str().unwrap_or_default().to_owned(),
                p["state"].as_str().unwrap_or_default().to_owned(),
                problems,
            )
        })
        .collect()
}

async fn wait_transitions(wms: &Wms, n: usize) -> Vec<(String, String, Vec<String>)> {
    eventually(&format!("{n} printer.state_changed events"), || async {
        transitions(wms).await.len() >= n
    })
    .await;
    transitions(wms).await
}

fn t(previous: &str, state: &str, problems: &[&str]) -> (String, String, Vec<String>) {
    (
        previous.into(),
        state.into(),
        problems.iter().map(|p| (*p).to_owned()).collect(),
    )
}

fn station(name: &str, printer: Option<&str>, scale: Option<&str>) -> StationConfig {
    StationConfig {
        name: name.into(),
        scanners: Vec::new(),
        scale: scale.map(str::to_owned),
        printer: printer.map(str::to_owned),
        tolerance_g: 20,
        tolerance_pct: 5.0,
        packaging_g: 0,
        weigh_timeout_ms: 5000,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn paper_out_and_back_is_two_changes_and_the_cloud_record_follows() {
    let rig = Rig::start("dev-state", false).await;
    let sim = Simulator::start().await.expect("printer simulator");
    let printer = cloud_printer(&rig, "Dock labels").await;
    let mut settings = rig.edge_settings();
    settings.devices.printers = vec![printer_device("Dock labels", &sim)];
    settings.stations = vec![station("pack-1", Some("Dock labels"), None)];
    let edge = RunningEdge::start_with_bus(settings, SimBus::new()).await;
    let api = Api::new(&edge, &rig.key);
    api.ready().await;
    assert_eq!(
        wait_transitions(&edge.wms, 1).await,
        [t("unknown", "ready", &[])]
    );
    eventually("the printer record at the edge", || async {
        edge.wms
            .printers(rig.business)
            .await
            .is_ok_and(|p| p.iter().any(|p| p.id == printer))
    })
    .await;

    sim.set_paper_out(true);
    let seen = wait_transitions(&edge.wms, 2).await;
    assert_eq!(seen[1], t("ready", "faulted", &["paper_out"]));
    sim.set_paper_out(false);
    let seen = wait_transitions(&edge.wms, 3).await;
    assert_eq!(
        seen,
        [
            t("unknown", "ready", &[]),
            t("ready", "faulted", &["paper_out"]),
            t("faulted", "ready", &[]),
        ]
    );
    let payloads = logged(&edge.wms, "printer.state_changed").await;
    let last = &payloads[2];
    assert_eq!(
        (&last["printer_id"], &last["device"], &last["station"]),
        (
            &Value::from(printer.0),
            &Value::from("Dock labels"),
            &Value::from("pack-1")
        ),
        "{last}"
    );
    assert_eq!(last["business_id"], rig.business.0);

    // The record says it at the edge, and in the cloud once synced.
    for wms in [&edge.wms, &rig.cloud] {
        eventually("the record online, seen", || async {
            wms.printers(rig.business).await.is_ok_and(|all| {
                all.iter()
                    .any(|p| p.id == printer && p.status == "online" && p.last_seen.is_some())
            })
        })
        .await;
    }
    eventually("the cloud to log the change", || async {
        logged(&rig.cloud, "printer.state_changed").await.len() == 3
    })
    .await;
    // The faulted printer still answered: faulted is online.
    assert_eq!(sim.stats().labels_printed, 0);
    edge.stop().await;
}

/// The printer record `id` as `GET /v1/printers/{b}/list` answers it.
async fn listed(api: &Api, b: i64, id: i64) -> Value {
    let (status, body) = api.get(&format!("/v1/printers/{b}/list")).await;
    assert_eq!(status, 200, "{body}");
    body["data"]
        .as_array()
        .and_then(|all| all.iter().find(|p| p["id"] == id).cloned())
        .unwrap_or_default()
}

fn last_seen(record: &Value) -> Option<chrono::DateTime<chrono::Utc>> {
    record["last_seen"]
        .as_str()
        .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
        .map(|t| t.with_timezone(&chrono::Utc))
}

/// Waits until the record says `status` (and, online, a `last_seen` no
/// older than `since`), at the edge through its route; answers how long
/// it took and the record.
async fn record_says(
    api: &Api,
    b: i64,
    id: i64,
    status: &str,
    since: chrono::DateTime<chrono::Utc>,
) -> (std::time::Duration, Value) {
    let started = Instant::now();
    eventually(&format!("printer {id} {status} at the edge"), || async {
        let p = listed(api, b, id).await;
        p["status"] == status
            && (status != "online" || last_seen(&p).is_some_and(|seen| seen >= since))
    })
    .await;
    (started.elapsed(), listed(api, b, id).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_printer_record_follows_its_device_from_a_cold_start() {
    let rig = Rig::start("dev-seen", false).await;
    let b = rig.business.0;
    let sim = Simulator::start().await.expect("printer simulator");
    let mut settings = rig.edge_settings();
    settings.devices.printers = vec![printer_device("Desk labels", &sim)];
    let edge = RunningEdge::start_with_bus(settings, SimBus::new()).await;
    let api = Api::new(&edge, &rig.key);
    api.ready().await;
    // The device is ready before its record exists, as on a new box whose
    // record is made (or synced) after it starts: the change names none.
    assert_eq!(
        wait_transitions(&edge.wms, 1).await,
        [t("unknown", "ready", &[])]
    );
    assert_eq!(
        logged(&edge.wms, "printer.state_changed").await[0]["printer_id"],
        Value::Null
    );
    let made = chrono::Utc::now() - chrono::Duration::seconds(1);
    let printer = cloud_printer(&rig, "Desk labels").await;
    assert_eq!(
        rig.cloud
            .printers(rig.business)
            .await
            .expect("printers")
            .iter()
            .find(|p| p.id == printer)
            .map(|p| (p.status.clone(), p.last_seen)),
        Some(("unknown".to_owned(), None))
    );

    // Within seconds of reaching the edge, the record says it: online,
    // just seen, from a printer.seen that names it.
    eventually("the record at the edge", || async {
        edge.wms
            .printers(rig.business)
            .await
            .is_ok_and(|all| all.iter().any(|p| p.id == printer))
    })
    .await;
    let (took, record) = record_says(&api, b, printer.0, "online", made).await;
    println!("online at the edge {took:?} after its record arrived: {record}");
    assert!(took < std::time::Duration::from_secs(5), "{took:?}");
    let told = logged(&edge.wms, "printer.seen").await;
    assert_eq!(
        (told.len(), &told[0]["printer_id"], &told[0]["state"]),
        (1, &Value::from(printer.0), &Value::from("ready")),
        "{told:?}"
    );
    // And in the cloud, once synced.
    eventually("the cloud's record online", || async {
        rig.cloud.printers(rig.business).await.is_ok_and(|all| {
            all.iter().any(|p| {
                p.id == printer && p.status == "online" && p.last_seen.is_some_and(|s| s >= made)
            })
        })
    })
    .await;

    // The printer stops answering: offline, at the edge and in the cloud;
    // last_seen stays when it last answered.
    let seen = last_seen(&record);
    sim.set_stalled(true);
    let (took, record) = record_says(&api, b, printer.0, "offline", made).await;
    println!("offline at the edge {took:?} after the printer stalled");
    assert!(took < std::time::Duration::from_secs(10), "{took:?}");
    assert_eq!(last_seen(&record), seen, "{record}");
    eventually("the cloud's record offline", || async {
        rig.cloud
            .printers(rig.business)
            .await
            .is_ok_and(|all| all.iter().any(|p| p.id == printer && p.status == "offline"))
    })
    .await;

    // Back: online, seen again.
    let back = chrono::Utc::now() - chrono::Duration::seconds(1);
    sim.recover();
    let (took, _) = record_says(&api, b, printer.0, "online", back).await;
    println!("online again at the edge {took:?} after the printer recovered");
    assert!(took < std::time::Duration::from_secs(10), "{took:?}");
    eventually("the cloud's record online again", || async {
        rig.cloud.printers(rig.business).await.is_ok_and(|all| {
            all.iter().any(|p| {
                p.id == printer && p.status == "online" && p.last_seen.is_some_and(|s| s >= back)
            })
        })
    })
    .await;
    // The changes told the record themselves: still one printer.seen.
    assert_eq!(logged(&edge.wms, "printer.seen").await.len(), 1);
    assert_eq!(
        transitions(&edge.wms).await,
        [
            t("unknown", "ready", &[]),
            t("ready", "unreachable", &[]),
            t("unreachable", "ready", &[]),
        ]
    );
    edge.stop().await;
    rig.stop().await;
}

const KEY: &str = "dpk_device_events_0123456789abcdef01";

/// An edge without a link, with these devices and stations.
async fn offline_edge(
    dir: &tempfile::TempDir,
    printers: Vec<PrinterDevice>,
    scales: Vec<ScaleDevice>,
    stations: Vec<StationConfig>,
) -> RunningEdge {
    let mut settings = offline_settings(dir.path(), "devices", KEY).await;
    settings.devices.printers = printers;
    settings.devices.scales = scales;
    settings.stations = stations;
    settings.check().expect("valid settings");
    RunningEdge::start_with_bus(settings, SimBus::new()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_unreachable_printer_is_one_event_not_one_per_poll() {
    // Takes connections and drops them at once, counting them: every
    // status poll of the driver is one.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let polls = Arc::new(AtomicUsize::new(0));
    let counted = polls.clone();
    let server = tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(socket);
        }
    });
    let sim = Simulator::start()
        .await
        .expect("a simulator for its settings");
    let mut device = printer_device("Gone", &sim);
    device.endpoint = Endpoint::Tcp {
        host: "127.0.0.1".into(),
        port,
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let edge = offline_edge(&dir, vec![device], Vec::new(), Vec::new()).await;
    assert_eq!(
        wait_transitions(&edge.wms, 1).await,
        [t("unknown", "unreachable", &[])]
    );
    let at = polls.load(Ordering::SeqCst);
    eventually("ten more polls", || async {
        polls.load(Ordering::SeqCst) >= at + 10
    })
    .await;
    assert_eq!(
        transitions(&edge.wms).await,
        [t("unknown", "unreachable", &[])]
    );
    let payload = &logged(&edge.wms, "printer.state_changed").await[0];
    assert_eq!(payload["printer_id"], Value::Null, "no record: {payload}");
    edge.stop().await;
    server.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_flapping_printer_writes_within_the_pace() {
    let sim = Simulator::start().await.expect("printer simulator");
    let dir = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let edge = offline_edge(
        &dir,
        vec![printer_device("Flaky", &sim)],
        Vec::new(),
        Vec::new(),
    )
    .await;
    wait_transitions(&edge.wms, 1).await;
    // The paper sensor changes its mind at every status query.
    let mut out = false;
    for _ in 0..30 {
        let asked = sim.stats().status_queries;
        sim.wait_until(|s| s.status_queries > asked, LIMIT)
            .await
            .expect("a status query");
        out = !out;
        sim.set_paper_out(out);
    }
    sim.set_paper_out(false);
    let flapped = started.elapsed();
    let during = transitions(&edge.wms).await.len();
    assert!(
        during <= pacing::most_writes(flapped),
        "{during} events in {flapped:?}"
    );
    // Settled: the last event says so, in its turn.
    eventually("the settled state written", || async {
        transitions(&edge.wms)
            .await
            .last()
            .is_some_and(|(_, state, _)| state == "ready")
    })
    .await;
    let all = transitions(&edge.wms).await;
    assert!(
        all.len() <= pacing::most_writes(started.elapsed()),
        "{all:?}"
    );
    // Each event follows from the one before.
    for pair in all.windows(2) {
        assert_eq!(pair[1].0, pair[0].1, "{all:?}");
        assert_ne!(
            (&pair[1].1, &pair[1].2),
            (&pair[0].1, &pair[0].2),
            "{all:?}"
        );
    }
    edge.stop().await;
}

fn modbus_map() -> RegisterMap {
    RegisterMap {
        table: Table::Holding,
        address: 100,
        width: Width::U32,
        word_order: WordOrder::HighFirst,
        signed: true,
        decimals: 3,
        unit: Unit::Kilogram,
        stable: Some(StatusBit {
            table: Table::Holding,
            address: 102,
            bit: 3,
            invert: false,
        }),
    }
}

fn weight(text: &str) -> Weight {
    text.parse().expect("weight")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_scale_logs_each_load_once() {
    let map = modbus_map();
    let sim = ModbusScaleSim::start(map).await.expect("modbus sim");
    let dir = tempfile::tempdir().expect("tempdir");
    let device = ScaleDevice {
        address: Some(sim.address().to_string()),
        registers: Some(map),
        poll_interval_ms: Some(50),
        timeout_ms: Some(300),
        ..ScaleDevice::new("pack-scale", ScaleProtocol::ModbusTcp)
    };
    let edge = offline_edge(
        &dir,
        Vec::new(),
        vec![device],
        vec![station("pack-1", None, Some("pack-scale"))],
    )
    .await;
    let api = Api::new(&edge, KEY);
    api.ready().await;
    let scale = |grams: i64| {
        let wms = edge.wms.clone();
        async move {
            let weights = logged(&wms, "scale.weighed").await;
            weights.last().is_some_and(|w| w["grams"] == grams)
        }
    };
    // Waits until the edge has read a stable `grams` off the scale.
    let reads = |grams: i64| {
        let api = &api;
        async move {
            eventually(&format!("the scale to read {grams} g"), || async {
                let (_, body) = api.get("/v1/edge/scales/pack-scale/weight").await;
                body["data"]["grams"] == grams && body["data"]["stable"] == true
            })
            .await;
        }
    };

    // A parcel put on: moving, then settled.
    sim.set_stable(false);
    sim.set_weight(weight("1.100")).expect("fits");
    sim.set_weight(weight("1.250")).expect("fits");
    sim.set_stable(true);
    eventually("1250 g logged", || scale(1250)).await;
    // Taken off, and another put on: nothing for the parcel that stayed
    // (many stable polls of it) nor for the empty scale, then the new one.
    sim.set_weight(weight("0.001")).expect("fits");
    reads(1).await;
    sim.set_weight(weight("0.800")).expect("fits");
    eventually("800 g logged", || scale(800)).await;
    // The same weight again after the scale was emptied is a new parcel;
    // one more gram on the same parcel is not.
    sim.set_weight(weight("0.000")).expect("fits");
    reads(0).await;
    sim.set_weight(weight("0.800")).expect("fits");
    eventually("two of 800 g", || async {
        logged(&edge.wms, "scale.weighed")
            .await
            .iter()
            .filter(|w| w["grams"] == 800)
            .count()
            == 2
    })
    .await;
    sim.set_weight(weight("0.801")).expect("fits");
    reads(801).await;
    sim.set_weight(weight("2.000")).expect("fits");
    eventually("2000 g logged", || scale(2000)).await;

    let weights = logged(&edge.wms, "scale.weighed").await;
    let grams: Vec<&Value> = weights.iter().map(|w| &w["grams"]).collect();
    assert_eq!(grams, [1250, 800, 800, 2000], "{weights:?}");
    let first = &weights[0];
    assert_eq!(
        (
            &first["device"],
            &first["station"],
            &first["value"],
            &first["unit"],
            &first["stable"]
        ),
        (
            &Value::from("pack-scale"),
            &Value::from("pack-1"),
            &Value::from("1.250"),
            &Value::from("kg"),
            &Value::from(true)
        ),
        "{first}"
    );
    edge.stop().await;
}
