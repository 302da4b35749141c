//! What `depot-cloud serve` tells systemd (`Type=notify`) beyond ready and
//! the watchdog: the unit's status line, so `systemctl status depot-cloud`
//! says at a glance whether the service syncs, how many edges are online,
//! and whether its disk is running out. The protocol itself is
//! `depot_wms::sd_notify`.

use crate::sync::BrokerLink;
use depot_protocol::plural::counted;
use depot_wms::Wms;
use depot_wms::disk::{Probe, Storage, StorageState, human};
use depot_wms::metrics::sync::Fleet;
use depot_wms::sd_notify::Notifier;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// How often the state is read; a change is reported at the next read.
const STATUS_EVERY: Duration = Duration::from_secs(2);
/// An unchanged status is sent again this often, so a status line that got
/// lost (a full socket buffer drops it) does not stay stale.
const STATUS_AGAIN_AFTER: Duration = Duration::from_secs(30);

/// The unit's status line. `link` is `None` for an API-only server,
/// `fleet` and `storage` when they cannot be read.
pub fn status_line(
    listen: Option<SocketAddr>,
    link: Option<&BrokerLink>,
    fleet: Option<&Fleet>,
    storage: Option<&Storage>,
) -> String {
    let mut parts = vec![match listen {
        Some(addr) => format!("serving on {addr}"),
        None => "serving".to_owned(),
    }];
    match link {
        Some(l) if l.is_refused() => {
            parts.push(
                "broker connected, but it refused the sync subscriptions (its access rules)".into(),
            );
        }
        Some(l) if l.is_up() => parts.push("broker connected".into()),
        Some(_) => parts.push("broker NOT connected".into()),
        None => {}
    }
    if let Some(f) = fleet {
        let mut edges = format!("edges {} online, {} offline", f.online, f.offline);
        if f.backlog > 0 {
            edges.push_str(&format!(", {} to apply", counted(f.backlog, "event")));
        }
        parts.push(edges);
    }
    match storage {
        Some(s) if s.state == StorageState::Full => {
            parts.push("DISK FULL: writes are refused until space is freed".into());
        }
        Some(s) if s.state == StorageState::Low => {
            parts.push(format!("disk low: {} free", human(s.free_bytes)));
        }
        _ => {}
    }
    parts.join("; ")
}

/// Sends the status line while the service runs, from the first one
/// `ready` sent; stops when aborted.
pub async fn keep_informed(
    notifier: Notifier,
    wms: Wms,
    link: Option<BrokerLink>,
    probe: Probe,
    listen: Option<SocketAddr>,
    first: String,
) {
    let mut last = (first, Instant::now());
    let mut tick = tokio::time::interval(STATUS_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        let fleet = match wms.fleet().await {
            Ok(f) => Some(f),
            Err(error) => {
                tracing::warn!(%error, "cannot read the edges for systemd");
                None
            }
        };
        let storage = probe.read_serving(&wms).await;
        let now = status_line(listen, link.as_ref(), fleet.as_ref(), storage.as_ref());
        if last.0 != now || last.1.elapsed() >= STATUS_AGAIN_AFTER {
            notifier.status(now.clone());
            last = (now, Instant::now());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn storage(state: StorageState) -> Storage {
        Storage {
            path: "/var/lib/depot".into(),
            free_bytes: 300 * depot_wms::disk::MIB,
            total_bytes: 10_000 * depot_wms::disk::MIB,
            database_bytes: 0,
            low_below_bytes: 1024 * depot_wms::disk::MIB,
            state,
            full_since: None,
        }
    }

    #[test]
    fn says_the_broker_the_edges_and_the_disk() {
        let addr: SocketAddr = "127.0.0.1:8080".parse().expect("addr");
        let link = BrokerLink::default();
        let fleet = Fleet {
            online: 3,
            offline: 1,
            ..Fleet::default()
        };
        assert_eq!(
            status_line(Some(addr), Some(&link), Some(&fleet), None),
            "serving on 127.0.0.1:8080; broker NOT connected; edges 3 online, 1 offline"
        );
        link.set(true);
        let backlog = Fleet {
            backlog: 250,
            ..fleet.clone()
        };
        assert_eq!(
            status_line(
                None,
                Some(&link),
                Some(&backlog),
                Some(&storage(StorageState::Ok))
            ),
            "serving; broker connected; edges 3 online, 1 offline, 250 events to apply"
        );
        link.refused();
        assert!(
            status_line(None, Some(&link), None, None)
                .starts_with("serving; broker connected, but it refused the sync subscriptions"),
        );
        assert_eq!(
            status_line(
                Some(addr),
                None,
                Some(&fleet),
                Some(&storage(StorageState::Low))
            ),
            "serving on 127.0.0.1:8080; edges 3 online, 1 offline; disk low: 300 MiB free"
        );
        assert!(
            status_line(None, None, None, Some(&storage(StorageState::Full)))
                .starts_with("serving; DISK FULL")
        );
    }
}
