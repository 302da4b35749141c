//! `Idempotency-Key` on every write: a retry with the key gets exactly the
//! first answer and applies nothing, the key with another request is a
//! 422, keys are per credential and expire, duplicates sent at once apply
//! once; every write of the API takes the header and is described with it;
//! and the key survives SIGKILL: requests whose answer was lost with the
//! process are applied once when sent again after a restart.
//!
//! `replay.rs`: the guarantees, in one process; `routes.rs`: every write
//! route, from the served OpenAPI descriptions; `killed.rs`: the real
//! `depot-cloud` binary, killed under load and made to exit right after a
//! commit.

mod killed;
use crate::process;
mod replay;
mod routes;

use depot_testkit::http::{Client, Res};
use serde_json::Value;

pub fn replayed(r: &Res) -> bool {
    r.header("idempotent-replayed") == Some("true")
}

/// `errors[0].status` of an error body.
pub fn error_word(r: &Res) -> String {
    r.body["errors"][0]["status"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// `method path` with `X-API-KEY: api_key`, `Idempotency-Key: key` when
/// given, and a JSON body when given.
pub async fn send(
    client: &Client,
    method: &str,
    path: &str,
    api_key: Option<&str>,
    key: Option<&str>,
    body: Option<&Value>,
) -> Res {
    let mut req = client.with_key(api_key).raw(method, path);
    if let Some(k) = key {
        req = req.header("Idempotency-Key", k);
    }
    if let Some(b) = body {
        req = req.json(b);
    }
    req.send().await
}
