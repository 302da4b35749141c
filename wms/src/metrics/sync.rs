//! Sync as metrics: on an edge, its link and outbox (from the same
//! snapshot `/v1/edge/status` shows); on the cloud, its edges taken
//! together (counts and the worst lag, never a series per edge or per
//! business).

use super::{Scrape, age_seconds};
use crate::sync::SyncSnapshot;
use crate::{Result, Wms};
use depot_protocol::Timestamp;
use prometheus_client::encoding::EncodeLabelSet;

/// Edge: the link and the outbox, as `snapshot` has them at `now`.
pub fn edge(scrape: &mut Scrape, snapshot: &SyncSnapshot, now: Timestamp) {
    scrape.gauge(
        "depot_sync_connected",
        "1 while the link to the cloud's broker is up, else 0",
        i64::from(snapshot.connected),
    );
    scrape.gauge(
        "depot_sync_not_syncing",
        "1 while the link is up but not syncing: the broker refused this box's subscription, or the cloud has not answered its hello (why: link_error on /v1/edge/status)",
        i64::from(snapshot.connected && snapshot.link_error.is_some()),
    );
    scrape.gauge(
        "depot_sync_outbox_events",
        "Events made here that the cloud has not acknowledged",
        snapshot.depth,
    );
    // 0 when the outbox is empty: nothing is waiting.
    let oldest = match snapshot.depth {
        0 => Some(0),
        _ => age_seconds(snapshot.oldest_unacked_at.as_deref(), now),
    };
    if let Some(age) = oldest {
        scrape.gauge(
            "depot_sync_outbox_oldest_age_seconds",
            "Age of the oldest event the cloud has not acknowledged (0 when none waits)",
            age,
        );
    }
    if let Some(age) = age_seconds(snapshot.last_ack_at.as_deref(), now) {
        scrape.gauge(
            "depot_sync_last_ack_age_seconds",
            "Seconds since the cloud last acknowledged new events (grows while there is nothing to send)",
            age,
        );
    }
    scrape.gauge(
        "depot_sync_conflicts",
        "Events from elsewhere that clashed here, or that the cloud refused",
        snapshot.conflicts,
    );
    scrape.gauge(
        "depot_sync_recovering",
        "1 while the box takes back from the cloud the events of its own its log lost (a restore, a new box); nothing of its own goes up meanwhile",
        i64::from(snapshot.recovery.is_some()),
    );
    scrape.gauge(
        "depot_sync_recovery_stalled",
        "1 while that cannot go on because the cloud does not hand own events back (a cloud older than the edge: upgrade it)",
        i64::from(
            snapshot
                .recovery
                .as_ref()
                .is_some_and(|r| r.stalled.is_some()),
        ),
    );
    scrape.counter(
        "depot_sync_refused_from_cloud",
        "Changes of the cloud's this box refused: a reference outside its business, a transition refused, an apply that failed (each a conflict; sync went on past it)",
        u64::try_from(snapshot.refused.from_cloud).unwrap_or(0),
    );
    scrape.counter(
        "depot_sync_refused_by_cloud",
        "Events of this box's the cloud refused (each a conflict here too)",
        u64::try_from(snapshot.refused.by_cloud).unwrap_or(0),
    );
    scrape.counter(
        "depot_sync_resets",
        "Times the cloud made this box reload its changes from the start",
        u64::try_from(snapshot.resets).unwrap_or(0),
    );
}

/// Cloud: the registered edges, online and offline, taken together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fleet {
    pub online: i64,
    pub offline: i64,
    /// Events the edges made and reported that are not applied here yet.
    pub backlog: i64,
    /// The largest backlog of one edge.
    pub backlog_max: i64,
    /// When the online edge heard from least recently was last heard from.
    pub oldest_seen: Option<String>,
    /// Edges taking their own events back (restored, or new boxes).
    pub taking_back: i64,
    /// Events of the edges' that were refused here, all edges together.
    pub refused: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct EdgeState {
    state: &'static str,
}

/// Cloud: the fleet's gauges at `now`.
pub fn cloud(scrape: &mut Scrape, fleet: &Fleet, now: Timestamp) {
    scrape.gauges(
        "depot_sync_edges",
        "Registered edges, by whether they are connected (online) or not",
        [
            (EdgeState { state: "online" }, fleet.online),
            (EdgeState { state: "offline" }, fleet.offline),
        ],
    );
    scrape.gauge(
        "depot_sync_edge_backlog_events",
        "Events the edges made (as they reported) that are not applied here yet, all edges together",
        fleet.backlog,
    );
    scrape.gauge(
        "depot_sync_edge_backlog_events_max",
        "The largest backlog of a single edge: events it reported that are not applied here yet",
        fleet.backlog_max,
    );
    scrape.gauge(
        "depot_sync_edge_silence_seconds_max",
        "Seconds since the online edge heard from least recently was last heard from (0 when none is online)",
        age_seconds(fleet.oldest_seen.as_deref(), now).unwrap_or(0),
    );
    scrape.gauge(
        "depot_sync_edges_taking_back",
        "Edges taking back the events of their own their log lost (restored from a backup, or new boxes); nothing new of theirs comes up meanwhile",
        fleet.taking_back,
    );
    scrape.counter(
        "depot_sync_edge_events_refused",
        "Events of the edges' refused here (a reference outside the sender's business or warehouses, a transition refused, an apply that failed): each a conflict of the sender's business; sync went on past it. The edge list says which edge and why",
        u64::try_from(fleet.refused).unwrap_or(0),
    );
}

impl Wms {
    /// Cloud: the edges of every business, taken together: one pass over
    /// the edges table, which has a row per edge.
    pub async fn fleet(&self) -> Result<Fleet> {
        self.read(|conn| {
            let mut fleet = Fleet::default();
            for row in crate::store::sync::fleet(conn)? {
                let crate::store::sync::FleetGroup {
                    online,
                    count,
                    backlog,
                    max,
                    seen,
                    taking_back,
                    refused,
                } = row;
                fleet.taking_back += taking_back;
                fleet.refused += refused;
                fleet.backlog += backlog;
                fleet.backlog_max = fleet.backlog_max.max(max);
                if online {
                    fleet.online = count;
                    fleet.oldest_seen = seen;
                } else {
                    fleet.offline = count;
                }
            }
            Ok(fleet)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::exposition::{Sample, parse, value};
    use crate::sync::Sighting;
    use depot_protocol::sync::EdgeId;

    fn at(s: &str) -> Timestamp {
        chrono::DateTime::parse_from_rfc3339(s)
            .expect("time")
            .with_timezone(&chrono::Utc)
    }

    fn samples(scrape: &Scrape) -> Vec<Sample> {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &scrape.registry).expect("encode");
        parse(&text).expect("parse")
    }

    fn snapshot(depth: i64, oldest: Option<&str>, last_ack: Option<&str>) -> SyncSnapshot {
        SyncSnapshot {
            connected: false,
            connected_since: None,
            link_error: None,
            head: 10,
            acked: 10 - depth,
            depth,
            oldest_unacked_at: oldest.map(str::to_owned),
            last_ack_at: last_ack.map(str::to_owned),
            cloud_cursor: 0,
            conflicts: 1,
            resets: 2,
            last_reset_at: None,
            recovery: None,
            refused: crate::sync::SyncRefusals {
                from_cloud: 3,
                by_cloud: 1,
                last: None,
            },
        }
    }

    #[test]
    fn an_edge_outbox_and_link() {
        let now = at("2026-03-01T10:00:30Z");
        let mut scrape = Scrape::default();
        edge(
            &mut scrape,
            &snapshot(4, Some("2026-03-01T10:00:00Z"), None),
            now,
        );
        let s = samples(&scrape);
        let v = |name: &str| value(&s, name, &[]);
        assert_eq!(v("depot_sync_connected"), Some(0.0));
        assert_eq!(v("depot_sync_not_syncing"), Some(0.0));
        assert_eq!(v("depot_sync_outbox_events"), Some(4.0));
        assert_eq!(v("depot_sync_outbox_oldest_age_seconds"), Some(30.0));
        assert_eq!(v("depot_sync_last_ack_age_seconds"), None);
        assert_eq!(v("depot_sync_conflicts"), Some(1.0));
        assert_eq!(v("depot_sync_resets_total"), Some(2.0));
        assert_eq!(v("depot_sync_refused_from_cloud_total"), Some(3.0));
        assert_eq!(v("depot_sync_refused_by_cloud_total"), Some(1.0));
        assert_eq!(v("depot_sync_recovering"), Some(0.0));

        let mut scrape = Scrape::default();
        edge(
            &mut scrape,
            &snapshot(0, None, Some("2026-03-01T09:59:30Z")),
            now,
        );
        let s = samples(&scrape);
        assert_eq!(
            value(&s, "depot_sync_outbox_oldest_age_seconds", &[]),
            Some(0.0)
        );
        // Down, with the reason: offline, not "up but not syncing".
        let mut link = snapshot(0, None, None);
        link.link_error = Some("nothing listens".into());
        let not_syncing = |link: &SyncSnapshot| {
            let mut scrape = Scrape::default();
            edge(&mut scrape, link, now);
            value(&samples(&scrape), "depot_sync_not_syncing", &[])
        };
        assert_eq!(not_syncing(&link), Some(0.0));
        link.connected = true;
        assert_eq!(not_syncing(&link), Some(1.0));
        link.link_error = None;
        assert_eq!(not_syncing(&link), Some(0.0));

        let mut recovering = snapshot(0, None, None);
        recovering.recovery = Some(crate::store::sync::Recovery {
            from: 3,
            recovered: 40,
            shifted: true,
            shifted_past: 40,
            stalled: None,
        });
        let mut scrape = Scrape::default();
        edge(&mut scrape, &recovering, now);
        assert_eq!(
            value(&samples(&scrape), "depot_sync_recovering", &[]),
            Some(1.0)
        );
        assert_eq!(
            value(&samples(&scrape), "depot_sync_recovery_stalled", &[]),
            Some(0.0)
        );
        if let Some(r) = recovering.recovery.as_mut() {
            r.stalled = Some(crate::recovery::STALLED.into());
        }
        let mut scrape = Scrape::default();
        edge(&mut scrape, &recovering, now);
        assert_eq!(
            value(&samples(&scrape), "depot_sync_recovery_stalled", &[]),
            Some(1.0)
        );
        assert_eq!(
            value(&s, "depot_sync_last_ack_age_seconds", &[]),
            Some(60.0)
        );
    }

    #[tokio::test]
    async fn the_cloud_fleet_online_offline_backlog_and_silence() {
        let dir = tempfile::tempdir().expect("tempdir");
        let wms = Wms::open(&dir.path().join("f.db"), "cloud").expect("open");
        assert_eq!(wms.fleet().await.expect("fleet"), Fleet::default());
        let b = wms.create_business("B", "EUR", "UTC").await.expect("b");
        for id in ["e1", "e2", "e3"] {
            let edge = EdgeId::parse(id).expect("id");
            wms.register_edge(b.id, edge, None).await.expect("register");
        }
        // e2 was restored from a backup: its hello says its log is certain
        // only through seq 1. e3's state message says nothing about that.
        for (id, head, taking_back_after) in [
            ("e1", Some(7), Some(None)),
            ("e2", Some(2), Some(Some(1))),
            ("e3", None, None),
        ] {
            let sighting = Sighting {
                session: Some(format!("s-{id}")),
                version: None,
                head,
                taking_back_after,
                by_state: taking_back_after.is_none(),
                downlink_owner: None,
            };
            let edge = EdgeId::parse(id).expect("id");
            wms.edge_seen(b.id, edge, sighting).await.expect("seen");
        }
        let edge = EdgeId::parse("e3").expect("id");
        wms.edge_gone(b.id, edge, "s-e3".into())
            .await
            .expect("gone");
        let fleet = wms.fleet().await.expect("fleet");
        assert_eq!(
            (
                fleet.online,
                fleet.offline,
                fleet.backlog,
                fleet.backlog_max
            ),
            (2, 1, 9, 7)
        );
        assert_eq!(fleet.taking_back, 1);
        let seen = fleet.oldest_seen.clone().expect("seen");
        let now = at(&seen) + chrono::Duration::seconds(42);
        let mut scrape = Scrape::default();
        cloud(&mut scrape, &fleet, now);
        let s = samples(&scrape);
        assert_eq!(
            value(&s, "depot_sync_edges", &[("state", "online")]),
            Some(2.0)
        );
        assert_eq!(
            value(&s, "depot_sync_edges", &[("state", "offline")]),
            Some(1.0)
        );
        assert_eq!(
            value(&s, "depot_sync_edge_backlog_events_max", &[]),
            Some(7.0)
        );
        assert_eq!(
            value(&s, "depot_sync_edge_silence_seconds_max", &[]),
            Some(42.0)
        );
        assert_eq!(value(&s, "depot_sync_edges_taking_back", &[]), Some(1.0));
        assert_eq!(
            value(&s, "depot_sync_edge_events_refused_total", &[]),
            Some(0.0)
        );
        // Two of e1's events refused, one of e2's: counted together.
        wms.write(move |conn| {
            for (edge, n) in [("e1", 2), ("e2", 1)] {
                for _ in 0..n {
                    crate::store::sync::note_refused(
                        conn,
                        b.id,
                        edge,
                        "stock.moved",
                        "item 9 is not a record of business 1",
                        &depot_protocol::now(),
                    )?;
                }
            }
            Ok(())
        })
        .await
        .expect("refused");
        let mut scrape = Scrape::default();
        cloud(&mut scrape, &wms.fleet().await.expect("fleet"), now);
        assert_eq!(
            value(
                &samples(&scrape),
                "depot_sync_edge_events_refused_total",
                &[]
            ),
            Some(3.0)
        );
    }
}
