//! A new box, or one restored from a backup, takes its own events back from
//! the cloud before it sends anything of its own. A cloud older than the
//! edge never hands them back: the box must say why it is stuck (status,
//! metrics, logs) instead of waiting in silence, and go on once the cloud is
//! upgraded.
//!
//! The old cloud here is played by hand on the broker: it answers a hello
//! with the acknowledgement an older `depot-cloud` sends, written out as
//! that version wrote it.

use crate::common;
use common::RunningEdge;
use common::process::run;
use depot_edge::faults::Faults;
use depot_edge::settings::{Broker, Settings as EdgeSettings};
use depot_protocol::sync::message::{Hello, UpMessage, decode};
use depot_protocol::sync::topic::CLOUD_STATE;
use depot_testkit::eventually;
use depot_testkit::http::Client;
use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use serde_json::json;
use std::time::Duration;

/// Answers every hello on the edge's up topic with `ack(session)`, until
/// the task is aborted. Once subscribed, it says it is online, as a cloud
/// that starts (or restarts, upgraded) does, so the edge says hello at once.
fn cloud(
    host: String,
    port: u16,
    edge: &str,
    ack: fn(&str) -> serde_json::Value,
) -> tokio::task::JoinHandle<()> {
    let mut options = MqttOptions::new(format!("old-cloud-{}", std::process::id()), host, port);
    options.set_keep_alive(Duration::from_secs(5));
    let (client, mut events) = AsyncClient::new(options, 64);
    let up = format!("depot/v1/1/edge/{edge}/up");
    let down = format!("depot/v1/1/edge/{edge}/down");
    tokio::spawn(async move {
        let mut subscribed = false;
        loop {
            match events.poll().await {
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    subscribed = client.subscribe(&up, QoS::AtLeastOnce).await.is_ok();
                }
                Ok(Event::Incoming(Packet::SubAck(_))) => {
                    // Not retained: the broker may be shared with other tests.
                    let online = json!({"type": "online", "version": "0.0.1",
                                        "session": format!("{:?}", std::time::Instant::now())});
                    let body = serde_json::to_vec(&online).unwrap_or_default();
                    let _ = client
                        .publish(CLOUD_STATE, QoS::AtLeastOnce, false, body)
                        .await;
                }
                Ok(Event::Incoming(Packet::Publish(p))) if subscribed => {
                    if let Ok(UpMessage::Hello(Hello { session, .. })) =
                        decode::<UpMessage>(&p.payload)
                    {
                        let body = serde_json::to_vec(&ack(&session)).unwrap_or_default();
                        let _ = client.publish(&down, QoS::AtLeastOnce, false, body).await;
                    }
                }
                Ok(_) => {}
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    })
}

#[tokio::test]
async fn a_cloud_that_does_not_hand_events_back_is_named_and_an_upgrade_ends_the_wait() {
    let dir = tempfile::tempdir().expect("tempdir");
    let settings = depot_testkit::rig::cloud_settings(dir.path().join("cloud"));
    let broker = depot_cloud::Broker::start(&settings).await.expect("broker");
    let (host, port) = (broker.url.host.clone(), broker.url.port);
    // Its own topics, should the broker be shared with another run.
    let edge_id = format!("dock-{}", std::process::id());

    // The older cloud holds five of this edge's events, and says only its
    // cursor: no page of them comes first, and no `hands_back`.
    let old = cloud(host.clone(), port, &edge_id, |session| {
        json!({"type": "ack", "session": session, "through_seq": 5, "gap": false,
               "rejected": [], "hello": true})
    });
    // A new box: its database starts empty, so its log may lack what the
    // cloud has.
    let edge_settings = EdgeSettings {
        business_id: 1,
        edge_id: edge_id.clone(),
        node: 1,
        data_dir: dir.path().join("edge"),
        broker: Broker {
            url: broker.url.to_string(),
            ..Broker::default()
        },
        ..EdgeSettings::default()
    };
    let edge = RunningEdge::start(edge_settings, Faults::default()).await;
    eventually("the edge says why its own events do not come back", || {
        let wms = edge.wms.clone();
        async move {
            let s = wms.sync_snapshot().await.expect("snapshot");
            s.recovery.and_then(|r| r.stalled).as_deref() == Some(depot_wms::recovery::STALLED)
        }
    })
    .await;
    let status = Client::new(&edge.base).get("/metrics").await.text();
    assert!(status.contains("depot_sync_recovery_stalled 1"), "{status}");
    // The operator's commands say it too, and do not wait for what cannot
    // come.
    let env = [
        ("DEPOT_BUSINESS_ID", "1".to_owned()),
        ("DEPOT_EDGE_ID", edge_id.clone()),
        ("DEPOT_NODE", "1".to_owned()),
        (
            "DEPOT_DATA_DIR",
            dir.path().join("edge").display().to_string(),
        ),
        ("DEPOT_BROKER__URL", broker.url.to_string()),
    ];
    let (ok, said) = run(&env, &["status"]).await;
    assert!(
        ok && said.contains("recovery      stalled: the cloud does not hand back"),
        "{said}"
    );
    let started = std::time::Instant::now();
    let (ok, said) = run(&env, &["sync", "--wait", "--timeout", "60"]).await;
    assert!(
        !ok && said.contains("until the cloud is upgraded"),
        "{said}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "sync --wait waited"
    );
    let (ok, said) = run(&env, &["doctor"]).await;
    assert!(
        !ok && said.contains(
            "its own log is certain only through seq 0, and the cloud does not hand back"
        ),
        "{said}"
    );
    old.abort();

    // Upgraded: the cloud says it hands events back, and that it holds
    // none of this box's (a cloud whose records of the edge were reset,
    // say). The log is whole: the wait ends.
    let new = cloud(host, port, &edge_id, |session| {
        json!({"type": "ack", "session": session, "through_seq": 0, "gap": false,
               "rejected": [], "hello": true, "hands_back": true})
    });
    eventually(
        "the recovery ends once the cloud answers as a current one",
        || {
            let wms = edge.wms.clone();
            async move {
                wms.sync_snapshot()
                    .await
                    .expect("snapshot")
                    .recovery
                    .is_none()
            }
        },
    )
    .await;
    new.abort();
    edge.stop().await;
}
