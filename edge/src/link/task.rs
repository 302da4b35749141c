//! The task that owns the link: it connects (and reconnects, with
//! backoff), forwards what rumqttc's event loop hears, and hands each
//! message and each tick to the [`Link`]'s state in order.

use super::*;

/// Runs the link until `shutdown` resolves: connects (and reconnects,
/// with backoff, for as long as it takes), sends the outbox, applies what
/// the cloud sends.
pub async fn run(
    wms: Wms,
    settings: Settings,
    shutdown: impl Future<Output = ()>,
) -> Result<(), LinkError> {
    #[cfg(feature = "faults")]
    return run_with_faults(wms, settings, Faults::default(), shutdown).await;
    #[cfg(not(feature = "faults"))]
    run_link(wms, settings, shutdown).await
}

/// `run`, with faults injected on the sync topics (for tests only, and
/// only in a build with the `faults` feature).
#[cfg(feature = "faults")]
pub async fn run_with_faults(
    wms: Wms,
    settings: Settings,
    faults: Faults,
    shutdown: impl Future<Output = ()>,
) -> Result<(), LinkError> {
    run_link(wms, settings, Some(faults), shutdown).await
}

async fn run_link(
    wms: Wms,
    settings: Settings,
    #[cfg(feature = "faults")] faults: Option<Faults>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), LinkError> {
    let (url, tls) = settings
        .broker
        .connection()
        .map_err(|e| LinkError::Broker(e.to_string()))?;
    let edge = EdgeId::parse(&settings.edge_id).map_err(|e| LinkError::EdgeId(e.to_string()))?;
    let business = BusinessId(settings.business_id);
    let topic = |c| EdgeTopic::new(business, edge.clone(), c).to_string();
    let topics = Topics {
        up: topic(Channel::Up),
        down: topic(Channel::Down),
        state: topic(Channel::State),
    };
    // What the database says of the link is a previous process's (a power
    // cut leaves it "connected", since a time long gone): this run starts
    // down, and says so from now.
    if let Err(e) = wms.link_starting().await {
        tracing::warn!(error = %e, "could not record the link state");
    }
    let boot = uuid::Uuid::now_v7().simple().to_string();
    let client_id = format!("depot-edge-{business}-{edge}");
    let mut options = client_options(&url, &tls, &client_id, Duration::from_secs(30))
        .map_err(|e| LinkError::Broker(e.to_string()))?;
    // The outbox resends from the acknowledgement after every connect, so
    // nothing depends on the broker keeping a session.
    options.set_clean_session(true);
    let will = StateMessage::Offline {
        session: boot.clone(),
    };
    options.set_last_will(LastWill::new(
        &topics.state,
        message::encode(&will),
        QoS::AtLeastOnce,
        true,
    ));
    let (client, mut eventloop) = AsyncClient::new(options, 256);

    // Unbounded on purpose: if this channel could fill while the link task
    // waits to publish, the event loop would stop polling and neither would
    // ever move again. What arrives is bounded by the outbox window.
    let (tx, mut rx) = mpsc::unbounded_channel();
    let poller = tokio::spawn(async move {
        let mut backoff = BACKOFF_MIN;
        loop {
            let forwarded = match eventloop.poll().await {
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    backoff = BACKOFF_MIN;
                    tx.send(Incoming::Connected)
                }
                Ok(Event::Incoming(Packet::Publish(p))) => tx.send(Incoming::Message {
                    topic: p.topic,
                    payload: p.payload.to_vec(),
                }),
                Ok(Event::Incoming(Packet::SubAck(ack)))
                    if ack.return_codes.contains(&SubscribeReasonCode::Failure) =>
                {
                    tx.send(Incoming::SubscriptionRefused)
                }
                Ok(_) => Ok(()),
                Err(e) => {
                    let sent = tx.send(Incoming::Disconnected(explain(&url, &e)));
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(BACKOFF_MAX);
                    sent
                }
            };
            if forwarded.is_err() {
                return;
            }
        }
    });

    let (acked, _) = wms.sync_state().await.unwrap_or((0, 0));
    let resend = Duration::from_secs(settings.broker.resend_after_secs);
    let outbox = Outbox::new(acked, settings.broker.window, resend, Instant::now());
    let mut link = Link {
        wms,
        client,
        topics,
        outbox,
        session: boot,
        cloud_session: None,
        #[cfg(feature = "faults")]
        faults: faults.filter(|f| !f.is_off()).map(Injector::new),
        awaiting_answer: None,
        last_hello: Instant::now(),
        window_opened: false,
        business,
        recovering: true,
        stall_logged: false,
        last_failure: None,
        unanswered_since: None,
        silence_limit: resend * 2,
        trouble_said: None,
        node: settings.node,
        foreign_refusal_said: false,
    };
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            incoming = rx.recv() => match incoming {
                Some(Incoming::Connected) => link.connected().await,
                Some(Incoming::Message { topic, payload }) => {
                    let messages = if topic == link.topics.down {
                        link.through_faults(topic, payload)
                    } else {
                        vec![(topic, payload)]
                    };
                    for (topic, payload) in messages {
                        link.message(&topic, &payload).await;
                    }
                    if std::mem::take(&mut link.window_opened) {
                        link.pump().await;
                    }
                }
                Some(Incoming::Disconnected(reason)) => link.disconnected(reason).await,
                Some(Incoming::SubscriptionRefused) => link.subscription_refused().await,
                None => break,
            },
            _ = tick.tick() => {
                #[cfg(feature = "faults")]
                link.release_held().await;
                link.pump().await;
            }
        }
    }
    // A clean DISCONNECT makes the broker drop the last will, so say
    // `offline` first: the cloud ends this edge's feed and lists it offline.
    // Whatever of the two is not flushed before the socket closes, the will
    // says the same.
    if link.outbox.is_connected() {
        let offline = StateMessage::Offline {
            session: link.session.clone(),
        };
        link.publish(&link.topics.state, true, message::encode(&offline))
            .await;
    }
    let _ = link.client.disconnect().await;
    poller.abort();
    let _ = link.wms.set_connected(false).await;
    Ok(())
}
