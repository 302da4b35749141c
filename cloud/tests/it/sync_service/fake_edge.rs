//! A scripted edge: a plain MQTT client on the edge's topics.

use super::*;

/// A plain MQTT client playing the edge: subscribed to the down topics of
/// its business and to the cloud's state, it applies the pages it gets to
/// its `Wms` as they come.
pub(crate) struct FakeEdge {
    pub(crate) client: AsyncClient,
    pub(crate) packets: mpsc::UnboundedReceiver<Result<Packet, String>>,
    pub(crate) backlog: VecDeque<Publish>,
    pub(crate) event_loop: JoinHandle<()>,
    pub(crate) wms: Wms,
    pub(crate) business: BusinessId,
    pub(crate) edge_id: EdgeId,
    /// Down messages to other edges whose id has this run's tag.
    pub(crate) strays: Vec<(String, DownMessage)>,
    /// Refusals on this edge's own down topic, kept apart: on a shared
    /// broker, other runs' clouds (which do not know this edge) send them
    /// at any time, as a second cloud on one broker would.
    pub(crate) refusals: Vec<String>,
    pub(crate) tag: String,
}

impl FakeEdge {
    pub(crate) async fn connect(url: &MqttUrl, w: &World, tag: &str) -> Self {
        let mut options = client_options(
            url,
            &depot_mqtt::Tls::default(),
            &format!("edge-{tag}"),
            Duration::from_secs(30),
        )
        .expect("options");
        options.set_clean_session(true);
        let (client, mut event_loop) = AsyncClient::new(options, 64);
        let (tx, packets) = mpsc::unbounded_channel();
        let event_loop = tokio::spawn(async move {
            loop {
                match event_loop.poll().await {
                    Ok(Event::Incoming(p)) => {
                        if tx.send(Ok(p)).is_err() {
                            return;
                        }
                    }
                    Ok(Event::Outgoing(_)) => {}
                    Err(e) => {
                        let _ = tx.send(Err(e.to_string()));
                        return;
                    }
                }
            }
        });
        let mut edge = Self {
            client,
            packets,
            backlog: VecDeque::new(),
            event_loop,
            wms: w.edge.clone(),
            business: w.business,
            edge_id: w.edge_id.clone(),
            strays: Vec::new(),
            refusals: Vec::new(),
            tag: tag.to_owned(),
        };
        edge.packet(|p| matches!(p, Packet::ConnAck(_))).await;
        for filter in ["depot/v1/+/edge/+/down", CLOUD_STATE] {
            edge.client
                .subscribe(filter, QoS::AtLeastOnce)
                .await
                .expect("subscribe");
            edge.packet(|p| matches!(p, Packet::SubAck(_))).await;
        }
        edge
    }

    /// The next packet `want` accepts; publishes on the way are kept.
    pub(crate) async fn packet(&mut self, want: impl Fn(&Packet) -> bool) -> Packet {
        let found = timeout(WAIT, async {
            loop {
                match self.packets.recv().await {
                    Some(Ok(p)) if want(&p) => return p,
                    Some(Ok(Packet::Publish(m))) => self.backlog.push_back(m),
                    Some(Ok(_)) => {}
                    Some(Err(e)) => panic!("the fake edge's connection failed: {e}"),
                    None => panic!("the fake edge's event loop ended"),
                }
            }
        })
        .await;
        found.expect("the expected packet in time")
    }

    pub(crate) async fn publish(&mut self) -> Publish {
        if let Some(m) = self.backlog.pop_front() {
            return m;
        }
        match self.packet(|p| matches!(p, Packet::Publish(_))).await {
            Packet::Publish(m) => m,
            _ => unreachable!(),
        }
    }

    pub(crate) async fn send_raw(&self, topic: &str, payload: Vec<u8>) {
        self.client
            .publish(topic, QoS::AtLeastOnce, false, payload)
            .await
            .expect("publish");
    }

    pub(crate) fn topic(&self, channel: Channel) -> String {
        EdgeTopic::new(self.business, self.edge_id.clone(), channel).to_string()
    }

    pub(crate) async fn send(&self, message: &UpMessage) {
        self.send_raw(&self.topic(Channel::Up), encode(message))
            .await;
    }

    pub(crate) async fn hello(&self, session: &str, cursor: i64) {
        self.hello_as(session, "t", cursor, None).await;
    }

    /// A hello that reports a version and, as newer edges do, a head.
    pub(crate) async fn hello_as(
        &self,
        session: &str,
        version: &str,
        cursor: i64,
        head: Option<i64>,
    ) {
        self.send(&UpMessage::Hello(Hello {
            session: session.into(),
            version: version.into(),
            cursor,
            head,
            last: None,
            recover_after: None,
            node: None,
        }))
        .await;
    }

    /// A hello naming the last change the edge applied.
    pub(crate) async fn hello_with_last(&self, session: &str, cursor: i64, last: Landmark) {
        self.send(&UpMessage::Hello(Hello {
            session: session.into(),
            version: "t".into(),
            cursor,
            head: None,
            last: Some(last),
            recover_after: None,
            node: None,
        }))
        .await;
    }

    /// Waits for the cloud to say `online` in session `session` (an earlier
    /// run's retained state is skipped).
    pub(crate) async fn cloud_online(&mut self, session: &str) {
        loop {
            let m = self.publish().await;
            if m.topic == CLOUD_STATE
                && decode::<StateMessage>(&m.payload).is_ok_and(
                    |s| matches!(s, StateMessage::Online { session: s, .. } if s == session),
                )
            {
                return;
            }
        }
    }

    /// Waits for `offline` of session `session`.
    pub(crate) async fn cloud_offline(&mut self, session: &str) {
        loop {
            let m = self.publish().await;
            if m.topic == CLOUD_STATE
                && decode::<StateMessage>(&m.payload).is_ok_and(|s| {
                    s == StateMessage::Offline {
                        session: session.into(),
                    }
                })
            {
                return;
            }
        }
    }

    /// The next message on this edge's down topic but a refusal; pages are
    /// applied on the way, as an edge would.
    pub(crate) async fn down(&mut self) -> DownMessage {
        let own = self.topic(Channel::Down);
        loop {
            let m = self.publish().await;
            if m.topic == CLOUD_STATE {
                continue;
            }
            let message: DownMessage = decode(&m.payload).expect("a down message");
            if m.topic != own {
                if m.topic.contains(&self.tag) {
                    self.strays.push((m.topic.clone(), message));
                }
                continue;
            }
            if let DownMessage::Refused { reason } = message {
                self.refusals.push(reason);
                continue;
            }
            if let DownMessage::Changes {
                from_rev,
                to_rev,
                changes,
                more,
            } = &message
            {
                let page = Page {
                    from: *from_rev,
                    to: *to_rev,
                    changes: changes.clone(),
                    more: *more,
                };
                match self
                    .wms
                    .apply_page(self.business, page)
                    .await
                    .expect("apply a page")
                {
                    PageOutcome::Applied { .. } | PageOutcome::Stale => {}
                    PageOutcome::Gap { cursor } => {
                        panic!("a page ({from_rev}, {to_rev}] past the cursor {cursor}")
                    }
                }
            }
            return message;
        }
    }

    /// Down messages until one that `want` accepts, within `within`; all of
    /// them are returned, the accepted one last.
    pub(crate) async fn until(
        &mut self,
        within: Duration,
        what: &str,
        want: impl Fn(&DownMessage) -> bool,
    ) -> Vec<DownMessage> {
        let mut seen = Vec::new();
        let found = timeout(within, async {
            loop {
                let m = self.down().await;
                let done = want(&m);
                seen.push(m);
                if done {
                    return;
                }
            }
        })
        .await;
        assert!(found.is_ok(), "no {what} within {within:?}; got {seen:?}");
        seen
    }

    /// The next acknowledgement of `session`: (through, gap, rejected).
    pub(crate) async fn ack(&mut self, session: &str) -> (i64, bool, usize) {
        let seen = self
            .until(
                WAIT,
                &format!("ack of {session}"),
                |m| matches!(m, DownMessage::Ack { session: s, .. } if s == session),
            )
            .await;
        match seen.last() {
            Some(DownMessage::Ack {
                through_seq,
                gap,
                rejected,
                ..
            }) => (*through_seq, *gap, rejected.len()),
            _ => unreachable!(),
        }
    }

    /// This edge's own events from `after`, as they travel up.
    pub(crate) async fn outgoing(&self, after: i64) -> Vec<SyncEvent> {
        let head = self.wms.outgoing_head().await.expect("head");
        self.wms
            .outgoing_sync(after, head, 10_000)
            .await
            .expect("outgoing")
    }

    pub(crate) async fn batch(&self, session: &str, events: Vec<SyncEvent>) {
        self.send(&UpMessage::Batch {
            session: session.into(),
            events,
        })
        .await;
    }

    pub(crate) async fn leave(self) {
        let _ = self.client.disconnect().await;
        let mut packets = self.packets;
        let _ = timeout(WAIT, async { while packets.recv().await.is_some() {} }).await;
        self.event_loop.abort();
    }
}
