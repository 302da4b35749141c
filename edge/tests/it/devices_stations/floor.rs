//! A station's serial scanner on the floor: picks with the same answers
//! as the HTTP scan route, receives, puts away, counts and grades returns;
//! a task set with a revoked key stops acting.

use super::*;

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
    let depot_protocol::Listed { rows: held, .. } = edge
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
