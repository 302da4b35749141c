//! A packing station: its USB scanner scans an order, its scale weighs it
//! and its printer prints the shipping label; a package of the wrong
//! weight is refused with expected and measured, and nothing is packed.

use super::*;

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
