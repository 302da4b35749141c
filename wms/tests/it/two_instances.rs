//! Two engines on one PostgreSQL database, as two cloud instances are
//! (DEPOT_TEST_PG_URL; skipped without it): what one writes wakes what
//! waits on the other.

use depot_testkit::{pg, seed};
use depot_wms::Wms;
use depot_wms::database::POSTGRES_MIGRATIONS;
use std::time::Duration;

/// Two engines on one migrated database, each with a directory of its
/// own; the database and the directories live as long as the pair.
struct Pair {
    a: Wms,
    b: Wms,
    _database: pg::PgDatabase,
    _dirs: [tempfile::TempDir; 2],
}

impl Pair {
    fn open() -> Option<Self> {
        let database = pg::migrated(POSTGRES_MIGRATIONS)?;
        let dirs = [0, 1].map(|_| tempfile::tempdir().expect("tempdir"));
        let open = |dir: &tempfile::TempDir| {
            Wms::open_postgres(&database.url, dir.path(), "cloud").expect("an instance")
        };
        Some(Self {
            a: open(&dirs[0]),
            b: open(&dirs[1]),
            _database: database,
            _dirs: dirs,
        })
    }
}

#[tokio::test]
async fn an_event_written_on_one_instance_wakes_the_others_waiters() {
    let Some(pair) = Pair::open() else {
        return;
    };
    let (a, b) = (&pair.a, &pair.b);
    let mut woken = b.events_changed();
    woken.borrow_and_update();
    // B's own writer commits nothing: only following the log can wake it.
    let tenant = seed::business("Ωμέγα Α.Ε.").seed(a).await;
    tokio::time::timeout(Duration::from_secs(5), woken.changed())
        .await
        .expect("B's waiters woken within 5 s of A's write")
        .expect("B's writer still open");
    let seen = b.events_since(0, 100).await.expect("events");
    assert!(
        seen.iter().any(|e| e.business_id == Some(tenant.business)),
        "{seen:?}"
    );
    a.close().await.expect("close a");
    b.close().await.expect("close b");
}

/// A live-feed ticket issued by one instance opens a stream on another,
/// once: tickets are kept in the database, not in the issuer's memory.
#[tokio::test]
async fn a_ticket_issued_on_one_instance_is_spent_on_the_other_once() {
    let Some(pair) = Pair::open() else {
        return;
    };
    let (a, b) = (&pair.a, &pair.b);
    let tenant = seed::business("Ωμέγα Α.Ε.").seed(a).await;
    let ticket = a
        .issue_ticket(tenant.caller, Duration::from_secs(60), 100)
        .await
        .expect("issue")
        .expect("room for a ticket");
    assert_eq!(
        b.redeem_ticket(&ticket).await.expect("redeem"),
        Some(tenant.caller)
    );
    assert_eq!(
        a.redeem_ticket(&ticket).await.expect("again"),
        None,
        "spent"
    );
    a.close().await.expect("close a");
    b.close().await.expect("close b");
}
