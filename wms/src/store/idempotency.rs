//! Idempotency keys and the answers of their requests (schema 028).

use super::maybe;
use crate::error::Result;
use crate::idempotency::{Answer, Stored};
use depot_sql::{Db, params};

/// What identifies a key's request.
pub struct Row<'a> {
    pub scope: &'a str,
    pub key: &'a str,
    pub fingerprint: &'a str,
    pub method: &'a str,
    pub path: &'a str,
}

/// The key's row, unless there is none or it was created before
/// `not_before` (expired).
pub fn find(conn: &Db, scope: &str, key: &str, not_before: &str) -> Result<Option<Stored>> {
    let row = maybe(conn.query_row(
        "SELECT fingerprint, status, content_type, location, body FROM idempotency_keys
             WHERE scope = ?1 AND key = ?2 AND created_at >= ?3",
        params![scope, key, not_before],
        |r| {
            let status: Option<u16> = r.get(1)?;
            Ok(Stored {
                fingerprint: r.get(0)?,
                answer: match status {
                    Some(status) => Some(Answer {
                        status,
                        content_type: r.get(2)?,
                        location: r.get(3)?,
                        body: r.get::<Option<Vec<u8>>>(4)?.unwrap_or_default(),
                    }),
                    None => None,
                },
            })
        },
    ))?;
    Ok(row)
}

/// Inserts the key's row, with its answer if there is one; a row of the
/// key that expired (created before `not_before`) is replaced. `false`
/// when a live row holds the key.
pub fn insert(
    conn: &Db,
    row: &Row,
    answer: Option<&Answer>,
    at: &str,
    not_before: &str,
) -> Result<bool> {
    let n = conn
        .execute("INSERT INTO idempotency_keys
                 (scope, key, fingerprint, method, path, status, content_type, location, body, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             ON CONFLICT (scope, key) DO UPDATE SET
                 fingerprint = excluded.fingerprint, method = excluded.method, path = excluded.path,
                 status = excluded.status, content_type = excluded.content_type,
                 location = excluded.location, body = excluded.body, created_at = excluded.created_at
             WHERE idempotency_keys.created_at < ?11", params![
            row.scope,
            row.key,
            row.fingerprint,
            row.method,
            row.path,
            answer.map(|a| a.status),
            answer.and_then(|a| a.content_type.as_deref()),
            answer.and_then(|a| a.location.as_deref()),
            answer.map(|a| a.body.as_slice()),
            at,
            not_before,
        ])?;
    Ok(n == 1)
}

/// Sets the answer of the key's row (or clears it, `None`: a later write
/// of the request changed what the answer is). `false` when the request
/// has no row.
pub fn set_answer(conn: &Db, row: &Row, answer: Option<&Answer>) -> Result<bool> {
    let n = conn.execute(
        "UPDATE idempotency_keys SET status = ?4, content_type = ?5, location = ?6, body = ?7
             WHERE scope = ?1 AND key = ?2 AND fingerprint = ?3",
        params![
            row.scope,
            row.key,
            row.fingerprint,
            answer.map(|a| a.status),
            answer.and_then(|a| a.content_type.as_deref()),
            answer.and_then(|a| a.location.as_deref()),
            answer.map(|a| a.body.as_slice()),
        ],
    )?;
    Ok(n == 1)
}

/// Deletes at most `limit` keys created before `before`, oldest first;
/// answers how many.
pub fn prune(conn: &Db, before: &str, limit: u32) -> Result<usize> {
    Ok(conn.execute(
        "DELETE FROM idempotency_keys WHERE (scope, key) IN (
                 SELECT scope, key FROM idempotency_keys WHERE created_at < ?1
                 ORDER BY created_at LIMIT ?2)",
        params![before, limit],
    )?)
}

/// Makes every key look created at `at` (tests of their expiry).
pub fn backdate(conn: &Db, at: &str) -> Result<usize> {
    Ok(conn.execute("UPDATE idempotency_keys SET created_at = ?1", params![at])?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Result<Db> {
        let conn = crate::store::memory(u32::MAX)?;
        Ok(conn)
    }

    const ROW: Row = Row {
        scope: "s",
        key: "k",
        fingerprint: "f",
        method: "POST",
        path: "/p",
    };

    #[test]
    fn a_live_key_is_held_and_an_expired_one_is_taken_over() -> Result<()> {
        let conn = db()?;
        let t1 = "2026-01-01T10:00:00Z";
        assert!(insert(&conn, &ROW, None, t1, "2026-01-01T00:00:00Z")?);
        let other = Row {
            fingerprint: "g",
            ..ROW
        };
        assert!(!insert(&conn, &other, None, t1, "2026-01-01T09:00:00Z")?);
        let found = find(&conn, "s", "k", "2026-01-01T09:00:00Z")?;
        assert_eq!(
            found.map(|s| (s.fingerprint, s.answer)),
            Some(("f".into(), None))
        );
        assert_eq!(
            find(&conn, "s", "k", "2026-01-01T11:00:00Z")?,
            None,
            "expired"
        );
        let answer = Answer {
            status: 201,
            content_type: Some("application/json".into()),
            location: Some("/x".into()),
            body: b"{}".to_vec(),
        };
        let t2 = "2026-01-02T10:00:00Z";
        assert!(insert(
            &conn,
            &other,
            Some(&answer),
            t2,
            "2026-01-02T09:00:00Z"
        )?);
        let found = find(&conn, "s", "k", "2026-01-02T09:00:00Z")?;
        assert_eq!(
            found.map(|s| (s.fingerprint, s.answer)),
            Some(("g".into(), Some(answer)))
        );
        assert!(set_answer(&conn, &other, None)?);
        assert!(!set_answer(&conn, &ROW, None)?, "another request's row");
        assert_eq!(prune(&conn, "2026-01-02T10:00:01Z", 10)?, 1);
        assert_eq!(find(&conn, "s", "k", "2000-01-01T00:00:00Z")?, None);
        Ok(())
    }
}
