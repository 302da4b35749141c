//! The event log.

use crate::error::Result;
use depot_protocol::event::{Event, EventKind, RemoteEvent};
use depot_protocol::sync::SyncEvent;
use depot_protocol::{BusinessId, EventId};
use depot_sql::{Db, Dialect, params};

/// Appends an event this node made; call it inside the transaction that
/// made the change. On SQLite it gets the next `out_seq`: an edge's sync
/// sends it up. While a recovery takes the node's own events back past
/// where its own were moved (`sync_state.shifted`, the cloud's cursor),
/// the next is past that cursor too: the seqs below it are the events
/// still to come back.
///
/// Its answer is not read ([`Db::execute_later`]): on PostgreSQL it goes
/// to the server with the job's next statement. [`append_numbered`] when
/// the caller needs the event's `seq`.
pub fn append(
    conn: &Db,
    origin: &str,
    business_id: Option<BusinessId>,
    kind: EventKind,
    payload: &impl serde::Serialize,
) -> Result<()> {
    insert(conn, origin, business_id, kind, payload, false).map(drop)
}

/// [`append`], answering the event's `seq`.
pub fn append_numbered(
    conn: &Db,
    origin: &str,
    business_id: Option<BusinessId>,
    kind: EventKind,
    payload: &impl serde::Serialize,
) -> Result<i64> {
    insert(conn, origin, business_id, kind, payload, true)?
        .ok_or_else(|| crate::error::WmsError::Internal("an event without a seq".into()))
}

fn insert(
    conn: &Db,
    origin: &str,
    business_id: Option<BusinessId>,
    kind: EventKind,
    payload: &impl serde::Serialize,
    numbered: bool,
) -> Result<Option<i64>> {
    let payload = serde_json::to_string(payload)?;
    let id = EventId::new().0.to_string();
    let at = super::ts(&depot_protocol::now());
    let (business, kind) = (business_id.map(|b| b.0), kind.as_str());
    let args = params![id, origin, business, kind, payload, at];
    let stmt = appending(conn.dialect(), numbered);
    if numbered {
        return Ok(Some(conn.query_value(stmt, args)?));
    }
    conn.execute_later(stmt, args)?;
    Ok(None)
}

/// The insert of an event this node made, answering its `seq` when
/// `numbered`.
///
/// On SQLite the next `out_seq` is read by a co-routine of two seeks
/// (the end of an index, the one row of `sync_state`). Joined as derived
/// tables, as they were, the two were materialized into a temporary
/// b-tree each, and `RETURNING` buffers its rows in a third, which only
/// [`append_numbered`] reads. Every write appends an event: without those
/// b-trees an append takes 37 % fewer instructions, a pick scan's job
/// 16 % fewer, an order create's 6 % (callgrind, `docs/benchmarks.md`).
fn appending(dialect: Dialect, numbered: bool) -> &'static str {
    macro_rules! sqlite {
        ($tail:literal) => {
            concat!(
                "INSERT INTO events (id, origin, business_id, kind, payload, at, out_seq)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6,
                         COALESCE((SELECT MAX(m.n)
                                   FROM (SELECT MAX(out_seq) AS n FROM events
                                         WHERE out_seq IS NOT NULL
                                         UNION ALL
                                         SELECT MAX(shifted) FROM sync_state
                                         WHERE recover_from IS NOT NULL) AS m), 0) + 1)",
                $tail
            )
        };
    }
    // Only edges send their own events up, and only clouds run on
    // PostgreSQL, where writers of different businesses run side by side:
    // one number after the largest would be read by two of them at once.
    macro_rules! postgres {
        ($tail:literal) => {
            concat!(
                "INSERT INTO events (id, origin, business_id, kind, payload, at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                $tail
            )
        };
    }
    match (dialect, numbered) {
        (Dialect::Sqlite, true) => sqlite!(" RETURNING seq"),
        (Dialect::Sqlite, false) => sqlite!(""),
        (Dialect::Postgres, true) => postgres!(" RETURNING seq"),
        (Dialect::Postgres, false) => postgres!(""),
    }
}

/// Marks an event made elsewhere as refused here: it stays in the log (a
/// resend is known by its id, its sender can take it back), but no page,
/// stream, list or webhook reads it as having happened.
pub fn mark_refused(conn: &Db, id: EventId) -> Result<()> {
    conn.execute(
        "UPDATE events SET refused = 1 WHERE id = ?1",
        params![id.0.to_string()],
    )?;
    Ok(())
}

/// Logs an event made elsewhere, once: answers false if its id is already
/// in the log (a duplicate delivery), in which case it must not be applied.
pub fn append_remote(conn: &Db, e: &RemoteEvent) -> Result<bool> {
    let n = conn
        .execute("INSERT INTO events (id, origin, business_id, kind, payload, at, remote_seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT DO NOTHING", params![
            e.id.0.to_string(),
            e.origin,
            e.business_id.map(|b| b.0),
            e.kind,
            e.payload.get(),
            super::ts(&e.at),
            e.seq,
        ])?;
    Ok(n == 1)
}

/// [`append_remote`] of many events, in their order, in blocks of rows
/// (see `store::rows`) sent together: whether each was new here. An id
/// named twice is new the first time only.
pub fn append_remote_many(conn: &Db, es: &[&RemoteEvent]) -> Result<Vec<bool>> {
    let statements = super::rows::insert_blocks(
        "events (id, origin, business_id, kind, payload, at, remote_seq)",
        " ON CONFLICT DO NOTHING RETURNING id",
        es,
        |e| {
            [
                e.id.0.to_string().into(),
                e.origin.clone().into(),
                e.business_id.map(|b| b.0).into(),
                e.kind.clone().into(),
                e.payload.get().into(),
                super::ts(&e.at).into(),
                e.seq.into(),
            ]
        },
    );
    let mut sent = Vec::with_capacity(statements.len());
    for (sql, args) in statements {
        sent.push(
            conn.query_later(&sql, &depot_sql::params_from_iter(&args), |r| {
                r.get::<String>(0)
            })?,
        );
    }
    let mut new = std::collections::HashSet::new();
    for block in sent {
        new.extend(block.all(conn)?);
    }
    Ok(es.iter().map(|e| new.remove(&e.id.0.to_string())).collect())
}

/// This node's own events with `out_seq` in `(after, through]`, in order:
/// what the outbox publishes.
pub fn outgoing(conn: &Db, after: i64, through: i64, limit: u32) -> Result<Vec<(i64, Event)>> {
    let stmt = "SELECT out_seq, seq, id, origin, business_id, kind, payload, at FROM events
         WHERE out_seq > ?1 AND out_seq <= ?2 ORDER BY out_seq LIMIT ?3";
    let rows = conn.query_map(stmt, params![after, through, limit], |r| {
        Ok((r.get(0)?, row_at(r, 1)?))
    })?;
    Ok(rows)
}

/// [`outgoing`] as sync sends it up: each payload the JSON text it is
/// logged as, checked to be JSON but never built into a tree.
pub fn outgoing_sync(conn: &Db, after: i64, through: i64, limit: u32) -> Result<Vec<SyncEvent>> {
    let stmt = "SELECT out_seq, id, kind, payload, at FROM events
         WHERE out_seq > ?1 AND out_seq <= ?2 ORDER BY out_seq LIMIT ?3";
    let rows = conn.query_map(stmt, params![after, through, limit], sync_row)?;
    Ok(rows)
}

/// Cloud side: the events an edge sent up with seq in `(after, through]`,
/// by that seq, at most `limit`: what it takes back when its log lost them.
/// Events applied before seqs were kept are not among them.
pub fn own_events(
    conn: &Db,
    business: BusinessId,
    origin: &str,
    after: i64,
    through: i64,
    limit: u32,
) -> Result<Vec<SyncEvent>> {
    let stmt = "SELECT remote_seq, id, kind, payload, at FROM events
         WHERE origin = ?1 AND remote_seq > ?2 AND remote_seq <= ?3 AND business_id = ?4
         ORDER BY remote_seq LIMIT ?5";
    let rows = conn.query_map(
        stmt,
        params![origin, after, through, business.0, limit],
        sync_row,
    )?;
    Ok(rows)
}

/// Edge side: gives an event taken back from the cloud the place it had in
/// this node's log.
pub fn set_out_seq(conn: &Db, id: EventId, seq: i64) -> Result<()> {
    conn.execute(
        "UPDATE events SET out_seq = ?1 WHERE id = ?2",
        params![seq, id.0.to_string()],
    )?;
    Ok(())
}

/// Edge side: moves this node's events after `after` up by `by`, keeping
/// their order. In two steps, since the unique index on `out_seq` is
/// checked row by row.
pub fn shift_own(conn: &Db, after: i64, by: i64) -> Result<usize> {
    let n = conn.execute(
        "UPDATE events SET out_seq = -out_seq WHERE out_seq > ?1",
        params![after],
    )?;
    conn.execute(
        "UPDATE events SET out_seq = ?1 - out_seq WHERE out_seq < 0",
        params![by],
    )?;
    Ok(n)
}

/// Moves this node's events past `after` down to follow it, closing the
/// hole a [`shift_own`] left when what it made room for never came back.
/// Answers how many moved.
pub fn close_gap(conn: &Db, after: i64) -> Result<usize> {
    let first: Option<i64> = conn.query_row(
        "SELECT MIN(out_seq) FROM events WHERE out_seq > ?1",
        params![after],
        |r| r.get(0),
    )?;
    let by = first.map_or(0, |first| first - after - 1);
    if by <= 0 {
        return Ok(0);
    }
    // Through negatives, as in `shift_own`: no two rows share a seq midway.
    let n = conn.execute(
        "UPDATE events SET out_seq = -out_seq WHERE out_seq > ?1",
        params![after],
    )?;
    conn.execute(
        "UPDATE events SET out_seq = -out_seq - ?1 WHERE out_seq < 0",
        params![by],
    )?;
    Ok(n)
}

/// `seq, id, kind, payload, at` as sync carries it.
fn sync_row(r: &depot_sql::Row<'_>) -> depot_sql::Result<SyncEvent> {
    let at: String = r.get(4)?;
    Ok(SyncEvent {
        seq: r.get(0)?,
        id: event_id(r, 1)?,
        kind: r.get(2)?,
        payload: serde_json::value::RawValue::from_string(r.get(3)?)
            .map_err(|e| depot_sql::Error::conversion(3, e.to_string()))?,
        at: super::parse_ts(&at)?,
    })
}

/// The newest `out_seq` (0 before the first event).
pub fn outgoing_head(conn: &Db) -> Result<i64> {
    Ok(conn.query_row(
        "SELECT COALESCE(MAX(out_seq), 0) FROM events WHERE out_seq IS NOT NULL",
        params![],
        |r| r.get(0),
    )?)
}

/// Events of a business in `(after, upto]` (log positions), and those of
/// no business (releases), of the given kinds, not made by
/// `exclude_origin`: what one edge should be sent. Two ordered index scans
/// merged, so a page costs its length however long the log.
pub fn for_edge(
    conn: &Db,
    business: BusinessId,
    exclude_origin: &str,
    kinds: &[&str],
    after: i64,
    upto: i64,
    limit: u32,
) -> Result<Vec<Event>> {
    if kinds.is_empty() {
        return Ok(Vec::new());
    }
    // The kinds as parameters ?6, ?7…: one statement per list of kinds,
    // and an edge asks for the same list every time, so it stays cached.
    let marks = (0..kinds.len())
        .map(|i| format!("?{}", i + 6))
        .collect::<Vec<_>>()
        .join(", ");
    let stmt = format!(
        "SELECT seq, id, origin, business_id, kind, payload, at FROM (
             SELECT seq, id, origin, business_id, kind, payload, at FROM events
             WHERE business_id = ?1 AND seq > ?2 AND seq <= ?5 AND origin != ?3
               AND kind IN ({marks}) AND refused = 0
             UNION ALL
             SELECT seq, id, origin, business_id, kind, payload, at FROM events
             WHERE business_id IS NULL AND seq > ?2 AND seq <= ?5 AND origin != ?3
               AND kind IN ({marks}) AND refused = 0) AS merged
         ORDER BY seq LIMIT ?4"
    );
    let mut args: Vec<&dyn depot_sql::ToSql> =
        vec![&business.0, &after, &exclude_origin, &limit, &upto];
    args.extend(kinds.iter().map(|k| k as &dyn depot_sql::ToSql));
    Ok(conn.query_map(&stmt, &args, |r| row_at(r, 0))?)
}

/// A business's events after `after`, oldest first, optionally of one
/// kind: what station screens and live streams follow. Key events are not
/// among them: they carry key hashes, which only sync moves.
pub fn for_business(
    conn: &Db,
    business: BusinessId,
    after: i64,
    kind: Option<&str>,
    limit: u32,
) -> Result<Vec<Event>> {
    let stmt = "SELECT seq, id, origin, business_id, kind, payload, at FROM events
         WHERE business_id = ?1 AND seq > ?2 AND (kind = ?3 OR ?3 IS NULL)
           AND kind NOT LIKE 'key.%' AND refused = 0
         ORDER BY seq LIMIT ?4";
    let rows = conn.query_map(stmt, params![business.0, after, kind, limit], |r| {
        row_at(r, 0)
    })?;
    Ok(rows)
}

/// One event by its id.
pub fn by_id(conn: &Db, id: EventId) -> Result<Option<Event>> {
    super::maybe(conn.query_row(
        "SELECT seq, id, origin, business_id, kind, payload, at FROM events WHERE id = ?1",
        params![id.0.to_string()],
        |r| row_at(r, 0),
    ))
}

/// The newest position of the log (0 when empty).
pub fn head(conn: &Db) -> Result<i64> {
    Ok(
        conn.query_row("SELECT COALESCE(MAX(seq), 0) FROM events", params![], |r| {
            r.get(0)
        })?,
    )
}

/// PostgreSQL: the newest position of the log with the snapshot it was
/// read in, as its `xmin` and `xmax` (see `follower.rs`).
#[cfg(feature = "postgres")]
pub fn head_in_snapshot(conn: &Db) -> Result<(i64, u64, u64)> {
    let (head, xmin, xmax): (i64, String, String) = conn.query_row(
        "SELECT (SELECT COALESCE(MAX(seq), 0) FROM events),
                pg_snapshot_xmin(s)::text, pg_snapshot_xmax(s)::text
         FROM pg_current_snapshot() AS s",
        params![],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    let id = |t: &str| {
        t.parse::<u64>()
            .map_err(|e| depot_sql::Error::conversion(1, format!("transaction id {t:?}: {e}")))
    };
    Ok((head, id(&xmin)?, id(&xmax)?))
}

/// Events in `(after_seq, upto]`, oldest first: those that happened here
/// (what this node refused to apply from another is left out).
pub fn since(conn: &Db, after_seq: i64, upto: i64, limit: u32) -> Result<Vec<Event>> {
    let stmt = "SELECT seq, id, origin, business_id, kind, payload, at FROM events
         WHERE seq > ?1 AND seq <= ?2 AND refused = 0
         ORDER BY seq LIMIT ?3";
    let rows = conn.query_map(stmt, params![after_seq, upto, limit], |r| row_at(r, 0))?;
    Ok(rows)
}

/// Reads an event from the row's columns starting at `i`: seq, id, origin,
/// business_id, kind, payload, at.
fn row_at(r: &depot_sql::Row<'_>, i: usize) -> depot_sql::Result<Event> {
    let payload: String = r.get(i + 5)?;
    let at: String = r.get(i + 6)?;
    let kind: String = r.get(i + 4)?;
    Ok(Event {
        seq: r.get(i)?,
        id: event_id(r, i + 1)?,
        origin: r.get(i + 2)?,
        business_id: r.get::<Option<i64>>(i + 3)?.map(BusinessId),
        version: depot_protocol::catalogue::version(&kind),
        kind,
        payload: super::parse_json(&payload)?,
        at: super::parse_ts(&at)?,
    })
}

fn event_id(r: &depot_sql::Row<'_>, i: usize) -> depot_sql::Result<EventId> {
    let id: String = r.get(i)?;
    uuid::Uuid::parse_str(&id)
        .map(EventId)
        .map_err(|e| depot_sql::Error::conversion(i, e.to_string()))
}

/// How many of this node's own events the log holds with an outgoing
/// sequence number in `after..=through`.
pub fn own_between(conn: &Db, after: i64, through: i64) -> Result<i64> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM events WHERE out_seq > ?1 AND out_seq <= ?2",
        params![after, through],
        |row| row.get(0),
    )?)
}
