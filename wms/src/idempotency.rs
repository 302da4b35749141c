//! Idempotency keys: a write sent again with the key of one already
//! applied is answered with the first answer and applies nothing.
//!
//! A request with a key runs inside a [`Context`] (a task-local, set by the
//! HTTP layer in `http::idempotency`, or by a station for a scan). Every
//! [`Wms::write`] made under it records the key in the same transaction as
//! the write, so an applied request always has its key, whatever happens
//! to the process after the commit. The answer goes in the same
//! transaction too when the handler said how its write's value becomes the
//! answer ([`expect`]); otherwise the HTTP layer stores it after the
//! handler answered, in a write of its own.
//!
//! The key's row is inserted by the first write of the request and updated
//! by the next ones; a key already held by a row that has not expired
//! (another request with the key got there first) fails the write with a
//! 409, which rolls it back.

use crate::error::{Result, WmsError};
use crate::store;
use crate::writer::Lane;
use crate::{Wms, store::idempotency as sql};
use depot_protocol::FieldError;
use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The longest key accepted.
pub const MAX_KEY: usize = 255;

/// The longest `idempotency.retention_hours`: 30 days.
pub const MAX_RETENTION_HOURS: u32 = 720;

/// The `[idempotency]` settings of both daemons.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(default, deny_unknown_fields)]
pub struct IdempotencySettings {
    /// Hours a write's `Idempotency-Key` is remembered with its answer
    /// (1 to 720): a retry within them gets the first answer and applies
    /// nothing; after them the key is forgotten (pruned every hour) and a
    /// request with it runs again.
    pub retention_hours: u32,
}

impl Default for IdempotencySettings {
    fn default() -> Self {
        Self {
            retention_hours: 24,
        }
    }
}

impl IdempotencySettings {
    /// Why the settings cannot be used, if they cannot.
    pub fn check(&self) -> std::result::Result<(), String> {
        if (1..=MAX_RETENTION_HOURS).contains(&self.retention_hours) {
            Ok(())
        } else {
            Err(format!(
                "idempotency.retention_hours must be 1 to {MAX_RETENTION_HOURS}"
            ))
        }
    }

    /// How long a key is kept.
    pub fn retention(&self) -> chrono::Duration {
        chrono::Duration::hours(i64::from(self.retention_hours))
    }
}

/// What `errors[0].status` says when a key's request was applied and its
/// answer was lost (409).
pub const APPLIED: &str = "idempotency_key_applied";
/// … when another request with the key is under way, or got there first
/// (409).
pub const IN_USE: &str = "idempotency_key_in_use";
/// … when the key was used for another request (422).
pub const REUSED: &str = "idempotency_key_reused";
/// The field the errors name.
pub const FIELD: &str = "Idempotency-Key";

/// An answer as it is stored and replayed: status, content type, the
/// `Location` header where the route sets one, and the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub content_type: Option<String>,
    pub location: Option<String>,
    pub body: Vec<u8>,
}

impl Answer {
    /// `value` as JSON with `status`.
    pub fn json<T: serde::Serialize + ?Sized>(status: u16, value: &T) -> Self {
        match serde_json::to_vec(value) {
            Ok(body) => Self {
                status,
                content_type: Some("application/json".into()),
                location: None,
                body,
            },
            Err(e) => {
                tracing::error!(error = %e, "an answer could not be serialized");
                let body = depot_protocol::ErrorBody::new(500, "internal server error");
                Self {
                    status: 500,
                    content_type: Some("application/json".into()),
                    location: None,
                    body: serde_json::to_vec(&body).unwrap_or_default(),
                }
            }
        }
    }

    /// This answer with a `Location` header.
    pub fn with_location(mut self, location: impl Into<String>) -> Self {
        self.location = Some(location.into());
        self
    }
}

/// A key's row as a lookup finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    pub fingerprint: String,
    /// None: the request was applied, and the process stopped before its
    /// answer was stored.
    pub answer: Option<Answer>,
}

/// How a write's value becomes the answer: `None` when the value is not of
/// the type the handler expects (the answer is stored after the handler
/// answers), `Some(None)` when the value is an outcome that applied
/// nothing (the key is not recorded by this write), `Some(Some(answer))`.
type Responder = Box<dyn Fn(&dyn Any) -> Option<Option<Answer>> + Send + Sync>;

#[derive(Debug, Default, Clone, Copy)]
struct State {
    /// A committed write holds the key's row.
    recorded: bool,
    /// … and the row has the answer.
    answered: bool,
}

/// The request under way with a key: what identifies it, and how far its
/// key has been recorded.
pub struct Context {
    pub scope: String,
    pub key: String,
    pub fingerprint: String,
    pub method: String,
    pub path: String,
    /// Rows created before this have expired.
    pub not_before: depot_protocol::Timestamp,
    responder: Mutex<Option<Responder>>,
    state: Mutex<State>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("key", &self.key)
            .field("method", &self.method)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

tokio::task_local! {
    static CURRENT: Arc<Context>;
}

impl Context {
    /// A request with `key` in `scope`; rows older than `retention` have
    /// expired.
    pub fn new(
        scope: String,
        key: String,
        fingerprint: String,
        method: String,
        path: String,
        retention: chrono::Duration,
    ) -> Arc<Self> {
        Arc::new(Self {
            scope,
            key,
            fingerprint,
            method,
            path,
            not_before: depot_protocol::now() - retention,
            responder: Mutex::new(None),
            state: Mutex::new(State::default()),
        })
    }

    /// The context of the request this task serves, if it has a key.
    pub fn current() -> Option<Arc<Self>> {
        CURRENT.try_with(Arc::clone).ok()
    }

    /// Runs `work` as this request: its writes record the key.
    pub async fn run<F: Future>(self: Arc<Self>, work: F) -> F::Output {
        CURRENT.scope(self, work).await
    }

    /// Says how a write's value of type `T` becomes the answer (`None`: an
    /// outcome that applied nothing, whose answer is not kept).
    pub fn expect<T: 'static>(&self, build: impl Fn(&T) -> Option<Answer> + Send + Sync + 'static) {
        let responder: Responder = Box::new(move |v| v.downcast_ref::<T>().map(&build));
        if let Ok(mut slot) = self.responder.lock() {
            *slot = Some(responder);
        }
    }

    fn state(&self) -> State {
        self.state.lock().map(|s| *s).unwrap_or_default()
    }

    /// A committed write holds the key's row.
    pub fn recorded(&self) -> bool {
        self.state().recorded
    }

    /// A committed write stored the answer with the key.
    pub fn answered(&self) -> bool {
        self.state().answered
    }

    fn verdict(&self, value: &dyn Any) -> Option<Option<Answer>> {
        let slot = self.responder.lock().ok()?;
        slot.as_ref().and_then(|r| r(value))
    }

    /// In the write's transaction, after its work succeeded: records the
    /// key, with the answer when the value makes one. `Ok(None)`: nothing
    /// recorded; `Ok(Some(answered))`.
    fn record(&self, conn: &depot_sql::Db, value: &dyn Any) -> Result<Option<bool>> {
        let answer = match self.verdict(value) {
            Some(None) => return Ok(None),
            // A server error is no answer to replay.
            Some(Some(a)) if a.status < 500 => Some(a),
            _ => None,
        };
        let row = sql::Row {
            scope: &self.scope,
            key: &self.key,
            fingerprint: &self.fingerprint,
            method: &self.method,
            path: &self.path,
        };
        // A request's writes run one after the other: after the first has
        // committed, the row is ours (unless that commit was undone, and
        // then there is no row to update).
        if self.state().recorded && sql::set_answer(conn, &row, answer.as_ref())? {
            return Ok(Some(answer.is_some()));
        }
        let at = store::ts(&depot_protocol::now());
        if !sql::insert(
            conn,
            &row,
            answer.as_ref(),
            &at,
            &store::ts(&self.not_before),
        )? {
            return Err(in_use());
        }
        Ok(Some(answer.is_some()))
    }

    fn committed(&self, outcome: Option<bool>) {
        if let (Some(answered), Ok(mut state)) = (outcome, self.state.lock()) {
            *state = State {
                recorded: true,
                answered,
            };
        }
    }
}

/// For the request under way, if it has a key: how its write's value of
/// type `T` becomes its answer, stored in the write's transaction. A
/// handler calls it before the engine call, with the function that builds
/// its own answer from the value, so the two cannot differ.
pub fn expect<T: 'static>(build: impl Fn(&T) -> Option<Answer> + Send + Sync + 'static) {
    if let Some(c) = Context::current() {
        c.expect(build);
    }
}

/// 409: another request with the key holds it.
pub fn in_use() -> WmsError {
    WmsError::Conflict {
        message: "another request with this Idempotency-Key is under way or was applied first: send it again to get its answer".into(),
        errors: vec![FieldError::new(FIELD, IN_USE)],
    }
}

/// 409: the key's request was applied and its answer was lost.
pub fn applied() -> WmsError {
    WmsError::Conflict {
        message: "the request with this Idempotency-Key was applied, and its answer was lost when the server stopped: it is not applied again; read the resource to see its outcome".into(),
        errors: vec![FieldError::new(FIELD, APPLIED)],
    }
}

/// 422: the key was used for another request.
pub fn reused() -> WmsError {
    WmsError::Invalid {
        message: "this Idempotency-Key was used for another request (another method, path, query or body): a new request needs a new key".into(),
        errors: vec![FieldError::new(FIELD, REUSED)],
    }
}

/// The test hook `DEPOT_FAULT_EXIT_AFTER_COMMIT` (read by the binaries
/// only): the process exits right after the n-th write that recorded a key
/// has committed, before anyone is answered, as one killed then would.
static EXIT_AFTER: AtomicU64 = AtomicU64::new(0);
static KEYED_COMMITS: AtomicU64 = AtomicU64::new(0);

/// Arms the test hook: exit after the `n`-th keyed commit (0: never).
#[doc(hidden)]
pub fn exit_after_commit(n: u64) {
    EXIT_AFTER.store(n, Ordering::SeqCst);
}

fn after_keyed_commit() {
    let n = EXIT_AFTER.load(Ordering::Relaxed);
    if n != 0 && KEYED_COMMITS.fetch_add(1, Ordering::SeqCst) + 1 == n {
        tracing::warn!(
            n,
            "DEPOT_FAULT_EXIT_AFTER_COMMIT: exiting after a keyed commit"
        );
        std::process::exit(70);
    }
}

impl Wms {
    /// `write` for a request with a key: the key recorded in the same
    /// transaction (see the module).
    pub(crate) async fn write_keyed<T, F>(&self, ctx: Arc<Context>, lane: Lane, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&depot_sql::Db) -> Result<T> + Send + 'static,
    {
        let keyed = ctx.clone();
        // A key's scope is one API key's (or one token's), of one
        // business: the job's lane covers the key's row.
        let (value, outcome) = self
            .inner
            .writer
            .write(lane, move |conn| {
                let value = f(conn)?;
                let outcome = keyed.record(conn, &value)?;
                Ok((value, outcome))
            })
            .await?;
        ctx.committed(outcome);
        if outcome.is_some() {
            after_keyed_commit();
        }
        Ok(value)
    }

    /// The row of `key` in `scope`, unless there is none or it has
    /// expired.
    pub async fn idempotency_key(
        &self,
        scope: String,
        key: String,
        not_before: depot_protocol::Timestamp,
    ) -> Result<Option<Stored>> {
        let not_before = store::ts(&not_before);
        self.read(move |conn| sql::find(conn, &scope, &key, &not_before))
            .await
    }

    /// Stores the answer of a request whose writes did not (or that made
    /// none): with its key's row when a write recorded it, in a new row
    /// otherwise. `false`: a new row could not be made, another request
    /// with the key holds it.
    pub async fn store_idempotent_answer(&self, ctx: &Context, answer: Answer) -> Result<bool> {
        let recorded = ctx.recorded();
        let (scope, key, fingerprint, method, path) = (
            ctx.scope.clone(),
            ctx.key.clone(),
            ctx.fingerprint.clone(),
            ctx.method.clone(),
            ctx.path.clone(),
        );
        let not_before = store::ts(&ctx.not_before);
        self.write_unkeyed(move |conn| {
            let row = sql::Row {
                scope: &scope,
                key: &key,
                fingerprint: &fingerprint,
                method: &method,
                path: &path,
            };
            if recorded && sql::set_answer(conn, &row, Some(&answer))? {
                return Ok(true);
            }
            let at = store::ts(&depot_protocol::now());
            sql::insert(conn, &row, Some(&answer), &at, &not_before)
        })
        .await
    }

    /// Deletes the keys created before `before`, `limit` per write; answers
    /// how many went.
    pub async fn prune_idempotency_keys(
        &self,
        before: depot_protocol::Timestamp,
        limit: u32,
    ) -> Result<usize> {
        let before = store::ts(&before);
        let mut gone = 0;
        loop {
            let b = before.clone();
            let n = self
                .write_unkeyed(move |conn| sql::prune(conn, &b, limit))
                .await?;
            gone += n;
            if n < limit as usize {
                return Ok(gone);
            }
            // Other writers go between two batches.
            tokio::task::yield_now().await;
        }
    }

    /// Makes every key look created at `at`: for tests of their expiry.
    #[doc(hidden)]
    pub async fn backdate_idempotency_keys_for_tests(
        &self,
        at: depot_protocol::Timestamp,
    ) -> Result<usize> {
        let at = store::ts(&at);
        self.write_unkeyed(move |conn| sql::backdate(conn, &at))
            .await
    }
}
