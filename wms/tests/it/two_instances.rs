//! Two engines on one PostgreSQL database, as two cloud instances are
//! (DEPOT_TEST_PG_URL; skipped without it): what one writes wakes what
//! waits on the other, businesses write side by side, and no reader of the
//! whole log skips a write that commits late.

use depot_protocol::BusinessId;
use depot_protocol::event::EventKind;
use depot_testkit::{pg, seed};
use depot_wms::Wms;
use depot_wms::database::POSTGRES_MIGRATIONS;
use serde_json::json;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Two engines on one migrated database, each with a directory of its
/// own; the database and the directories live as long as the pair.
struct Pair {
    a: Wms,
    b: Wms,
    database: pg::PgDatabase,
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
            database,
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

/// Appends a `station.scanned` event of `business` in `conn`'s open
/// transaction: its log position.
fn append(conn: &depot_sql::Db, business: BusinessId, n: u32) -> depot_wms::Result<i64> {
    depot_wms::sql::append_event_numbered(
        conn,
        "cloud",
        Some(business),
        EventKind::StationScanned,
        &json!({"station": "Σταθμός-1", "n": n}),
    )
}

/// A write of `business` on `wms` that appends an event and then holds its
/// transaction (and the writer) open until told (or the sender is
/// dropped): the event's log position, the word to let go, the write.
async fn hold_open(
    wms: &Wms,
    business: BusinessId,
) -> (
    i64,
    std::sync::mpsc::Sender<()>,
    tokio::task::JoinHandle<depot_wms::Result<i64>>,
) {
    let (taken, held_at) = tokio::sync::oneshot::channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let held = tokio::spawn({
        let wms = wms.clone();
        async move {
            wms.write_for(business, move |conn| {
                let seq = append(conn, business, 0)?;
                let _ = taken.send(seq);
                let _ = released.recv_timeout(Duration::from_secs(20));
                Ok(seq)
            })
            .await
        }
    });
    let seq = held_at.await.expect("the held write took its position");
    (seq, release, held)
}

/// One business's write held open on A after taking its log position,
/// while B commits another business's events numbered after it: B's write
/// does not wait for A's (businesses take turns only among themselves).
/// A reader of the whole log on C, which wrote nothing, stops below the
/// open write until it commits, then reads on without skipping it; one on
/// B, which must see its own writes, waits for the open write to end.
#[tokio::test]
async fn a_write_held_open_is_never_skipped_by_a_reader_of_the_whole_log() {
    let Some(pair) = Pair::open() else {
        return;
    };
    let (a, b) = (&pair.a, &pair.b);
    let c_dir = tempfile::tempdir().expect("tempdir");
    let c = Wms::open_postgres(&pair.database.url, c_dir.path(), "cloud").expect("C");
    let x = seed::business("Χ Α.Ε.").seed(a).await.business;
    let y = seed::business("Υ Ο.Ε.").seed(a).await.business;
    let start = c.events_head().await.expect("head");

    let (held_seq, release, held) = hold_open(a, x).await;

    let mut later = Vec::new();
    for n in 1..=3 {
        let seq = tokio::time::timeout(
            Duration::from_secs(10),
            b.write_for(y, move |conn| append(conn, y, n)),
        )
        .await
        .expect("B's write for another business did not wait for A's")
        .expect("B's write");
        assert!(seq > held_seq, "numbered after the open write");
        later.push(seq);
    }
    // Committed, as a reader of Y alone sees...
    let of_y = c.business_events(y, held_seq, None, 10).await.expect("Y's");
    assert_eq!(of_y.iter().map(|e| e.seq).collect::<Vec<_>>(), later);
    // ...but the whole log stays below the open write, however long.
    let b_reads = tokio::spawn({
        let b = b.clone();
        async move { b.events_since(start, 1000).await }
    });
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let head = c.events_head().await.expect("head");
    assert!(
        head < held_seq,
        "safe head {head} passed the open write at {held_seq}"
    );
    let mut cursor = start;
    let mut read = Vec::new();
    for e in c.events_since(cursor, 1000).await.expect("events") {
        assert!(e.seq < held_seq, "read {} while {held_seq} is open", e.seq);
        read.push(e.seq);
        cursor = e.seq;
    }
    assert!(
        !b_reads.is_finished(),
        "B read past an open write before its own"
    );

    // A write of the open write's business waits for it, on any instance.
    let same = tokio::spawn({
        let b = b.clone();
        async move { b.write_for(x, move |conn| append(conn, x, 4)).await }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !same.is_finished(),
        "B wrote X's event beside A's open write of X"
    );

    release.send(()).expect("the held job waits");
    let committed = held.await.expect("join").expect("A's write");
    assert_eq!(committed, held_seq);
    let after = same.await.expect("join").expect("B's write of X");
    assert!(after > held_seq);
    let mut want: Vec<i64> = std::iter::once(held_seq).chain(later).collect();
    let of_b: Vec<i64> = b_reads
        .await
        .expect("join")
        .expect("B's read")
        .iter()
        .map(|e| e.seq)
        .collect();
    assert!(
        want.iter().all(|s| of_b.contains(s)),
        "B read {of_b:?}, not all of {want:?}"
    );
    // B began reading before its write of X: C reads that one too.
    want.push(after);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !want.iter().all(|s| read.contains(s)) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "C read {read:?}, not all of {want:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
        for e in c.events_since(cursor, 1000).await.expect("events") {
            read.push(e.seq);
            cursor = e.seq;
        }
    }
    let mut sorted = read.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted, read, "each event read once, in order");
    for w in [a, b, &c] {
        w.close().await.expect("close");
    }
}

/// A burst queued behind a busy writer is committed in groups of at most
/// 32 on PostgreSQL: each job's savepoint is a subtransaction, and past 64
/// in one transaction every snapshot on the server takes the slow path.
#[tokio::test]
async fn a_burst_on_postgres_is_committed_in_groups_the_server_keeps_cheap() {
    let Some(pair) = Pair::open() else {
        return;
    };
    let a = &pair.a;
    let x = seed::business("Ξ Ε.Π.Ε.").seed(a).await.business;
    let (_, release, held) = hold_open(a, x).await;
    let commits = a.writer_stats().commits.load(Ordering::Relaxed);
    let burst: Vec<_> = (0..200)
        .map(|n| {
            let a = a.clone();
            tokio::spawn(async move { a.write_for(x, move |conn| append(conn, x, n)).await })
        })
        .collect();
    // All queued behind the held job before it lets go.
    tokio::time::sleep(Duration::from_millis(300)).await;
    release.send(()).expect("the held job waits");
    held.await.expect("join").expect("held");
    for job in burst {
        job.await.expect("join").expect("a write of the burst");
    }
    let groups = a.writer_stats().commits.load(Ordering::Relaxed) - commits;
    // At least 200 / 32 rounded up: 7.
    assert!(groups >= 7, "200 jobs in {groups} groups");
    a.close().await.expect("close a");
    pair.b.close().await.expect("close b");
}
