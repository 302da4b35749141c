//! The channel change feed under concurrent writes: a write that took a
//! feed number and is still open holds back every later change of its
//! business, so a reader past a number has every number before it. A
//! connector polling the feed while writes commit misses nothing and
//! reads each item once per poll.

use depot_protocol::ChannelId;
use depot_protocol::channel::ChannelFields;
use depot_testkit::seed;
use depot_wms::Wms;
use serde_json::json;
use std::time::Duration;

async fn adjust(wms: &Wms, caller: depot_protocol::tenant::Caller, w: i64, sku: &str, n: i64) {
    let req = serde_json::from_value(json!({"warehouse_id": w, "sku": sku, "reason": "received",
        "quantity": n}))
    .expect("adjust");
    wms.adjust(caller, req).await.expect("adjusted");
}

/// (sku, available) after `cursor`, and the next cursor.
async fn poll(wms: &Wms, b: depot_protocol::BusinessId, cursor: i64) -> (Vec<(String, i64)>, i64) {
    let page = wms
        .channel_changes(b, "web".into(), cursor, 1000)
        .await
        .expect("changes");
    let rows = page
        .data
        .into_iter()
        .map(|a| (a.sku, a.available))
        .collect();
    (rows, page.next.parse().expect("a cursor"))
}

#[tokio::test]
async fn a_write_held_open_holds_back_later_changes_so_no_reader_skips_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (wms, _database) = depot_testkit::pg::cloud_engine(dir.path());
    let t = seed::business("Φ")
        .item("ΜΕΛΙ")
        .item("ΓΑΛΑ")
        .seed(&wms)
        .await;
    let (b, w) = (t.business, t.warehouse.0);
    let fields: ChannelFields = serde_json::from_value(json!({"code": "web", "name": "Web",
        "kind": "storefront", "warehouse_ids": [w]}))
    .expect("fields");
    let channel: ChannelId = wms.create_channel(b, fields).await.expect("channel").id;
    let (_, cursor) = poll(&wms, b, 0).await;

    // A write takes the feed's next number for ΜΕΛΙ, as a movement of it
    // would, and stays open a while before it commits.
    let item = t.items[0].0;
    let held = tokio::spawn({
        let wms = wms.clone();
        async move {
            wms.write_for(b, move |conn| {
                let seq: i64 = conn.query_value(
                    "INSERT INTO channel_feed (business_id, seq, emitted) VALUES (?1, 1, 0)
                     ON CONFLICT (business_id) DO UPDATE SET seq = channel_feed.seq + 1
                     RETURNING seq",
                    depot_sql::params![b.0],
                )?;
                conn.execute(
                    "INSERT INTO channel_availability (item_id, channel_id, business_id, available, seq)
                     VALUES (?1, ?2, ?3, 7, ?4)
                     ON CONFLICT (item_id, channel_id) DO UPDATE SET available = 7, seq = ?4",
                    depot_sql::params![item, channel.0, b.0, seq],
                )?;
                std::thread::sleep(Duration::from_millis(600));
                Ok(seq)
            })
            .await
            .expect("held write")
        }
    });
    tokio::time::sleep(Duration::from_millis(150)).await;
    // Meanwhile another change of the business, a real one, and a reader.
    let other = tokio::spawn({
        let wms = wms.clone();
        let caller = t.caller;
        async move { adjust(&wms, caller, w, "ΓΑΛΑ", 5).await }
    });
    tokio::time::sleep(Duration::from_millis(150)).await;
    let (during, _) = poll(&wms, b, cursor).await;
    assert_eq!(during, vec![], "nothing past the open write is readable");
    let first = held.await.expect("held");
    other.await.expect("other");

    // From the same cursor: both, the held one first.
    let (after, next) = poll(&wms, b, cursor).await;
    assert_eq!(
        after,
        [("ΜΕΛΙ".to_owned(), 7), ("ΓΑΛΑ".to_owned(), 5)],
        "every change, in the order of its number"
    );
    assert_eq!(next, first + 1);
    // The next change follows the cursor.
    adjust(&wms, t.caller, w, "ΓΑΛΑ", 1).await;
    assert_eq!(poll(&wms, b, next).await.0, [("ΓΑΛΑ".to_owned(), 6)]);
}

#[tokio::test]
async fn a_connector_goes_on_from_its_cursor_after_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cloud.db");
    let wms = Wms::open(&path, "cloud").expect("open");
    let t = seed::business("Ψ").item("ΨΩΜΙ").seed(&wms).await;
    let (b, w) = (t.business, t.warehouse.0);
    let fields: ChannelFields = serde_json::from_value(json!({"code": "web", "name": "Web",
        "kind": "pos", "warehouse_ids": [w], "buffer_percent": 50}))
    .expect("fields");
    wms.create_channel(b, fields).await.expect("channel");
    adjust(&wms, t.caller, w, "ΨΩΜΙ", 9).await;
    let (rows, cursor) = poll(&wms, b, 0).await;
    // Half of 9 held back, rounded up: 4 to sell.
    assert_eq!(rows, [("ΨΩΜΙ".to_owned(), 4)]);
    drop(wms);

    let wms = Wms::open(&path, "cloud").expect("reopen");
    assert_eq!(poll(&wms, b, cursor).await, (vec![], cursor));
    adjust(&wms, t.caller, w, "ΨΩΜΙ", 2).await;
    assert_eq!(poll(&wms, b, cursor).await.0, [("ΨΩΜΙ".to_owned(), 5)]);
}
