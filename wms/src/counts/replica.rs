//! What another node did to a count, applied here.

use crate::Result;
use crate::store::counts as sql;
use depot_protocol::count::{Count, CountScanned, CountStatus, CountSummary};
use depot_sql::Db;

/// Applies another node's `count.created`.
pub(crate) fn apply_created(conn: &Db, c: &Count) -> Result<()> {
    super::insert(conn, c)
}

/// Applies another node's `count.scanned`, while the count is open here
/// (an approval already applied settled its lines).
pub(crate) fn apply_scanned(conn: &Db, s: &CountScanned) -> Result<()> {
    let Some(c) = sql::summary_of(conn, s.business_id, s.id)? else {
        return Ok(());
    };
    if c.status != CountStatus::Open {
        return Ok(());
    }
    for l in &s.lines {
        sql::put_line(conn, s.id, l)?;
    }
    sql::put_place(conn, s.id, &s.location)?;
    sql::touch(conn, s.id, &s.updated_at)
}

/// Applies another node's approval or cancellation. An approval wins over a
/// cancellation made elsewhere (its movements are booked wherever it was
/// made); a second approval changes nothing (its movements carry the same
/// ids as the first's).
pub(crate) fn apply_closed(conn: &Db, s: &CountSummary) -> Result<()> {
    let Some(c) = sql::summary_of(conn, s.business_id, s.id)? else {
        return Ok(());
    };
    match (c.status, s.status) {
        (CountStatus::Approved, _) | (CountStatus::Cancelled, CountStatus::Cancelled) => Ok(()),
        (_, CountStatus::Approved) => {
            let at = s.approved_at.unwrap_or(s.updated_at);
            sql::set_status(
                conn,
                s.id,
                CountStatus::Approved,
                s.approved_by.as_deref(),
                &at,
            )?;
            sql::mark_counted(conn, s.id, s.warehouse_id, &at)
        }
        (CountStatus::Open, CountStatus::Cancelled) => {
            sql::set_status(conn, s.id, CountStatus::Cancelled, None, &s.updated_at)
        }
        _ => Ok(()),
    }
}
