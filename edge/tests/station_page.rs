//! The station page and the keyboard scan route, on a packing station like
//! the demo's (a serial scanner, an MT-SICS scale and a ZPL printer, all
//! simulated). The route takes a typed scan down the hardware scanner's
//! path; the page is served with its assets; and, when
//! `DEPOT_TEST_CHROMEDRIVER` names a chromedriver, headless Chromium opens
//! the page and shows what the station's scanner scans within a second,
//! refusals in red with their errors as the API sends them, and scans
//! typed into the page, packing an order (a failed pack retried from the
//! page, a wave released from it) and walking a wave's pick list; at
//! 1280x800 and at 800x480 the answer, the task and what is left stay in
//! view without overlapping. A failed pack is retried or released through
//! the routes too. Screenshots are kept in
//! `$DEPOT_ARTIFACTS_DIR/station-page*.png` (target/artifacts unless told).

mod common;
#[path = "station_page/webdriver.rs"]
mod webdriver;

use common::devices::{Api, LIMIT, cloud_printer, printer_device};
use common::{Rig, RunningEdge, eventually};
use depot_edge::devices::config::{ScaleDevice, ScaleProtocol, ScannerDevice, StationConfig};
use depot_edge::settings::Settings;
use depot_hardware::printer::sim::Simulator;
use depot_hardware::scale::Unit;
use depot_hardware::scale::sim::{SerialScaleSim, SimProtocol};
use depot_hardware::scanner::serial::{LineEnding, SerialScannerConfig};
use depot_hardware::scanner::sim::{SerialSim, SimBus};
use depot_protocol::{OrderId, OrderStatus};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use webdriver::{Driver, Session};

const STATION: &str = "pack-1";
const MUG_GTIN: &str = "4006381333931";

/// A packing station with its devices, and an order of 2 MUG and 1 TEA
/// (3 units, 1000 g with the packaging) confirmed and at the edge.
struct Floor {
    rig: Rig,
    edge: RunningEdge,
    api: Api,
    gun: SerialSim,
    scale: SerialScaleSim,
    printer: Simulator,
    order: OrderId,
}

impl Floor {
    async fn start(edge_id: &str) -> Self {
        Self::start_with(edge_id, |_| {}).await
    }

    /// `start`, with the edge's settings changed by `configure`.
    async fn start_with(edge_id: &str, configure: impl FnOnce(&mut Settings)) -> Self {
        let rig = Rig::start(edge_id, false).await;
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
        let req = json!({"channel": "web", "external_ref": "S1", "warehouse_id": rig.warehouse.0,
            "shipping_address": {"name": "Γιώργος Παπαδόπουλος", "line1": "Οδός Ερμού 25",
                                 "postal_code": "105 63", "city": "Αθήνα", "country": "GR"},
            "lines": [{"sku": "MUG", "quantity": 2}, {"sku": "TEA", "quantity": 1}]});
        let (order, _) = rig
            .cloud
            .create_order(rig.caller, serde_json::from_value(req).expect("order"))
            .await
            .expect("order");
        rig.cloud
            .set_order_status(rig.caller, order.id, OrderStatus::Confirmed, None)
            .await
            .expect("confirm");
        let printer = Simulator::start().await.expect("printer simulator");
        cloud_printer(&rig, "label-1").await;
        let scale = SerialScaleSim::start(SimProtocol::MtSics, Unit::Kilogram).expect("scale");
        scale.set_weight("1.000".parse().expect("weight"));
        let gun = SerialSim::pty().expect("serial scanner");

        let mut settings = rig.edge_settings();
        settings.devices.printers = vec![printer_device("label-1", &printer)];
        settings.devices.scales = vec![ScaleDevice {
            id: "scale-1".into(),
            protocol: ScaleProtocol::MtSics,
            port: Some(scale.path().to_owned()),
            baud_rate: None,
            data_bits: None,
            parity: None,
            stop_bits: None,
            flow_control: None,
            unit: None,
            address: None,
            unit_id: None,
            registers: None,
            poll_interval_ms: Some(50),
            timeout_ms: Some(300),
        }];
        settings.devices.scanners = vec![ScannerDevice::Serial(SerialScannerConfig::new(
            "gun-1",
            gun.path(),
        ))];
        settings.stations = vec![StationConfig {
            name: STATION.into(),
            scanners: vec!["gun-1".into()],
            scale: Some("scale-1".into()),
            printer: Some("label-1".into()),
            tolerance_g: 20,
            tolerance_pct: 5.0,
            packaging_g: 150,
            weigh_timeout_ms: 3000,
        }];
        configure(&mut settings);
        settings.check().expect("valid settings");
        let edge = RunningEdge::start_with_bus(settings, SimBus::new()).await;
        let api = Api::new(&edge, &rig.key);
        api.ready().await;
        eventually("the order at the edge", || async {
            edge.wms
                .order(rig.business, order.id)
                .await
                .is_ok_and(|o| o.status == OrderStatus::Confirmed)
        })
        .await;
        eventually("the scanner, the scale and the printer ready", || async {
            let (_, body) = api.get("/v1/edge/stations").await;
            let s = &body["data"][0];
            s["scanners"][0]["connected"] == true
                && s["scale"]["state"] == "weight"
                && s["printer"]["printer_id"].is_i64()
        })
        .await;
        let (status, body) = api
            .call(
                "PUT",
                &format!("/v1/edge/stations/{STATION}/task"),
                Some(json!({"task": "packing", "order_id": order.id.0})),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        Self {
            rig,
            edge,
            api,
            gun,
            scale,
            printer,
            order: order.id,
        }
    }

    fn scan(&mut self, code: &str) {
        self.gun
            .scan(code, None, LineEnding::CrLf)
            .expect("scanned");
    }

    async fn typed(&self, body: Value) -> (u16, Value) {
        self.api
            .call(
                "POST",
                &format!("/v1/edge/stations/{STATION}/scan"),
                Some(body),
            )
            .await
    }

    /// A station route with an `Idempotency-Key`: the status, the body as
    /// it came, and whether it was a replay of the key's first answer.
    async fn keyed(&self, what: &str, key: &str, body: Option<Value>) -> (u16, Vec<u8>, bool) {
        let mut req = reqwest::Client::new()
            .post(format!(
                "{}/v1/edge/stations/{STATION}/{what}",
                self.edge.base
            ))
            .header("X-API-KEY", &self.rig.key)
            .header("Idempotency-Key", key)
            .timeout(LIMIT);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let r = req.send().await.expect("request");
        let status = r.status().as_u16();
        let replayed = r
            .headers()
            .get("idempotent-replayed")
            .is_some_and(|v| v == "true");
        (status, r.bytes().await.expect("body").to_vec(), replayed)
    }

    async fn stop(self) {
        self.edge.stop().await;
        self.rig.stop().await;
    }
}

fn json_of(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or_default()
}

/// How many `station.scanned` events the edge has.
async fn station_events(api: &Api, b: i64) -> usize {
    let (_, body) = api
        .get(&format!(
            "/v1/events/{b}/list?kind=station.scanned&length=1000"
        ))
        .await;
    body["data"]["events"].as_array().map_or(0, Vec::len)
}

/// The last `station.scanned` event's payload.
async fn last_event(api: &Api, b: i64) -> Value {
    let (_, body) = api
        .get(&format!(
            "/v1/events/{b}/list?kind=station.scanned&length=1000"
        ))
        .await;
    let events = body["data"]["events"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    events
        .last()
        .map(|e| e["payload"].clone())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_typed_scan_takes_the_scanners_path_and_the_page_is_served() {
    let mut floor = Floor::start("page-route").await;
    let b = floor.rig.business.0;
    let order = floor.order;

    // Typed, then from the scanner, then typed: one packing, in turn.
    let (status, body) = floor.typed(json!({"code": "MUG"})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["data"]["message"],
        format!("MUG 1 of 2; 2 units left in order {order}")
    );
    assert_eq!(body["data"]["result"]["packing"]["remaining"], 2, "{body}");
    let e = last_event(&floor.api, b).await;
    assert_eq!(e["input"], json!({"scan": "MUG", "scanner": "keyboard"}));
    assert_eq!(e["message"], body["data"]["message"]);
    floor.scan(MUG_GTIN);
    eventually("the scanner's scan counted", || async {
        let (_, body) = floor.api.get("/v1/edge/stations").await;
        body["data"][0]["packing"]["remaining"] == 1
    })
    .await;

    // Refusals: the engine's (the station's status and message), the
    // route's own (the spec's error body).
    let (status, body) = floor.typed(json!({"code": "NOPE-404"})).await;
    assert_eq!((status, body["error"].clone()), (404, json!(1)), "{body}");
    let e = last_event(&floor.api, b).await;
    assert_eq!(
        (e["ok"].clone(), e["status"].clone()),
        (json!(false), json!(404))
    );
    assert_eq!(e["message"], body["message"]);
    let (status, body) = floor.typed(json!({"code": "MUG"})).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["errors"][0]["name"], "MUG", "{body}");
    for bad in [
        json!({"code": ""}),
        json!({"code": "  "}),
        json!({"code": "X".repeat(8193)}),
    ] {
        let (status, body) = floor.typed(bad).await;
        assert_eq!(
            (
                status,
                body["error"].clone(),
                body["errors"][0]["name"].clone()
            ),
            (422, json!(1), json!("code")),
            "{body}"
        );
    }
    for (bad, name) in [
        (json!({"code": "TEA", "qty": 2}), "qty"),
        (json!({}), "code"),
    ] {
        let (status, body) = floor.typed(bad).await;
        assert_eq!(
            (status, body["errors"][0]["name"].clone()),
            (422, json!(name)),
            "{body}"
        );
    }
    let (status, body) = floor
        .api
        .call(
            "POST",
            "/v1/edge/stations/nope/scan",
            Some(json!({"code": "TEA"})),
        )
        .await;
    assert_eq!((status, body["error"].clone()), (404, json!(1)), "{body}");
    let anonymous = reqwest::Client::new();
    let r = anonymous
        .post(format!(
            "{}/v1/edge/stations/{STATION}/scan",
            floor.edge.base
        ))
        .json(&json!({"code": "TEA"}))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 401);
    let (_, body) = floor.api.get("/v1/edge/stations").await;
    assert_eq!(
        body["data"][0]["packing"]["remaining"], 1,
        "nothing counted"
    );

    // The last unit, typed: weighed, packed and labelled as from the scanner.
    let (status, body) = floor.typed(json!({"code": "TEA"})).await;
    assert_eq!(status, 200, "{body}");
    let message = body["data"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("order {order} packed")) && message.contains("label queued"),
        "{body}"
    );
    floor
        .printer
        .wait_for_labels(1, LIMIT)
        .await
        .expect("the label");

    // Documented.
    let (_, spec) = floor.api.get("/v1/openapi.json").await;
    let path = &spec["paths"]["/v1/edge/stations/{station}/scan"]["post"];
    assert!(path["requestBody"].is_object(), "{path}");

    // The page and its assets.
    let get = |path: String| {
        let url = format!("{}{path}", floor.edge.base);
        let client = anonymous.clone();
        async move {
            let r = client.get(url).send().await.expect("request");
            let header = |name: &str| {
                r.headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned()
            };
            let (kind, cache) = (header("content-type"), header("cache-control"));
            let status = r.status().as_u16();
            (status, kind, cache, r.text().await.expect("body"))
        }
    };
    let (status, kind, cache, page) = get(format!("/stations/{STATION}")).await;
    assert_eq!(
        (status, kind.as_str(), cache.as_str()),
        (200, "text/html; charset=utf-8", "no-cache")
    );
    assert!(page.contains(r#"data-station="pack-1""#), "{page}");
    for (asset, want) in [
        ("assets/app.js?v=", "text/javascript; charset=utf-8"),
        ("assets/style.css?v=", "text/css; charset=utf-8"),
    ] {
        let at = page
            .find(asset)
            .unwrap_or_else(|| panic!("{asset} in {page}"));
        let link = &page[at..page[at..].find('"').map_or(page.len(), |end| at + end)];
        let (status, kind, cache, body) = get(format!("/stations/{link}")).await;
        assert_eq!((status, kind.as_str()), (200, want), "{link}");
        assert!(cache.contains("immutable"), "{cache}");
        assert!(body.len() > 1000, "{link}");
    }
    let (status, kind, _, page) = get("/stations/%3Cb%3Enope".into()).await;
    assert_eq!((status, kind.as_str()), (404, "text/html; charset=utf-8"));
    assert!(
        page.contains("No such station") && page.contains("&lt;b&gt;nope"),
        "{page}"
    );
    let (status, ..) = get("/stations/assets/evil.js".into()).await;
    assert_eq!(status, 404);

    floor.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_pack_says_what_to_do_and_is_retried_or_released() {
    let floor = Floor::start("page-release").await;
    let (b, order) = (floor.rig.business.0, floor.order);
    // 1000 g expected (with the packaging); the package weighs 2 kg.
    floor.scale.set_weight("2.000".parse().expect("weight"));
    for code in ["MUG", "MUG"] {
        assert_eq!(floor.typed(json!({"code": code})).await.0, 200);
    }
    let (status, body) = floor.typed(json!({"code": "TEA"})).await;
    assert_eq!(status, 422, "{body}");
    // What failed, and what to do: the spec's error body, errors by name.
    let said = format!("order {order} was not packed (the package weighs 2000 g");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(&said)
            && message.ends_with("check its contents, then retry the pack, or release the order"),
        "{body}"
    );
    assert_eq!(
        (body["error"].clone(), body["errors"][0]["name"].clone()),
        (json!(1), json!("weight_g")),
        "{body}"
    );
    assert!(body["errors"][0]["status"].is_string(), "{body}");

    // Retried: weighed and refused again, once per key.
    let logged = station_events(&floor.api, b).await;
    let (status, first, _) = floor.keyed("pack", "retry-1", None).await;
    assert_eq!(status, 422, "{}", json_of(&first));
    assert_eq!(json_of(&first)["message"], body["message"]);
    let (status, again, replayed) = floor.keyed("pack", "retry-1", None).await;
    assert_eq!((status, replayed, &again), (422, true, &first));
    assert_eq!(station_events(&floor.api, b).await, logged + 1);

    // Released: the station idle, nothing packed, the units to keep.
    let (status, released, _) = floor.keyed("release", "release-1", None).await;
    let released = json_of(&released);
    assert_eq!(status, 200, "{released}");
    assert_eq!(
        released["data"]["message"],
        format!(
            "order {order} released, not packed: keep its 3 scanned units together with the order; it can be packed again later"
        )
    );
    assert_eq!(
        released["data"]["result"]["released"],
        json!({"task": "packing", "order_id": order.0})
    );
    let e = last_event(&floor.api, b).await;
    assert_eq!(
        (e["input"].clone(), e["ok"].clone(), e["task"].clone()),
        (json!({"release": {}}), json!(true), json!({"task": "idle"})),
        "{e}"
    );
    let (status, _, replayed) = floor.keyed("release", "release-1", None).await;
    assert_eq!((status, replayed), (200, true));
    assert_eq!(station_events(&floor.api, b).await, logged + 2);
    let (_, body) = floor.api.get("/v1/edge/stations").await;
    assert_eq!(
        (
            body["data"][0]["task"].clone(),
            body["data"][0]["packing"].clone()
        ),
        (json!({"task": "idle"}), Value::Null),
        "{body}"
    );
    let at_edge = floor
        .edge
        .wms
        .order(floor.rig.business, order)
        .await
        .expect("order");
    assert_eq!(at_edge.status, OrderStatus::Confirmed);
    // Nothing left to pack or release, said as such.
    let (status, body) = floor
        .api
        .call("POST", &format!("/v1/edge/stations/{STATION}/pack"), None)
        .await;
    assert_eq!(status, 409, "{body}");
    let (status, body) = floor
        .api
        .call(
            "POST",
            &format!("/v1/edge/stations/{STATION}/release"),
            None,
        )
        .await;
    assert_eq!(
        (status, body["data"]["message"].clone()),
        (
            200,
            json!(format!("station {STATION} has no task: nothing to release"))
        )
    );
    let (status, body) = floor
        .api
        .call("POST", "/v1/edge/stations/nope/release", None)
        .await;
    assert_eq!((status, body["error"].clone()), (404, json!(1)), "{body}");
    let r = reqwest::Client::new()
        .post(format!(
            "{}/v1/edge/stations/{STATION}/release",
            floor.edge.base
        ))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 401);

    // The order is still packable: set again, scanned, the right weight.
    let (status, body) = floor
        .api
        .call(
            "PUT",
            &format!("/v1/edge/stations/{STATION}/task"),
            Some(json!({"task": "packing", "order_id": order.0})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    floor.scale.set_weight("1.000".parse().expect("weight"));
    for code in ["MUG", "MUG"] {
        assert_eq!(floor.typed(json!({"code": code})).await.0, 200);
    }
    let (status, body) = floor.typed(json!({"code": "TEA"})).await;
    assert_eq!(status, 200, "{body}");
    floor
        .printer
        .wait_for_labels(1, LIMIT)
        .await
        .expect("the label");

    let (_, spec) = floor.api.get("/v1/openapi.json").await;
    let path = &spec["paths"]["/v1/edge/stations/{station}/release"]["post"];
    assert!(path["responses"]["200"].is_object(), "{path}");
    floor.stop().await;
}

/// What the test reads of the page, in one script.
const READ_PAGE: &str = r#"
const $ = (id) => document.getElementById(id);
return {
  result: $('result').dataset.state,
  verdict: $('result-verdict').textContent,
  message: $('result-message').textContent,
  errors: Array.from($('result-errors').children, (li) => li.textContent),
  note: $('result-input').textContent,
  text: document.body.innerText,
  retry: !$('retry').hidden && $('retry').offsetParent !== null,
  release: !$('release').hidden && $('release').offsetParent !== null ? $('release').textContent : null,
  background: getComputedStyle($('result')).backgroundColor,
  remaining: $('remaining-total').textContent,
  task: $('task-title').textContent,
  next: $('task-next').textContent,
  live: $('live').dataset.state,
  cloud: $('cloud').dataset.state,
  printer: $('printer').textContent,
  disk: $('disk').hidden ? 'hidden' : $('disk').dataset.state + ': ' + $('disk').querySelector('.value').textContent,
  weight: $('weight').textContent,
  focused: document.activeElement && document.activeElement.id,
  hash: location.hash,
  stored: localStorage.getItem('depot.station.key') !== null,
  animating: document.getAnimations().some((a) => a.playState === 'running'),
};
"#;

/// Where the page's panels are, through `getBoundingClientRect`: the
/// answer (and its verdict and message in it), the task, what is left, the
/// scan input, the answer's errors and the task's buttons when they show.
const LAYOUT: &str = r#"
const box = (el) => {
  if (!el || el.offsetParent === null) return null;
  const r = el.getBoundingClientRect();
  return {left: r.left, top: r.top, right: r.right, bottom: r.bottom};
};
const $ = (id) => box(document.getElementById(id));
return {
  width: window.innerWidth,
  height: window.innerHeight,
  scroll: [document.documentElement.scrollWidth, document.documentElement.scrollHeight],
  panels: {result: $('result'), task: $('task'), left: $('left'), scan: $('scan-form')},
  inside: {verdict: $('result-verdict'), message: $('result-message'),
           errors: $('result-errors'), retry: $('retry'), release: $('release')},
};
"#;

/// The panels a packer reads at the station: whole, in the viewport, none
/// over another; the verdict, message and errors within the answer's
/// panel (read whole, not scrolled away), and the task's buttons within
/// the task's. Says what is wrong.
fn check_layout(layout: &Value) -> Result<(), String> {
    let (w, h) = (
        layout["width"].as_f64().unwrap_or_default(),
        layout["height"].as_f64().unwrap_or_default(),
    );
    let rect =
        |b: &Value| ["left", "top", "right", "bottom"].map(|k| b[k].as_f64().unwrap_or(f64::NAN));
    let within = |a: [f64; 4], b: [f64; 4]| {
        a[0] >= b[0] - 0.5 && a[1] >= b[1] - 0.5 && a[2] <= b[2] + 0.5 && a[3] <= b[3] + 0.5
    };
    let mut panels = Vec::new();
    for name in ["result", "task", "left", "scan"] {
        let b = &layout["panels"][name];
        if b.is_null() {
            return Err(format!("{name} is not shown"));
        }
        let r = rect(b);
        if !(r[2] - r[0] >= 40.0 && r[3] - r[1] >= 24.0) {
            return Err(format!("{name} is too small: {b}"));
        }
        if !within(r, [0.0, 0.0, w, h]) {
            return Err(format!("{name} is not inside the {w}x{h} viewport: {b}"));
        }
        panels.push((name, r));
    }
    for (i, (a, ra)) in panels.iter().enumerate() {
        for (b, rb) in &panels[i + 1..] {
            let apart = ra[2] <= rb[0] + 0.5
                || rb[2] <= ra[0] + 0.5
                || ra[3] <= rb[1] + 0.5
                || rb[3] <= ra[1] + 0.5;
            if !apart {
                return Err(format!("{a} {ra:?} and {b} {rb:?} overlap"));
            }
        }
    }
    let result = rect(&layout["panels"]["result"]);
    let task = rect(&layout["panels"]["task"]);
    for (name, panel) in [
        ("verdict", result),
        ("message", result),
        ("errors", result),
        ("retry", task),
        ("release", task),
    ] {
        let b = &layout["inside"][name];
        if !b.is_null() && !within(rect(b), panel) {
            return Err(format!("{name} {b} is not within its panel {panel:?}"));
        }
    }
    let scroll = &layout["scroll"];
    if scroll[0].as_f64().unwrap_or(f64::MAX) > w || scroll[1].as_f64().unwrap_or(f64::MAX) > h {
        return Err(format!("the page scrolls: {scroll} in {w}x{h}"));
    }
    Ok(())
}

struct Browser<'a> {
    session: Session<'a>,
    driver: &'a Driver,
}

impl Browser<'_> {
    async fn read(&self) -> Value {
        self.session.run(READ_PAGE).await
    }

    /// Polls the page until `check` holds, for at most `limit` from
    /// `since`; fails with what the page shows and the browser said.
    async fn until(
        &self,
        what: &str,
        since: Instant,
        limit: Duration,
        check: impl Fn(&Value) -> bool,
    ) {
        loop {
            let page = self.read().await;
            if check(&page) {
                return;
            }
            if since.elapsed() > limit {
                let text = self.session.run("return document.body.innerText").await;
                let console = self.session.console().await;
                panic!(
                    "the page did not show {what} within {limit:?}\nread: {page:#}\n--- page text ---\n{}\n--- console ---\n{console:#}\n--- chromedriver log (tail) ---\n{}",
                    text.as_str().unwrap_or_default(),
                    tail(&self.driver.log(), 40),
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Browser<'_> {
    /// At `width` × `height`: the layout holds (`check_layout`), and a
    /// screenshot is kept as `station-page-<width>x<height>.png`.
    async fn at_size(&self, width: i64, height: i64) -> PathBuf {
        self.session.viewport(width, height).await;
        // Laid out again at the new size before it is measured.
        self.until("the page at its new size", Instant::now(), LIMIT, |p| {
            p["animating"] == false
        })
        .await;
        let layout = self.session.run(LAYOUT).await;
        if let Err(wrong) = check_layout(&layout) {
            let shot = self
                .screenshot(&format!("station-page-{width}x{height}-wrong.png"))
                .await;
            panic!(
                "at {width}x{height}: {wrong}\nlayout: {layout:#}\nscreenshot: {}",
                shot.display()
            );
        }
        self.screenshot(&format!("station-page-{width}x{height}.png"))
            .await
    }

    /// Saves the page, once its flash is over, in the artifacts directory.
    async fn screenshot(&self, name: &str) -> PathBuf {
        self.until("the page still", Instant::now(), LIMIT, |p| {
            p["animating"] == false
        })
        .await;
        let shot = self.session.screenshot().await;
        assert!(shot.starts_with(b"\x89PNG"), "not a PNG");
        let dir = artifacts_dir();
        std::fs::create_dir_all(&dir).expect("artifacts directory");
        let file = dir.join(name);
        std::fs::write(&file, &shot).expect("screenshot written");
        file
    }
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The chromedriver and the Chromium it drives, from the environment; `None`
/// (the test then skips, saying how to run it) without
/// `DEPOT_TEST_CHROMEDRIVER`.
fn browser_binaries() -> Option<(String, String)> {
    let Some(chromedriver) = std::env::var("DEPOT_TEST_CHROMEDRIVER")
        .ok()
        .filter(|s| !s.is_empty())
    else {
        eprintln!(
            "skipped: set DEPOT_TEST_CHROMEDRIVER to a chromedriver binary (Debian: chromium-driver, /usr/bin/chromedriver) to run the station page in headless Chromium"
        );
        return None;
    };
    let chromium =
        std::env::var("DEPOT_TEST_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    Some((chromedriver, chromium))
}

/// Opens the station's page in a new Chromium session of `driver`, the key
/// in the URL's fragment as a station's bookmark has it.
async fn open_page<'a>(
    driver: &'a Driver,
    chromium: &str,
    profile: &std::path::Path,
    floor: &Floor,
) -> Browser<'a> {
    let session = driver.session(chromium, profile).await;
    session
        .goto(&format!(
            "{}/stations/{STATION}#key={}",
            floor.edge.base, floor.rig.key
        ))
        .await;
    Browser { session, driver }
}

fn artifacts_dir() -> PathBuf {
    match std::env::var_os("DEPOT_ARTIFACTS_DIR") {
        Some(dir) => PathBuf::from(dir),
        // edge/ is one level below the workspace.
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/artifacts"),
    }
}

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
