//! The live feed's websocket tickets (`live_tickets`): issued with a key,
//! spent once, within their time. Kept by their SHA-256, never as issued.

use super::Result;
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, KeyId};
use depot_sql::{Db, params};

/// Forgets expired tickets, then keeps `hash` for `caller` until
/// `expires_at` (ms since the epoch) unless `max` are already waiting:
/// false then, and nothing is kept.
pub fn issue(
    conn: &Db,
    hash: &str,
    caller: Caller,
    now: i64,
    expires_at: i64,
    max: u32,
) -> Result<bool> {
    conn.execute(
        "DELETE FROM live_tickets WHERE expires_at <= ?1",
        params![now],
    )?;
    let waiting: i64 = conn.query_value("SELECT COUNT(*) FROM live_tickets", params![])?;
    if waiting >= i64::from(max) {
        return Ok(false);
    }
    conn.execute(
        "INSERT INTO live_tickets (hash, business_id, key_id, expires_at) VALUES (?1, ?2, ?3, ?4)",
        params![hash, caller.business_id.0, caller.key_id.0, expires_at],
    )?;
    Ok(true)
}

/// Spends the ticket `hash`: its caller, if it is known and unexpired at
/// `now`. A spent or expired ticket is gone either way.
pub fn redeem(conn: &Db, hash: &str, now: i64) -> Result<Option<Caller>> {
    let rows = conn.query_map(
        "DELETE FROM live_tickets WHERE hash = ?1 RETURNING business_id, key_id, expires_at",
        params![hash],
        |r| Ok((r.get::<i64>(0)?, r.get::<i64>(1)?, r.get::<i64>(2)?)),
    )?;
    Ok(rows
        .into_iter()
        .find(|(_, _, expires_at)| *expires_at > now)
        .map(|(business, key, _)| Caller {
            key_id: KeyId(key),
            business_id: BusinessId(business),
        }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(b: i64) -> Caller {
        Caller {
            key_id: KeyId(b * 10),
            business_id: BusinessId(b),
        }
    }

    #[test]
    fn a_ticket_is_spent_once_within_its_time() -> Result<()> {
        let conn = crate::store::memory(u32::MAX)?;
        assert!(issue(&conn, "a", caller(1), 1_000, 61_000, 10)?);
        assert!(issue(&conn, "b", caller(2), 1_000, 61_000, 10)?);
        assert_eq!(redeem(&conn, "a", 2_000)?, Some(caller(1)));
        assert_eq!(redeem(&conn, "a", 2_000)?, None, "spent");
        assert_eq!(redeem(&conn, "unknown", 2_000)?, None);
        assert_eq!(redeem(&conn, "b", 61_000)?, None, "expired");
        assert_eq!(
            redeem(&conn, "b", 2_000)?,
            None,
            "an expired ticket is gone"
        );
        Ok(())
    }

    #[test]
    fn issuing_forgets_expired_tickets_and_stops_at_the_limit() -> Result<()> {
        let conn = crate::store::memory(u32::MAX)?;
        assert!(issue(&conn, "old", caller(1), 0, 10, 2)?);
        assert!(issue(&conn, "a", caller(1), 5, 100, 2)?);
        // "old" expires at 10: at 20 it makes room.
        assert!(issue(&conn, "b", caller(1), 20, 100, 2)?);
        assert!(!issue(&conn, "c", caller(1), 20, 100, 2)?, "two waiting");
        assert_eq!(
            redeem(&conn, "c", 30)?,
            None,
            "refused tickets are not kept"
        );
        assert_eq!(redeem(&conn, "a", 30)?, Some(caller(1)));
        Ok(())
    }
}
