//! The baseline: raw MQTT through the same broker. One rumqttc client
//! publishes QoS 1 to a topic another rumqttc client subscribes to (QoS 1),
//! timed from the first publish until the subscriber has received the last
//! message.

use anyhow::{Context, bail};
use depot_mqtt::{MqttUrl, client_options};
use rumqttc::{AsyncClient, Event, EventLoop, Packet, QoS};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Messages published but not yet received, at most: below Mosquitto's
/// default queue per client (1000 QoS 1 messages, beyond which it drops), so
/// none is lost and the broker is kept busy.
pub const WINDOW: usize = 500;
const CONNECT_LIMIT: Duration = Duration::from_secs(10);
const RUN_LIMIT: Duration = Duration::from_secs(300);

async fn connect(url: &MqttUrl, id: &str) -> anyhow::Result<(AsyncClient, EventLoop)> {
    let mut options = client_options(
        url,
        &depot_mqtt::Tls::default(),
        id,
        Duration::from_secs(30),
    )?;
    options.set_clean_session(true);
    let (client, mut events) = AsyncClient::new(options, 1024);
    tokio::time::timeout(CONNECT_LIMIT, async {
        loop {
            if let Event::Incoming(Packet::ConnAck(_)) = events.poll().await? {
                return anyhow::Ok(());
            }
        }
    })
    .await
    .with_context(|| format!("{id}: no answer from the broker"))??;
    Ok((client, events))
}

/// Publishes `n` messages (`payload(i)`) and answers the time until all of
/// them were received.
pub async fn round_trip(
    url: &MqttUrl,
    run: &str,
    n: usize,
    payload: impl Fn(usize) -> Vec<u8>,
) -> anyhow::Result<Duration> {
    let tag = format!("{}-{run}", std::process::id());
    let topic = format!("depot-bench/{tag}");
    let (sub, mut sub_events) = connect(url, &format!("depot-bench-sub-{tag}")).await?;
    sub.subscribe(&topic, QoS::AtLeastOnce).await?;
    tokio::time::timeout(CONNECT_LIMIT, async {
        loop {
            if let Event::Incoming(Packet::SubAck(_)) = sub_events.poll().await? {
                return anyhow::Ok(());
            }
        }
    })
    .await
    .context("no subscription acknowledgement")??;
    let (received, mut seen) = watch::channel(0usize);
    let counter = tokio::spawn(async move {
        let mut got = 0;
        loop {
            if let Event::Incoming(Packet::Publish(_)) = sub_events.poll().await? {
                got += 1;
                received.send_replace(got);
                if got == n {
                    return anyhow::Ok(Instant::now());
                }
            }
        }
    });
    let (publisher, mut pub_events) = connect(url, &format!("depot-bench-pub-{tag}")).await?;
    let poller = tokio::spawn(async move { while pub_events.poll().await.is_ok() {} });

    let started = Instant::now();
    let published = async {
        for i in 0..n {
            seen.wait_for(|&got| i - got.min(i) < WINDOW).await?;
            publisher
                .publish(&topic, QoS::AtLeastOnce, false, payload(i))
                .await?;
        }
        anyhow::Ok(())
    };
    let outcome = tokio::time::timeout(RUN_LIMIT, async {
        published.await?;
        counter.await.context("the subscriber task failed")?
    })
    .await;
    let _ = publisher.disconnect().await;
    let _ = sub.disconnect().await;
    poller.abort();
    match outcome {
        Ok(Ok(done)) => Ok(done - started),
        Ok(Err(e)) => Err(e),
        Err(_) => bail!(
            "only {} of {n} messages arrived within {} s",
            *seen.borrow(),
            RUN_LIMIT.as_secs()
        ),
    }
}
