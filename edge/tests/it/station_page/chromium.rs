//! The page in Chromium: scans, packing, a wave's pick list, at both screen sizes.

use super::browser::*;
use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_station_page_shows_scans_in_chromium() {
    let Some((chromedriver, chromium)) = browser_binaries() else {
        return;
    };
    // No warning however little room this machine has: the Disk state
    // stays hidden.
    let mut floor = Floor::start_with("page-browser", |s| s.low_disk_mib = 0).await;
    let order = floor.order;
    let scratch = tempfile::tempdir().expect("tempdir");
    let driver = Driver::start(&chromedriver, scratch.path()).await;
    // Opened with the key in the fragment: kept, and out of the address.
    let page = open_page(&driver, &chromium, &scratch.path().join("profile"), &floor).await;
    let packing = format!("Packing order {order}");
    page.until("the station ready", Instant::now(), LIMIT, |p| {
        p["live"] == "good"
            && p["cloud"] == "good"
            && p["remaining"] == "3"
            && p["task"].as_str().is_some_and(|t| t.starts_with(&packing))
            && p["weight"] == "1.000 kg"
            && p["printer"]
                .as_str()
                .is_some_and(|t| t.contains("label-1 ready"))
            && p["disk"] == "hidden"
    })
    .await;
    let p = page.read().await;
    assert_eq!(
        (p["hash"].clone(), p["stored"].clone()),
        (json!(""), json!(true)),
        "{p}"
    );
    assert_eq!(p["focused"], "scan", "{p}");

    // The station's own scanner: accepted, one unit fewer, within a second.
    floor.scan(MUG_GTIN);
    let scanned = Instant::now();
    let accepted = format!("MUG 1 of 2; 2 units left in order {order}");
    page.until("the accepted scan", scanned, Duration::from_secs(1), |p| {
        p["result"] == "ok" && p["message"] == accepted.as_str() && p["remaining"] == "2"
    })
    .await;
    println!(
        "the scan showed {:?} after it was written",
        scanned.elapsed()
    );

    // A wrong code: the error, in red.
    floor.scan("NOPE-404");
    page.until("the refused scan", Instant::now(), LIMIT, |p| {
        p["result"] == "error"
            && p["verdict"]
                .as_str()
                .is_some_and(|v| v.contains("Rejected"))
            && p["message"]
                .as_str()
                .is_some_and(|m| m.contains("NOPE-404"))
            && p["background"] == "rgb(179, 18, 31)"
            && p["remaining"] == "2"
    })
    .await;
    let refused = page.screenshot("station-page-refused.png").await;

    // Typed into the page (a keyboard, or a wedge scanner on this computer).
    page.session.type_into("#scan", "MUG\u{E007}").await;
    let accepted = format!("MUG 2 of 2; 1 unit left in order {order}");
    page.until("the typed scan", Instant::now(), LIMIT, |p| {
        p["result"] == "ok"
            && p["message"] == accepted.as_str()
            && p["remaining"] == "1"
            && p["next"].as_str().is_some_and(|n| n.contains("TEA"))
    })
    .await;
    let p = page.read().await;
    assert_eq!(p["focused"], "scan", "{p}");

    // One mug too many: the error entry as the API sends it, by name and
    // status, never a field it does not have.
    page.session.type_into("#scan", "MUG\u{E007}").await;
    page.until("the refused extra unit", Instant::now(), LIMIT, |p| {
        p["result"] == "error" && p["errors"] == json!(["MUG: 1 more than the 2 ordered"])
    })
    .await;
    let p = page.read().await;
    assert!(
        !p["text"].as_str().unwrap_or_default().contains("undefined"),
        "{p}"
    );

    let shot = page.screenshot("station-page.png").await;
    println!(
        "station page screenshots: {} (a scan refused with its errors), {} (one refused)",
        shot.display(),
        refused.display()
    );

    // The last unit on a scale that shows too much: not packed, the page
    // says what failed and what to do, and offers both ways on.
    floor.scale.set_weight("2.000".parse().expect("weight"));
    floor.scan("TEA");
    let not_packed = format!("order {order} was not packed (the package weighs 2000 g");
    page.until("the failed pack", Instant::now(), LIMIT, |p| {
        p["result"] == "error"
            && p["message"]
                .as_str()
                .is_some_and(|m| m.starts_with(&not_packed) && m.contains("retry the pack"))
            && p["errors"][0]
                .as_str()
                .is_some_and(|e| e.starts_with("weight_g: measured 2000 g"))
            && p["retry"] == true
            && p["release"] == "Release order"
            && p["next"]
                .as_str()
                .is_some_and(|n| n.contains("Retry pack") && n.contains("Release order"))
    })
    .await;
    // The screen at its busiest, at both sizes: kept as artifacts.
    let large = page.at_size(1280, 800).await;
    let small = page.at_size(800, 480).await;
    println!(
        "station page at two sizes: {} and {}",
        large.display(),
        small.display()
    );

    // Retried from the page, still too heavy: refused again, freshly.
    let b = floor.rig.business.0;
    let logged = station_events(&floor.api, b).await;
    page.session.click("#retry").await;
    eventually("the retried pack logged", || async {
        station_events(&floor.api, b).await == logged + 1
    })
    .await;
    page.until("the retried pack refused", Instant::now(), LIMIT, |p| {
        p["result"] == "error"
            && p["message"]
                .as_str()
                .is_some_and(|m| m.starts_with(&not_packed))
            && p["note"]
                .as_str()
                .is_some_and(|n| n.starts_with("Pack requested"))
    })
    .await;
    assert_eq!(
        last_event(&floor.api, b).await["input"],
        json!({"pack": {}})
    );

    // The right weight, retried: packed, its label printed.
    floor.scale.set_weight("1.000".parse().expect("weight"));
    page.session.click("#retry").await;
    let packed = format!("order {order} packed");
    page.until("the packed order", Instant::now(), LIMIT, |p| {
        p["result"] == "ok"
            && p["message"].as_str().is_some_and(|m| m.contains(&packed))
            && p["retry"] == false
            && p["release"].is_null()
    })
    .await;
    floor
        .printer
        .wait_for_labels(1, LIMIT)
        .await
        .expect("the label");
    // Then the station waits: neutral, not a lasting green ACCEPTED, what
    // it last said still there, small.
    page.until("the idle station", Instant::now(), LIMIT, |p| {
        p["result"] == "idle"
            && p["verdict"] == "No task"
            && p["background"] == "rgb(27, 34, 44)"
            && p["note"]
                .as_str()
                .is_some_and(|n| n.starts_with("Last: ") && n.contains(&packed))
    })
    .await;
    let shot = page.screenshot("station-page-idle.png").await;
    println!("idle: {}", shot.display());
    // Opened afresh on an idle station: neutral at once.
    page.session
        .goto(&format!("{}/stations/{STATION}", floor.edge.base))
        .await;
    page.until("the idle station, reloaded", Instant::now(), LIMIT, |p| {
        p["live"] == "good" && p["result"] == "idle" && p["task"] == "No task"
    })
    .await;

    page.session.close().await;
    drop(driver);
    floor.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_station_page_walks_a_pick_list_in_chromium() {
    let Some((chromedriver, chromium)) = browser_binaries() else {
        return;
    };
    // Any disk is below this: the page warns that the box runs out of room.
    let mut floor = Floor::start_with("page-picking", |s| s.low_disk_mib = u64::MAX).await;
    let (b, order) = (floor.rig.business.0, floor.order);
    // The station turns from packing to picking: a wave made at the edge
    // of the one confirmed order.
    let (status, body) = floor
        .api
        .call(
            "POST",
            &format!("/v1/picking/{b}/waves/create"),
            Some(json!({"warehouse_id": floor.rig.warehouse.0})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let wave = body["data"]["id"].as_i64().expect("wave id");
    let (status, body) = floor
        .api
        .call(
            "PUT",
            &format!("/v1/edge/stations/{STATION}/task"),
            Some(json!({"task": "picking", "wave_id": wave})),
        )
        .await;
    assert_eq!(status, 200, "{body}");

    let scratch = tempfile::tempdir().expect("tempdir");
    let driver = Driver::start(&chromedriver, scratch.path()).await;
    let page = open_page(&driver, &chromium, &scratch.path().join("profile"), &floor).await;
    let title = format!("Picking wave {wave}");
    page.until("the pick list", Instant::now(), LIMIT, |p| {
        p["live"] == "good"
            && p["task"] == title.as_str()
            && p["remaining"] == "3"
            && p["next"] == "Pick next: MUG (2 more)"
            && p["disk"]
                .as_str()
                .is_some_and(|d| d.starts_with("warn: low: ") && d.ends_with(" MiB free"))
    })
    .await;

    // The scanner picks a mug: one fewer, and the same line next.
    floor.scan(MUG_GTIN);
    let first = format!("MUG 1 of 2; 2 left in order {order}, 2 in wave {wave}");
    page.until("the first pick", Instant::now(), LIMIT, |p| {
        p["result"] == "ok"
            && p["message"] == first.as_str()
            && p["remaining"] == "2"
            && p["next"] == "Pick next: MUG (1 more)"
    })
    .await;
    // Tea is not next, but it is on the list: taken, out of walking order.
    page.session.type_into("#scan", "TEA\u{E007}").await;
    page.until("the typed pick", Instant::now(), LIMIT, |p| {
        p["result"] == "ok" && p["remaining"] == "1" && p["next"] == "Pick next: MUG (1 more)"
    })
    .await;
    // Something not on the list: refused in red, nothing counted.
    floor.scan("NOPE-404");
    page.until("the refused pick", Instant::now(), LIMIT, |p| {
        p["result"] == "error" && p["background"] == "rgb(179, 18, 31)" && p["remaining"] == "1"
    })
    .await;
    // The last unit completes the wave: its list stays, all picked.
    floor.scan(MUG_GTIN);
    let done = format!("MUG 2 of 2; 0 left in order {order}, 0 in wave {wave}");
    page.until("the wave picked", Instant::now(), LIMIT, |p| {
        p["result"] == "ok"
            && p["message"] == done.as_str()
            && p["remaining"] == "0"
            && p["next"] == "All picked"
    })
    .await;
    let shot = page.screenshot("station-page-picking.png").await;
    println!("picking screenshot: {}", shot.display());
    let picked = floor
        .edge
        .wms
        .order(floor.rig.business, order)
        .await
        .expect("order");
    assert_eq!(picked.status, OrderStatus::Picking);

    // Released from the page: the station idle, the picks kept.
    let p = page.read().await;
    assert_eq!(
        (p["retry"].clone(), p["release"].clone()),
        (json!(false), json!("Release wave")),
        "{p}"
    );
    page.session.click("#release").await;
    let released = format!("wave {wave} released: what was picked stays picked");
    page.until("the released wave", Instant::now(), LIMIT, |p| {
        p["result"] == "ok"
            && p["message"] == released.as_str()
            && p["task"] == "No task"
            && p["release"].is_null()
    })
    .await;
    let (_, body) = floor.api.get("/v1/edge/stations").await;
    assert_eq!(body["data"][0]["task"], json!({"task": "idle"}), "{body}");
    assert_eq!(
        floor
            .edge
            .wms
            .order(floor.rig.business, order)
            .await
            .expect("order")
            .status,
        OrderStatus::Picking
    );

    page.session.close().await;
    drop(driver);
    floor.stop().await;
}
