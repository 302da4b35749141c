//! Channels' connectors: their settings, cursors, status and leases.

use super::{maybe, parse_json, parse_ts, ts};
use crate::error::Result;
use depot_protocol::connector::{Connector, ConnectorSettings, ConnectorState};
use depot_protocol::{BusinessId, ChannelId, Timestamp};
use depot_sql::{Db, Row, params};

const COLS: &str = "k.settings, k.orders_cursor, k.availability_cursor, k.fulfilment_cursor, \
                    k.state, k.failures, k.last_error, k.last_ok_at, k.next_attempt_at, \
                    k.orders_in, k.orders_refused, k.last_refusal, k.figures_out, \
                    k.fulfilments_out, k.updated_at, c.code, k.channel_id, k.business_id";

/// A connector as stored: its settings with their secrets, and what the
/// API shows of it.
#[derive(Debug, Clone)]
pub struct Stored {
    pub business: BusinessId,
    pub channel: ChannelId,
    pub settings: ConnectorSettings,
    pub view: Connector,
}

fn row(r: &Row) -> depot_sql::Result<Stored> {
    let settings: ConnectorSettings = parse_json(&r.get::<String>(0)?)?;
    let state: String = r.get(4)?;
    let opt_ts = |v: Option<String>| v.map(|s| parse_ts(&s)).transpose();
    let view = Connector {
        channel: r.get(15)?,
        kind: settings.kind,
        base_url: settings.base_url.clone(),
        token_set: settings.token.is_some(),
        user: settings.user.clone(),
        password_set: settings.password.is_some(),
        partner: settings.partner.clone(),
        sku_map: settings.sku_map.clone(),
        every_secs: settings.every_secs,
        enabled: settings.enabled,
        state: ConnectorState::parse(&state).ok_or_else(|| {
            depot_sql::Error::conversion(4, format!("not a connector state: {state}"))
        })?,
        failures: r.get(5)?,
        last_error: r.get(6)?,
        last_ok_at: opt_ts(r.get(7)?)?,
        next_attempt_at: opt_ts(Some(r.get(8)?))?,
        orders_cursor: r.get(1)?,
        availability_cursor: r.get(2)?,
        fulfilment_cursor: r.get(3)?,
        orders_in: r.get(9)?,
        orders_refused: r.get(10)?,
        last_refusal: r.get(11)?,
        figures_out: r.get(12)?,
        fulfilments_out: r.get(13)?,
        updated_at: parse_ts(&r.get::<String>(14)?)?,
    };
    Ok(Stored {
        business: BusinessId(r.get(17)?),
        channel: ChannelId(r.get(16)?),
        settings,
        view,
    })
}

/// A channel's connector.
pub fn get(conn: &Db, channel: ChannelId) -> Result<Option<Stored>> {
    maybe(conn.query_row(
        &format!(
            "SELECT {COLS} FROM connectors k JOIN channels c ON c.id = k.channel_id
             WHERE k.channel_id = ?1"
        ),
        params![channel.0],
        row,
    ))
}

/// Every connector, by channel (for the metrics).
pub fn all(conn: &Db) -> Result<Vec<Stored>> {
    Ok(conn.query_map(
        &format!(
            "SELECT {COLS} FROM connectors k JOIN channels c ON c.id = k.channel_id
             ORDER BY k.business_id, c.code"
        ),
        params![],
        row,
    )?)
}

/// Sets a channel's connector: a new one starts with its dispatches told
/// from `log_head` on (not the past's) and runs at once, as does one
/// edited; one turned off stays off, keeping its cursors.
pub fn put(
    conn: &Db,
    business: BusinessId,
    channel: ChannelId,
    s: &ConnectorSettings,
    log_head: i64,
    at: &Timestamp,
) -> Result<()> {
    let state = if s.enabled {
        ConnectorState::Starting
    } else {
        ConnectorState::Disabled
    };
    conn.execute(
        "INSERT INTO connectors (channel_id, business_id, settings, fulfilment_cursor, state,
                                 next_attempt_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)
         ON CONFLICT (channel_id) DO UPDATE SET settings = excluded.settings,
             state = excluded.state, failures = 0, last_error = NULL,
             next_attempt_at = excluded.next_attempt_at, updated_at = excluded.updated_at",
        params![
            channel.0,
            business.0,
            serde_json::to_string(s)?,
            log_head,
            state.as_str(),
            ts(at)
        ],
    )?;
    Ok(())
}

/// Connectors due to run at `now` that no instance holds, oldest due
/// first.
pub fn due(conn: &Db, now: &Timestamp, limit: u32) -> Result<Vec<(BusinessId, ChannelId)>> {
    let now = ts(now);
    Ok(conn.query_map(
        "SELECT business_id, channel_id FROM connectors
         WHERE next_attempt_at <= ?1 AND state <> 'disabled'
           AND (lease_until IS NULL OR lease_until < ?1)
         ORDER BY next_attempt_at LIMIT ?2",
        params![now, i64::from(limit)],
        |r| Ok((BusinessId(r.get(0)?), ChannelId(r.get(1)?))),
    )?)
}

/// Takes a connector for a run until `until`, unless another instance
/// holds it. Answers whether it is this one's.
pub fn claim(
    conn: &Db,
    channel: ChannelId,
    owner: &str,
    now: &Timestamp,
    until: &Timestamp,
) -> Result<bool> {
    let n = conn.execute(
        "UPDATE connectors SET lease_owner = ?2, lease_until = ?4
         WHERE channel_id = ?1 AND state <> 'disabled'
           AND (lease_until IS NULL OR lease_until < ?3 OR lease_owner = ?2)",
        params![channel.0, owner, ts(now), ts(until)],
    )?;
    Ok(n == 1)
}

/// What one step of a run moved: a cursor and its counters.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    pub orders_cursor: Option<String>,
    pub orders_in: i64,
    pub orders_refused: i64,
    pub last_refusal: Option<String>,
    pub availability_cursor: Option<i64>,
    pub figures_out: i64,
    pub fulfilment_cursor: Option<i64>,
    pub fulfilments_out: i64,
}

/// Records a step's progress, by the instance holding the lease.
pub fn advance(conn: &Db, channel: ChannelId, owner: &str, p: &Progress) -> Result<bool> {
    let n = conn.execute(
        "UPDATE connectors SET
             orders_cursor = COALESCE(?3, orders_cursor),
             orders_in = orders_in + ?4,
             orders_refused = orders_refused + ?5,
             last_refusal = COALESCE(?6, last_refusal),
             availability_cursor = COALESCE(?7, availability_cursor),
             figures_out = figures_out + ?8,
             fulfilment_cursor = COALESCE(?9, fulfilment_cursor),
             fulfilments_out = fulfilments_out + ?10
         WHERE channel_id = ?1 AND lease_owner = ?2",
        params![
            channel.0,
            owner,
            p.orders_cursor,
            p.orders_in,
            p.orders_refused,
            p.last_refusal,
            p.availability_cursor,
            p.figures_out,
            p.fulfilment_cursor,
            p.fulfilments_out
        ],
    )?;
    Ok(n == 1)
}

/// Ends a run: how it went, when the next one is, the lease given back.
pub fn finish(
    conn: &Db,
    channel: ChannelId,
    owner: &str,
    error: Option<&str>,
    next: &Timestamp,
    now: &Timestamp,
) -> Result<()> {
    conn.execute(
        // The error's type said once: PostgreSQL cannot tell it from `IS NULL`.
        "UPDATE connectors SET
             last_error = CAST(?3 AS TEXT),
             state = CASE WHEN state = 'disabled' THEN state
                          WHEN CAST(?3 AS TEXT) IS NULL THEN 'ok' ELSE 'failing' END,
             failures = CASE WHEN CAST(?3 AS TEXT) IS NULL THEN 0 ELSE failures + 1 END,
             last_ok_at = CASE WHEN CAST(?3 AS TEXT) IS NULL THEN ?5 ELSE last_ok_at END,
             next_attempt_at = ?4, updated_at = ?5, lease_owner = NULL, lease_until = NULL
         WHERE channel_id = ?1 AND lease_owner = ?2",
        params![channel.0, owner, error, ts(next), ts(now)],
    )?;
    Ok(())
}
