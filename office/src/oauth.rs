//! Storage of the release-notes API's authorization server. The tokens and
//! their cryptography live in the cloud (`depot_cloud::oauth`); the engine
//! keeps the rows, in its one database and behind its one writer.

use crate::Office;
use crate::store::oauth as sql;
pub use crate::store::oauth::{ClientRow, CodeRow, SigningKey, UserRow};
use depot_wms::Result;

impl Office {
    /// The published keys, newest first. When none may sign at `now`,
    /// `make` creates one first, in the same transaction, so two starting
    /// instances do not both add a key. Housekeeping, even when a request
    /// with an `Idempotency-Key` (a release published) triggers it: it
    /// records no key.
    pub async fn signing_keys<F>(&self, now: i64, make: F) -> Result<Vec<SigningKey>>
    where
        F: FnOnce() -> Result<SigningKey> + Send + 'static,
    {
        self.write_unkeyed(move |conn| {
            sql::delete_expired_keys(conn, now)?;
            let keys = sql::live_keys(conn, now)?;
            if keys.iter().any(|k| k.retire_at > now) {
                return Ok(keys);
            }
            sql::insert_key(conn, &make()?)?;
            sql::live_keys(conn, now)
        })
        .await
    }

    pub async fn register_client(&self, row: ClientRow) -> Result<()> {
        self.write(move |conn| sql::insert_client(conn, &row)).await
    }

    pub async fn client(&self, client_id: String) -> Result<Option<ClientRow>> {
        self.read(move |conn| sql::client_by_id(conn, &client_id))
            .await
    }

    pub async fn client_by_claim(&self, claim_hash: String) -> Result<Option<ClientRow>> {
        self.read(move |conn| sql::client_by_claim(conn, &claim_hash))
            .await
    }

    /// Spends a claim token: the client gets its owner and scope. False
    /// when the token is unknown or spent.
    pub async fn claim_client(
        &self,
        claim_hash: String,
        owner: String,
        scope: String,
    ) -> Result<bool> {
        self.write(move |conn| sql::claim_client(conn, &claim_hash, &owner, &scope))
            .await
    }

    pub async fn set_client_scope(&self, client_id: String, scope: String) -> Result<bool> {
        self.write(move |conn| sql::set_client_scope(conn, &client_id, &scope))
            .await
    }

    pub async fn save_user(&self, row: UserRow) -> Result<()> {
        self.write(move |conn| sql::upsert_user(conn, &row)).await
    }

    pub async fn user(&self, username: String) -> Result<Option<UserRow>> {
        self.read(move |conn| sql::user(conn, &username)).await
    }

    pub async fn save_code(&self, row: CodeRow) -> Result<()> {
        self.write(move |conn| sql::insert_code(conn, &row)).await
    }

    /// Takes a code: it is gone afterwards, used or not.
    pub async fn take_code(&self, code_hash: String, now: i64) -> Result<Option<CodeRow>> {
        self.write(move |conn| sql::take_code(conn, &code_hash, now))
            .await
    }

    /// Records an exchanged assertion; false when it is a replay.
    pub async fn record_assertion(
        &self,
        issuer: String,
        jti: String,
        expires_at: i64,
        now: i64,
    ) -> Result<bool> {
        self.write(move |conn| sql::record_assertion(conn, &issuer, &jti, expires_at, now))
            .await
    }
}
