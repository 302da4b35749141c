//! Printers, print jobs and documents over real HTTP: registration and its
//! validation, raw jobs checked by content and bounded by their own body
//! limit, multipart uploads stored under their SHA-256 and downloaded
//! intact. Every refusal is a 4xx with the error body and writes nothing.

use depot_testkit::cloud::{Res, TestCloud, assert_error, spawn_cloud};
use serde_json::{Value, json};

const LABEL: &[u8] = b"^XA^FO50,50^A0N,40,40^FDHello^FS^XZ";
pub(crate) const PDF: &[u8] = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n";
/// `printf '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n' | sha256sum`
pub(crate) const PDF_SHA256: &str =
    "4579fbf2740104b473bd355e10bad2bc7534f0496119a9390915199f1db01180";
const HTML: &[u8] = b"<html><body>not a pdf</body></html>";
pub(crate) const BOUNDARY: &str = "depot-test-boundary-5f1c9a";
const MIB: usize = 1024 * 1024;

/// The `data` of a 200 answer.
fn ok(r: &Res) -> &Value {
    assert_eq!(r.status, 200, "{:?}", r.body);
    &r.body["data"]
}

fn rows(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_array().into_iter().flatten()
}

/// `len` bytes of `unit` repeated.
fn repeat(unit: &[u8], len: usize) -> Vec<u8> {
    unit.iter().copied().cycle().take(len).collect()
}

/// A refused request: the status, the error body, and no event written.
/// Answers the names of the fields the error points at.
async fn refused(app: &TestCloud, before: usize, r: &Res, status: u16) -> Vec<String> {
    assert_error(r, status);
    assert_eq!(app.event_count().await, before, "wrote despite {status}");
    rows(&r.body["errors"])
        .filter_map(|e| e["name"].as_str().map(str::to_owned))
        .collect()
}

/// One part of a multipart/form-data body.
pub(crate) enum Part<'a> {
    Text(&'a str, &'a str),
    /// The `file` field: filename, content type, bytes.
    File(&'a str, &'a str, &'a [u8]),
}

fn pdf(bytes: &[u8]) -> Part<'_> {
    Part::File("x.pdf", "application/pdf", bytes)
}

/// A form with its category and, if given, its file.
fn form<'a>(category: &'a str, file: Option<Part<'a>>) -> Vec<Part<'a>> {
    std::iter::once(Part::Text("category", category))
        .chain(file)
        .collect()
}

/// An invoice PDF named `x.pdf`, the usual upload.
pub(crate) fn invoice(bytes: &[u8]) -> Vec<Part<'_>> {
    form("invoice", Some(pdf(bytes)))
}

/// Builds a multipart/form-data body by hand (reqwest's `multipart` feature
/// is off): each part opens with the boundary and its headers, then a blank
/// line, the content and CRLF; the closing boundary ends with `--`.
pub(crate) fn multipart(parts: &[Part]) -> Vec<u8> {
    let mut out = Vec::new();
    for part in parts {
        let (head, content) = match part {
            Part::Text(name, value) => (
                format!("Content-Disposition: form-data; name=\"{name}\""),
                value.as_bytes(),
            ),
            Part::File(filename, content_type, bytes) => (
                format!(
                    "Content-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\n\
                     Content-Type: {content_type}"
                ),
                *bytes,
            ),
        };
        out.extend_from_slice(format!("--{BOUNDARY}\r\n{head}\r\n\r\n").as_bytes());
        out.extend_from_slice(content);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    out
}

async fn upload(app: &TestCloud, key: &str, path: &str, parts: &[Part<'_>]) -> Res {
    let ct = format!("multipart/form-data; boundary={BOUNDARY}");
    app.raw("POST", path, key, Some(&ct), multipart(parts))
        .await
}

async fn job(app: &TestCloud, printer: i64, bytes: Vec<u8>) -> Res {
    let p = format!("/v1/printers/jobs/{}/{printer}", app.a.business);
    let ct = Some("application/octet-stream");
    app.raw("POST", &p, &app.a.key, ct, bytes).await
}

async fn edit(app: &TestCloud, printer: i64, body: Value) -> Res {
    let p = format!("/v1/printers/{}/{printer}/edit", app.a.business);
    app.put(&p, body).await
}

/// Registers tenant A's label printer and answers its id.
async fn zebra(app: &TestCloud) -> i64 {
    let p = format!("/v1/printers/{}/create", app.a.business);
    let body = json!({"name": "Zebra 1", "kind": "zpl", "connection": "tcp://10.0.0.5:9100", "station": "PACK-1"});
    ok(&app.post(&p, body).await)["id"]
        .as_i64()
        .expect("printer id")
}

/// Tenant A's order with one line, for documents to attach to.
async fn order(app: &TestCloud) -> i64 {
    app.item("D-1").await;
    app.order("DOC-1", &[("D-1", 1)]).await
}

#[tokio::test]
async fn printers_are_registered_validated_and_scoped() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    let id = zebra(&app).await;
    let list = app.get(&format!("/v1/printers/{b}/list")).await;
    let p = &ok(&list)[0];
    assert_eq!(p["id"].as_i64(), Some(id));
    assert_eq!(p["name"], "Zebra 1");
    assert_eq!(p["kind"], "zpl");
    assert_eq!(p["connection"], "tcp://10.0.0.5:9100");
    assert_eq!(p["station"], "PACK-1");
    assert_eq!(p["status"], "unknown");

    let create = format!("/v1/printers/{b}/create");
    let before = app.event_count().await;
    let dup = json!({"name": "Zebra 1", "kind": "pdf", "connection": "tcp://10.0.0.6:9100"});
    let r = app.post(&create, dup).await;
    assert_eq!(refused(&app, before, &r, 409).await, ["name"]);
    for bad in ["http://x", "tcp://h:0", "serial://ttyUSB0"] {
        let body = json!({"name": "Bad", "kind": "zpl", "connection": bad});
        let r = app.post(&create, body).await;
        let fields = refused(&app, before, &r, 422).await;
        assert_eq!(fields, ["connection"], "{bad}");
    }
    let body = json!({"name": "NoKind", "connection": "tcp://h:9100"});
    let r = app.post(&create, body).await;
    assert_eq!(refused(&app, before, &r, 422).await, ["kind"]);

    // Edit: only the connection changes, and it is normalized.
    let r = edit(&app, id, json!({"connection": "tcp://zebra-1"})).await;
    let d = ok(&r);
    assert_eq!(d["connection"], "tcp://zebra-1:9100");
    assert_eq!((&d["name"], &d["kind"]), (&json!("Zebra 1"), &json!("zpl")));
    assert_eq!(d["station"], "PACK-1");

    // An unknown id, and another tenant's printer under our business: 404.
    let p = format!("/v1/printers/{}/create", app.b.business);
    let body = json!({"name": "Beta printer", "kind": "zpl", "connection": "tcp://10.9.9.9"});
    let r = app.call("POST", &p, Some(&app.b.key), Some(body)).await;
    let theirs = ok(&r)["id"].as_i64().expect("their printer id");
    let before = app.event_count().await;
    for printer in [999_999, theirs] {
        let r = edit(&app, printer, json!({"station": "X"})).await;
        refused(&app, before, &r, 404).await;
    }
    let r = app.get(&format!("/v1/printers/jobs/{b}/{theirs}")).await;
    assert_error(&r, 404);
    let r = job(&app, theirs, LABEL.to_vec()).await;
    refused(&app, before, &r, 404).await;
}

#[tokio::test]
async fn print_jobs_are_checked_by_content_and_bounded_by_their_route() {
    let app = spawn_cloud().await;
    let id = zebra(&app).await;
    let r = job(&app, id, LABEL.to_vec()).await;
    let j = ok(&r);
    assert_eq!(
        (&j["status"], &j["format"]),
        (&json!("queued"), &json!("zpl"))
    );
    assert_eq!(j["size"].as_u64(), Some(LABEL.len() as u64));
    let first = j["id"].as_i64().expect("job id");

    let before = app.event_count().await;
    for (bad, what) in [
        (PDF.to_vec(), "a PDF to a ZPL printer"),
        (b"hello, printer".to_vec(), "garbage"),
        (Vec::new(), "an empty job"),
    ] {
        let r = job(&app, id, bad).await;
        assert_eq!(refused(&app, before, &r, 422).await, ["body"], "{what}");
    }

    // 3 MiB of labels: over the 1 MiB JSON limit, under the 4 MiB job limit.
    let r = job(&app, id, repeat(LABEL, 3 * MIB)).await;
    assert_eq!(ok(&r)["size"].as_u64(), Some(3 * MIB as u64));

    let list = app
        .get(&format!("/v1/printers/jobs/{}/{id}", app.a.business))
        .await;
    let jobs: Vec<&Value> = rows(ok(&list)).collect();
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    assert!(jobs.iter().any(|j| j["id"].as_i64() == Some(first)));
    assert!(
        jobs.iter()
            .all(|j| j["status"] == "queued" && j["format"] == "zpl")
    );
}

#[tokio::test]
async fn an_oversized_print_job_is_413_with_the_error_body() {
    let app = spawn_cloud().await;
    let id = zebra(&app).await;
    let before = app.event_count().await;
    let r = job(&app, id, repeat(LABEL, 5 * MIB)).await;
    assert_eq!(r.status, 413, "{:?}", r.body);
    refused(&app, before, &r, 413).await;
}

#[tokio::test]
async fn documents_are_uploaded_listed_and_downloaded_intact() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    let cats = app.get(&format!("/v1/documents/{b}/categories")).await;
    let invoices = rows(ok(&cats)).find(|c| c["code"] == "invoice");
    let taxes = invoices.map(|c| c["tax_types"].clone()).expect("invoice");
    assert!(rows(&taxes).any(|t| t == "vat_standard"), "{taxes:?}");
    assert!(rows(&taxes).any(|t| t == "reverse_charge"), "{taxes:?}");

    let order = order(&app).await;
    let path = format!("/v1/documents/{b}/order/{order}");
    let mut parts = invoice(PDF);
    parts.push(Part::Text("description", "Invoice 7"));
    let r = upload(&app, &app.a.key, &path, &parts).await;
    let d = ok(&r);
    assert_eq!(d["sha256"], PDF_SHA256);
    assert_eq!(d["size"].as_u64(), Some(PDF.len() as u64));
    assert_eq!(
        (&d["category"], &d["filename"]),
        (&json!("invoice"), &json!("x.pdf"))
    );
    assert_eq!(d["description"], "Invoice 7");
    let doc = d["id"].as_i64().expect("document id");

    let list = app.get(&format!("{path}/list")).await;
    let listed: Vec<&Value> = rows(ok(&list)).collect();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["id"].as_i64(), Some(doc));
    assert_eq!(listed[0]["sha256"], PDF_SHA256);

    let resp = app
        .http
        .raw("GET", &format!("{path}/{doc}"))
        .header("X-API-KEY", &app.a.key)
        .send()
        .await;
    assert_eq!(resp.status, 200);
    let ct = resp.headers.get("content-type").cloned();
    assert_eq!(
        ct.as_ref().map(|v| v.as_bytes()),
        Some(&b"application/pdf"[..])
    );
    assert_eq!(resp.bytes, PDF);
}

#[tokio::test]
async fn bad_uploads_are_refused_and_write_nothing() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    let order = order(&app).await;
    let path = format!("/v1/documents/{b}/order/{order}");
    let key = &app.a.key;
    let before = app.event_count().await;

    let no_such_order = format!("/v1/documents/{b}/order/999999");
    let r = upload(&app, key, &no_such_order, &invoice(PDF)).await;
    refused(&app, before, &r, 404).await;
    let no_such_type = format!("/v1/documents/{b}/invoices/{order}");
    let r = upload(&app, key, &no_such_type, &invoice(PDF)).await;
    assert_eq!(refused(&app, before, &r, 422).await, ["entity_type"]);

    let html = Part::File("x.html", "text/html", HTML);
    let cases = [
        ("unknown", form("receipt", Some(pdf(PDF))), "category"),
        (
            "shipments only",
            form("proof_of_delivery", Some(pdf(PDF))),
            "category",
        ),
        ("HTML named .pdf", invoice(HTML), "file"),
        ("text/html", form("invoice", Some(html)), "file"),
        ("no file field", form("invoice", None), "file"),
    ];
    for (what, parts, field) in cases {
        let r = upload(&app, key, &path, &parts).await;
        assert_eq!(refused(&app, before, &r, 422).await, [field], "{what}");
    }
    let json = br#"{"category":"invoice"}"#.to_vec();
    let r = app
        .raw("POST", &path, key, Some("application/json"), json)
        .await;
    refused(&app, before, &r, 400).await;
    let r = upload(&app, key, &path, &invoice(&repeat(PDF, 11 * MIB))).await;
    refused(&app, before, &r, 413).await;

    let list = app.get(&format!("{path}/list")).await;
    assert_eq!(rows(ok(&list)).count(), 0, "{:?}", list.body);
}

#[tokio::test]
async fn another_tenants_key_cannot_reach_documents() {
    let app = spawn_cloud().await;
    let b = app.a.business;
    let order = order(&app).await;
    let path = format!("/v1/documents/{b}/order/{order}");
    let r = upload(&app, &app.a.key, &path, &invoice(PDF)).await;
    let doc = ok(&r)["id"].as_i64().expect("document id");

    let before = app.event_count().await;
    let key = Some(app.b.key.as_str());
    let routes = [
        format!("/v1/documents/{b}/categories"),
        format!("{path}/list"),
        format!("{path}/{doc}"),
    ];
    for p in routes {
        assert_error(&app.call("GET", &p, key, None).await, 401);
    }
    let r = upload(&app, &app.b.key, &path, &invoice(PDF)).await;
    refused(&app, before, &r, 401).await;

    // Under its own business, B sees neither A's order nor its document.
    let theirs = format!("/v1/documents/{}/order/{order}", app.b.business);
    for p in [format!("{theirs}/list"), format!("{theirs}/{doc}")] {
        assert_error(&app.call("GET", &p, key, None).await, 404);
    }
}
