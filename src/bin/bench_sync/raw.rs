//! The baseline: raw MQTT through the same broker. One rumqttc client
//! publishes QoS 1 to a topic another rumqttc client subscribes to (QoS 1),
//! timed from the first publish until the subscriber has received the last
//! message; or, for many edges at once, many publishers to one subscriber
//! ([`fan_in`]).

use anyhow::{Context, bail};
use depot_mqtt::{MqttUrl, client_options};
use rumqttc::{AsyncClient, Event, EventLoop, Packet, QoS};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Semaphore, watch};

/// Messages published but not yet received, at most: below Mosquitto's
/// default queue per client (1000 QoS 1 messages, beyond which it drops), so
/// none is lost and the broker is kept busy.
pub const WINDOW: usize = 500;
const CONNECT_LIMIT: Duration = Duration::from_secs(10);
const RUN_LIMIT: Duration = Duration::from_secs(300);
/// A fan-in run that receives nothing for this long has lost messages.
const STALL: Duration = Duration::from_secs(10);

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

/// A client subscribed (QoS 1) to `filter`, once the broker has
/// acknowledged the subscription.
async fn subscriber(
    url: &MqttUrl,
    tag: &str,
    filter: &str,
) -> anyhow::Result<(AsyncClient, EventLoop)> {
    let (sub, mut events) = connect(url, &format!("depot-bench-sub-{tag}")).await?;
    sub.subscribe(filter, QoS::AtLeastOnce).await?;
    tokio::time::timeout(CONNECT_LIMIT, async {
        loop {
            if let Event::Incoming(Packet::SubAck(_)) = events.poll().await? {
                return anyhow::Ok(());
            }
        }
    })
    .await
    .context("no subscription acknowledgement")??;
    Ok((sub, events))
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
    let (sub, mut sub_events) = subscriber(url, &tag, &topic).await?;
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

/// What one fan-in run took: the whole, and each publisher's (from the
/// common start until its last message was received).
pub struct FanIn {
    pub took: Duration,
    pub per_publisher: Vec<Duration>,
}

/// A message of publisher `p`, its `i`th.
pub type Payload = Arc<dyn Fn(usize, usize) -> Vec<u8> + Send + Sync>;

/// Many publishers at once to one subscriber, as many edges to one cloud:
/// publisher `p` (a rumqttc client of its own, on a topic of its own)
/// publishes `counts[p]` messages (`payload(p, i)`) at QoS 1, all of them
/// starting at one moment; one client subscribed to all the topics (QoS 1)
/// receives them. At most [`WINDOW`] messages are published and not yet
/// received, across all publishers (a fair semaphore: they take turns), so
/// the broker drops none. Answers the time until the last message was
/// received, and each publisher's.
pub async fn fan_in(
    url: &MqttUrl,
    run: &str,
    counts: &[usize],
    payload: Payload,
) -> anyhow::Result<FanIn> {
    let tag = format!("{}-fan-{run}", std::process::id());
    let prefix = format!("depot-bench/{tag}");
    let n: usize = counts.iter().sum();
    let (sub, mut sub_events) = subscriber(url, &tag, &format!("{prefix}/+")).await?;

    let window = Arc::new(Semaphore::new(WINDOW));
    let (received, seen) = watch::channel(0usize);
    let counter = {
        let (window, counts, prefix) = (window.clone(), counts.to_vec(), prefix.clone());
        tokio::spawn(async move {
            let counted = count_in(&mut sub_events, &counts, &prefix, &window, received).await;
            if counted.is_err() {
                // The publishers waiting for room stop too.
                window.close();
            }
            counted
        })
    };

    // Every publisher connected before any starts.
    let (go, start) = watch::channel(false);
    let mut publishers = Vec::with_capacity(counts.len());
    let mut pollers = Vec::with_capacity(counts.len());
    for (p, &count) in counts.iter().enumerate() {
        let (client, mut events) = connect(url, &format!("depot-bench-pub-{tag}-{p}")).await?;
        pollers.push(tokio::spawn(
            async move { while events.poll().await.is_ok() {} },
        ));
        let (topic, window, payload, mut start) = (
            format!("{prefix}/{p}"),
            window.clone(),
            payload.clone(),
            start.clone(),
        );
        publishers.push(tokio::spawn(async move {
            start.wait_for(|&go| go).await?;
            for i in 0..count {
                window.acquire().await?.forget();
                client
                    .publish(&topic, QoS::AtLeastOnce, false, payload(p, i))
                    .await?;
            }
            anyhow::Ok(client)
        }));
    }
    drop(start);

    let started = Instant::now();
    go.send_replace(true);
    let run = tokio::time::timeout(RUN_LIMIT, async {
        let mut clients = Vec::with_capacity(publishers.len());
        for p in publishers {
            clients.push(p.await.context("a publisher task failed")??);
        }
        let done = counter.await.context("the subscriber task failed")??;
        anyhow::Ok((done, clients))
    });
    // A message the broker dropped never comes: say so soon, not at the
    // limit.
    let stalled = {
        let mut seen = seen.clone();
        async move {
            loop {
                match tokio::time::timeout(STALL, seen.changed()).await {
                    Ok(Ok(())) => {}
                    Ok(Err(_)) => std::future::pending::<()>().await,
                    Err(_) => return,
                }
            }
        }
    };
    let outcome = tokio::select! {
        outcome = run => outcome.map_err(|_| RUN_LIMIT),
        () = stalled => Err(STALL),
    };
    let _ = sub.disconnect().await;
    let result = match outcome {
        Ok(Ok(((done, last), clients))) => {
            for c in clients {
                let _ = c.disconnect().await;
            }
            Ok(FanIn {
                took: done - started,
                per_publisher: last
                    .into_iter()
                    .map(|at| at.map_or(Duration::ZERO, |at| at - started))
                    .collect(),
            })
        }
        Ok(Err(e)) => Err(e),
        Err(waited) if waited == STALL => Err(anyhow::anyhow!(
            "only {} of {n} messages arrived, none in the last {} s: the broker dropped some (Mosquitto before 2.0.13 can drop QoS 1 messages to a connected subscriber when several clients publish at once, unless max_queued_messages is 0, as in the Mosquitto this bench starts)",
            *seen.borrow(),
            STALL.as_secs()
        )),
        Err(_) => Err(anyhow::anyhow!(
            "only {} of {n} messages arrived within {} s",
            *seen.borrow(),
            RUN_LIMIT.as_secs()
        )),
    };
    // Let the DISCONNECTs go out before the event loops stop.
    tokio::time::sleep(Duration::from_millis(50)).await;
    for p in pollers {
        p.abort();
    }
    result
}

/// Receives the messages of a fan-in run, giving the window back one per
/// message: when the last arrived, and when each publisher's last did.
async fn count_in(
    sub_events: &mut EventLoop,
    counts: &[usize],
    prefix: &str,
    window: &Semaphore,
    received: watch::Sender<usize>,
) -> anyhow::Result<(Instant, Vec<Option<Instant>>)> {
    let n: usize = counts.iter().sum();
    let mut got = vec![0usize; counts.len()];
    let mut last = vec![None; counts.len()];
    let mut total = 0;
    while total < n {
        let Event::Incoming(Packet::Publish(p)) = sub_events.poll().await? else {
            continue;
        };
        window.add_permits(1);
        let publisher = p
            .topic
            .strip_prefix(prefix)
            .and_then(|t| t.strip_prefix('/'))
            .and_then(|t| t.parse::<usize>().ok())
            .filter(|&k| k < counts.len())
            .with_context(|| format!("a message on an unexpected topic {}", p.topic))?;
        got[publisher] += 1;
        if got[publisher] > counts[publisher] {
            bail!("publisher {publisher}: more messages than it published");
        }
        if got[publisher] == counts[publisher] {
            last[publisher] = Some(Instant::now());
        }
        total += 1;
        received.send_replace(total);
    }
    Ok((Instant::now(), last))
}
