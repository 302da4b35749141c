//! `GET /metrics` on an edge, with no key: requests counted by route
//! template (a 404 on a route, an unmatched path), the writer's commits,
//! the outbox while the link to the broker is cut and after it is back,
//! and the devices: a Modbus scale that weighs and a printer that does not
//! answer, with its queue.

use crate::common;
use common::RunningEdge;
use common::devices::{Api, cloud_printer, printer_device};
use depot_edge::devices::config::ScaleDevice;
use depot_hardware::printer::sim::Simulator;
use depot_hardware::scale::Unit;
use depot_hardware::scale::modbus::{RegisterMap, Table, Width, WordOrder};
use depot_hardware::scale::sim::ModbusScaleSim;
use depot_hardware::scanner::sim::SimBus;
use depot_testkit::http::Client;
use depot_testkit::{eventually, rig::Rig};
use depot_wms::metrics::exposition::{Sample, parse, value};
use serde_json::{Value, json};

/// The edge's metrics, asked for without a key.
async fn scrape(base: &str) -> Vec<Sample> {
    let r = Client::new(base).get("/metrics").await;
    assert_eq!(r.status, 200);
    let content_type = r.header("content-type").expect("ascii");
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    let text = r.text();
    assert!(text.ends_with("# EOF\n"), "{text}");
    parse(&text).expect("exposition")
}

fn get(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    value(samples, name, labels).unwrap_or(0.0)
}

fn requests(samples: &[Sample], route: &str, status: &str) -> f64 {
    get(
        samples,
        "depot_http_requests_total",
        &[("route", route), ("method", "GET"), ("status", status)],
    )
}

fn scale_device(id: &str, sim: &ModbusScaleSim, map: RegisterMap) -> ScaleDevice {
    serde_json::from_value(json!({
        "id": id,
        "protocol": "modbus_tcp",
        "address": sim.address().to_string(),
        "registers": map,
        "poll_interval_ms": 50,
        "timeout_ms": 300,
    }))
    .expect("scale device")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn requests_writer_outbox_devices_and_print_queue() {
    let rig = Rig::start("metrics-edge", true).await;
    let b = rig.business.0;
    let printer_sim = Simulator::start().await.expect("printer simulator");
    // Takes connections and answers nothing: unreachable.
    printer_sim.set_stalled(true);
    let printer = cloud_printer(&rig, "Pack labels").await;
    let map = RegisterMap {
        table: Table::Holding,
        address: 0,
        width: Width::U32,
        word_order: WordOrder::HighFirst,
        signed: false,
        decimals: 0,
        unit: Unit::Gram,
        stable: None,
    };
    let scale_sim = ModbusScaleSim::start(map).await.expect("scale simulator");
    scale_sim
        .set_weight("1200".parse().expect("weight"))
        .expect("fits");
    let mut settings = rig.edge_settings();
    settings.devices.printers = vec![printer_device("Pack labels", &printer_sim)];
    settings.devices.scales = vec![scale_device("dock-scale", &scale_sim, map)];
    let edge = RunningEdge::start_with_bus(settings, SimBus::new()).await;
    let api = Api::new(&edge, &rig.key);
    api.ready().await;
    eventually("the printer record at the edge", || async {
        edge.wms
            .printers(rig.business)
            .await
            .is_ok_and(|p| p.iter().any(|p| p.id == printer))
    })
    .await;

    // Devices: the scale weighs, the printer does not answer.
    let scale = [("kind", "scale"), ("device", "dock-scale")];
    let printer_labels = [("kind", "printer"), ("device", "Pack labels")];
    eventually("the scale up, the printer unreachable", || async {
        let s = scrape(&edge.base).await;
        value(&s, "depot_device_up", &scale) == Some(1.0)
            && value(&s, "depot_device_up", &printer_labels) == Some(0.0)
            && value(
                &s,
                "depot_device_state",
                &[
                    ("kind", "printer"),
                    ("device", "Pack labels"),
                    ("state", "unreachable"),
                ],
            ) == Some(1.0)
    })
    .await;
    let s = scrape(&edge.base).await;
    let age = value(&s, "depot_scale_reading_age_seconds", &scale).expect("reading age");
    assert!(age >= 0.0, "{age}");
    assert_eq!(
        value(
            &s,
            "depot_device_state",
            &[
                ("kind", "scale"),
                ("device", "dock-scale"),
                ("state", "weight")
            ]
        ),
        Some(1.0)
    );

    // Requests, counted exactly, by route template.
    let before = scrape(&edge.base).await;
    for _ in 0..2 {
        assert_eq!(api.get("/v1/edge/status").await.0, 200);
    }
    let (status, body) = api.get(&format!("/v1/orders/{b}/987654321")).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(api.get("/v1/no/such/route").await.0, 404);
    let stranger = Api::new(&edge, "dpk_not_a_key_of_this_edge_0000000");
    assert_eq!(stranger.get("/v1/edge/status").await.0, 401);
    let after = scrape(&edge.base).await;
    let grew = |route: &str, status: &str| {
        requests(&after, route, status) - requests(&before, route, status)
    };
    assert_eq!(grew("/v1/edge/status", "200"), 2.0);
    assert_eq!(grew("/v1/edge/status", "401"), 1.0);
    assert_eq!(grew("/v1/orders/{business_id}/{order_id}", "404"), 1.0);
    assert_eq!(grew("unmatched", "404"), 1.0);
    // The scrape before is counted once it answered.
    assert_eq!(grew("/metrics", "200"), 1.0);
    let timed = |s: &[Sample]| {
        get(
            s,
            "depot_http_request_duration_seconds_count",
            &[("route", "/v1/edge/status"), ("method", "GET")],
        )
    };
    assert_eq!(timed(&after) - timed(&before), 3.0);
    for sample in after.iter().filter(|s| s.name.starts_with("depot_http_")) {
        let route = sample.label("route").expect("route label");
        assert!(
            route == "unmatched"
                || (route.starts_with('/')
                    && !route
                        .split('/')
                        .any(|seg| !seg.is_empty() && seg.bytes().all(|c| c.is_ascii_digit()))),
            "a route label that is not a template: {route}"
        );
    }

    // Print jobs for the printer that is down wait in its queue; each was
    // a write.
    let batches = |s: &[Sample]| get(s, "depot_writer_batch_size_count", &[]);
    let labels = |n: usize| Value::String(format!("^XA^FO50,50^FDLabel {n}^FS^XZ"));
    for n in 1..=2 {
        let path = format!("/v1/printers/jobs/{b}/{printer}");
        let (status, body) = api.call("POST", &path, Some(labels(n))).await;
        assert_eq!(status, 200, "{body}");
    }
    let queue = [("printer", "Pack labels")];
    eventually("two jobs in the printer's queue", || async {
        get(&scrape(&edge.base).await, "depot_print_queue_jobs", &queue) == 2.0
    })
    .await;
    let written = scrape(&edge.base).await;
    assert!(batches(&written) > batches(&after));
    assert_eq!(
        get(&written, "depot_writer_commit_duration_seconds_count", &[]),
        batches(&written)
    );
    assert_eq!(get(&written, "depot_print_jobs_failed_total", &queue), 0.0);

    // The link cut: what is written waits in the outbox.
    rig.link().cut();
    eventually("the link seen down", || async {
        get(&scrape(&edge.base).await, "depot_sync_connected", &[]) == 0.0
    })
    .await;
    let path = format!("/v1/printers/jobs/{b}/{printer}");
    let (status, body) = api.call("POST", &path, Some(labels(3))).await;
    assert_eq!(status, 200, "{body}");
    let s = scrape(&edge.base).await;
    assert!(get(&s, "depot_sync_outbox_events", &[]) >= 1.0);
    let oldest = value(&s, "depot_sync_outbox_oldest_age_seconds", &[]).expect("oldest age");
    assert!(oldest >= 0.0, "{oldest}");
    eventually("the third job in the printer's queue", || async {
        get(&scrape(&edge.base).await, "depot_print_queue_jobs", &queue) == 3.0
    })
    .await;

    // Back: the cloud acknowledges everything.
    rig.link().restore();
    eventually("the outbox emptied", || async {
        let s = scrape(&edge.base).await;
        get(&s, "depot_sync_connected", &[]) == 1.0
            && value(&s, "depot_sync_outbox_events", &[]) == Some(0.0)
            && value(&s, "depot_sync_outbox_oldest_age_seconds", &[]) == Some(0.0)
            && value(&s, "depot_sync_last_ack_age_seconds", &[]).is_some()
    })
    .await;

    edge.stop().await;
    rig.stop().await;
}
