//! The demo's packing station, as docs/devices.md walks it: the demo started as
//! `depot demo` starts it, an order's packing task set at the edge, its
//! units scanned by writing to the scanner's trigger, the parcel weighed on
//! the simulated scale, and the label printed by the simulated printer,
//! announced and saved in the labels directory. Then the stop that Ctrl-C
//! gives.

use depot::demo::station::{PRINTER, SCALE, STATION};
use depot::demo::{self, Announce, Options};
use depot_testkit::eventually;
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// An upper bound for anything to happen, the first sync of the seeded
/// business included; the test never sleeps to wait.
const LIMIT: Duration = Duration::from_secs(60);

struct Edge {
    base: String,
    key: String,
    client: reqwest::Client,
}

impl Edge {
    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = self
            .client
            .request(method, format!("{}{path}", self.base))
            .header("X-API-KEY", &self.key)
            .timeout(LIMIT);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let r = req.send().await.expect("request");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        self.call(reqwest::Method::GET, path, None).await
    }
}

/// What the demo announced, line by line.
struct Announcements {
    lines: mpsc::UnboundedReceiver<String>,
    /// Received, not yet asked for: the station's answers and the printer
    /// announce independently, in either order.
    unread: Vec<String>,
}

impl Announcements {
    /// The first line not yet asked for that starts with `prefix`.
    async fn next(&mut self, prefix: &str) -> String {
        loop {
            if let Some(i) = self.unread.iter().position(|l| l.starts_with(prefix)) {
                return self.unread.remove(i);
            }
            let line = tokio::time::timeout(LIMIT, self.lines.recv())
                .await
                .ok()
                .flatten();
            let Some(line) = line else {
                panic!("no line starting {prefix:?}; unread: {:#?}", self.unread);
            };
            self.unread.push(line);
        }
    }
}

/// What `printf '%s\n' CODE > depot-demo/scanner` does.
fn scan(trigger: &Path, code: &str) {
    let mut trigger = std::fs::OpenOptions::new()
        .write(true)
        .open(trigger)
        .expect("the scanner's trigger");
    writeln!(trigger, "{code}").expect("scanned");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_order_packed_at_the_demo_station_prints_its_label() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (announced, lines) = mpsc::unbounded_channel();
    let announce: Announce = Arc::new(move |line| {
        let _ = announced.send(line);
    });
    let mut announcements = Announcements {
        lines,
        unread: Vec::new(),
    };
    let options = Options {
        listen: "127.0.0.1:0".parse().expect("addr"),
        edge_listen: "127.0.0.1:0".parse().expect("addr"),
        data_dir: dir.path().join("depot-demo"),
    };
    let running = demo::start(options, announce).await.expect("the demo");
    let b = running.demo.business;
    let edge = Edge {
        base: format!("http://{}", running.edge_addr().expect("edge address")),
        key: running.demo.key.clone(),
        client: reqwest::Client::new(),
    };
    let cloud = format!("http://{}", running.cloud_addr().expect("cloud address"));
    let trigger = running.station.trigger().to_owned();
    let labels = running.station.labels().to_owned();
    let (stop, stopped) = oneshot::channel::<()>();
    let served = tokio::spawn(running.run(async {
        let _ = stopped.await;
    }));

    // The release-notes API names the address the demo was given.
    let meta: serde_json::Value = edge
        .client
        .get(format!("{cloud}/.well-known/oauth-authorization-server"))
        .send()
        .await
        .expect("metadata")
        .json()
        .await
        .expect("json");
    assert_eq!(meta["issuer"], cloud.as_str());
    assert_eq!(meta["token_endpoint"], format!("{cloud}/oauth/token"));

    // The key, the orders and the printer's record reach the edge by sync.
    eventually("the station ready, with its printer known", || async {
        let (status, body) = edge.get("/v1/edge/stations").await;
        let s = &body["data"][0];
        status == 200
            && s["name"] == STATION
            && s["scanners"][0]["connected"] == true
            && s["scale"]["state"] == "weight"
            && s["printer"]["printer_id"].is_i64()
    })
    .await;
    // Its record says what its device is, within seconds: online, seen
    // (it answered `unknown`, never seen, for a printer ready for minutes).
    let known = std::time::Instant::now();
    eventually("the demo's printer record online at the edge", || async {
        let (_, body) = edge.get(&format!("/v1/printers/{b}/list")).await;
        body["data"].as_array().is_some_and(|all| {
            all.iter().any(|p| {
                p["name"] == PRINTER && p["status"] == "online" && p["last_seen"].is_string()
            })
        })
    })
    .await;
    assert!(
        known.elapsed() < Duration::from_secs(10),
        "the record followed its device only after {:?}",
        known.elapsed()
    );
    let confirmed = format!("/v1/orders/{b}/list?status=confirmed&length=1");
    eventually("a confirmed order at the edge", || async {
        edge.get(&confirmed).await.1["data"][0]["id"].is_i64()
    })
    .await;
    let order = edge.get(&confirmed).await.1["data"][0]["id"].clone();

    let (status, body) = edge
        .call(
            reqwest::Method::PUT,
            &format!("/v1/edge/stations/{STATION}/task"),
            Some(json!({"task": "packing", "order_id": order})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    announcements
        .next(&format!("{STATION}: packing order {order}"))
        .await;
    let parcel = announcements
        .next(&format!("the operator puts the parcel on {SCALE}"))
        .await;
    let (_, body) = edge.get(&format!("/v1/orders/{b}/{order}")).await;
    let lines = body["data"]["lines"].as_array().expect("order lines");
    for line in lines {
        let sku = line["sku"].as_str().expect("sku");
        for _ in 0..line["quantity"].as_i64().expect("quantity") {
            scan(&trigger, sku);
        }
    }

    // Printed, announced, saved: the label of the station's shipment.
    let label = announcements
        .next(&format!(
            "label 1 printed by the simulated printer {PRINTER}"
        ))
        .await;
    // The station answers once the label is queued: it may print first.
    eventually("the station's answer to the last scan", || async {
        let (_, body) = edge.get("/v1/edge/stations").await;
        body["data"][0]["last"]["result"].get("pack").is_some()
    })
    .await;
    let (_, body) = edge.get("/v1/edge/stations").await;
    let last = &body["data"][0]["last"];
    assert_eq!(last["status"], 200, "{body}");
    let shipment = &last["result"]["pack"]["shipment"];
    let tracking = shipment["tracking_number"].as_str().expect("tracking");
    assert!(label.contains(&format!("tracking {tracking}")), "{label}");
    let grams = shipment["packages"][0]["weight_g"]
        .as_i64()
        .expect("weight");
    let kg = format!("{}.{:03} kg", grams / 1000, grams % 1000);
    assert!(
        parcel.contains(&kg),
        "{parcel} is not the {grams} g weighed"
    );
    let zpl = std::fs::read_to_string(labels.join("0001.zpl")).expect("the saved label");
    assert!(zpl.starts_with("^XA") && zpl.ends_with("^XZ\n"), "{zpl}");
    assert!(zpl.contains(tracking), "{tracking} not on {zpl}");
    assert!(
        label
            .replace(',', "")
            .contains(&format!("{} bytes", zpl.len())),
        "{label}"
    );
    let (_, body) = edge.get(&format!("/v1/orders/{b}/{order}")).await;
    assert_eq!(body["data"]["status"], "packed", "{body}");
    announcements
        .next(&format!("the operator takes the parcel off {SCALE}"))
        .await;

    // Ctrl-C: everything stops, the devices last.
    let _ = stop.send(());
    let stopped = tokio::time::timeout(LIMIT, served).await;
    assert!(
        matches!(stopped, Ok(Ok(Ok(())))),
        "the demo did not stop cleanly: {stopped:?}"
    );
    assert!(
        std::fs::symlink_metadata(&trigger).is_err(),
        "the scanner's trigger outlived the demo"
    );
}
