//! Two engines on one PostgreSQL database, as two cloud instances are
//! (DEPOT_TEST_PG_URL; skipped without it): what one writes wakes what
//! waits on the other.

use depot_testkit::{pg, seed};
use depot_wms::Wms;
use depot_wms::database::POSTGRES_MIGRATIONS;
use std::time::Duration;

#[tokio::test]
async fn an_event_written_on_one_instance_wakes_the_others_waiters() {
    let Some(database) = pg::migrated(POSTGRES_MIGRATIONS) else {
        return;
    };
    let (dir_a, dir_b) = (
        tempfile::tempdir().expect("tempdir"),
        tempfile::tempdir().expect("tempdir"),
    );
    let a = Wms::open_postgres(&database.url, dir_a.path(), "cloud").expect("instance a");
    let b = Wms::open_postgres(&database.url, dir_b.path(), "cloud").expect("instance b");
    let mut woken = b.events_changed();
    woken.borrow_and_update();
    // B's own writer commits nothing: only following the log can wake it.
    let tenant = seed::business("Ωμέγα Α.Ε.").seed(&a).await;
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
    let Some(database) = pg::migrated(POSTGRES_MIGRATIONS) else {
        return;
    };
    let (dir_a, dir_b) = (
        tempfile::tempdir().expect("tempdir"),
        tempfile::tempdir().expect("tempdir"),
    );
    let a = Wms::open_postgres(&database.url, dir_a.path(), "cloud").expect("instance a");
    let b = Wms::open_postgres(&database.url, dir_b.path(), "cloud").expect("instance b");
    let tenant = seed::business("Ωμέγα Α.Ε.").seed(&a).await;
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
