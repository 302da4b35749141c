//! Printers and scales at the edge, against the simulators: a printer
//! running out of paper mid-queue keeps its queue and prints every label
//! once when paper is loaded; jobs queued while the printer is unreachable
//! survive a restart of the edge; the scale routes against an MT-SICS scale
//! on a pseudo-terminal and a Modbus TCP scale.

use crate::common;
use common::RunningEdge;
use common::devices::{Api, LIMIT, cloud_printer, offline_settings, printer_device};
use depot_edge::devices::config::{ScaleDevice, ScaleProtocol};
use depot_hardware::printer::sim::Simulator;
use depot_hardware::scale::modbus::{RegisterMap, StatusBit, Table, Width, WordOrder};
use depot_hardware::scale::sim::{ModbusScaleSim, SerialScaleSim, SimProtocol};
use depot_hardware::scale::{Unit, Weight};
use depot_hardware::scanner::sim::SimBus;
use depot_protocol::printing::JobStatus;
use depot_testkit::{eventually, rig::Rig};
use serde_json::Value;
use std::collections::HashSet;

fn label(n: usize) -> String {
    format!("^XA^FO50,50^A0N,40,40^FDLabel {n}^FS^XZ")
}

/// The jobs of a printer as the HTTP route lists them.
async fn jobs(api: &Api, b: i64, printer: i64) -> Vec<Value> {
    let (status, body) = api.get(&format!("/v1/printers/jobs/{b}/{printer}")).await;
    assert_eq!(status, 200, "{body}");
    body["data"].as_array().cloned().unwrap_or_default()
}

async fn printer_status(api: &Api) -> Value {
    let (status, body) = api.get("/v1/edge/devices").await;
    assert_eq!(status, 200, "{body}");
    body["data"]["printers"][0].clone()
}

/// The texts of the labels the simulator printed.
fn printed(sim: &Simulator) -> Vec<String> {
    sim.labels()
        .iter()
        .flat_map(|l| l.texts().into_iter().map(str::to_owned).collect::<Vec<_>>())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_printer_out_of_paper_keeps_its_queue_and_prints_each_label_once() {
    let rig = Rig::start("dev-paper", false).await;
    let b = rig.business.0;
    let sim = Simulator::start().await.expect("printer simulator");
    sim.load_paper(Some(3));
    let printer = cloud_printer(&rig, "Dock labels").await;
    let mut settings = rig.edge_settings();
    settings.devices.printers = vec![printer_device("Dock labels", &sim)];
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

    for n in 1..=10 {
        let (status, body) = api
            .call(
                "POST",
                &format!("/v1/printers/jobs/{b}/{printer}"),
                Some(Value::String(label(n))),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["data"]["status"], "queued");
    }
    sim.wait_until(|s| s.labels_printed >= 3, LIMIT)
        .await
        .expect("three labels");
    eventually("the printer faulted, paper out, its queue kept", || async {
        let p = printer_status(&api).await;
        p["device"]["state"] == "faulted"
            && p["device"]["problems"] == serde_json::json!(["paper_out"])
            && p["queued"] == 7
            && p["printer_id"] == printer.0
    })
    .await;
    let (_, status) = api.get("/v1/edge/status").await;
    assert!(
        status["data"]["devices"]["attention"]
            .as_array()
            .is_some_and(|a| a.iter().any(|t| t == "Dock labels: paper out")),
        "{status}"
    );
    eventually("the waiting job to say why", || async {
        jobs(&api, b, printer.0)
            .await
            .iter()
            .any(|j| j["status"] == "queued" && j["error"] == "paper out")
    })
    .await;
    assert_eq!(sim.stats().labels_printed, 3);

    sim.load_paper(None);
    sim.wait_for_labels(10, LIMIT).await.expect("every label");
    eventually("every job printed", || async {
        let all = jobs(&api, b, printer.0).await;
        all.len() == 10 && all.iter().all(|j| j["status"] == "printed")
    })
    .await;
    let texts = printed(&sim);
    let unique: HashSet<&String> = texts.iter().collect();
    assert_eq!((texts.len(), unique.len()), (10, 10), "{texts:?}");
    for n in 1..=10 {
        assert!(texts.contains(&format!("Label {n}")), "{texts:?}");
    }
    let p = printer_status(&api).await;
    assert_eq!(p["queued"], 0, "{p}");
    assert!(
        jobs(&api, b, printer.0)
            .await
            .iter()
            .all(|j| j["error"].is_null())
    );

    // A job sent to the printer in the cloud arrives by sync, prints here,
    // and the cloud learns that it printed.
    let job = rig
        .cloud
        .submit_job(rig.caller, printer, label(11).into_bytes())
        .await
        .expect("cloud job");
    sim.wait_for_labels(11, LIMIT)
        .await
        .expect("the cloud's label");
    assert!(printed(&sim).contains(&"Label 11".to_owned()));
    eventually("the cloud's job printed", || async {
        rig.cloud
            .print_jobs(rig.business, printer)
            .await
            .is_ok_and(|jobs| {
                jobs.iter()
                    .any(|j| j.id == job.id && j.status == JobStatus::Printed)
            })
    })
    .await;
    assert_eq!(sim.stats().labels_printed, 11);

    edge.stop().await;
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn jobs_queued_for_an_unreachable_printer_survive_a_restart_and_print_once() {
    let rig = Rig::start("dev-restart", false).await;
    let b = rig.business.0;
    let sim = Simulator::start().await.expect("printer simulator");
    // Takes connections, answers nothing: no answer to ~HS is not a yes.
    sim.set_stalled(true);
    let printer = cloud_printer(&rig, "Pack labels").await;
    let mut settings = rig.edge_settings();
    settings.devices.printers = vec![printer_device("Pack labels", &sim)];
    let edge = RunningEdge::start_with_bus(settings.clone(), SimBus::new()).await;
    let api = Api::new(&edge, &rig.key);
    api.ready().await;
    eventually("the printer record at the edge", || async {
        edge.wms
            .printers(rig.business)
            .await
            .is_ok_and(|p| p.iter().any(|p| p.id == printer))
    })
    .await;
    for n in 1..=3 {
        let path = format!("/v1/printers/jobs/{b}/{printer}");
        let (status, body) = api.call("POST", &path, Some(Value::String(label(n)))).await;
        assert_eq!(status, 200, "{body}");
    }
    eventually("the printer unreachable, three jobs waiting", || async {
        let p = printer_status(&api).await;
        p["device"]["state"] == "unreachable" && p["queued"] == 3
    })
    .await;
    edge.stop().await;
    assert_eq!(sim.stats().labels_printed, 0);

    let edge = RunningEdge::start_with_bus(settings, SimBus::new()).await;
    let api = Api::new(&edge, &rig.key);
    api.ready().await;
    eventually("the queue handed to the new driver", || async {
        printer_status(&api).await["queued"] == 3
    })
    .await;
    sim.set_stalled(false);
    sim.wait_for_labels(3, LIMIT)
        .await
        .expect("the three labels");
    eventually("the jobs printed", || async {
        let all = jobs(&api, b, printer.0).await;
        all.len() == 3 && all.iter().all(|j| j["status"] == "printed")
    })
    .await;
    let mut texts = printed(&sim);
    texts.sort();
    assert_eq!(texts, ["Label 1", "Label 2", "Label 3"]);

    edge.stop().await;
    rig.stop().await;
}

/// An edge that has never been online, with a provisioned key: enough for
/// the scale routes.
async fn offline_edge(dir: &tempfile::TempDir, scales: Vec<ScaleDevice>) -> (RunningEdge, Api) {
    let key = "dpk_scales_0123456789abcdef0123456789";
    let mut settings = offline_settings(dir.path(), "scales", key).await;
    settings.devices.scales = scales;
    settings.check().expect("valid settings");
    let edge = RunningEdge::start_with_bus(settings, SimBus::new()).await;
    let api = Api::new(&edge, key);
    api.ready().await;
    (edge, api)
}

fn scale(id: &str, protocol: ScaleProtocol) -> ScaleDevice {
    ScaleDevice {
        poll_interval_ms: Some(50),
        timeout_ms: Some(300),
        ..ScaleDevice::new(id, protocol)
    }
}

fn weight(text: &str) -> Weight {
    text.parse().expect("weight")
}

fn assert_error(status: u16, body: &Value, code: u16, says: &str) {
    assert_eq!(status, code, "{body}");
    assert_eq!(body["error"], 1, "{body}");
    assert_eq!(body["code"], code, "{body}");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(message.contains(says), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn scale_routes_against_an_mt_sics_scale() {
    let sim = SerialScaleSim::start(SimProtocol::MtSics, Unit::Kilogram).expect("scale sim");
    sim.set_weight(weight("1.250"));
    let dir = tempfile::tempdir().expect("tempdir");
    let mut device = scale("pack-scale", ScaleProtocol::MtSics);
    device.port = Some(sim.path().to_owned());
    let (edge, api) = offline_edge(&dir, vec![device]).await;
    let path = "/v1/edge/scales/pack-scale";

    eventually("a weight", || async {
        api.get(&format!("{path}/weight")).await.1["data"]["state"] == "weight"
    })
    .await;
    let (status, body) = api.get(&format!("{path}/weight")).await;
    assert_eq!(status, 200, "{body}");
    let w = &body["data"];
    assert_eq!(
        (&w["weight"], &w["unit"], &w["grams"], &w["stable"]),
        (
            &Value::from("1.250"),
            &Value::from("kg"),
            &Value::from(1250),
            &Value::from(true)
        ),
        "{body}"
    );
    assert!(w["at"].is_string(), "{body}");

    sim.set_weight(weight("2.005"));
    let (status, body) = api
        .get(&format!("{path}/weight?stable=true&timeout_ms=5000"))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["stable"], true, "{body}");

    // Moving: no stable weight in time is a 504 with the error body.
    sim.set_stable(false);
    let (status, body) = api
        .get(&format!("{path}/weight?stable=true&timeout_ms=400"))
        .await;
    assert_error(status, &body, 504, "did not settle");
    let (status, body) = api
        .get(&format!("{path}/weight?stable=true&timeout_ms=0"))
        .await;
    assert_error(status, &body, 422, "timeout_ms");
    let (status, body) = api.get(&format!("{path}/weight?stable=maybe")).await;
    assert_eq!(status, 400, "{body}");
    sim.set_stable(true);

    let (status, body) = api.call("POST", &format!("{path}/tare"), None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["tare"]["grams"], 2005, "{body}");
    let (status, body) = api.call("POST", &format!("{path}/zero"), None).await;
    assert_eq!(status, 200, "{body}");

    let (status, body) = api.get("/v1/edge/scales/nope/weight").await;
    assert_error(status, &body, 404, "nope");
    let (status, body) = api.get("/v1/edge/devices").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["scales"][0]["id"], "pack-scale", "{body}");
    let (status, body) = api.get("/v1/openapi.json").await;
    assert_eq!(status, 200);
    for route in [
        "/v1/edge/devices",
        "/v1/edge/scales/{scale_id}/weight",
        "/v1/edge/stations/{station}/task",
    ] {
        assert!(body["paths"][route].is_object(), "{route} not described");
    }
    let wrong = Api::new(&edge, "dpk_not_a_key_of_this_edge_0000000");
    let (status, body) = wrong.get(&format!("{path}/weight")).await;
    assert_error(status, &body, 401, "");

    edge.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn scale_routes_against_a_modbus_tcp_scale() {
    let map = RegisterMap {
        table: Table::Holding,
        address: 100,
        width: Width::U32,
        word_order: WordOrder::HighFirst,
        signed: true,
        decimals: 1,
        unit: Unit::Gram,
        stable: Some(StatusBit {
            table: Table::Holding,
            address: 102,
            bit: 3,
            invert: false,
        }),
    };
    let sim = ModbusScaleSim::start(map).await.expect("modbus sim");
    sim.set_weight(weight("950.4")).expect("fits");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut device = scale("dock-scale", ScaleProtocol::ModbusTcp);
    device.address = Some(sim.address().to_string());
    device.registers = Some(map);
    let (edge, api) = offline_edge(&dir, vec![device]).await;
    let path = "/v1/edge/scales/dock-scale";

    let (status, body) = api
        .get(&format!("{path}/weight?stable=true&timeout_ms=5000"))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (
            &body["data"]["weight"],
            &body["data"]["unit"],
            &body["data"]["grams"]
        ),
        (&Value::from("950.4"), &Value::from("g"), &Value::from(950)),
        "{body}"
    );
    // Modbus scales have no zero or tare command.
    let (status, body) = api.call("POST", &format!("{path}/zero"), None).await;
    assert_error(status, &body, 409, "not supported");
    let (status, body) = api.call("POST", &format!("{path}/tare"), None).await;
    assert_error(status, &body, 409, "not supported");

    // A scale that stops answering: a fault, and no stable weight in time.
    sim.set_silent(true);
    let (status, body) = api
        .get(&format!("{path}/weight?stable=true&timeout_ms=1500"))
        .await;
    assert!(status == 504 || status == 503, "{body}");
    assert_eq!(body["error"], 1, "{body}");
    eventually("the fault shown", || async {
        api.get(&format!("{path}/weight")).await.1["data"]["state"] == "fault"
    })
    .await;
    let (_, status) = api.get("/v1/edge/status").await;
    assert!(
        status["data"]["devices"]["attention"][0]
            .as_str()
            .is_some_and(|a| a.starts_with("dock-scale: ")),
        "{status}"
    );

    edge.stop().await;
}

/// The numbers of the edge's write routes at the extremes: the warehouse
/// routes it serves (the same code as the cloud's) and its own (a
/// station's task, scan and pack; a scale's weight, zero and tare). Each
/// answers a 4xx with the error body, naming a numeric field it refuses,
/// and the log does not move.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn extreme_numbers_at_the_edge_answer_4xx_and_write_nothing() {
    let sim = SerialScaleSim::start(SimProtocol::MtSics, Unit::Kilogram).expect("scale sim");
    sim.set_weight(weight("1.250"));
    let dir = tempfile::tempdir().expect("tempdir");
    let mut device = scale("pack-scale", ScaleProtocol::MtSics);
    device.port = Some(sim.path().to_owned());
    let key = "dpk_numbers_0123456789abcdef0123456789";
    let mut settings = offline_settings(dir.path(), "numbers", key).await;
    settings.devices.scales = vec![device];
    settings.stations = vec![depot_edge::devices::config::StationConfig {
        name: "pack-1".into(),
        scanners: vec![],
        scale: Some("pack-scale".into()),
        printer: None,
        tolerance_g: 20,
        tolerance_pct: 5.0,
        packaging_g: 100,
        weigh_timeout_ms: 3000,
    }];
    settings.check().expect("valid settings");
    let edge = RunningEdge::start_with_bus(settings, SimBus::new()).await;
    let api = Api::new(&edge, key);
    api.ready().await;
    // What the business's log holds; a station logs each answer it gives,
    // refusals too, as `station.scanned` for its screen: not a write.
    let log = || async {
        edge.wms
            .events_since(0, 1_000_000)
            .await
            .expect("events")
            .into_iter()
            .filter(|e| e.kind != "station.scanned")
            .count()
    };
    let before = log().await;
    let extremes = |max: i64| {
        vec![
            serde_json::json!(i64::MIN),
            serde_json::json!(i64::MIN + 1),
            serde_json::json!(-1),
            serde_json::json!(0),
            serde_json::json!(max + 1),
            serde_json::json!(i64::MAX),
            serde_json::json!(u64::MAX),
            serde_json::json!(1e300),
            serde_json::json!(1.5),
            serde_json::json!("5"),
        ]
    };
    let refused = |status: u16, body: &Value, what: &str, field: Option<&str>| {
        assert!((400..500).contains(&status), "{what}: {status} {body}");
        assert_eq!(body["error"], 1, "{what}: {body}");
        assert_eq!(body["code"], status, "{what}: {body}");
        if let (422, Some(f)) = (status, field) {
            let named = body["errors"]
                .as_array()
                .is_some_and(|e| e.iter().any(|e| e["name"] == f));
            assert!(named, "{what}: {body}");
        }
    };
    let b = 1;
    let q = depot_protocol::stock::MAX_QUANTITY;
    // (method, path, body, field, the field's maximum; 0: an id).
    let cases: Vec<(&str, String, Value, &str, i64)> = vec![
        (
            "POST",
            format!("/v1/inventory/{b}/adjust"),
            serde_json::json!({"warehouse_id": 1, "item_id": 1, "reason": "received", "quantity": 1}),
            "quantity",
            q,
        ),
        (
            "POST",
            format!("/v1/inventory/{b}/adjust"),
            serde_json::json!({"warehouse_id": 1, "sku": "A", "reason": "adjusted", "delta": 1}),
            "delta",
            q,
        ),
        (
            "POST",
            format!("/v1/inventory/{b}/adjust"),
            serde_json::json!({"warehouse_id": 1, "sku": "A", "reason": "cycle_count", "counted": 1}),
            "counted",
            q,
        ),
        (
            "POST",
            format!("/v1/inventory/{b}/adjust"),
            serde_json::json!({"warehouse_id": 1, "item_id": 1, "reason": "received", "quantity": 1}),
            "item_id",
            0,
        ),
        (
            "POST",
            format!("/v1/inventory/{b}/adjust"),
            serde_json::json!({"warehouse_id": 1, "item_id": 1, "reason": "received", "quantity": 1}),
            "warehouse_id",
            0,
        ),
        (
            "POST",
            format!("/v1/inbounds/{b}/reception"),
            serde_json::json!({"inbound_id": 1, "lines": [{"code": "A", "quantity": 1}]}),
            "lines[0].quantity",
            q,
        ),
        (
            "POST",
            format!("/v1/inbounds/{b}/reception"),
            serde_json::json!({"inbound_id": 1, "lines": [{"code": "A", "accepted": 1, "rejected": 1, "reason": "torn"}]}),
            "lines[0].accepted",
            q,
        ),
        (
            "POST",
            format!("/v1/inbounds/{b}/reception"),
            serde_json::json!({"inbound_id": 1, "lines": [{"code": "A"}]}),
            "inbound_id",
            0,
        ),
        (
            "POST",
            format!("/v1/picking/{b}/waves/create"),
            serde_json::json!({"warehouse_id": 1, "max_orders": 1}),
            "max_orders",
            200,
        ),
        (
            "POST",
            format!("/v1/picking/{b}/item/scan"),
            serde_json::json!({"wave_id": 1, "code": "A", "quantity": 1}),
            "quantity",
            10_000,
        ),
        (
            "POST",
            format!("/v1/picking/{b}/item/scan"),
            serde_json::json!({"wave_id": 1, "order_id": 1, "code": "A"}),
            "wave_id",
            0,
        ),
        (
            "POST",
            format!("/v1/packing/{b}/pack-order"),
            serde_json::json!({"order_id": 1, "items": [{"code": "A", "quantity": 1}], "packages": [{"weight_g": 500}]}),
            "items[0].quantity",
            1_000_000,
        ),
        (
            "POST",
            format!("/v1/packing/{b}/pack-order"),
            serde_json::json!({"order_id": 1, "items": [{"code": "A"}], "packages": [{"weight_g": 500}]}),
            "packages[0].weight_g",
            1_000_000,
        ),
        (
            "POST",
            format!("/v1/packing/{b}/pack-order"),
            serde_json::json!({"order_id": 1, "items": [{"code": "A"}], "packages": [{"weight_g": 500, "length_mm": 1, "width_mm": 1, "height_mm": 1}]}),
            "packages[0].width_mm",
            10_000,
        ),
        (
            "POST",
            format!("/v1/shipments/{b}/generate-label"),
            serde_json::json!({"shipment_id": 1, "format": "zpl", "package": 1}),
            "shipment_id",
            0,
        ),
        (
            "POST",
            format!("/v1/shipments/{b}/generate-label"),
            serde_json::json!({"shipment_id": 1, "format": "zpl", "package": 1}),
            "package",
            50,
        ),
        (
            "PUT",
            "/v1/edge/stations/pack-1/task".into(),
            serde_json::json!({"task": "picking", "wave_id": 1, "order_id": 1}),
            "wave_id",
            0,
        ),
        (
            "PUT",
            "/v1/edge/stations/pack-1/task".into(),
            serde_json::json!({"task": "picking", "wave_id": 1, "order_id": 1}),
            "order_id",
            0,
        ),
        (
            "PUT",
            "/v1/edge/stations/pack-1/task".into(),
            serde_json::json!({"task": "receiving", "inbound_id": 1}),
            "inbound_id",
            0,
        ),
        (
            "PUT",
            "/v1/edge/stations/pack-1/task".into(),
            serde_json::json!({"task": "packing", "order_id": 1}),
            "order_id",
            0,
        ),
        (
            "POST",
            "/v1/edge/stations/pack-1/scan".into(),
            serde_json::json!({"code": "A"}),
            "code",
            0,
        ),
    ];
    for (method, path, body, field, max) in cases {
        for value in extremes(max) {
            let mut body = body.clone();
            let mut at = &mut body;
            for part in field.split('.') {
                match part.split_once('[') {
                    Some((k, i)) => {
                        at = &mut at[k][i.trim_end_matches(']').parse::<usize>().unwrap_or(0)]
                    }
                    None => at = &mut at[part],
                }
            }
            *at = value.clone();
            let (status, answer) = api.call(method, &path, Some(body)).await;
            let what = format!("{method} {path} {field} = {value}");
            refused(
                status,
                &answer,
                &what,
                (max > 0 || field == "code").then_some(field),
            );
            assert_eq!(log().await, before, "{what} wrote");
        }
    }
    // Ids in paths, and the numbers of a scale's query string.
    for id in [
        "0",
        "-1",
        "9223372036854775807",
        "9223372036854775808",
        "1e300",
        "1.5",
    ] {
        for (method, path) in [
            ("PUT", format!("/v1/orders/{b}/{id}/status")),
            (
                "POST",
                format!("/v1/outbounds/{b}/dispatch-runs/{id}/close"),
            ),
            ("POST", format!("/v1/printers/jobs/{b}/{id}")),
            ("POST", format!("/v1/edge/scales/{id}/zero")),
            ("POST", format!("/v1/edge/scales/{id}/tare")),
            ("POST", format!("/v1/edge/stations/{id}/pack")),
            ("POST", format!("/v1/edge/stations/{id}/release")),
            ("POST", format!("/v1/inventory/{id}/adjust")),
        ] {
            let body = serde_json::json!({"status": "cancelled"});
            let (status, answer) = api.call(method, &path, Some(body)).await;
            refused(status, &answer, &format!("{method} {path}"), None);
        }
        let path = format!("/v1/edge/scales/pack-scale/weight?stable=true&timeout_ms={id}");
        let (status, answer) = api.get(&path).await;
        refused(status, &answer, &path, Some("timeout_ms"));
    }
    for timeout in ["30001", "18446744073709551615", "18446744073709551616"] {
        let path = format!("/v1/edge/scales/pack-scale/weight?stable=true&timeout_ms={timeout}");
        let (status, answer) = api.get(&path).await;
        refused(status, &answer, &path, Some("timeout_ms"));
    }
    // Packing with nothing scanned: refused before the scale is asked.
    let (status, answer) = api
        .call("POST", "/v1/edge/stations/pack-1/pack", None)
        .await;
    refused(status, &answer, "pack", None);
    assert_eq!(log().await, before);
    edge.stop().await;
}
