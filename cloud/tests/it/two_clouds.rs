//! Two `depot-cloud` instances on one PostgreSQL database and one
//! Mosquitto, sharing the edges' messages (a shared subscription), and an
//! edge syncing through them while stations write at it. One instance is
//! SIGKILLed mid-stream and started again: the other serves meanwhile,
//! both ways; nothing is lost, nothing doubled, and the edge never has to
//! reload (DEPOT_TEST_PG_URL and DEPOT_TEST_MOSQUITTO; skipped without).

use crate::process::{admin_with, business_with_a_warehouse, serve_logging_to, terminate};
use depot_edge::settings::{Broker, Settings as EdgeSettings};
use depot_mqtt::testing::mosquitto::Mosquitto;
use depot_protocol::sync::StateMessage;
use depot_protocol::sync::message::decode;
use depot_protocol::sync::topic::CLOUD_STATE;
use depot_protocol::{BusinessId, ItemId, WarehouseId};
use depot_testkit::events::movement_ids;
use depot_testkit::http::Client;
use depot_testkit::rig::serve_edge;
use depot_testkit::{eventually, pg};
use depot_wms::Wms;
use serde_json::json;
use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// An instance of the cloud, its log kept in `dir`.
fn instance(dir: &Path, env: &[(&str, &str)], log: &str) -> (Child, String) {
    let file = std::fs::File::create(dir.join(log)).expect("log file");
    let (child, base, _) = serve_logging_to(dir, env, Stdio::from(file));
    (child, base)
}

/// Stations receiving one unit at a time at the edge until `stop`: the
/// movement ids the edge answered with.
fn stations(base: &str, key: &str, stop: &Arc<AtomicBool>) -> tokio::task::JoinSet<Vec<String>> {
    let client = Client::new(base).with_key(key);
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..4 {
        let (client, stop) = (client.clone(), stop.clone());
        set.spawn(async move {
            let mut ids = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let r = client
                    .raw("POST", "/v1/inventory/1/adjust")
                    .json(&json!({"warehouse_id": 1, "sku": "Ψ-1", "reason": "received", "quantity": 1}))
                    .timeout(Duration::from_secs(10))
                    .try_send()
                    .await
                    .expect("the edge answers");
                assert_eq!(r.status, 200, "{:?}", r.body);
                ids.push(
                    r.body["data"]["movements"][0]["id"]
                        .as_str()
                        .expect("a movement id")
                        .to_owned(),
                );
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            ids
        });
    }
    set
}

/// Every state the cloud publishes, as a client subscribed to it from
/// now on receives them (the retained one first).
async fn cloud_states(port: u16) -> tokio::sync::mpsc::UnboundedReceiver<StateMessage> {
    let mut options = rumqttc::MqttOptions::new(
        format!("state-reader-{}", depot_protocol::EventId::new()),
        "127.0.0.1",
        port,
    );
    options.set_clean_session(true);
    let (client, mut events) = rumqttc::AsyncClient::new(options, 8);
    client
        .subscribe(CLOUD_STATE, rumqttc::QoS::AtLeastOnce)
        .await
        .expect("subscribe");
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let _client = client;
        while let Ok(event) = events.poll().await {
            if let rumqttc::Event::Incoming(rumqttc::Packet::Publish(p)) = event {
                if let Ok(state) = decode::<StateMessage>(&p.payload) {
                    if tx.send(state).is_err() {
                        return;
                    }
                }
            }
        }
    });
    rx
}

/// The next state `states` receives that `want` takes.
async fn next_state(
    states: &mut tokio::sync::mpsc::UnboundedReceiver<StateMessage>,
    what: &str,
    want: impl Fn(&StateMessage) -> bool,
) -> StateMessage {
    let wait = async {
        loop {
            let state = states.recv().await.expect("the state reader");
            if want(&state) {
                return state;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(15), wait)
        .await
        .unwrap_or_else(|_| panic!("no {what} within 15 s"))
}

/// Each log's lines that say the edge was told to reload.
fn resets(dirs: &[&Path]) -> Vec<String> {
    let mut out = Vec::new();
    for dir in dirs {
        for entry in std::fs::read_dir(dir).expect("dir").flatten() {
            if entry.path().extension().is_some_and(|e| e == "log") {
                let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
                out.extend(
                    text.lines()
                        .filter(|l| l.contains("sent a reset"))
                        .map(str::to_owned),
                );
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_edge_syncs_through_two_instances_and_one_is_killed_mid_stream() {
    let test = "an_edge_syncs_through_two_instances_and_one_is_killed_mid_stream";
    let Some(binary) = Mosquitto::binary(test) else {
        return;
    };
    let Some(database) = pg::migrated(&[]) else {
        return;
    };
    let broker_dir = tempfile::tempdir().expect("tempdir");
    let broker = Mosquitto::start(
        &binary,
        broker_dir.path(),
        "allow_anonymous true\nmax_packet_size 1048576\npersistence false\n",
    )
    .expect("mosquitto");
    let broker_url = format!("mqtt://127.0.0.1:{}", broker.port);
    let env = [
        ("DEPOT_DATABASE__URL", database.url.as_str()),
        ("DEPOT_BROKER__URL", broker_url.as_str()),
        ("DEPOT_BROKER__SHARE_GROUP", "depot-cloud"),
    ];
    let (dir_a, dir_b) = (
        tempfile::tempdir().expect("tempdir"),
        tempfile::tempdir().expect("tempdir"),
    );
    business_with_a_warehouse(dir_a.path(), &env, "Ελληνικά Τρόφιμα Α.Ε.");
    let key = admin_with(dir_a.path(), &env, &["key", "create", "--business", "1"]);
    let edge_id = format!("athina-{}", std::process::id());
    let registered = admin_with(
        dir_a.path(),
        &env,
        &["edge", "register", "--business", "1", "--edge", &edge_id],
    );
    let node: u32 = registered
        .split("as node ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no node in {registered:?}"));

    let (mut a, base_a) = instance(dir_a.path(), &env, "a.log");
    let (mut b, base_b) = instance(dir_b.path(), &env, "b.log");
    let made = Client::new(&base_a)
        .with_key(key.as_str())
        .post("/v1/items/1/create", json!({"sku": "Ψ-1", "name": "Φέτα"}))
        .await;
    assert_eq!(made.status, 200, "{:?}", made.body);

    let edge_dir = tempfile::tempdir().expect("tempdir");
    let settings = EdgeSettings {
        business_id: 1,
        edge_id: edge_id.clone(),
        node,
        data_dir: edge_dir.path().join("edge"),
        broker: Broker {
            url: broker_url.clone(),
            ..Broker::default()
        },
        ..EdgeSettings::default()
    };
    let edge = depot_edge::open(&settings).expect("edge");
    let (edge_base, stop_edge, edge_task) = serve_edge(edge.clone(), settings).await;
    eventually("the item and the key at the edge", || async {
        edge.item(BusinessId(1), ItemId(1)).await.is_ok()
            && matches!(edge.authenticate(&key).await, Ok(Some(_)))
    })
    .await;

    // Stations write at the edge throughout; A dies in the middle.
    let stop = Arc::new(AtomicBool::new(false));
    let mut writing = stations(&edge_base, &key, &stop);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let mut states = cloud_states(broker.port).await;
    next_state(&mut states, "retained state", |_| true).await;
    a.kill().expect("kill");
    let _ = a.wait();
    // A's last will says the cloud is offline; B, still serving, says
    // `online` again, so edges (and whoever reads the state) see a cloud.
    let StateMessage::Offline { session: dead } = next_state(&mut states, "last will", |s| {
        matches!(s, StateMessage::Offline { .. })
    })
    .await
    else {
        unreachable!("an offline state");
    };
    next_state(
        &mut states,
        "online from the instance alive",
        |s| matches!(s, StateMessage::Online { session, .. } if *session != dead),
    )
    .await;

    // B serves meanwhile, both ways: what the edge writes reaches the
    // database, and what the cloud writes reaches the edge.
    let cloud = Wms::open_postgres(
        &database.url,
        edge_dir.path().join("reader").as_path(),
        "cloud",
    )
    .expect("a reader of the database");
    let before = movement_ids(&cloud).await.len();
    eventually("the edge's writes applied with A dead", || async {
        movement_ids(&cloud).await.len() > before + 20
    })
    .await;
    let later = Client::new(&base_b)
        .with_key(key.as_str())
        .post("/v1/items/1/create", json!({"sku": "Ψ-2", "name": "Ελιές"}))
        .await;
    assert_eq!(later.status, 200, "{:?}", later.body);
    let later = ItemId(later.body["data"]["id"].as_i64().expect("item id"));
    eventually("B's item at the edge with A dead", || async {
        edge.item(BusinessId(1), later).await.is_ok()
    })
    .await;

    // A comes back on the same database; the stations go on a little.
    let (mut again, _) = instance(dir_a.path(), &env, "a-again.log");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    stop.store(true, Ordering::Relaxed);
    let mut answered = Vec::new();
    while let Some(ids) = writing.join_next().await {
        answered.extend(ids.expect("a station"));
    }
    assert!(answered.len() > 50, "too light a load: {}", answered.len());

    // Every write the edge answered is in the database once, and nothing
    // else; the edge's outbox drains and the books agree.
    let want: HashMap<String, usize> = answered.iter().map(|id| (id.clone(), 1)).collect();
    assert_eq!(want.len(), answered.len(), "movement ids repeat");
    eventually("every answered write in the cloud, once", || async {
        movement_ids(&cloud).await == want
    })
    .await;
    eventually("the edge's outbox drained", || async {
        edge.sync_snapshot()
            .await
            .is_ok_and(|s| s.depth == 0 && s.acked >= answered.len() as i64)
    })
    .await;
    let (w, item) = (WarehouseId(1), ItemId(1));
    let (on_hand, _) = cloud.stock_level(item, w).await.expect("level");
    assert_eq!(on_hand, answered.len() as i64);
    assert_eq!(
        edge.stock_level(item, w).await.expect("level"),
        cloud.stock_level(item, w).await.expect("level")
    );
    assert!(cloud.check_ledger().await.expect("check").is_empty());
    assert!(edge.check_ledger().await.expect("check").is_empty());
    let told = resets(&[dir_a.path(), dir_b.path()]);
    assert!(
        told.is_empty(),
        "the edge was told to reload:\n{}",
        told.join("\n")
    );

    let _ = stop_edge.send(());
    edge_task.await.expect("join").expect("edge");
    terminate(&mut again);
    terminate(&mut b);
    cloud.close().await.expect("close");
    drop(broker);
}
