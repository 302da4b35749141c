//! The authorization server's rows: signing keys, clients, people, codes
//! and exchanged assertions.

use depot_sql::{Db, Row, params};
use depot_wms::Result;

/// An ES256 signing key (PKCS#8 DER) and its life: it signs until
/// `retire_at` and is published until `expire_at` (Unix seconds).
#[derive(Clone)]
pub struct SigningKey {
    pub kid: String,
    pub pkcs8: Vec<u8>,
    pub created_at: i64,
    pub retire_at: i64,
    pub expire_at: i64,
}

// By hand: the private key must never reach a log.
impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("kid", &self.kid)
            .field("retire_at", &self.retire_at)
            .field("expire_at", &self.expire_at)
            .finish_non_exhaustive()
    }
}

/// A registered client. `metadata` is its RFC 7591 metadata as JSON;
/// `allowed_scope` the space-separated scopes it may be granted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientRow {
    pub client_id: String,
    pub secret_hash: Option<String>,
    pub metadata: String,
    pub allowed_scope: String,
    pub owner: Option<String>,
    pub claim_hash: Option<String>,
    pub created_at: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRow {
    pub username: String,
    pub password_hash: String,
    pub scope: String,
    pub created_at: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeRow {
    pub code_hash: String,
    pub client_id: String,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub scope: String,
    pub subject: String,
    pub expires_at: i64,
}

/// Keys still published (not expired at `now`), newest first.
pub fn live_keys(conn: &Db, now: i64) -> Result<Vec<SigningKey>> {
    let stmt = "SELECT kid, pkcs8, created_at, retire_at, expire_at FROM oauth_keys
         WHERE expire_at > ?1 ORDER BY created_at DESC, kid";
    let rows = conn.query_map(stmt, params![now], |r| {
        Ok(SigningKey {
            kid: r.get(0)?,
            pkcs8: r.get(1)?,
            created_at: r.get(2)?,
            retire_at: r.get(3)?,
            expire_at: r.get(4)?,
        })
    })?;
    Ok(rows)
}

pub fn insert_key(conn: &Db, k: &SigningKey) -> Result<()> {
    conn.execute(
        "INSERT INTO oauth_keys (kid, pkcs8, created_at, retire_at, expire_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![k.kid, k.pkcs8, k.created_at, k.retire_at, k.expire_at],
    )?;
    Ok(())
}

pub fn delete_expired_keys(conn: &Db, now: i64) -> Result<()> {
    conn.execute("DELETE FROM oauth_keys WHERE expire_at <= ?1", params![now])?;
    Ok(())
}

const CLIENT_COLS: &str =
    "client_id, secret_hash, metadata, allowed_scope, owner, claim_hash, created_at";

fn client(r: &Row) -> depot_sql::Result<ClientRow> {
    Ok(ClientRow {
        client_id: r.get(0)?,
        secret_hash: r.get(1)?,
        metadata: r.get(2)?,
        allowed_scope: r.get(3)?,
        owner: r.get(4)?,
        claim_hash: r.get(5)?,
        created_at: r.get(6)?,
    })
}

pub fn insert_client(conn: &Db, c: &ClientRow) -> Result<()> {
    conn.execute(
        &format!("INSERT INTO oauth_clients ({CLIENT_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"),
        params![
            c.client_id,
            c.secret_hash,
            c.metadata,
            c.allowed_scope,
            c.owner,
            c.claim_hash,
            c.created_at
        ],
    )?;
    Ok(())
}

pub fn client_by_id(conn: &Db, client_id: &str) -> Result<Option<ClientRow>> {
    Ok(conn.query_opt(
        &format!("SELECT {CLIENT_COLS} FROM oauth_clients WHERE client_id = ?1"),
        params![client_id],
        client,
    )?)
}

pub fn client_by_claim(conn: &Db, claim_hash: &str) -> Result<Option<ClientRow>> {
    Ok(conn.query_opt(
        &format!("SELECT {CLIENT_COLS} FROM oauth_clients WHERE claim_hash = ?1"),
        params![claim_hash],
        client,
    )?)
}

/// Gives an unclaimed client its owner and scope; the claim token is
/// spent. False when the claim token is unknown or already spent.
pub fn claim_client(conn: &Db, claim_hash: &str, owner: &str, scope: &str) -> Result<bool> {
    let n = conn.execute(
        "UPDATE oauth_clients SET owner = ?2, allowed_scope = ?3, claim_hash = NULL
             WHERE claim_hash = ?1 AND owner IS NULL",
        params![claim_hash, owner, scope],
    )?;
    Ok(n == 1)
}

pub fn set_client_scope(conn: &Db, client_id: &str, scope: &str) -> Result<bool> {
    let n = conn.execute(
        "UPDATE oauth_clients SET allowed_scope = ?2 WHERE client_id = ?1",
        params![client_id, scope],
    )?;
    Ok(n == 1)
}

pub fn upsert_user(conn: &Db, u: &UserRow) -> Result<()> {
    conn.execute(
        "INSERT INTO oauth_users (username, password_hash, scope, created_at)
         VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (username) DO UPDATE SET password_hash = excluded.password_hash,
                                              scope = excluded.scope",
        params![u.username, u.password_hash, u.scope, u.created_at],
    )?;
    Ok(())
}

pub fn user(conn: &Db, username: &str) -> Result<Option<UserRow>> {
    Ok(conn.query_opt(
        "SELECT username, password_hash, scope, created_at FROM oauth_users
             WHERE username = ?1",
        params![username],
        |r| {
            Ok(UserRow {
                username: r.get(0)?,
                password_hash: r.get(1)?,
                scope: r.get(2)?,
                created_at: r.get(3)?,
            })
        },
    )?)
}

pub fn insert_code(conn: &Db, c: &CodeRow) -> Result<()> {
    conn.execute(
        "INSERT INTO oauth_codes (code_hash, client_id, redirect_uri, code_challenge, scope,
                                  subject, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            c.code_hash,
            c.client_id,
            c.redirect_uri,
            c.code_challenge,
            c.scope,
            c.subject,
            c.expires_at
        ],
    )?;
    Ok(())
}

/// Removes the code and returns it: a second use finds nothing.
pub fn take_code(conn: &Db, code_hash: &str, now: i64) -> Result<Option<CodeRow>> {
    conn.execute(
        "DELETE FROM oauth_codes WHERE expires_at <= ?1",
        params![now],
    )?;
    Ok(conn.query_opt(
        "DELETE FROM oauth_codes WHERE code_hash = ?1
             RETURNING code_hash, client_id, redirect_uri, code_challenge, scope, subject,
                       expires_at",
        params![code_hash],
        |r| {
            Ok(CodeRow {
                code_hash: r.get(0)?,
                client_id: r.get(1)?,
                redirect_uri: r.get(2)?,
                code_challenge: r.get(3)?,
                scope: r.get(4)?,
                subject: r.get(5)?,
                expires_at: r.get(6)?,
            })
        },
    )?)
}

/// Records an exchanged assertion; false when it was exchanged before.
pub fn record_assertion(
    conn: &Db,
    issuer: &str,
    jti: &str,
    expires_at: i64,
    now: i64,
) -> Result<bool> {
    conn.execute(
        "DELETE FROM oauth_assertions WHERE expires_at <= ?1",
        params![now],
    )?;
    let n = conn.execute(
        "INSERT INTO oauth_assertions (issuer, jti, expires_at) VALUES (?1, ?2, ?3)
             ON CONFLICT DO NOTHING",
        params![issuer, jti, expires_at],
    )?;
    Ok(n == 1)
}
