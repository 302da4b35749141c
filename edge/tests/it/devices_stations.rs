//! Stations at the edge, with simulated devices: a packing station's USB
//! scanner scans an order, its scale weighs it and its printer prints the
//! shipping label; a package of the wrong weight is refused with expected
//! and measured, and nothing is packed. A station's serial scanner picks
//! with the same answers as the HTTP scan route, and receives.

use crate::common;
use common::RunningEdge;
use common::devices::{Api, LIMIT, cloud_printer, printer_device};
use depot_edge::devices::config::{ScaleDevice, ScaleProtocol, ScannerDevice, StationConfig};
use depot_hardware::printer::sim::Simulator;
use depot_hardware::scale::sim::{SerialScaleSim, SimProtocol};
use depot_hardware::scale::{Unit, Weight};
use depot_hardware::scanner::registry::{HidDeviceInfo, ScannerMatch, ScannerMode};
use depot_hardware::scanner::serial::{LineEnding, SerialScannerConfig};
use depot_hardware::scanner::sim::encode::WedgeEncoding;
use depot_hardware::scanner::sim::{SerialSim, SimBus};
use depot_protocol::tenant::Caller;
use depot_protocol::{OrderId, OrderStatus, WarehouseId};
use depot_testkit::{eventually, rig::Rig};
use depot_wms::Wms;
use serde_json::{Value, json};

const MUG_GTIN: &str = "4006381333931";

/// MUG (300 g, with a GTIN) and TEA (250 g), 50 of each in stock.
async fn catalog(rig: &Rig) {
    for item in [
        json!({"sku": "MUG", "name": "Mug", "gtin": MUG_GTIN, "weight_g": 300}),
        json!({"sku": "TEA", "name": "Tea", "weight_g": 250}),
    ] {
        let sku = item["sku"].clone();
        rig.cloud
            .create_item(rig.business, serde_json::from_value(item).expect("item"))
            .await
            .expect("item");
        let adjust = json!({"warehouse_id": rig.warehouse.0, "sku": sku, "reason": "received", "quantity": 50});
        rig.cloud
            .adjust(rig.caller, serde_json::from_value(adjust).expect("adjust"))
            .await
            .expect("stock");
    }
}

async fn confirmed_order(
    wms: &Wms,
    caller: Caller,
    w: WarehouseId,
    reference: &str,
    lines: Value,
) -> OrderId {
    let req = json!({"channel": "web", "external_ref": reference, "warehouse_id": w.0, "lines": lines,
               "shipping_address": {"name": "Łucja Wiśniewska", "line1": "ul. Floriańska 14/3",
                                    "postal_code": "31-021", "city": "Kraków", "country": "PL"}});
    let (o, _) = wms
        .create_order(caller, serde_json::from_value(req).expect("order"))
        .await
        .expect("order");
    wms.set_order_status(caller, o.id, OrderStatus::Confirmed, None)
        .await
        .expect("confirm");
    o.id
}

async fn at_edge(edge: &RunningEdge, rig: &Rig, orders: &[OrderId]) {
    eventually("the orders at the edge", || async {
        for o in orders {
            if !edge
                .wms
                .order(rig.business, *o)
                .await
                .is_ok_and(|o| o.status == OrderStatus::Confirmed)
            {
                return false;
            }
        }
        true
    })
    .await;
}

/// Follows the station events of the log.
struct Events {
    after: i64,
}

impl Events {
    /// The next `station.scanned` event's payload, which must be what the
    /// event catalogue documents (docs/events.md).
    async fn next(&mut self, api: &Api, b: i64) -> Value {
        let events = api.events_after(b, self.after, "station.scanned").await;
        let first = &events[0];
        self.after = first["seq"].as_i64().expect("seq");
        let entry = depot_protocol::catalogue::lookup("station.scanned").expect("catalogued");
        assert_eq!(first["version"], entry.version);
        if let Err(problems) = depot_protocol::catalogue::schema::check(entry, &first["payload"]) {
            panic!("{problems:#?}\n{}", first["payload"]);
        }
        first["payload"].clone()
    }
}

/// Sets the floor station's task.
async fn set_task(api: &Api, task: Value) -> (u16, Value) {
    api.call("PUT", "/v1/edge/stations/floor-1/task", Some(task))
        .await
}

async fn status_at(edge: &RunningEdge, rig: &Rig, order: OrderId) -> OrderStatus {
    edge.wms
        .order(rig.business, order)
        .await
        .expect("order")
        .status
}

fn weight(text: &str) -> Weight {
    text.parse().expect("weight")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_packing_station_weighs_packs_and_prints_or_refuses_a_wrong_weight() {
    let rig = Rig::start("dev-pack", false).await;
    let (b, w, caller) = (rig.business.0, rig.warehouse, rig.caller);
    catalog(&rig).await;
    let full = confirmed_order(
        &rig.cloud,
        caller,
        w,
        "P1",
        json!([{"sku": "MUG", "quantity": 2}, {"sku": "TEA", "quantity": 1}]),
    )
    .await;
    let tea = confirmed_order(
        &rig.cloud,
        caller,
        w,
        "P2",
        json!([{"sku": "TEA", "quantity": 1}]),
    )
    .await;
    let printer_sim = Simulator::start().await.expect("printer simulator");
    cloud_printer(&rig, "Pack labels").await;
    let scale = SerialScaleSim::start(SimProtocol::MtSics, Unit::Kilogram).expect("scale");
    // 2 × 300 g + 250 g + 100 g of packaging = 950 g; 5 g over.
    scale.set_weight(weight("0.955"));
    let bus = SimBus::new();
    let gun = bus.plug(HidDeviceInfo {
        path: "/dev/hidraw7".into(),
        vendor_id: 0x0C2E,
        product_id: 0x0B61,
        serial: Some("GUN1".into()),
        usb_path: Some("1-1.2".into()),
        usage_page: 0x01,
        usage: 0x06,
    });

    let mut settings = rig.edge_settings();
    settings.devices.printers = vec![printer_device("Pack labels", &printer_sim)];
    settings.devices.scales = vec![ScaleDevice {
        port: Some(scale.path().to_owned()),
        poll_interval_ms: Some(50),
        timeout_ms: Some(300),
        ..ScaleDevice::new("pack-scale", ScaleProtocol::MtSics)
    }];
    settings.devices.scanners = vec![ScannerDevice::Usb(ScannerMatch {
        name: "pack-gun".into(),
        vendor_id: 0x0C2E,
        product_id: 0x0B61,
        serial: Some("GUN1".into()),
        usb_path: None,
        mode: ScannerMode::default(),
    })];
    settings.stations = vec![StationConfig {
        name: "pack-1".into(),
        scanners: vec!["pack-gun".into()],
        scale: Some("pack-scale".into()),
        printer: Some("Pack labels".into()),
        tolerance_g: 20,
        tolerance_pct: 5.0,
        packaging_g: 100,
        weigh_timeout_ms: 3000,
    }];
    settings.check().expect("valid settings");
    let edge = RunningEdge::start_with_bus(settings, bus).await;
    let api = Api::new(&edge, &rig.key);
    api.ready().await;
    at_edge(&edge, &rig, &[full, tea]).await;
    eventually("the scanner connected and the printer known", || async {
        let (_, body) = api.get("/v1/edge/stations").await;
        let s = &body["data"][0];
        s["scanners"][0]["connected"] == true && s["printer"]["printer_id"].is_i64()
    })
    .await;
    let mut events = Events { after: 0 };
    let scan = |code: &str| {
        gun.type_text(code, &WedgeEncoding::default())
            .expect("typed");
    };

    // The order, scanned by GTIN and by SKU; the last scan packs it.
    let (status, body) = api
        .call(
            "PUT",
            "/v1/edge/stations/pack-1/task",
            Some(json!({"task": "packing", "order_id": full.0})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body["data"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("scan its 3 units")),
        "{body}"
    );
    assert_eq!(
        events.next(&api, b).await["input"]["task"]["task"],
        "packing"
    );
    scan(MUG_GTIN);
    let e = events.next(&api, b).await;
    assert_eq!(
        (e["ok"].clone(), e["message"].clone()),
        (
            json!(true),
            json!(format!("MUG 1 of 2; 2 units left in order {full}"))
        ),
        "{e}"
    );
    assert_eq!(e["input"], json!({"scan": MUG_GTIN, "scanner": "pack-gun"}));
    scan("MUG");
    events.next(&api, b).await;
    scan("TEA");
    let e = events.next(&api, b).await;
    assert_eq!(e["ok"], true, "{e}");
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains(&format!("order {full} packed"))),
        "{e}"
    );
    let shipment = &e["result"]["pack"]["shipment"];
    assert_eq!(shipment["packages"][0]["weight_g"], 955, "{e}");
    let tracking = shipment["tracking_number"]
        .as_str()
        .expect("tracking number")
        .to_owned();
    let labels = printer_sim
        .wait_for_labels(1, LIMIT)
        .await
        .expect("the label");
    assert!(
        labels[0].fields.iter().any(|f| f.data.contains(&tracking)),
        "{tracking} not on {:?}",
        labels[0].fields
    );
    let job = e["result"]["label_job"]["id"].as_i64().expect("job id");
    let printer = e["result"]["label_job"]["printer_id"]
        .as_i64()
        .expect("printer id");
    eventually("the label's job printed", || async {
        let (_, body) = api.get(&format!("/v1/printers/jobs/{b}/{printer}")).await;
        body["data"].as_array().is_some_and(|jobs| {
            jobs.iter()
                .any(|j| j["id"] == job && j["status"] == "printed")
        })
    })
    .await;
    assert_eq!(status_at(&edge, &rig, full).await, OrderStatus::Packed);
    let (_, body) = api.get("/v1/edge/stations").await;
    assert_eq!(body["data"][0]["task"], json!({"task": "idle"}), "{body}");

    // The wrong item, then the wrong weight: refused, nothing packed.
    api.call(
        "PUT",
        "/v1/edge/stations/pack-1/task",
        Some(json!({"task": "packing", "order_id": tea.0})),
    )
    .await;
    events.next(&api, b).await;
    scan("MUG");
    let e = events.next(&api, b).await;
    assert_eq!(
        (e["ok"].clone(), e["status"].clone()),
        (json!(false), json!(422)),
        "{e}"
    );
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("MUG is not in order")),
        "{e}"
    );
    scale.set_weight(weight("1.5"));
    scan("TEA");
    let e = events.next(&api, b).await;
    assert_eq!(e["status"], 422, "{e}");
    let message = e["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("1500 g") && message.contains("350 g"),
        "{e}"
    );
    assert_eq!(e["errors"][0]["name"], "weight_g", "{e}");
    assert_eq!(status_at(&edge, &rig, tea).await, OrderStatus::Confirmed);
    let (status, body) = api
        .call("POST", "/v1/edge/stations/pack-1/pack", None)
        .await;
    assert_eq!(
        (status, body["error"].clone(), body["code"].clone()),
        (422, json!(1), json!(422)),
        "{body}"
    );
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("1500 g")),
        "{body}"
    );
    events.next(&api, b).await;
    assert_eq!(printer_sim.stats().labels_printed, 1);

    // Right weight, packed by request.
    scale.set_weight(weight("0.36"));
    let (status, body) = api
        .call("POST", "/v1/edge/stations/pack-1/pack", None)
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body["data"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(&format!("order {tea} packed"))),
        "{body}"
    );
    printer_sim
        .wait_for_labels(2, LIMIT)
        .await
        .expect("the second label");
    assert_eq!(status_at(&edge, &rig, tea).await, OrderStatus::Packed);

    // Packing an order that is packed already, or at an unknown station.
    let (status, body) = api
        .call(
            "PUT",
            "/v1/edge/stations/pack-1/task",
            Some(json!({"task": "packing", "order_id": tea.0})),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    let (status, body) = api.call("POST", "/v1/edge/stations/nope/pack", None).await;
    assert_eq!((status, body["error"].clone()), (404, json!(1)), "{body}");
    let (status, body) = api
        .call(
            "PUT",
            "/v1/edge/stations/pack-1/task",
            Some(json!({"task": "packing"})),
        )
        .await;
    assert_eq!(
        (status, body["errors"][0]["name"].clone()),
        (422, json!("order_id")),
        "{body}"
    );

    drop(gun);
    edge.stop().await;
    rig.stop().await;
}

/// A scan result without the ids that differ between two waves.
fn without_ids(mut r: Value) -> Value {
    if let Some(o) = r.as_object_mut() {
        for id in ["wave_id", "order_id", "line_id"] {
            o.remove(id);
        }
    }
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_station_scanner_picks_as_the_http_route_does_and_receives() {
    let rig = Rig::start("dev-pick", false).await;
    let (b, w, caller) = (rig.business.0, rig.warehouse, rig.caller);
    catalog(&rig).await;
    let lines = json!([{"sku": "MUG", "quantity": 2}]);
    let first = confirmed_order(&rig.cloud, caller, w, "K1", lines.clone()).await;
    let second = confirmed_order(&rig.cloud, caller, w, "K2", lines).await;
    let inbound = rig
        .cloud
        .create_inbound(
            rig.business,
            serde_json::from_value(json!({"warehouse_id": w.0, "reference": "PO-1", "supplier": "Acme", "lines": [{"sku": "TEA", "quantity": 10}]}))
                .expect("inbound"),
        )
        .await
        .expect("inbound")
        .id;
    let mut gun = SerialSim::pty().expect("serial scanner");
    let mut settings = rig.edge_settings();
    settings.devices.scanners = vec![ScannerDevice::Serial(SerialScannerConfig::new(
        "floor-gun",
        gun.path(),
    ))];
    settings.stations = vec![StationConfig {
        name: "floor-1".into(),
        scanners: vec!["floor-gun".into()],
        scale: None,
        printer: None,
        tolerance_g: 20,
        tolerance_pct: 5.0,
        packaging_g: 0,
        weigh_timeout_ms: 5000,
    }];
    let edge = RunningEdge::start_with_bus(settings, SimBus::new()).await;
    let api = Api::new(&edge, &rig.key);
    api.ready().await;
    at_edge(&edge, &rig, &[first, second]).await;
    eventually("the inbound order at the edge", || async {
        edge.wms.inbound(rig.business, inbound).await.is_ok()
    })
    .await;
    eventually("the scanner connected", || async {
        api.get("/v1/edge/devices").await.1["data"]["scanners"][0]["connected"] == true
    })
    .await;
    // One wave per order: the same pick list twice.
    let mut waves = Vec::new();
    for _ in 0..2 {
        let (status, body) = api
            .call(
                "POST",
                &format!("/v1/picking/{b}/waves/create"),
                Some(json!({"warehouse_id": w.0, "max_orders": 1})),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        waves.push(body["data"]["id"].as_i64().expect("wave id"));
    }
    let mut scan = |code: &str| gun.scan(code, None, LineEnding::CrLf).expect("scanned");
    let mut events = Events { after: 0 };

    // The first wave over HTTP; a good scan, an unknown code, an item not
    // on the list.
    let mut http = Vec::new();
    for code in [MUG_GTIN, "NOPE-404", "TEA"] {
        let body = json!({"wave_id": waves[0], "order_id": first.0, "code": code});
        http.push(
            api.call("POST", &format!("/v1/picking/{b}/item/scan"), Some(body))
                .await,
        );
    }
    assert_eq!(
        http.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
        [200, 404, 422]
    );

    // The second wave at the station: the same answers.
    let (status, body) = set_task(
        &api,
        json!({"task": "picking", "wave_id": waves[1], "order_id": second.0}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    events.next(&api, b).await;
    for (code, (status, answer)) in [MUG_GTIN, "NOPE-404", "TEA"].into_iter().zip(&http) {
        scan(code);
        let e = events.next(&api, b).await;
        assert_eq!(e["status"], *status, "{code}: {e}");
        if *status == 200 {
            assert_eq!(
                without_ids(e["result"].clone()),
                without_ids(answer["data"].clone()),
                "{code}"
            );
            assert_eq!(e["result"]["order_id"], second.0);
        } else {
            assert_eq!(e["message"], answer["message"], "{code}");
            assert_eq!(
                e["errors"],
                answer["errors"]
                    .as_array()
                    .cloned()
                    .map_or(json!([]), Value::Array),
                "{code}"
            );
        }
    }
    let wave = edge
        .wms
        .wave(rig.business, depot_protocol::WaveId(waves[1]))
        .await
        .expect("wave");
    assert_eq!(wave.units_picked, 1);

    // Receiving: a location not on record is refused as the task is set,
    // not at the first carton; each scan books its units into the one set.
    let (status, body) = set_task(
        &api,
        json!({"task": "receiving", "inbound_id": inbound, "location": "DOCK-1"}),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["errors"][0]["name"], "location", "{body}");
    let refused = events.next(&api, b).await;
    assert_eq!(refused["ok"], false, "{refused}");
    let warehouse = edge
        .wms
        .inbound(rig.business, inbound)
        .await
        .expect("inbound")
        .warehouse_id;
    let fields = serde_json::from_value(
        json!({"warehouse_id": warehouse.0, "code": "DOCK-1", "type": "dock"}),
    )
    .expect("fields");
    edge.wms
        .create_location(rig.business, fields)
        .await
        .expect("the dock, made at the edge");
    let (status, body) = set_task(
        &api,
        json!({"task": "receiving", "inbound_id": inbound, "location": "DOCK-1"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    events.next(&api, b).await;
    scan("TEA");
    let e = events.next(&api, b).await;
    assert_eq!(e["ok"], true, "{e}");
    assert_eq!(e["result"]["received"][0]["accepted"], 1, "{e}");
    let order = edge
        .wms
        .inbound(rig.business, inbound)
        .await
        .expect("inbound");
    assert_eq!(order.lines[0].accepted, 1);
    let (held, _, _) = edge
        .wms
        .list_locations(
            rig.business,
            depot_wms::locations::LocationFilter {
                occupied: Some(true),
                ..Default::default()
            },
            depot_protocol::Page::parse(None, None).expect("page"),
        )
        .await
        .expect("locations");
    let held: Vec<(&str, i64)> = held
        .iter()
        .map(|l| (l.record.code.as_str(), l.on_hand))
        .collect();
    assert_eq!(held, [("DOCK-1", 1)]);

    // Putaway from the scanner: the goods, then the rack's label.
    let task = e["result"]["received"][0]["putaway_task_id"].clone();
    assert!(
        task.is_i64(),
        "received at a dock makes a putaway task: {e}"
    );
    let fields =
        serde_json::from_value(json!({"warehouse_id": warehouse.0, "code": "R-1", "type": "bulk"}))
            .expect("fields");
    edge.wms
        .create_location(rig.business, fields)
        .await
        .expect("a rack");
    let (status, body) = set_task(&api, json!({"task": "putaway", "task_id": task})).await;
    assert_eq!(status, 200, "{body}");
    events.next(&api, b).await;
    scan("TEA");
    let e = events.next(&api, b).await;
    assert_eq!(e["ok"], true, "{e}");
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("scan the location")),
        "{e}"
    );
    scan("R-1");
    let e = events.next(&api, b).await;
    assert_eq!(e["ok"], true, "{e}");
    assert_eq!(e["result"]["task"]["status"], "done", "{e}");
    // No rack existed when the goods arrived: nothing was suggested.
    assert_eq!(e["result"]["task"]["suggested"], Value::Null, "{e}");
    assert_eq!(e["message"], "1 × TEA put at R-1; task done", "{e}");
    // A done task cannot be set again.
    let (status, body) = set_task(&api, json!({"task": "putaway", "task_id": task})).await;
    assert_eq!(status, 409, "{body}");
    events.next(&api, b).await;

    // Counting from the scanner: the rack's label, its goods unit by unit
    // (each adds), the label again to close it. One more than the books
    // hold asks for a recount, which the same key may not make.
    let (status, body) = api
        .call(
            "POST",
            &format!("/v1/counts/{}/create", rig.business.0),
            Some(json!({"warehouse_id": warehouse.0, "locations": ["R-1"]})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let count = body["data"]["id"].clone();
    let (status, body) = set_task(&api, json!({"task": "counting", "count_id": count})).await;
    assert_eq!(status, 200, "{body}");
    events.next(&api, b).await;
    for (code, expect) in [
        ("R-1", "counting R-1"),
        ("TEA", "R-1: 1 × TEA counted"),
        ("TEA", "R-1: 2 × TEA counted"),
        ("R-1", "R-1 counted: TEA to be recounted by someone else"),
        ("R-1", "counting R-1"),
    ] {
        scan(code);
        let e = events.next(&api, b).await;
        assert_eq!(e["ok"], true, "{e}");
        assert!(
            e["message"].as_str().is_some_and(|m| m.starts_with(expect)),
            "{code}: {e}"
        );
    }
    // Blind: the books' figure is never on the station's screen.
    scan("TEA");
    let e = events.next(&api, b).await;
    assert_eq!(e["status"], 409, "{e}");
    let (status, body) = api
        .call(
            "POST",
            &format!("/v1/counts/{}/{count}/cancel", rig.business.0),
            None,
        )
        .await;
    assert_eq!(status, 200, "{body}");

    // The returns bench: the first order goes out and comes back. The
    // parcel's RMA label opens the return; each unit is graded as the
    // task says.
    for status in [
        OrderStatus::Picking,
        OrderStatus::Packed,
        OrderStatus::Dispatched,
    ] {
        edge.wms
            .set_order_status(caller, first, status, None)
            .await
            .expect("status");
    }
    let fields = serde_json::from_value(
        json!({"warehouse_id": warehouse.0, "code": "RET-1", "type": "returns"}),
    )
    .expect("fields");
    edge.wms
        .create_location(rig.business, fields)
        .await
        .expect("a returns bay");
    let (status, body) = api
        .call(
            "POST",
            &format!("/v1/returns/{b}/create"),
            Some(json!({"order_id": first.0,
                        "lines": [{"line_no": 1, "quantity": 2, "reason": "wrong_item"}]})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let rma = body["data"]["rma"].as_str().expect("rma").to_owned();
    let return_id = body["data"]["id"].clone();
    let (status, body) = set_task(&api, json!({"task": "returns", "grade": "restock"})).await;
    assert_eq!(status, 200, "{body}");
    events.next(&api, b).await;
    scan("MUG");
    let e = events.next(&api, b).await;
    assert_eq!(e["status"], 409, "a unit before its RMA label: {e}");
    scan(&rma);
    let e = events.next(&api, b).await;
    assert_eq!(e["ok"], true, "{e}");
    scan(MUG_GTIN);
    let e = events.next(&api, b).await;
    assert_eq!(e["ok"], true, "{e}");
    assert_eq!(e["result"]["location"], "RET-1", "{e}");
    assert!(e["result"]["putaway_task_id"].is_i64(), "{e}");
    let (status, body) = set_task(
        &api,
        json!({"task": "returns", "grade": "scrap", "return_id": return_id}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    events.next(&api, b).await;
    scan("MUG");
    let e = events.next(&api, b).await;
    assert_eq!(e["ok"], true, "{e}");
    assert_eq!(e["result"]["return"]["status"], "received", "{e}");
    // A received return cannot be set again.
    let (status, body) = set_task(
        &api,
        json!({"task": "returns", "grade": "scrap", "return_id": return_id}),
    )
    .await;
    assert_eq!(status, 409, "{body}");
    events.next(&api, b).await;

    // A task set with a key that is revoked afterwards stops acting.
    let other = edge
        .wms
        .create_key(rig.business, None)
        .await
        .expect("a second key");
    let (status, body) = Api::new(&edge, &other.secret)
        .call(
            "PUT",
            "/v1/edge/stations/floor-1/task",
            Some(json!({"task": "receiving", "inbound_id": inbound, "location": "DOCK-1"})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    events.next(&api, b).await;
    edge.wms.revoke_key(other.key.id).await.expect("revoke");
    scan("TEA");
    let e = events.next(&api, b).await;
    assert_eq!(e["status"], 401, "{e}");
    let order = edge
        .wms
        .inbound(rig.business, inbound)
        .await
        .expect("inbound");
    assert_eq!(
        order.lines[0].accepted, 1,
        "nothing booked with a revoked key"
    );

    // With no task, a scan is refused and says how to set one.
    api.call(
        "PUT",
        "/v1/edge/stations/floor-1/task",
        Some(json!({"task": "idle"})),
    )
    .await;
    events.next(&api, b).await;
    scan("TEA");
    let e = events.next(&api, b).await;
    assert_eq!(e["status"], 409, "{e}");
    let (_, body) = api.get("/v1/edge/stations").await;
    assert_eq!(body["data"][0]["last"]["status"], 409, "{body}");

    edge.stop().await;
    rig.stop().await;
}
