//! Outbound webhooks: subscriptions, the cursor that turns the event log
//! into deliveries, deliveries and their attempts.

use depot_protocol::event::Event;
use depot_protocol::webhook::{Attempt, Delivery, DeliveryStatus, Webhook};
use depot_protocol::{BusinessId, EventId, Page, Timestamp};
use depot_sql::{Db, Row, params};
use depot_wms::Result;
use depot_wms::sql::{events_head, events_since, maybe, parse_json, parse_ts, ts};

const COLS: &str = "id, business_id, url, event_types, description, active, created_at, updated_at,
                    previous_secret_expires_at";

fn row(r: &Row) -> depot_sql::Result<Webhook> {
    Ok(Webhook {
        id: r.get(0)?,
        business_id: BusinessId(r.get(1)?),
        url: r.get(2)?,
        event_types: parse_json(&r.get::<String>(3)?)?,
        description: r.get(4)?,
        active: r.get(5)?,
        secret: None,
        created_at: parse_ts(&r.get::<String>(6)?)?,
        updated_at: parse_ts(&r.get::<String>(7)?)?,
        previous_secret_expires_at: r
            .get::<Option<String>>(8)?
            .map(|at| parse_ts(&at))
            .transpose()?
            .filter(|at| *at > depot_protocol::now()),
    })
}

pub fn count(conn: &Db, business: BusinessId) -> Result<u64> {
    let n: i64 = conn.query_row(
        "SELECT COUNT(*) FROM webhooks WHERE business_id = ?1",
        params![business.0],
        |r| r.get(0),
    )?;
    Ok(n.max(0) as u64)
}

/// A subscription's stored fields.
pub struct Fields<'a> {
    pub url: &'a str,
    pub event_types: &'a [String],
    pub description: Option<&'a str>,
    pub active: bool,
}

/// Stores a subscription; it takes the events logged after this moment.
pub fn insert(
    conn: &Db,
    business: BusinessId,
    f: &Fields,
    secret: &str,
    at: &Timestamp,
) -> Result<i64> {
    let inserted: i64 = conn.query_value("INSERT INTO webhooks (business_id, url, event_types, secret, description, active, after_seq,
                               created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, (SELECT COALESCE(MAX(seq), 0) FROM events), ?7, ?7) RETURNING id", params![
        business.0,
        f.url,
        serde_json::to_string(f.event_types)?,
        secret,
        f.description,
        f.active,
        ts(at)
    ])?;
    Ok(inserted)
}

pub fn get(conn: &Db, business: BusinessId, id: i64) -> Result<Option<Webhook>> {
    maybe(conn.query_row(
        &format!("SELECT {COLS} FROM webhooks WHERE business_id = ?1 AND id = ?2"),
        params![business.0, id],
        row,
    ))
}

/// A page of the business's subscriptions, oldest first, and how many it has.
pub fn list(conn: &Db, business: BusinessId, page: Page) -> Result<(Vec<Webhook>, u64)> {
    let stmt = &format!(
        "SELECT {COLS} FROM webhooks WHERE business_id = ?1 ORDER BY id LIMIT ?2 OFFSET ?3"
    );
    let rows = conn.query_map(
        stmt,
        params![business.0, page.length as i64, page.start as i64],
        row,
    )?;
    Ok((rows, count(conn, business)?))
}

pub fn update(conn: &Db, id: i64, f: &Fields, at: &Timestamp) -> Result<()> {
    conn.execute("UPDATE webhooks SET url = ?2, event_types = ?3, description = ?4, active = ?5, updated_at = ?6
         WHERE id = ?1", params![
        id,
        f.url,
        serde_json::to_string(f.event_types)?,
        f.description,
        f.active,
        ts(at)
    ])?;
    Ok(())
}

/// Replaces the secret; the one it replaces keeps signing beside it until
/// `keep_previous_until`, or stops at once without it. A secret still in
/// its overlap is dropped by the next rotation: two at most sign.
pub fn set_secret(
    conn: &Db,
    id: i64,
    secret: &str,
    keep_previous_until: Option<&Timestamp>,
    at: &Timestamp,
) -> Result<()> {
    // The right-hand sides of an UPDATE read the row as it was: `secret`
    // there is the one being replaced.
    conn.execute("UPDATE webhooks SET previous_secret = CASE WHEN CAST(?3 AS TEXT) IS NULL THEN NULL ELSE secret END,
                             previous_secret_expires_at = ?3, secret = ?2, updated_at = ?4
         WHERE id = ?1", params![id, secret, keep_previous_until.map(ts), ts(at)])?;
    Ok(())
}

/// Deletes a subscription with its deliveries and their attempts.
pub fn delete(conn: &Db, id: i64) -> Result<()> {
    conn.execute("DELETE FROM webhooks WHERE id = ?1", params![id])?;
    Ok(())
}

/// Whether events wait to be turned into deliveries: the log moved past
/// the cursor and some subscription is active. (With none active the cursor
/// may lag: a subscription only takes events after its creation.)
pub fn behind(conn: &Db) -> Result<bool> {
    Ok(conn
        .query_row("SELECT (SELECT seq FROM webhook_cursor WHERE id = 1) < (SELECT COALESCE(MAX(seq), 0) FROM events)
                    AND EXISTS (SELECT 1 FROM webhooks WHERE active = 1)", params![], |r| r.get(0))?)
}

/// Turns up to `limit` events after the cursor (and not past `upto`) into
/// deliveries, for the active subscriptions whose types `wants` them, and
/// moves the cursor past them. Answers whether events are left after the
/// page.
pub fn fan_out(
    conn: &Db,
    limit: u32,
    now_ms: i64,
    at: &Timestamp,
    upto: i64,
    wants: impl Fn(&[String], &str) -> bool,
) -> Result<bool> {
    let cursor: i64 = conn.query_row(
        "SELECT seq FROM webhook_cursor WHERE id = 1",
        params![],
        |r| r.get(0),
    )?;
    // Only up to `upto`, the log's safe head read before this transaction
    // (on PostgreSQL other businesses write beside this job, and an event
    // below the newest may still be on its way); never past the newest.
    let head = events_head(conn)?.min(upto);
    // Only events of businesses with an active subscription are read: the
    // cloud's log is every business's.
    let stmt = "SELECT seq, business_id, kind FROM events
         WHERE seq > ?1 AND seq <= ?3 AND refused = 0
           AND business_id IN (SELECT business_id FROM webhooks WHERE active = 1)
         ORDER BY seq LIMIT ?2";
    let events = conn.query_map(stmt, params![cursor, limit, head], |r| {
        Ok((r.get::<i64>(0)?, r.get::<i64>(1)?, r.get::<String>(2)?))
    })?;
    let full = events.len() as u64 == u64::from(limit);
    let subscribers = "SELECT id, event_types FROM webhooks WHERE business_id = ?1 AND active = 1 AND after_seq < ?2";
    let insert = "INSERT INTO webhook_deliveries (id, webhook_id, event_seq, status, next_at_ms, retry_from_ms, created_at)
         VALUES (?1, ?2, ?3, 'pending', ?4, ?4, ?5) ON CONFLICT DO NOTHING";
    for (seq, business, kind) in &events {
        let subs = conn.query_map(subscribers, params![business, seq], |r| {
            Ok((r.get::<i64>(0)?, r.get::<String>(1)?))
        })?;
        for (webhook, types) in subs {
            let types: Vec<String> = parse_json(&types)?;
            if wants(&types, kind) {
                conn.execute(
                    insert,
                    params![
                        uuid::Uuid::now_v7().to_string(),
                        webhook,
                        seq,
                        now_ms,
                        ts(at)
                    ],
                )?;
            }
        }
    }
    let through = match (full, events.last()) {
        (true, Some((seq, _, _))) => *seq,
        _ => head,
    };
    conn.execute(
        "UPDATE webhook_cursor SET seq = ?1 WHERE id = 1 AND seq < ?1",
        params![through],
    )?;
    Ok(full)
}

/// The oldest pending delivery of each active subscription: the only one
/// of it that may be attempted.
#[derive(Debug, Clone)]
pub struct Head {
    pub delivery_id: String,
    pub webhook_id: i64,
    pub next_at_ms: i64,
    pub leased_until_ms: Option<i64>,
}

pub fn heads(conn: &Db) -> Result<Vec<Head>> {
    let stmt = "SELECT d.id, d.webhook_id, COALESCE(d.next_at_ms, 0), d.leased_until_ms
         FROM webhooks w JOIN webhook_deliveries d ON d.id = (
             SELECT id FROM webhook_deliveries
             WHERE webhook_id = w.id AND status = 'pending' ORDER BY event_seq LIMIT 1)
         WHERE w.active = 1";
    let rows = conn.query_map(stmt, params![], |r| {
        Ok(Head {
            delivery_id: r.get(0)?,
            webhook_id: r.get(1)?,
            next_at_ms: r.get(2)?,
            leased_until_ms: r.get(3)?,
        })
    })?;
    Ok(rows)
}

/// A delivery claimed for one attempt: where it goes, how it is signed,
/// what it carries.
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub delivery_id: String,
    pub webhook_id: i64,
    pub url: String,
    pub secret: String,
    /// The secret a rotation replaced, while it still signs too.
    pub previous_secret: Option<String>,
    pub event: Event,
    pub retry_from_ms: i64,
    /// This attempt's number.
    pub attempt: u32,
}

/// Leases a pending, due, unleased delivery until `until_ms`; `None` if it
/// is not one (any more).
pub fn claim(conn: &Db, id: &str, now_ms: i64, until_ms: i64) -> Result<Option<Outgoing>> {
    let n = conn.execute(
        "UPDATE webhook_deliveries SET leased_until_ms = ?3
             WHERE id = ?1 AND status = 'pending' AND COALESCE(next_at_ms, 0) <= ?2
               AND COALESCE(leased_until_ms, 0) <= ?2",
        params![id, now_ms, until_ms],
    )?;
    if n == 0 {
        return Ok(None);
    }
    let found = maybe(conn.query_row(
        "SELECT d.webhook_id, w.url, w.secret, d.event_seq, d.retry_from_ms, d.attempts,
                    CASE WHEN w.previous_secret_expires_at > ?2 THEN w.previous_secret END
             FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = ?1",
        params![id, ts(&depot_protocol::now())],
        |r| {
            Ok((
                (r.get::<i64>(0)?, r.get::<String>(1)?),
                (r.get::<String>(2)?, r.get::<Option<String>>(6)?),
                r.get::<i64>(3)?,
                r.get::<i64>(4)?,
                r.get::<i64>(5)?,
            ))
        },
    ))?;
    let Some(((webhook_id, url), (secret, previous_secret), seq, retry_from_ms, attempts)) = found
    else {
        return Ok(None);
    };
    let Some(event) = events_since(conn, seq - 1, seq, 1)?
        .into_iter()
        .find(|e| e.seq == seq)
    else {
        return Ok(None);
    };
    Ok(Some(Outgoing {
        delivery_id: id.to_owned(),
        webhook_id,
        url,
        secret,
        previous_secret,
        event,
        retry_from_ms,
        attempt: u32::try_from(attempts + 1).unwrap_or(u32::MAX),
    }))
}

/// What an attempt leaves the delivery as.
pub enum After {
    Delivered,
    RetryAt(i64),
    Failed,
}

/// Records an attempt and what follows it, and lets the lease go.
pub fn record(conn: &Db, id: &str, a: &Attempt, after: After) -> Result<()> {
    let exists = maybe(conn.query_row(
        "SELECT 1 FROM webhook_deliveries WHERE id = ?1",
        params![id],
        |_| Ok(()),
    ))?;
    if exists.is_none() {
        // Its subscription was deleted while the attempt was in flight.
        return Ok(());
    }
    conn.execute("INSERT INTO webhook_attempts (delivery_id, number, at, duration_ms, status_code, error, response)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (delivery_id, number) DO UPDATE SET at = excluded.at,
             duration_ms = excluded.duration_ms, status_code = excluded.status_code,
             error = excluded.error, response = excluded.response", params![
        id,
        a.number,
        ts(&a.at),
        i64::try_from(a.duration_ms).unwrap_or(i64::MAX),
        a.status_code,
        a.error,
        a.response_body
    ])?;
    let (status, next, finished) = match after {
        After::Delivered => (DeliveryStatus::Delivered, None, Some(ts(&a.at))),
        After::RetryAt(ms) => (DeliveryStatus::Pending, Some(ms), None),
        After::Failed => (DeliveryStatus::Failed, None, Some(ts(&a.at))),
    };
    conn.execute("UPDATE webhook_deliveries SET status = ?2, attempts = CASE WHEN attempts > ?3 THEN attempts ELSE ?3 END, next_at_ms = ?4,
             leased_until_ms = NULL, last_status = ?5, last_error = ?6, finished_at = ?7
         WHERE id = ?1", params![
        id,
        status.as_str(),
        a.number,
        next,
        a.status_code,
        a.error,
        finished
    ])?;
    Ok(())
}

const DELIVERY_COLS: &str = "d.id, d.webhook_id, e.id, e.kind, d.status, d.attempts, d.next_at_ms, \
                             d.last_status, d.last_error, d.created_at, d.finished_at";

fn delivery_row(r: &Row) -> depot_sql::Result<Delivery> {
    let conv = |i: usize, e: String| depot_sql::Error::conversion(i, e);
    let event: String = r.get(2)?;
    let status: String = r.get(4)?;
    let status = DeliveryStatus::parse(&status).ok_or_else(|| conv(4, status))?;
    let next: Option<i64> = r.get(6)?;
    Ok(Delivery {
        id: r.get(0)?,
        webhook_id: r.get(1)?,
        event_id: EventId(uuid::Uuid::parse_str(&event).map_err(|e| conv(2, e.to_string()))?),
        event_type: r.get(3)?,
        status,
        attempts: r.get(5)?,
        // Whole seconds, as every timestamp answered, rounded up: not
        // before the attempt is due.
        next_attempt_at: next
            .filter(|_| status == DeliveryStatus::Pending)
            .and_then(|ms| chrono::DateTime::from_timestamp((ms + 999).div_euclid(1000), 0)),
        last_status_code: r.get(7)?,
        last_error: r.get(8)?,
        created_at: parse_ts(&r.get::<String>(9)?)?,
        finished_at: r
            .get::<Option<String>>(10)?
            .map(|t| parse_ts(&t))
            .transpose()?,
    })
}

/// A page of a subscription's deliveries, newest first, optionally of one
/// status; with how many it has, and how many of that status.
pub fn deliveries(
    conn: &Db,
    webhook: i64,
    status: Option<DeliveryStatus>,
    page: Page,
) -> Result<(Vec<Delivery>, u64, u64)> {
    let status = status.map(DeliveryStatus::as_str);
    let stmt = &format!(
        "SELECT {DELIVERY_COLS} FROM webhook_deliveries d JOIN events e ON e.seq = d.event_seq
         WHERE d.webhook_id = ?1 AND (d.status = ?2 OR ?2 IS NULL)
         ORDER BY d.event_seq DESC LIMIT ?3 OFFSET ?4"
    );
    let rows = conn.query_map(
        stmt,
        params![webhook, status, page.length as i64, page.start as i64],
        delivery_row,
    )?;
    let count = |status: Option<&str>| -> Result<u64> {
        let n: i64 = conn
            .query_row("SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = ?1 AND (status = ?2 OR ?2 IS NULL)", params![webhook, status], |r| r.get(0))?;
        Ok(n.max(0) as u64)
    };
    let total = count(None)?;
    let filtered = if status.is_some() {
        count(status)?
    } else {
        total
    };
    Ok((rows, total, filtered))
}

pub fn delivery(conn: &Db, webhook: i64, id: &str) -> Result<Option<Delivery>> {
    maybe(conn.query_row(
        &format!(
            "SELECT {DELIVERY_COLS} FROM webhook_deliveries d JOIN events e ON e.seq = d.event_seq
             WHERE d.webhook_id = ?1 AND d.id = ?2"
        ),
        params![webhook, id],
        delivery_row,
    ))
}

pub fn attempts(conn: &Db, delivery: &str) -> Result<Vec<Attempt>> {
    let stmt = "SELECT number, at, duration_ms, status_code, error, response FROM webhook_attempts
         WHERE delivery_id = ?1 ORDER BY number";
    let rows = conn.query_map(stmt, params![delivery], |r| {
        Ok(Attempt {
            number: r.get(0)?,
            at: parse_ts(&r.get::<String>(1)?)?,
            duration_ms: r.get::<i64>(2)?.max(0) as u64,
            status_code: r.get(3)?,
            error: r.get(4)?,
            response_body: r.get(5)?,
        })
    })?;
    Ok(rows)
}

/// Makes a finished delivery pending again, due now, with a new retry
/// period; false if it is pending already.
pub fn retry(conn: &Db, id: &str, now_ms: i64) -> Result<bool> {
    let n = conn.execute(
        "UPDATE webhook_deliveries SET status = 'pending', next_at_ms = ?2, retry_from_ms = ?2,
                 leased_until_ms = NULL, finished_at = NULL
             WHERE id = ?1 AND status != 'pending'",
        params![id, now_ms],
    )?;
    Ok(n == 1)
}

/// Deletes at most `limit` deliveries that finished (delivered or failed)
/// before `before`, oldest first, with their attempts; answers how many.
/// Pending ones are never touched, however old.
pub fn prune_finished(conn: &Db, before: &Timestamp, limit: u32) -> Result<usize> {
    Ok(conn.execute(
        "DELETE FROM webhook_deliveries WHERE id IN (
                 SELECT id FROM webhook_deliveries
                 WHERE finished_at IS NOT NULL AND finished_at < ?1 AND status != 'pending'
                 ORDER BY finished_at LIMIT ?2)",
        params![ts(before), limit],
    )?)
}
