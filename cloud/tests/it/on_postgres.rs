//! `depot-cloud` on PostgreSQL as an operator runs it (DEPOT_TEST_PG_URL;
//! skipped without it): `database.url` set by `DEPOT_DATABASE__URL`, the
//! admin commands and `serve` on a database nobody migrated, two
//! instances sharing it under load, one SIGKILLed and started again.

use crate::process::{admin_with, serve};
use depot_protocol::{ItemId, WarehouseId};
use depot_testkit::http::Client;
use depot_testkit::pg;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Adjustments of +1 sent to `base` until `stop`: how many were answered.
fn adjusting(base: &str, key: &str, stop: &Arc<AtomicBool>) -> tokio::task::JoinSet<u64> {
    let client = Client::new(base).with_key(key);
    let mut writers = tokio::task::JoinSet::new();
    for _ in 0..4 {
        let (client, stop) = (client.clone(), stop.clone());
        writers.spawn(async move {
            let mut answered = 0;
            while !stop.load(Ordering::Relaxed) {
                let sent = client
                    .raw("POST", "/v1/inventory/1/adjust")
                    .json(&json!({"warehouse_id": 1, "sku": "PG-1", "reason": "received", "quantity": 1}))
                    .timeout(Duration::from_secs(5))
                    .try_send()
                    .await;
                match sent {
                    Ok(r) if r.status == 200 && r.body.is_object() => answered += 1,
                    _ => break,
                }
            }
            answered
        });
    }
    writers
}

async fn answered(mut writers: tokio::task::JoinSet<u64>) -> u64 {
    let mut n = 0;
    while let Some(done) = writers.join_next().await {
        n += done.expect("writer");
    }
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_instances_share_one_database_and_one_survives_the_others_kill() {
    // A database with nothing in it: the first command migrates it.
    let Some(database) = pg::migrated(&[]) else {
        return;
    };
    let env = [("DEPOT_DATABASE__URL", database.url.as_str())];
    let (dir_a, dir_b) = (
        tempfile::tempdir().expect("tempdir"),
        tempfile::tempdir().expect("tempdir"),
    );
    crate::process::business_with_a_warehouse(dir_a.path(), &env, "Θεσσαλονίκη Α.Ε.");
    // The other instance's admin sees what the first made.
    let key = admin_with(dir_b.path(), &env, &["key", "create", "--business", "1"]);
    assert!(key.starts_with("dpk_"), "{key}");

    let (mut a, base_a) = serve(dir_a.path(), &env);
    let (mut b, base_b) = serve(dir_b.path(), &env);
    let made = Client::new(&base_a)
        .with_key(key.as_str())
        .post(
            "/v1/items/1/create",
            json!({"sku": "PG-1", "name": "Κουτί"}),
        )
        .await;
    assert_eq!(made.status, 200, "{:?}", made.body);
    let seen = Client::new(&base_b)
        .with_key(key.as_str())
        .get("/v1/items/1/list")
        .await;
    assert_eq!(seen.status, 200, "{:?}", seen.body);
    assert_eq!(seen.body["data"][0]["name"], "Κουτί", "{:?}", seen.body);

    // Both take writes at once; A is killed in the middle of them.
    let stop = Arc::new(AtomicBool::new(false));
    let on_a = adjusting(&base_a, &key, &stop);
    let on_b = adjusting(&base_b, &key, &stop);
    tokio::time::sleep(Duration::from_millis(700)).await;
    a.kill().expect("kill");
    let _ = a.wait();
    let from_a = answered(on_a).await;
    // B serves on while A is gone.
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::Relaxed);
    let from_b = answered(on_b).await;
    assert!(
        from_a > 5 && from_b > 5,
        "too light a load: {from_a} and {from_b}"
    );

    // A starts again on the same database and sees everything.
    let (mut again, base_again) = serve(dir_a.path(), &env);
    let level = Client::new(&base_again)
        .with_key(key.as_str())
        .get("/v1/inventory/1/items/list")
        .await;
    assert_eq!(level.status, 200, "{:?}", level.body);
    assert!(level.body["data"][0].is_object(), "{:?}", level.body);
    crate::process::terminate(&mut again);
    crate::process::terminate(&mut b);

    // Every answered write is kept, none twice, and the books agree (a
    // write A committed without answering before it died may be there
    // too); nothing went to a file.
    let dir = tempfile::tempdir().expect("tempdir");
    let url = database.url.clone();
    let wms = depot_wms::Wms::open_postgres(&url, dir.path(), "cloud").expect("open");
    let (on_hand, _) = wms
        .stock_level(ItemId(1), WarehouseId(1))
        .await
        .expect("level");
    let moved = wms
        .events_since(0, u32::MAX)
        .await
        .expect("events")
        .iter()
        .filter(|e| e.kind == "stock.moved")
        .count() as i64;
    assert_eq!(on_hand, moved, "level and ledger disagree");
    assert!(
        on_hand as u64 >= from_a + from_b,
        "{on_hand} < {from_a} + {from_b}"
    );
    assert!(wms.check_ledger().await.expect("check").is_empty());
    wms.close().await.expect("close");
    for d in [&dir_a, &dir_b] {
        assert!(
            !d.path().join("cloud.db").exists(),
            "a file database was made"
        );
    }
}

/// What a caller reads of `base`: the answers compared across the move.
async fn readings(base: &str, key: &str) -> Vec<serde_json::Value> {
    let client = Client::new(base).with_key(key);
    let mut out = Vec::new();
    for path in [
        "/v1/items/1/list",
        "/v1/orders/1/list",
        "/v1/inventory/1/items/list",
        "/v1/events/1/list?after=0",
    ] {
        let r = client.get(path).await;
        assert_eq!(r.status, 200, "{path}: {:?}", r.body);
        out.push(r.body);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlite_cloud_moves_to_postgres_whole_and_numbers_on() {
    let Some(database) = pg::migrated(&[]) else {
        return;
    };
    // A SQLite cloud with a business, an edge, stock, orders and events.
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut sqlite, base, key) = crate::process::serve_one_business(dir.path(), &[]).await;
    crate::process::admin(
        dir.path(),
        &["edge", "register", "--business", "1", "--edge", "tienda-1"],
    );
    let client = Client::new(&base).with_key(key.as_str());
    for (n, name) in ["Ελένη Παπαδοπούλου", "山田 太郎", "José Ñúñez"]
        .iter()
        .enumerate()
    {
        let r = client
            .post(
                "/v1/inventory/1/adjust",
                json!({"warehouse_id": 1, "sku": "CR-1", "reason": "received", "quantity": 5}),
            )
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
        let r = client
            .post(
                "/v1/orders/1/create",
                json!({"channel": "web", "external_ref": format!("MV-{n}"), "warehouse_id": 1,
                       "shipping_address": {"name": name, "line1": "Odos 1", "postal_code": "54624",
                                            "city": "Θεσσαλονίκη", "country": "GR"},
                       "lines": [{"sku": "CR-1", "quantity": 1}]}),
            )
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
    }
    // A document: on SQLite its bytes are a file beside the database.
    use crate::printing_documents::{BOUNDARY, PDF, PDF_SHA256, invoice, multipart};
    let document = "/v1/documents/1/order/1";
    let r = client
        .raw("POST", document)
        .header(
            "Content-Type",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .body(multipart(&invoice(PDF)))
        .send()
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["data"]["sha256"], PDF_SHA256);
    let before = readings(&base, &key).await;
    crate::process::terminate(&mut sqlite);

    let from = dir.path().to_string_lossy().into_owned();
    let migrate = || {
        let args = [
            "migrate-to-postgres",
            "--from",
            &from,
            "--to",
            &database.url,
        ];
        crate::process::run(&[], &args)
    };
    let moved = migrate();
    let (out, err) = (
        String::from_utf8_lossy(&moved.stdout),
        String::from_utf8_lossy(&moved.stderr),
    );
    assert!(moved.status.success(), "{out}\n{err}");
    assert!(out.starts_with("copied "), "{out}");
    assert!(err.contains("orders: 3 rows"), "{err}");
    assert!(err.contains("document_blobs: 1 rows"), "{err}");

    // The same cloud, now on PostgreSQL: the same answers, and new rows
    // number on after the copied ones.
    let env = [("DEPOT_DATABASE__URL", database.url.as_str())];
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let (mut pg, base) = serve(elsewhere.path(), &env);
    assert_eq!(readings(&base, &key).await, before);
    // The document's bytes came along into the database.
    let bytes = Client::new(&base)
        .with_key(key.as_str())
        .raw("GET", &format!("{document}/1"))
        .send()
        .await;
    assert_eq!(bytes.status, 200);
    assert_eq!(bytes.bytes, PDF);
    let r = Client::new(&base)
        .with_key(key.as_str())
        .post(
            "/v1/orders/1/create",
            json!({"channel": "web", "external_ref": "MV-after", "warehouse_id": 1,
                   "shipping_address": {"name": "Ana", "line1": "Calle 1", "postal_code": "28009",
                                        "city": "Madrid", "country": "ES"},
                   "lines": [{"sku": "CR-1", "quantity": 1}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["data"]["id"], 4, "{:?}", r.body);
    crate::process::terminate(&mut pg);

    // A second copy into a database with rows is refused, and changes nothing.
    let again = migrate();
    assert!(!again.status.success());
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("not empty"), "{err}");
}
