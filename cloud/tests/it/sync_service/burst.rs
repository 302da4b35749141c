//! A burst of batches through the service, more than one group of them:
//! each answered in the order it came and none with a gap, and a hello
//! sent right behind them answered with a cursor that includes them all
//! (it waits for the groups queued on the writer before it).

use super::*;

/// More batches than the service takes in one group (64), and fewer than
/// the embedded broker keeps in flight to one client (100): past that, with
/// this client's own publishes in flight too, rumqttd stalls the stream
/// (Mosquitto does not).
const BATCHES: i64 = 90;

async fn burst(url: &MqttUrl, tag: &str) {
    let w = world(&format!("b1-{tag}")).await;
    let service = start_service(&w.cloud, url, tag);
    let mut edge = FakeEdge::connect(url, &w, tag).await;
    edge.cloud_online(&service.session).await;
    edge.hello("s1", 0).await;
    edge.until(WAIT, "the end of the replay", |m| {
        matches!(m, DownMessage::Changes { more: false, .. })
    })
    .await;

    for delta in 1..=BATCHES {
        adjust(&w, delta % 5 + 1).await;
    }
    let events = edge.outgoing(0).await;
    assert_eq!(events.len() as i64, BATCHES);
    for event in &events {
        edge.batch("s1", vec![event.clone()]).await;
    }
    edge.hello("s1", 0).await;

    let mut answered = Vec::new();
    let hello = loop {
        match edge.down().await {
            DownMessage::Ack {
                through_seq,
                hello: true,
                ..
            } => break through_seq,
            DownMessage::Ack {
                through_seq, gap, ..
            } => answered.push((through_seq, gap)),
            _ => {}
        }
    };
    let expected: Vec<(i64, bool)> = (1..=BATCHES).map(|seq| (seq, false)).collect();
    assert_eq!(answered, expected, "every batch answered, in order, no gap");
    assert_eq!(hello, BATCHES, "the hello saw every batch before it");
    let (cloud, at_edge) = levels(&w).await;
    assert_eq!(cloud, at_edge);

    service.shut_down().await;
    edge.leave().await;
}

#[tokio::test]
async fn a_burst_of_batches_is_answered_in_order_and_a_hello_behind_it_sees_it_all() {
    init_logs();
    let tag = unique_tag();
    let (url, _broker) = test_broker().await;
    burst(&url, &tag).await;
}
