//! Connected to the broker but not syncing: a cloud that stops answering
//! is named on the box's status (and so in `depot-edge status`, `sync
//! --wait` and the systemd status line) within two resend periods, and the
//! note goes once the cloud answers again; a broker that refuses the
//! box's subscription is named at once, whether the fake broker here or
//! Mosquitto says no; a box the cloud does not know is told so, and syncs
//! once it is registered.

use crate::common;
use common::process::{env_of, run};
use common::{RunningEdge, syncs_both_ways};
use depot_edge::faults::Faults;
use depot_mqtt::testing::mosquitto::Mosquitto;
use depot_protocol::sync::EdgeId;
use depot_testkit::http::Client;
use depot_testkit::{eventually, rig::Rig};

/// `depot_sync_not_syncing` on the box's `/metrics`.
async fn not_syncing(edge: &RunningEdge) -> Option<f64> {
    let text = Client::new(&edge.base).get("/metrics").await.text();
    let samples = depot_wms::metrics::exposition::parse(&text).expect("exposition");
    depot_wms::metrics::exposition::value(&samples, "depot_sync_not_syncing", &[])
}

/// `depot-edge status` says the link is up but not syncing, and why.
async fn says_not_syncing(env: &[(&str, String)], why: &str) {
    let (ok, said) = run(env, &["status"]).await;
    assert!(ok, "{said}");
    assert!(
        said.lines()
            .any(|l| l.starts_with("link          connected, but not syncing"))
            && said
                .lines()
                .any(|l| l.starts_with("link error") && l.contains(why)),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_silent_cloud_is_named_on_the_status_until_it_answers() {
    let mut rig = Rig::start_with(&format!("sil{}", std::process::id()), false, own_broker).await;
    let mut settings = rig.edge_settings();
    // The cloud may be silent for two resend periods: 2 s here.
    settings.broker.resend_after_secs = 1;
    let env = env_of(&settings);
    let edge = RunningEdge::start(settings, Faults::default()).await;
    let ew = &edge.wms;
    eventually("the cloud's first answer", || async {
        ew.sync_snapshot()
            .await
            .is_ok_and(|s| s.connected && s.recovery.is_none())
    })
    .await;
    assert_eq!(ew.sync_snapshot().await.expect("snapshot").link_error, None);
    assert_eq!(not_syncing(&edge).await, Some(0.0));

    rig.stop_cloud().await;
    let silent = "the cloud has not answered this box's hello for 2 s: is depot-cloud running";
    eventually("the status to name the silent cloud", || async {
        ew.sync_snapshot().await.is_ok_and(|s| {
            s.connected && s.link_error.as_deref().is_some_and(|e| e.contains(silent))
        })
    })
    .await;
    assert_eq!(not_syncing(&edge).await, Some(1.0), "on /metrics too");
    says_not_syncing(&env, silent).await;

    rig.restart_cloud().await;
    syncing_again(&edge, "the note to go once the cloud answers").await;
    let (_, said) = run(&env, &["status"]).await;
    assert!(
        said.lines()
            .any(|l| l.starts_with("link          connected since"))
            && !said.contains("link error"),
        "{said}"
    );
    edge.stop().await;
    rig.stop().await;
}

/// Waits until the box, connected, gives `wanted` as the start of its link
/// error; `/metrics` says it is not syncing.
async fn refused_with(edge: &RunningEdge, wanted: &str) {
    eventually("the refusal on the status", || async {
        edge.wms.sync_snapshot().await.is_ok_and(|s| {
            s.connected
                && s.link_error
                    .as_deref()
                    .is_some_and(|e| e.starts_with(wanted))
        })
    })
    .await;
    assert_eq!(not_syncing(edge).await, Some(1.0));
}

/// Waits until the box is connected with nothing in the way of sync;
/// `/metrics` says so too.
async fn syncing_again(edge: &RunningEdge, what: &str) {
    eventually(what, || async {
        edge.wms
            .sync_snapshot()
            .await
            .is_ok_and(|s| s.connected && s.link_error.is_none())
    })
    .await;
    assert_eq!(not_syncing(edge).await, Some(0.0));
}

/// The embedded broker even where the tests share one
/// (`DEPOT_TEST_MQTT_URL`): there, other tests' clouds, which know no such
/// edge, would refuse the box too, each with a reason of its own.
fn own_broker(cloud: &mut depot_cloud::settings::Settings) {
    cloud.broker.url = None;
}

/// A box whose edge id the cloud has no record of (never registered, or a
/// typo in its settings) is answered with the reason, not with silence:
/// the status says what to do, and once the edge is registered the next
/// hello is served and what the box did meanwhile goes up.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_unregistered_box_is_told_so_and_syncs_once_registered() {
    let rig = Rig::start_with(&format!("reg{}", std::process::id()), false, own_broker).await;
    let b = rig.business;
    let item = rig.item("REG-1").await;
    let stranger = format!("new{}", std::process::id());
    let mut settings = rig.edge_settings();
    settings.edge_id = stranger.clone();
    settings.node = rig.node + 1;
    let env = env_of(&settings);
    let edge = RunningEdge::start(settings, Faults::default()).await;
    let wanted = format!(
        "the cloud refuses this box: edge {stranger} is not registered in business {b}: register it in the cloud (depot-cloud edge register --business {b} --edge {stranger})"
    );
    refused_with(&edge, &wanted).await;
    says_not_syncing(&env, "is not registered in business").await;

    let record = rig
        .cloud
        .register_edge(b, EdgeId::parse(&stranger).expect("edge id"), None)
        .await
        .expect("register");
    assert_eq!(
        record.node,
        rig.node + 1,
        "the node the box was set up with"
    );
    syncs_both_ways(&rig, &edge, item, "REG-1").await;
    syncing_again(&edge, "the refusal gone from the status").await;
    edge.stop().await;
    rig.stop().await;
}

/// A box set up with another node number than its edge is registered as
/// (a settings file copied from another box, say) would number its records
/// in another box's range: the cloud refuses it and says so. That the box
/// then sends nothing of its own is `depot_protocol::sync::outbox`'s.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_box_set_up_as_another_node_is_refused() {
    let rig = Rig::start_with(&format!("node{}", std::process::id()), false, own_broker).await;
    let mut settings = rig.edge_settings();
    settings.node = rig.node + 1;
    let edge = RunningEdge::start(settings, Faults::default()).await;
    let wanted = format!(
        "the cloud refuses this box: this box runs as node {}, but edge {} is registered in business {} as node {}",
        rig.node + 1,
        rig.edge_id,
        rig.business,
        rig.node
    );
    refused_with(&edge, &wanted).await;
    edge.stop().await;
    rig.stop().await;
}

/// An MQTT 3.1.1 broker that accepts the connection, refuses every
/// subscription (SUBACK 0x80, as brokers do whose access rules deny it) and
/// acknowledges publishes: where a broker says no instead of staying quiet.
async fn refusing_broker() -> std::net::SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                loop {
                    let mut first = [0u8; 1];
                    if tcp.read_exact(&mut first).await.is_err() {
                        return;
                    }
                    let (mut len, mut shift) = (0usize, 0);
                    loop {
                        let mut b = [0u8; 1];
                        if tcp.read_exact(&mut b).await.is_err() {
                            return;
                        }
                        len |= usize::from(b[0] & 0x7f) << shift;
                        shift += 7;
                        if b[0] & 0x80 == 0 {
                            break;
                        }
                    }
                    let mut body = vec![0u8; len];
                    if tcp.read_exact(&mut body).await.is_err() {
                        return;
                    }
                    let answer: Vec<u8> = match first[0] >> 4 {
                        1 => vec![0x20, 0x02, 0x00, 0x00],
                        8 => vec![0x90, 0x03, body[0], body[1], 0x80],
                        // QoS 1 publish: the packet id follows the topic.
                        3 if first[0] & 0x06 == 0x02 => {
                            let at = 2 + usize::from(u16::from_be_bytes([body[0], body[1]]));
                            vec![0x40, 0x02, body[at], body[at + 1]]
                        }
                        12 => vec![0xd0, 0x00],
                        14 => return,
                        _ => Vec::new(),
                    };
                    if tcp.write_all(&answer).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refused_subscription_is_named_on_the_status() {
    let url = format!("mqtt://{}", refusing_broker().await);
    subscription_refused_at(&url, "sub").await;
}

/// The same against Mosquitto, whose dynamic security plugin refuses.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_subscription_mosquitto_refuses_is_named_on_the_status() {
    let Some(mosquitto) =
        Mosquitto::refusing_subscriptions("the refused-subscription test on Mosquitto")
            .expect("start mosquitto")
    else {
        return;
    };
    subscription_refused_at(&mosquitto.url(), "msub").await;
    drop(mosquitto);
}

async fn subscription_refused_at(url: &str, edge_id: &str) {
    let rig = Rig::start(&format!("{edge_id}{}", std::process::id()), false).await;
    let mut settings = rig.edge_settings();
    settings.broker.url = url.to_owned();
    let env = env_of(&settings);
    let edge = RunningEdge::start(settings, Faults::default()).await;
    let ew = &edge.wms;
    eventually("the refused subscription on the status", || async {
        ew.sync_snapshot().await.is_ok_and(|s| {
            s.connected
                && s.link_error.as_deref().is_some_and(|e| {
                    e.contains("the broker refused this box's subscription")
                        && e.contains("access rules")
                })
        })
    })
    .await;
    assert_eq!(not_syncing(&edge).await, Some(1.0), "on /metrics too");
    says_not_syncing(&env, "refused this box's subscription").await;
    edge.stop().await;
    rig.stop().await;
}
