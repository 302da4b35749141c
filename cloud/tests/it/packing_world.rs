//! The packing corpus: orders as the world sends them (Greek, Cyrillic,
//! Polish, Turkish, Chinese, Arabic, emoji, ZPL control characters, a
//! 67-character reference, a 60-character city, a missing postcode, no
//! address at all, several packages, a 999 kg parcel) taken through ingest,
//! confirm, pack, ZPL and PDF labels, slip, dispatch and manifest over
//! HTTP. Each either answers 422 naming its problem with nothing written,
//! or produces every document: every line of the address in the PDFs as
//! poppler's pdftotext reads them (where it is installed), every package
//! its own number and its own SSCC on its label and on the manifest, each
//! scanned onto the vehicle before the run closes.

use base64::Engine;
use cloud::{TestCloud, assert_error, spawn_cloud};
use depot_testkit::cloud;
use serde_json::{Value, json};
use std::collections::BTreeSet;

struct Case {
    name: &'static str,
    reference: String,
    address: Value,
    packages: Value,
    /// Where it must be refused, and the field the 422 names.
    refused: Option<(&'static str, &'static str)>,
}

fn address(
    name: &str,
    line1: &str,
    postcode: &str,
    city: &str,
    region: &str,
    country: &str,
) -> Value {
    let mut a = json!({"name": name, "line1": line1, "city": city, "country": country});
    if !postcode.is_empty() {
        a["postal_code"] = json!(postcode);
    }
    if !region.is_empty() {
        a["region"] = json!(region);
    }
    a
}

fn one(weight: i64) -> Value {
    json!([{"weight_g": weight}])
}

fn corpus() -> Vec<Case> {
    let ok = |name, reference: &str, address| Case {
        name,
        reference: reference.to_owned(),
        address,
        packages: one(900),
        refused: None,
    };
    let mut cases = vec![
        ok(
            "greek",
            "Παραγγελία-Ω12",
            address(
                "Γιώργος Παπαδόπουλος",
                "Οδός Ερμού 25",
                "105 63",
                "Αθήνα",
                "",
                "GR",
            ),
        ),
        ok(
            "cyrillic",
            "Заказ-№17",
            address(
                "Ирина Смирнова",
                "ул. Тверская, д. 7, кв. 12",
                "125009",
                "Москва",
                "Москва",
                "RU",
            ),
        ),
        ok(
            "polish",
            "Zamówienie-Łódź-3",
            address(
                "Łucja Wiśniewska",
                "ul. Floriańska 14/3",
                "31-021",
                "Kraków",
                "",
                "PL",
            ),
        ),
        ok(
            "turkish",
            "Sipariş-İ-9",
            address(
                "Ayşe Yılmaz",
                "İstiklal Caddesi No: 112",
                "34433",
                "İstanbul",
                "Beyoğlu",
                "TR",
            ),
        ),
        ok(
            "chinese",
            "订单-2024-北京",
            address(
                "王小明",
                "东城区东长安街1号",
                "100010",
                "北京市",
                "北京市",
                "CN",
            ),
        ),
        ok(
            "arabic",
            "طلب-٤٥",
            address(
                "محمد عبد الله",
                "شارع الملك فهد",
                "12271",
                "الرياض",
                "",
                "SA",
            ),
        ),
        ok(
            "emoji",
            "Gift-🎁-1",
            address(
                "Zoë 🎁 Martin",
                "18 rue des Trois-Frères",
                "75018",
                "Paris",
                "",
                "FR",
            ),
        ),
        ok(
            "zpl",
            "SO_^XZ~JA",
            address(
                "Mallory^FS^XZ^XA",
                "~JA~JR 1 rue ^FO0,0^FDpwned",
                "75002",
                "Paris",
                "",
                "FR",
            ),
        ),
        ok(
            "long reference",
            &"R".repeat(67),
            address(
                "Ada Lovelace",
                "12 Rue de la Paix",
                "75002",
                "Paris",
                "",
                "FR",
            ),
        ),
        ok(
            "long city",
            "CITY-60",
            address(
                "Jürgen Weiß",
                "Schönhauser Allee 36",
                "10435",
                &"Berlin-Prenzlauer-Berg-".repeat(3)[..60],
                "",
                "DE",
            ),
        ),
    ];
    cases.push(Case {
        packages: json!([{"weight_g": 1200}, {"weight_g": 800, "length_mm": 400, "width_mm": 300, "height_mm": 200}, {"weight_g": 450}]),
        ..ok("three packages", "MULTI-3", address("Ana García", "Calle de Alcalá 123", "28009", "Madrid", "Madrid", "ES"))
    });
    cases.push(Case {
        refused: Some(("confirm", "shipping_address.postal_code")),
        ..ok(
            "missing postcode",
            "NO-ZIP",
            address("Ελένη", "Τσιμισκή 43", "", "Θεσσαλονίκη", "", "GR"),
        )
    });
    cases.push(Case {
        refused: Some(("confirm", "shipping_address.country")),
        ..ok("no address", "NO-ADDRESS", Value::Null)
    });
    cases.push(Case {
        packages: one(999_000),
        refused: Some(("pack", "packages[0]")),
        ..ok(
            "999 kg",
            "HEAVY",
            address(
                "Ana García",
                "Calle de Alcalá 123",
                "28009",
                "Madrid",
                "Madrid",
                "ES",
            ),
        )
    });
    cases
}

/// The text of a PDF as poppler reads it, or `None` where pdftotext is not
/// installed (CI installs it).
fn pdftotext(pdf: &[u8]) -> Option<String> {
    let dir = tempfile::tempdir().ok()?;
    let path = dir.path().join("doc.pdf");
    std::fs::write(&path, pdf).ok()?;
    let out = std::process::Command::new("pdftotext")
        .args(["-enc", "UTF-8"])
        .arg(&path)
        .arg("-")
        .output()
        .ok()?;
    assert!(out.status.success(), "pdftotext: {out:?}");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace() && !('\u{202A}'..='\u{202E}').contains(c))
        .collect()
}

/// Every line of `a` is in `text`: whole for left-to-right lines (wrapping
/// may break them), word by word where pdftotext orders right-to-left runs
/// by position. (Emoji, which no vendored font draws, print as a box and
/// still read back as themselves.)
fn has_address(case: &str, text: &str, a: &Value) {
    let text = squash(text);
    for field in ["name", "line1", "city", "postal_code", "region", "country"] {
        let Some(line) = a[field].as_str() else {
            continue;
        };
        let rtl = line.chars().any(|c| ('\u{0590}'..='\u{08FF}').contains(&c));
        let parts: Vec<String> = if rtl {
            line.split_whitespace().map(squash).collect()
        } else {
            vec![squash(line)]
        };
        for part in parts {
            assert!(
                text.contains(&part),
                "{case}: {field} {part:?} not in\n{text}"
            );
        }
    }
}

async fn pdf_label(app: &TestCloud, shipment: i64, package: u64) -> Vec<u8> {
    let r = app
        .post(
            &format!("/v1/shipments/{}/generate-label", app.a.business),
            json!({"shipment_id": shipment, "format": "pdf", "package": package}),
        )
        .await;
    assert_eq!(r.status, 200);
    r.bytes
}

async fn zpl_labels(app: &TestCloud, shipment: i64) -> String {
    let r = app
        .post(
            &format!("/v1/shipments/{}/generate-label", app.a.business),
            json!({"shipment_id": shipment, "format": "zpl"}),
        )
        .await;
    assert_eq!(r.status, 200);
    r.text()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_worlds_orders_are_packed_whole_or_refused_whole() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    app.wms
        .set_gs1_prefix(b, Some("4012345"))
        .await
        .expect("prefix");
    app.item("W-1").await;
    app.receive("W-1", 100).await;
    let mut pieces = BTreeSet::new();
    let mut ssccs = BTreeSet::new();
    let mut shipped: Vec<(String, Value)> = Vec::new();
    let mut run = None;
    for case in corpus() {
        let what = case.name;
        let r = app
            .post(
                &format!("/v1/orders/{b}/create"),
                json!({"channel": "web", "external_ref": case.reference, "shipping_address": case.address,
                       "lines": [{"sku": "W-1", "quantity": 1}]}),
            )
            .await;
        assert_eq!(r.status, 200, "{what}: {:?}", r.body);
        let id = r.body["data"]["id"].as_i64().expect("id");
        let before = app.event_count().await;
        let confirm = app.set_status(id, "confirmed").await;
        if let Some(("confirm", field)) = case.refused {
            assert_error(&confirm, 422);
            let named = confirm.body["errors"].as_array().into_iter().flatten();
            assert!(
                named.into_iter().any(|e| e["name"] == field),
                "{what}: {:?}",
                confirm.body
            );
            assert_eq!(app.event_count().await, before, "{what}: wrote on refusal");
            continue;
        }
        assert_eq!(confirm.status, 200, "{what}: {:?}", confirm.body);
        let before = app.event_count().await;
        let pack = app
            .post(
                &format!("/v1/packing/{b}/pack-order"),
                json!({"order_id": id, "items": [{"code": "W-1"}], "packages": case.packages}),
            )
            .await;
        if let Some(("pack", field)) = case.refused {
            assert_error(&pack, 422);
            assert_eq!(pack.body["errors"][0]["name"], field, "{what}");
            assert_eq!(app.event_count().await, before, "{what}: wrote on refusal");
            continue;
        }
        assert_eq!(pack.status, 200, "{what}: {:?}", pack.body);
        let data = &pack.body["data"];
        let shipment = data["shipment"]["id"].as_i64().expect("shipment");
        let tracking = data["shipment"]["tracking_number"]
            .as_str()
            .expect("tracking")
            .to_owned();
        run = data["shipment"]["dispatch_run_id"].as_i64().or(run);
        let count = data["shipment"]["packages"].as_array().map_or(0, Vec::len);
        assert!(count >= 1, "{what}");

        // The slip, in both forms, made in the write.
        assert!(
            data["packing_slip_zpl"]
                .as_str()
                .is_some_and(|z| z.starts_with("^XA"))
        );
        let slip = base64::engine::general_purpose::STANDARD
            .decode(data["packing_slip_pdf"].as_str().unwrap_or(""))
            .expect("base64");
        assert!(slip.starts_with(b"%PDF-"), "{what}");
        if let Some(text) = pdftotext(&slip) {
            has_address(what, &text, &case.address);
        }

        // A ZPL label per package, each with its own number; a PDF of each.
        let zpl = zpl_labels(&app, shipment).await;
        assert_eq!(zpl.matches("^XA").count(), count, "{what}");
        assert_eq!(
            zpl.matches("^XZ").count(),
            count,
            "{what}: injected a format end"
        );
        for p in data["shipment"]["packages"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let sscc = p["sscc"].as_str().expect("every package an SSCC");
            let valid = depot_protocol::gs1::sscc::Sscc::parse(sscc).expect("a valid SSCC");
            assert!(sscc.starts_with("04012345") || sscc[1..].starts_with("4012345"));
            // GS1-128 with FNC1 and AI 00, on its label.
            assert!(
                zpl.contains(&format!(">;>800{sscc}")),
                "{what}: {sscc} not on its label"
            );
            assert!(ssccs.insert(valid), "{what}: an SSCC twice");
        }
        for index in 1..=count {
            let piece = if count == 1 {
                tracking.clone()
            } else {
                format!("{tracking}-{index:02}")
            };
            assert!(zpl.contains(&piece), "{what}: {piece} not on its label");
            assert!(pieces.insert(piece), "{what}: a piece number twice");
            let pdf = pdf_label(&app, shipment, index as u64).await;
            assert!(pdf.starts_with(b"%PDF-"), "{what}");
            if let Some(text) = pdftotext(&pdf) {
                has_address(what, &text, &case.address);
            }
        }
        shipped.push((what.to_owned(), case.address.clone()));
    }
    assert_eq!(shipped.len(), 11, "every shippable order shipped");

    // The dock scans every parcel by its SSCC, as a GS1-128 scanner reads it.
    let run = run.expect("an open run");
    for (n, sscc) in ssccs.iter().enumerate() {
        let loaded = app
            .post(
                &format!("/v1/outbounds/{b}/dispatch-runs/{run}/load"),
                json!({"code": format!("]C100{sscc}")}),
            )
            .await;
        assert_eq!(loaded.status, 200, "{:?}", loaded.body);
        assert_eq!(loaded.body["data"]["loaded"], json!(n + 1));
        assert_eq!(loaded.body["data"]["sscc"], json!(sscc.as_str()));
    }
    // The manifest lists every package by its own number, and where it goes.
    let closed = app
        .post(
            &format!("/v1/outbounds/{b}/dispatch-runs/{run}/close"),
            json!({}),
        )
        .await;
    assert_eq!(closed.status, 200, "{:?}", closed.body);
    let manifest = app
        .get(&format!("/v1/outbounds/{b}/dispatch-runs/{run}/manifest"))
        .await;
    assert_eq!(manifest.status, 200);
    let pdf = manifest.bytes;
    if let Some(text) = pdftotext(&pdf) {
        let flat = squash(&text);
        for piece in &pieces {
            assert!(flat.contains(piece.as_str()), "{piece} not on the manifest");
        }
        for sscc in &ssccs {
            assert!(flat.contains(sscc.as_str()), "{sscc} not on the manifest");
        }
        for (what, a) in &shipped {
            let postcode = a["postal_code"].as_str().unwrap_or("");
            assert!(
                flat.contains(&squash(postcode)),
                "{what}: postcode not on the manifest"
            );
        }
    }
}

/// The own fleet's limits are settings: a lighter limit refuses what the
/// default took, naming the package, and writes nothing.
#[tokio::test]
async fn the_fleets_limits_are_settings() {
    let app = cloud::spawn_cloud_configured(|s| {
        s.own_fleet.standard.max_weight_g = 5_000;
        s.own_fleet.standard.max_sides_mm = [600, 400, 400];
    })
    .await;
    let b = app.a.business;
    app.item("W-2").await;
    app.receive("W-2", 5).await;
    let id = app.order("LIMIT-1", &[("W-2", 1)]).await;
    assert_eq!(app.set_status(id, "confirmed").await.status, 200);
    let pack = format!("/v1/packing/{b}/pack-order");
    for packages in [
        json!([{"weight_g": 6000}]),
        json!([{"weight_g": 1000, "length_mm": 300, "width_mm": 700, "height_mm": 100}]),
    ] {
        let before = app.event_count().await;
        let r = app
            .post(
                &pack,
                json!({"order_id": id, "items": [{"code": "W-2"}], "packages": packages}),
            )
            .await;
        assert_error(&r, 422);
        assert_eq!(r.body["errors"][0]["name"], "packages[0]", "{:?}", r.body);
        assert_eq!(app.event_count().await, before);
    }
    let r = app
        .post(
            &pack,
            json!({"order_id": id, "items": [{"code": "W-2"}], "packages": [{"weight_g": 4999}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
}
