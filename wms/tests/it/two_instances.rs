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
