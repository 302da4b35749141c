//! What the cloud's log says about its edges, for screens and webhooks:
//! when each comes and goes (`edge.online`, `edge.offline`), and when one
//! comes back with events still to send and when it has sent them all
//! (`sync.backlog`). Each is written in the transaction that records what
//! the edge said, and only when something changed: once per run, not per
//! hello; once per backlog, not per batch.

use crate::Result;
use crate::store::{self, sync as sql};
use depot_protocol::event::EventKind;
use depot_protocol::sync::EdgeId;
use depot_protocol::{BusinessId, now};
use depot_sql::Db;
use serde_json::json;

/// The edge's backlog as recorded (`None`: unregistered, or head unknown).
fn backlog(conn: &Db, business: BusinessId, edge: &EdgeId) -> Result<Option<i64>> {
    Ok(sql::edge(conn, business, edge.as_str())?.and_then(|r| r.backlog))
}

fn announce_backlog(conn: &Db, origin: &str, business: BusinessId, edge: &EdgeId) -> Result<()> {
    let Some(r) = sql::edge(conn, business, edge.as_str())? else {
        return Ok(());
    };
    let payload = json!({
        "business_id": business, "edge_id": edge.as_str(), "backlog": r.backlog.unwrap_or(0),
        "up_cursor": r.up_cursor, "reported_head": r.reported_head,
    });
    store::events::append(
        conn,
        origin,
        Some(business),
        EventKind::SyncBacklog,
        &payload,
    )?;
    Ok(())
}

/// An edge said hello or `online`.
pub(crate) fn seen(
    conn: &Db,
    origin: &str,
    business: BusinessId,
    edge: &EdgeId,
    sighting: &sql::Sighting,
) -> Result<()> {
    let before = backlog(conn, business, edge)?.unwrap_or(0);
    let came = sql::seen(conn, business, edge.as_str(), sighting, &now())?;
    if came {
        let payload = json!({
            "business_id": business, "edge_id": edge.as_str(),
            "session": sighting.session, "version": sighting.version, "head": sighting.head,
        });
        store::events::append(
            conn,
            origin,
            Some(business),
            EventKind::EdgeOnline,
            &payload,
        )?;
    }
    let after = backlog(conn, business, edge)?.unwrap_or(0);
    if after > 0 && (came || before == 0) {
        announce_backlog(conn, origin, business, edge)?;
    }
    Ok(())
}

/// An edge's goodbye or last will ended `session`.
pub(crate) fn gone(
    conn: &Db,
    origin: &str,
    business: BusinessId,
    edge: &EdgeId,
    session: &str,
) -> Result<()> {
    if sql::gone(conn, business, edge.as_str(), session, &now())? {
        let payload = json!({
            "business_id": business, "edge_id": edge.as_str(), "session": session,
        });
        store::events::append(
            conn,
            origin,
            Some(business),
            EventKind::EdgeOffline,
            &payload,
        )?;
    }
    Ok(())
}

/// A batch moved the edge's cursor: a backlog it had is announced drained
/// when it reaches 0.
pub(crate) fn advanced(
    conn: &Db,
    origin: &str,
    business: BusinessId,
    edge: &EdgeId,
    before: Option<i64>,
) -> Result<()> {
    if before.unwrap_or(0) > 0 && backlog(conn, business, edge)? == Some(0) {
        announce_backlog(conn, origin, business, edge)?;
    }
    Ok(())
}

/// Edges shown online by a hello alone, not heard from since `before`, go
/// offline (nothing else would say so: without a retained state there is
/// no last will).
pub(crate) fn expire(conn: &Db, origin: &str, before: &depot_protocol::Timestamp) -> Result<usize> {
    let gone = sql::expire_unstated(conn, before, &now())?;
    for (business, edge, session) in &gone {
        tracing::info!(%business, %edge, "an edge that said hello but published no state went silent: shown offline");
        let payload = json!({"business_id": business, "edge_id": edge, "session": session});
        store::events::append(
            conn,
            origin,
            Some(*business),
            EventKind::EdgeOffline,
            &payload,
        )?;
    }
    Ok(gone.len())
}
