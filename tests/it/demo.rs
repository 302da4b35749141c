//! The demo: seeded once, every printed example works as printed, and a
//! second run reuses the data with a new key. The packing station's printer
//! is attached to the demo edge, also in a business an earlier demo seeded.
//! (`demo_station.rs` runs the station.)

use depot::demo::station::{PRINTER, STATION};
use depot::demo::{self, DEMO_EDGE, DEMO_NAME};
use depot_cloud::settings::Settings;
use depot_protocol::printing::{PrinterFields, PrinterKind};
use depot_wms::Wms;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_printed_examples_work() {
    let dir = tempfile::tempdir().expect("tempdir");
    let settings = Settings {
        data_dir: dir.path().to_owned(),
        ..Settings::default()
    };
    let wms = Wms::open(&settings.database(), "cloud").expect("open");
    let first = demo::prepare(&wms).await.expect("seed");
    let second = demo::prepare(&wms).await.expect("reuse");
    assert_eq!(first.business, second.business);
    assert_ne!(first.key, second.key);
    assert_eq!(
        wms.businesses()
            .await
            .expect("list")
            .iter()
            .filter(|b| b.name == DEMO_NAME)
            .count(),
        1
    );
    assert!(wms.check_ledger().await.expect("check").is_empty());
    // The running version's notes, published once however often it starts.
    let releases = wms.releases(10).await.expect("releases");
    assert_eq!(releases.len(), 1);
    assert_eq!(releases[0].version, env!("CARGO_PKG_VERSION"));
    let source = demo::translations(dir.path()).expect("translations");
    let es = source
        .join("es/wms")
        .join(format!("{}.md", env!("CARGO_PKG_VERSION")));
    let text = std::fs::read_to_string(es).expect("spanish notes");
    assert!(
        depot_cloud::changelog::parse_translation(&text).is_ok(),
        "{text}"
    );

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let server_wms = wms.clone();
    tokio::spawn(async move {
        depot_cloud::Daemon::new(server_wms, settings.clone())
            .serve(listener, std::future::pending())
            .await
    });

    let client = reqwest::Client::new();
    for e in demo::examples(second.business) {
        let mut req = client
            .request(
                e.method.parse().expect("method"),
                format!("{base}{}", e.path),
            )
            .header("X-API-KEY", &second.key);
        if let Some(body) = &e.body {
            req = req.json(body);
        }
        let resp = req.send().await.expect("send");
        assert_eq!(resp.status(), 200, "{}", e.curl(&base, &second.key));
        let body: serde_json::Value = resp.json().await.expect("json");
        assert!(
            body["data"].is_array() || body["data"].is_object(),
            "{body}"
        );
        if e.path.contains("status=confirmed") {
            assert_ne!(
                body["recordsFiltered"], "0",
                "the demo has confirmed orders"
            );
        }
    }
    // Every status is represented.
    for status in [
        "pending",
        "confirmed",
        "picking",
        "packed",
        "dispatched",
        "delivered",
        "cancelled",
    ] {
        let r: serde_json::Value = client
            .get(format!(
                "{base}/v1/orders/{}/list?status={status}",
                second.business
            ))
            .header("X-API-KEY", &second.key)
            .send()
            .await
            .expect("send")
            .json()
            .await
            .expect("json");
        assert_ne!(r["recordsFiltered"], "0", "{status}");
    }
    let r: serde_json::Value = client
        .get(format!("{base}/v1/items/{}/list", second.business))
        .header("X-API-KEY", &second.key)
        .send()
        .await
        .expect("send")
        .json()
        .await
        .expect("json");
    assert_eq!(r["recordsTotal"], "36");
    // What docs/tour.md's warehouse day starts from.
    for (path, n) in [
        ("inbounds/{b}/orders/list", "1"),
        ("printers/{b}/list", "1"),
    ] {
        let path = path.replace("{b}", &second.business.to_string());
        let r: serde_json::Value = client
            .get(format!("{base}/v1/{path}"))
            .header("X-API-KEY", &second.key)
            .send()
            .await
            .expect("send")
            .json()
            .await
            .expect("json");
        assert_eq!(r["recordsTotal"], n, "{path}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_station_printer_is_the_edge_s_even_in_an_earlier_demo() {
    let dir = tempfile::tempdir().expect("tempdir");
    let settings = Settings {
        data_dir: dir.path().to_owned(),
        ..Settings::default()
    };
    let wms = Wms::open(&settings.database(), "cloud").expect("open");
    let b = demo::prepare(&wms).await.expect("seed").business;
    let station_printer = || async {
        let printers = wms.printers(b).await.expect("printers");
        assert_eq!(printers.len(), 1, "{printers:?}");
        let p = &printers[0];
        assert_eq!(
            (p.name.as_str(), p.kind, p.connection.as_str()),
            (
                PRINTER,
                PrinterKind::Zpl,
                format!("edge://{DEMO_EDGE}").as_str()
            )
        );
        assert_eq!(p.station.as_deref(), Some(STATION));
        p.id
    };
    let id = station_printer().await;
    // What demos before the station seeded.
    let earlier = PrinterFields {
        name: Some("Packing 1".into()),
        kind: Some(PrinterKind::Zpl),
        connection: Some("tcp://127.0.0.1:9100".into()),
        station: Some("PACK-1".into()),
    };
    wms.edit_printer(b, id, earlier).await.expect("edit");
    demo::prepare(&wms).await.expect("reuse");
    assert_eq!(station_printer().await, id);
}
